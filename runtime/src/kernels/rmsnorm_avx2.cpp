// SPDX-License-Identifier: Apache-2.0
// RMSNorm's sum of squares (8 double lanes in rmsnorm.h's order: two ymm of 4 doubles) and the
// per-head RMSNorm of int8 heads (the exact integer sum of squares with vpmaddwd, then the
// portable float steps per channel, nothing fused), AVX2: the same values and bytes as the
// portable code. Tails run the portable steps.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/numerics.h"
#include "kernels/rmsnorm.h"
#include "kernels/simd_avx2.h"

namespace edgebert {
namespace kernels {

double sum_squares_f64_avx2(const float* x, size_t n) {
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();  // lanes 0-3 and 4-7 of rmsnorm.h's order
  size_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m256 v = _mm256_loadu_ps(x + c);
    const __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), b = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    lo = _mm256_add_pd(lo, _mm256_mul_pd(a, a));  // exact square, then the lane's add
    hi = _mm256_add_pd(hi, _mm256_mul_pd(b, b));
  }
  double lane[8];
  _mm256_storeu_pd(lane, lo);
  _mm256_storeu_pd(lane + 4, hi);
  return sum_squares_finish(lane, x, c, n);
}

void rmsnorm_heads_s8_avx2(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                           const float* gamma, float eps, const float* in_scales, const float* out_scales) {
  const size_t d = static_cast<size_t>(head_dim);
  const __m256 lo = _mm256_set1_ps(-128.0f), hi = _mm256_set1_ps(127.0f);
  const __m256i zero = _mm256_setzero_si256();
  rmsnorm_for_each_head(x, rows, stride, first, heads, d, [&](int8_t* v, int h) {
    __m256i sq = _mm256_setzero_si256();  // pairs of squares (<= 2 * 128^2) per int32 lane
    size_t c = 0;
    for (; c + 16 <= d; c += 16) {
      const __m256i q = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + c)));
      sq = _mm256_add_epi32(sq, _mm256_madd_epi16(q, q));
    }
    alignas(32) int32_t part[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(part), sq);
    int64_t partial = 0;
    for (int k = 0; k < 8; ++k) partial += part[k];
    const HeadNorm hn = head_norm_of(v, c, d, partial, in_scales[h], out_scales[h], eps);
    const __m256 vin = _mm256_set1_ps(hn.in), vinv = _mm256_set1_ps(hn.inv_rms), vout = _mm256_set1_ps(hn.inv_out);
    c = 0;
    for (; c + 8 <= d; c += 8) {
      const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(v + c))));
      const __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(q, vin), vinv), _mm256_loadu_ps(gamma + c));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(v + c), avx2::quantize8_ps(_mm256_mul_ps(y, vout), lo, hi, zero));
    }
    for (; c < d; ++c) v[c] = rmsnorm_head_value(v[c], hn.in, hn.inv_rms, gamma[c], hn.inv_out);
  });
}

}  // namespace kernels
}  // namespace edgebert
