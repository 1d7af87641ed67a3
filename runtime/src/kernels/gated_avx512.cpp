// SPDX-License-Identifier: Apache-2.0
// Gated FFN activations (GeGLU, SwiGLU), AVX-512: the 256-entry float gate table lives in 16 zmm
// registers; vpermi2ps looks up 16 gates at a time in each pair of registers (32 entries, by the
// low 5 bits of the gate byte) and bits 5, 6 and 7 pick among the 8 results. The arithmetic is
// the portable code's (gated.h), lane by lane: the same bytes.
#include "kernels/avx512_intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/gated.h"
#include "kernels/simd_avx512.h"

namespace edgebert {
namespace kernels {

void gated_s8_avx512(const GatedArgs& a) {
  __m512 t[16];
  for (int k = 0; k < 16; ++k) t[k] = _mm512_loadu_ps(a.gate_table + 16 * k);
  const __m512 inv = _mm512_set1_ps(1.0f / a.out_scale);
  const __m512 up_scale = _mm512_set1_ps(a.up_scale);
  const __m512 lo = _mm512_set1_ps(-128.0f - static_cast<float>(a.out_zp));
  const __m512 hi = _mm512_set1_ps(127.0f - static_cast<float>(a.out_zp));
  const __m512i out_zp = _mm512_set1_epi32(a.out_zp);
  const __m512i up_zp = _mm512_set1_epi32(a.up_zp);
  const __m512i bit5 = _mm512_set1_epi32(32), bit6 = _mm512_set1_epi32(64), bit7 = _mm512_set1_epi32(128);
  for (size_t r = 0; r < a.rows; ++r) {
    const int8_t* g = a.x + r * a.x_stride;
    const int8_t* u = g + a.inter;
    int8_t* y = a.y + r * a.y_stride;
    // gate_table[g] * ((u - up_zp) * up_scale) for the 16 columns from c (lanes past m: garbage)
    auto product = [&](size_t c, __mmask16 m) {
      const __m512i idx = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, g + c));
      __m512 s[8];
      for (int p = 0; p < 8; ++p) s[p] = _mm512_permutex2var_ps(t[2 * p], idx, t[2 * p + 1]);
      const __mmask16 m5 = _mm512_test_epi32_mask(idx, bit5);
      const __mmask16 m6 = _mm512_test_epi32_mask(idx, bit6);
      const __mmask16 m7 = _mm512_test_epi32_mask(idx, bit7);
      const __m512 s01 = _mm512_mask_blend_ps(m5, s[0], s[1]), s23 = _mm512_mask_blend_ps(m5, s[2], s[3]);
      const __m512 s45 = _mm512_mask_blend_ps(m5, s[4], s[5]), s67 = _mm512_mask_blend_ps(m5, s[6], s[7]);
      const __m512 gate = _mm512_mask_blend_ps(m7, _mm512_mask_blend_ps(m6, s01, s23), _mm512_mask_blend_ps(m6, s45, s67));
      const __m512i uq = _mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, u + c)), up_zp);
      return _mm512_mul_ps(gate, _mm512_mul_ps(_mm512_cvtepi32_ps(uq), up_scale));
    };
    if (a.row_scales) {  // dynamic per-row scale (gated.h): the exact maximum, then the portable steps
      __m512 absmax = _mm512_setzero_ps();
      for (size_t c = 0; c < a.inter; c += 16) {
        const __mmask16 m = avx512::tail_mask16(a.inter - c);
        absmax = _mm512_mask_max_ps(absmax, m, _mm512_abs_ps(product(c, m)), absmax);
      }
      const float scale = dynamic_row_scale(_mm512_reduce_max_ps(absmax));
      const __m512 row_inv = _mm512_set1_ps(1.0f / scale);
      const __m512 row_lo = _mm512_set1_ps(-128.0f), row_hi = _mm512_set1_ps(127.0f);
      const __m512i zero = _mm512_setzero_si512();
      for (size_t c = 0; c < a.inter; c += 16) {
        const __mmask16 m = avx512::tail_mask16(a.inter - c);
        _mm_mask_storeu_epi8(y + c, m, avx512::quantize16_ps(_mm512_mul_ps(product(c, m), row_inv), row_lo, row_hi, zero));
      }
      a.row_scales[r] = scale;
      continue;
    }
    for (size_t c = 0; c < a.inter; c += 16) {
      const __mmask16 m = avx512::tail_mask16(a.inter - c);
      _mm_mask_storeu_epi8(y + c, m, avx512::quantize16_ps(_mm512_mul_ps(product(c, m), inv), lo, hi, out_zp));
    }
  }
}

}  // namespace kernels
}  // namespace edgebert
