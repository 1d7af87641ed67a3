// SPDX-License-Identifier: Apache-2.0
// thread_governor.cpp: the pool-or-caller decision of multi-threaded sessions (thread_governor.h).
#include "thread_governor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <sys/resource.h>

namespace edgebert {

bool ThreadGovernor::enabled_by_env() {
  static const bool enabled = [] {
    const char* e = std::getenv("EDGEBERT_ADAPTIVE_THREADS");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return enabled;
}

int64_t ThreadGovernor::process_preemptions() {
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<int64_t>(u.ru_nivcsw);
}

bool ThreadGovernor::use_pool(int64_t now_ns) {
  if (!enabled_) return true;
  if (serial_) {
    if (now_ns < hold_until_ns_) {
      ++serial_runs_;
      return false;
    }
    serial_ = false;  // the hold is over: try the pool again
    window_ns_ = window_preemptions_ = 0;
  }
  return true;
}

void ThreadGovernor::after_pool_run(int64_t end_ns, int64_t run_ns, int64_t preemptions) {
  if (!enabled_) return;
  window_ns_ += std::max<int64_t>(run_ns, 0);
  window_preemptions_ += std::max<int64_t>(preemptions, 0);
  // contended: enough preemptions, at the rate of a worker that shares its core with other work
  // (a quiet 2-core VM sees 30-50 per second over a whole process, one busy loop beside a
  // 2-thread session 160-180, two 250)
  const bool contended = window_preemptions_ >= kMinPreemptions &&
                         window_preemptions_ * 1'000'000'000 >= kPreemptionsPerSecond * std::max<int64_t>(window_ns_, 1);
  if (contended) {
    ++verdicts_;
    serial_ = true;
    hold_until_ns_ = end_ns + hold_ns_;
    hold_ns_ = std::min(hold_ns_ * 2, kMaxHoldNs);  // the next hold, if the retry finds the load again
    window_ns_ = window_preemptions_ = 0;
  } else if (window_ns_ >= kWindowNs) {  // a quiet window: the load (if any) is gone
    hold_ns_ = kFirstHoldNs;
    window_ns_ = window_preemptions_ = 0;
  }
}

void ThreadGovernor::reset() {
  serial_ = false;
  hold_ns_ = kFirstHoldNs;
  window_ns_ = window_preemptions_ = 0;
}

}  // namespace edgebert
