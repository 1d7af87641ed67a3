// SPDX-License-Identifier: Apache-2.0
// rope_impl.h: the loop over heads and the per-pair steps that every RoPE variant shares (rope.cpp,
// rope_avx2.cpp, rope_avx512.cpp, rope_neon.cpp). Static: each instruction-set file keeps its own copy (see attention.h on
// inline helpers in headers that AVX-512 files include).
#pragma once

#include <cstddef>

#include "kernels/numerics.h"
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

// One int8 pair (hx[ia], hx[ib]) rotated by (c, sn) with the portable steps: dequantize at in_scale,
// two products and one add or subtract, times inv (1 / out_scale), requantize. The portable
// kernel and every variant's tails.
static inline void rope_pair_s8(int8_t* hx, int ia, int ib, float c, float sn, float in_scale, float inv) {
  const float va = static_cast<float>(hx[ia]) * in_scale, vb = static_cast<float>(hx[ib]) * in_scale;
  hx[ia] = detail::quantize_value_s8((va * c - vb * sn) * inv, -128.0f, 127.0f, 0);
  hx[ib] = detail::quantize_value_s8((vb * c + va * sn) * inv, -128.0f, 127.0f, 0);
}
// A channel past rotary_dim keeps its value, requantized (when the scales differ).
static inline int8_t rope_pass_s8(int8_t q, float in_scale, float inv) {
  return detail::quantize_value_s8((static_cast<float>(q) * in_scale) * inv, -128.0f, 127.0f, 0);
}

// The int8 entry point of every variant: per head of every row, rotate_half(hx, cs, rotary_dim / 2,
// s) or interleaved(hx, cs, rotary_dim, s) by the pairing, then pass_through(hx, rotary_dim,
// head_dim, s) for the channels past rotary_dim when in_scale != out_scale (s: the variant's
// constants).
template <class Scales, class Half, class Interleaved, class Pass>
static inline void rope_s8_heads(const RopeArgs& a, float in_scale, float out_scale, int8_t* x, const Scales& s,
                                 Half rotate_half, Interleaved interleaved, Pass pass_through) {
  rope_for_each_head(a, x, [&](int8_t* hx, const float* cs) {
    if (a.form == RopeForm::kRotateHalf)
      rotate_half(hx, cs, a.rotary_dim / 2, s);
    else
      interleaved(hx, cs, a.rotary_dim, s);
    if (in_scale != out_scale) pass_through(hx, a.rotary_dim, a.head_dim, s);
  });
}

}  // namespace kernels
}  // namespace edgebert
