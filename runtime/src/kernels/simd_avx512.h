// SPDX-License-Identifier: Apache-2.0
// AVX-512 (F/BW/DQ/VL) vector helpers shared by the *_avx512*.cpp kernels: tail masks, the
// float -> int8 quantization step and the exp recipe of numerics.h on 16 lanes, operation for
// operation as the portable code (fused multiply-adds exactly where it has fused_madd), so every
// lane gives the portable bits.
// Include only from files compiled with the AVX-512 flags. Everything is static inline.
#pragma once

#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || !defined(__AVX512DQ__)
#error "simd_avx512.h must only be included from *_avx512*.cpp files compiled with the AVX-512 flags"
#endif

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {
namespace avx512 {

// The first `count` (0..16) lanes.
static inline __mmask16 tail_mask16(size_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xFFFFu : (1u << count) - 1u);
}
// The first `count` (0..64) bytes.
static inline __mmask64 tail_mask64(size_t count) {
  return count >= 64 ? ~static_cast<__mmask64>(0) : (static_cast<__mmask64>(1) << count) - 1;
}

// a * b + c rounded twice, as the portable code computes it.
static inline __m512 madd(__m512 a, __m512 b, __m512 c) { return _mm512_add_ps(_mm512_mul_ps(a, b), c); }

// float -> int8 as detail::quantize_value_s8: clamp to [lo, hi] (= [-128-zp, 127-zp]; a NaN
// becomes lo), round half to even (vcvtps2dq), add the zero point; 16 lanes -> 16 bytes.
static inline __m128i quantize16_ps(__m512 v, __m512 lo, __m512 hi, __m512i zp) {
  v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
  return _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), zp));
}


// Four vectors of 16 int32 (already in [-128, 127]) -> 64 bytes in order (vpackssdw + vpacksswb
// work within 128-bit lanes; one dword permute puts the lanes back in order). Faster than four
// vpmovsdb on AMD cores.
static inline __m512i pack64_epi32(__m512i a, __m512i b, __m512i c, __m512i d) {
  const __m512i abcd = _mm512_packs_epi16(_mm512_packs_epi32(a, b), _mm512_packs_epi32(c, d));
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), abcd);
}
// quantize16_ps's int32 step (before the narrowing to bytes).
static inline __m512i quantize16_epi32(__m512 v, __m512 lo, __m512 hi, __m512i zp) {
  return _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi)), zp);
}

// Sum of the 16 lanes in the order of the portable combine16(): v[l] = a[l] + a[l + 8], then
// ((v0 + v4) + (v2 + v6)) + ((v1 + v5) + (v3 + v7)).
static inline float combine16_ps(__m512 a) {
  const __m256 v = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// exp(x), see detail::exp_approx (fused multiply-adds as there).
static inline __m512 exp_ps(__m512 x_in) {
  const __m512 x = _mm512_min_ps(x_in, _mm512_set1_ps(detail::kExpHi));
  const __m512 xc = _mm512_max_ps(x, _mm512_set1_ps(detail::kExpLo));
  const __m512 magic = _mm512_set1_ps(detail::kExpMagic);
  const __m512 z = _mm512_fmadd_ps(xc, _mm512_set1_ps(detail::kLog2e), magic);
  const __m512 nf = _mm512_sub_ps(z, magic);
  __m512 r = _mm512_fnmadd_ps(nf, _mm512_set1_ps(detail::kLn2Hi), xc);
  r = _mm512_fnmadd_ps(nf, _mm512_set1_ps(detail::kLn2Lo), r);
  __m512 p = _mm512_set1_ps(detail::kExpP6);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(detail::kExpP5));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(detail::kExpP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(detail::kExpP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(detail::kExpP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(detail::kExpP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(detail::kExpP0));
  const __m512i pow2n = _mm512_add_epi32(_mm512_slli_epi32(_mm512_castps_si512(z), 23),
                                         _mm512_set1_epi32(static_cast<int32_t>(detail::kExpBias)));
  const __m512 y = _mm512_mul_ps(p, _mm512_castsi512_ps(pow2n));
  const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(detail::kExpLo), _CMP_GE_OQ);
  return _mm512_maskz_mov_ps(keep, y);
}

}  // namespace avx512
}  // namespace kernels
}  // namespace edgebert
