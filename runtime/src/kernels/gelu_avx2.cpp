// SPDX-License-Identifier: Apache-2.0
// GELU, AVX2+FMA: 256-entry int8 table lookup with vpshufb, and float GELU (polynomial erfc).
//
// Table lookup: vpshufb looks up 16-entry tables and yields 0 where the index byte has its top bit
// set. For inputs 0..127 the index starts at x and drops by 16 (signed saturating) per table, so
// it is non-negative exactly for the tables k <= x/16; XOR-ing table k with table k-1 beforehand
// makes the XOR of all hits equal to table x/16. Inputs 128..255 use a second cascade on x^0x80.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gelu.h"
#include "kernels/simd_avx2.h"

namespace edgebert {
namespace kernels {

void apply_lut_s8_avx2(int8_t* x, size_t count, const int8_t lut[256]) {
  __m256i tab[16];
  __m128i prev = _mm_setzero_si128();
  for (int k = 0; k < 16; ++k) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lut + 16 * k));
    const __m128i u = (k == 0 || k == 8) ? t : _mm_xor_si128(t, prev);
    tab[k] = _mm256_broadcastsi128_si256(u);
    prev = t;
  }
  const __m256i step = _mm256_set1_epi8(16);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    __m256i r = _mm256_setzero_si256();
    __m256i lo = v, hi = _mm256_xor_si256(v, flip);
    for (int k = 0; k < 8; ++k) {
      r = _mm256_xor_si256(r, _mm256_shuffle_epi8(tab[k], lo));
      r = _mm256_xor_si256(r, _mm256_shuffle_epi8(tab[8 + k], hi));
      lo = _mm256_subs_epi8(lo, step);
      hi = _mm256_subs_epi8(hi, step);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + i), r);
  }
  for (; i < count; ++i) x[i] = lut[static_cast<uint8_t>(x[i])];
}

void gelu_f32_avx2(float* x, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_ps(x + i, avx2::gelu_ps(_mm256_loadu_ps(x + i)));
  if (i < count) {
    const __m256i m = avx2::tail_mask(count - i);
    _mm256_maskstore_ps(x + i, m, avx2::gelu_ps(_mm256_maskload_ps(x + i, m)));
  }
}

}  // namespace kernels
}  // namespace edgebert
