// SPDX-License-Identifier: Apache-2.0
// Gated FFN activations (GeGLU, SwiGLU, GLU), AVX2: 8 gates at a time looked up in the 256-entry
// float gate table with vgatherdps; the arithmetic is the portable code's (gated.h), lane by lane,
// nothing fused, so the same bytes (and, with row_scales, the same per-row scales: the maximum is
// exact in any order, and a NaN product is skipped as the portable comparison skips it). Tails run
// the portable steps.
#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/gated.h"
#include "kernels/numerics.h"
#include "kernels/simd_avx2.h"

namespace edgebert {
namespace kernels {

void gated_s8_avx2(const GatedArgs& a) {
  const __m256 up_scale = _mm256_set1_ps(a.up_scale);
  const __m256i up_zp = _mm256_set1_epi32(a.up_zp);
  for (size_t r = 0; r < a.rows; ++r) {
    const int8_t* g = a.x + r * a.x_stride;
    const int8_t* u = g + a.inter;
    int8_t* y = a.y + r * a.y_stride;
    // gate_table[g] * ((u - up_zp) * up_scale) for the 8 columns from c
    auto product = [&](size_t c) {
      const __m256i idx = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + c)));
      const __m256 gate = _mm256_i32gather_ps(a.gate_table, idx, 4);
      const __m256i uq = _mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(u + c))), up_zp);
      return _mm256_mul_ps(gate, _mm256_mul_ps(_mm256_cvtepi32_ps(uq), up_scale));
    };
    auto product1 = [&](size_t c) { return gated_product(a, g, u, c); };
    const size_t full = a.inter & ~static_cast<size_t>(7);
    if (a.row_scales) {  // dynamic per-row scale (gated.h): the exact maximum, then the portable steps
      const __m256 sign = _mm256_set1_ps(-0.0f);
      __m256 vmax = _mm256_setzero_ps();
      for (size_t c = 0; c < full; c += 8) vmax = _mm256_max_ps(_mm256_andnot_ps(sign, product(c)), vmax);  // NaN: keeps vmax
      float absmax = avx2::hmax_ps(vmax);
      for (size_t c = full; c < a.inter; ++c) {
        const float v = std::fabs(product1(c));
        absmax = v > absmax ? v : absmax;
      }
      const float scale = dynamic_row_scale(absmax);
      const float inv = 1.0f / scale;
      const __m256 vinv = _mm256_set1_ps(inv), lo = _mm256_set1_ps(-128.0f), hi = _mm256_set1_ps(127.0f);
      const __m256i zero = _mm256_setzero_si256();
      for (size_t c = 0; c < full; c += 8)
        _mm_storel_epi64(reinterpret_cast<__m128i*>(y + c), avx2::quantize8_ps(_mm256_mul_ps(product(c), vinv), lo, hi, zero));
      for (size_t c = full; c < a.inter; ++c) y[c] = detail::quantize_value_s8(product1(c) * inv, -128.0f, 127.0f, 0);
      a.row_scales[r] = scale;
      continue;
    }
    const float inv = 1.0f / a.out_scale;
    const float lo = -128.0f - static_cast<float>(a.out_zp), hi = 127.0f - static_cast<float>(a.out_zp);
    const __m256 vinv = _mm256_set1_ps(inv), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    const __m256i out_zp = _mm256_set1_epi32(a.out_zp);
    for (size_t c = 0; c < full; c += 8)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + c), avx2::quantize8_ps(_mm256_mul_ps(product(c), vinv), vlo, vhi, out_zp));
    for (size_t c = full; c < a.inter; ++c) y[c] = detail::quantize_value_s8(product1(c) * inv, lo, hi, a.out_zp);
  }
}

}  // namespace kernels
}  // namespace edgebert
