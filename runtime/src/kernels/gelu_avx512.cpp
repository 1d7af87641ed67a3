// SPDX-License-Identifier: Apache-2.0
// 256-entry int8 table lookup (GELU and the other activation tables), AVX-512BW: the vpshufb
// cascade of gelu_avx2.cpp on 64 bytes at a time (each 16-entry table broadcast to the four
// 128-bit lanes), for CPUs with AVX-512 but without VBMI's byte permutes. Exact.
#include "kernels/avx512_intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/gelu.h"
#include "kernels/simd_avx512.h"

namespace edgebert {
namespace kernels {

void apply_lut_s8_avx512(int8_t* x, size_t count, const int8_t lut[256]) {
  __m512i tab[16];
  __m128i prev = _mm_setzero_si128();
  for (int k = 0; k < 16; ++k) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lut + 16 * k));
    const __m128i u = (k == 0 || k == 8) ? t : _mm_xor_si128(t, prev);  // see gelu_avx2.cpp
    tab[k] = _mm512_broadcast_i32x4(u);
    prev = t;
  }
  const __m512i step = _mm512_set1_epi8(16);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (size_t i = 0; i < count; i += 64) {
    const __mmask64 m = avx512::tail_mask64(count - i);
    const __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
    __m512i r = _mm512_setzero_si512();
    __m512i lo = v, hi = _mm512_xor_si512(v, flip);
    for (int k = 0; k < 8; ++k) {
      r = _mm512_xor_si512(r, _mm512_shuffle_epi8(tab[k], lo));
      r = _mm512_xor_si512(r, _mm512_shuffle_epi8(tab[8 + k], hi));
      lo = _mm512_subs_epi8(lo, step);
      hi = _mm512_subs_epi8(hi, step);
    }
    _mm512_mask_storeu_epi8(x + i, m, r);
  }
}

}  // namespace kernels
}  // namespace edgebert
