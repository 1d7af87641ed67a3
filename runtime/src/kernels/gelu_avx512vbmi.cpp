// SPDX-License-Identifier: Apache-2.0
// 256-entry int8 table lookup (GELU and the other activation tables), AVX512-VBMI: vpermi2b looks
// up 64 bytes at a time in a 128-entry table (two zmm registers) by the low 7 bits of each index,
// once in lut[0..127] and once in lut[128..255]; the index's top bit (vpmovb2m) picks one. Exact.
#include "kernels/avx512_intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/gelu.h"
#include "kernels/simd_avx512.h"

namespace edgebert {
namespace kernels {

void apply_lut_s8_avx512vbmi(int8_t* x, size_t count, const int8_t lut[256]) {
  const __m512i t0 = _mm512_loadu_si512(lut);
  const __m512i t1 = _mm512_loadu_si512(lut + 64);
  const __m512i t2 = _mm512_loadu_si512(lut + 128);
  const __m512i t3 = _mm512_loadu_si512(lut + 192);
  size_t i = 0;
  for (; i + 128 <= count; i += 128) {
    const __m512i v0 = _mm512_loadu_si512(x + i);
    const __m512i v1 = _mm512_loadu_si512(x + i + 64);
    const __m512i r0 = _mm512_mask_blend_epi8(_mm512_movepi8_mask(v0), _mm512_permutex2var_epi8(t0, v0, t1),
                                              _mm512_permutex2var_epi8(t2, v0, t3));
    const __m512i r1 = _mm512_mask_blend_epi8(_mm512_movepi8_mask(v1), _mm512_permutex2var_epi8(t0, v1, t1),
                                              _mm512_permutex2var_epi8(t2, v1, t3));
    _mm512_storeu_si512(x + i, r0);
    _mm512_storeu_si512(x + i + 64, r1);
  }
  for (; i < count; i += 64) {
    const __mmask64 m = avx512::tail_mask64(count - i);
    const __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
    const __m512i r = _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), _mm512_permutex2var_epi8(t0, v, t1),
                                             _mm512_permutex2var_epi8(t2, v, t3));
    _mm512_mask_storeu_epi8(x + i, m, r);
  }
}

}  // namespace kernels
}  // namespace edgebert
