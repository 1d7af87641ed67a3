// SPDX-License-Identifier: Apache-2.0
// RMSNorm's sum of squares (8 double lanes, rmsnorm.h's order) and the per-head RMSNorm of int8
// heads (Qwen3 / Gemma 3 q_norm, k_norm), AVX-512 (F/BW/DQ/VL). The head norm follows the
// portable recipe of rmsnorm.h, 16 channels at a time. The sum of the int8 squares is an exact
// integer (any order), the inverse RMS comes from the same double expression, and each channel
// goes through the same float products lane by lane: the same bytes.
#include "kernels/avx512_intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/rmsnorm.h"
#include "kernels/simd_avx512.h"

namespace edgebert {
namespace kernels {

double sum_squares_f64_avx512(const float* x, size_t n) {
  __m512d acc = _mm512_setzero_pd();  // lane l: the squares of x[c], c = l mod 8, in order
  for (size_t c = 0; c < n; c += 8) {
    const __m512d v = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(static_cast<__mmask8>(avx512::tail_mask16(n - c)), x + c));
    acc = _mm512_add_pd(acc, _mm512_mul_pd(v, v));  // exact square, then the lane's add (a masked lane adds 0)
  }
  const __m256d l = _mm256_add_pd(_mm512_castpd512_pd256(acc), _mm512_extractf64x4_pd(acc, 1));  // l0+l4, l1+l5, ...
  const __m128d w = _mm_add_pd(_mm256_castpd256_pd128(l), _mm256_extractf128_pd(l, 1));  // (l0+l4)+(l2+l6), (l1+l5)+(l3+l7)
  return _mm_cvtsd_f64(w) + _mm_cvtsd_f64(_mm_unpackhi_pd(w, w));
}

void rmsnorm_heads_s8_avx512(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                             const float* gamma, float eps, const float* in_scales, const float* out_scales) {
  const size_t d = static_cast<size_t>(head_dim);
  const __m512 lo = _mm512_set1_ps(-128.0f), hi = _mm512_set1_ps(127.0f);
  const __m512i zero = _mm512_setzero_si512();
  rmsnorm_for_each_head(x, rows, stride, first, heads, d, [&](int8_t* v, int h) {
    __m512i sq = _mm512_setzero_si512();  // at most 64 squares of 128^2 per lane: no overflow
    for (size_t c = 0; c < d; c += 16) {
      const __m512i q = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(avx512::tail_mask16(d - c), v + c));
      sq = _mm512_add_epi32(sq, _mm512_mullo_epi32(q, q));
    }
    const float inv_rms = head_inverse_rms(_mm512_reduce_add_epi32(sq), in_scales[h], d, eps);
    const __m512 in = _mm512_set1_ps(in_scales[h]), inv = _mm512_set1_ps(inv_rms);
    const __m512 inv_out = _mm512_set1_ps(1.0f / out_scales[h]);
    for (size_t c = 0; c < d; c += 16) {
      const __mmask16 m = avx512::tail_mask16(d - c);
      const __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, v + c)));
      const __m512 y = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(q, in), inv), _mm512_maskz_loadu_ps(m, gamma + c));
      _mm_mask_storeu_epi8(v + c, m, avx512::quantize16_ps(_mm512_mul_ps(y, inv_out), lo, hi, zero));
    }
  });
}

}  // namespace kernels
}  // namespace edgebert
