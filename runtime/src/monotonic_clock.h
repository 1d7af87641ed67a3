// SPDX-License-Identifier: Apache-2.0
// monotonic_clock.h: nanoseconds of the steady clock, for the profiling timers and the thread
// governor (one definition instead of one per file). Allocation-free.
#pragma once

#include <chrono>
#include <cstdint>

namespace edgebert {

inline int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace edgebert
