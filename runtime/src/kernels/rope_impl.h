// SPDX-License-Identifier: Apache-2.0
// rope_impl.h: the loop over heads that every RoPE variant shares (rope.cpp, rope_avx512.cpp,
// rope_neon.cpp). Static: each instruction-set file keeps its own copy (see attention.h on
// inline helpers in headers that AVX-512 files include).
#pragma once

#include <cstddef>

#include "kernels/rope.h"

namespace edgebert {
namespace kernels {

// Calls f(head pointer, row's cos/sin) for every head of every row of a.
template <typename T, typename F>
static inline void rope_for_each_head(const RopeArgs& a, T* x, F f) {
  const size_t half = static_cast<size_t>(a.rotary_dim / 2);
  for (size_t r = 0; r < a.rows; ++r) {
    const size_t pos = a.positions != nullptr ? static_cast<size_t>(a.positions[r]) : r;
    const float* cs = a.table + pos * half * 2;
    for (int h = 0; h < a.heads; ++h) f(x + r * a.stride + a.first + static_cast<size_t>(h) * a.head_dim, cs);
  }
}

}  // namespace kernels
}  // namespace edgebert
