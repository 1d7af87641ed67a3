// SPDX-License-Identifier: Apache-2.0
// AVX2 vector math shared by the *_avx2.cpp kernels: exp and GELU with the same recipes
// (constants, range reduction, polynomials, operation for operation: fused multiply-adds exactly
// where numerics.h has fused_madd) as the scalar versions, so they give the same bits lane by lane.
// Include only from files compiled with -mavx2 -mfma. Everything is static inline (internal
// linkage), see numerics.h for why.
#pragma once

#if !defined(__AVX2__) || !defined(__FMA__)
#error "simd_avx2.h must only be included from *_avx2.cpp files compiled with -mavx2 -mfma"
#endif

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {
namespace avx2 {

// a * b + c rounded twice, as the portable code computes it outside fused_madd (the kernels are
// compiled with -ffp-contract=off so that no variant fuses what another does not).
static inline __m256 madd(__m256 a, __m256 b, __m256 c) { return _mm256_add_ps(_mm256_mul_ps(a, b), c); }

// exp(hi + lo), see detail::exp_hilo. kHasLo = false skips the lo term (plain exp).
// exp(hi + lo), see detail::exp_hilo (fused multiply-adds where the recipe has them).
template <bool kHasLo>
static inline __m256 exp_impl(__m256 hi, __m256 lo) {
  const __m256 x = _mm256_min_ps(hi, _mm256_set1_ps(detail::kExpHi));
  const __m256 xc = _mm256_max_ps(x, _mm256_set1_ps(detail::kExpLo));
  const __m256 magic = _mm256_set1_ps(detail::kExpMagic);
  const __m256 z = _mm256_fmadd_ps(kHasLo ? _mm256_add_ps(xc, lo) : xc, _mm256_set1_ps(detail::kLog2e), magic);
  const __m256 nf = _mm256_sub_ps(z, magic);
  __m256 r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(detail::kLn2Hi), xc);
  r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(detail::kLn2Lo), r);
  if (kHasLo) r = _mm256_add_ps(r, lo);
  __m256 p = _mm256_set1_ps(detail::kExpP6);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(detail::kExpP5));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(detail::kExpP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(detail::kExpP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(detail::kExpP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(detail::kExpP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(detail::kExpP0));
  const __m256i pow2n = _mm256_add_epi32(_mm256_slli_epi32(_mm256_castps_si256(z), 23),
                                         _mm256_set1_epi32(static_cast<int32_t>(detail::kExpBias)));
  const __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(pow2n));
  const __m256 keep = _mm256_cmp_ps(x, _mm256_set1_ps(detail::kExpLo), _CMP_GE_OQ);
  return _mm256_and_ps(y, keep);
}
static inline __m256 exp_hilo(__m256 hi, __m256 lo) { return exp_impl<true>(hi, lo); }
static inline __m256 exp_ps(__m256 x) { return exp_impl<false>(x, x); }

// GELU (erf form), see detail::gelu_scalar.
static inline __m256 gelu_ps(__m256 x) {
  const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 t = _mm256_mul_ps(ax, _mm256_set1_ps(detail::kInvSqrt2));
  const __m256 t2 = _mm256_mul_ps(t, t);
  __m256 e = _mm256_set1_ps(detail::kErfE8);
  e = madd(e, t2, _mm256_set1_ps(detail::kErfE7));
  e = madd(e, t2, _mm256_set1_ps(detail::kErfE6));
  e = madd(e, t2, _mm256_set1_ps(detail::kErfE5));
  e = madd(e, t2, _mm256_set1_ps(detail::kErfE4));
  e = madd(e, t2, _mm256_set1_ps(detail::kErfE3));
  e = madd(e, t2, _mm256_set1_ps(detail::kErfE2));
  e = madd(e, t2, _mm256_set1_ps(detail::kErfE1));
  e = madd(e, t2, _mm256_set1_ps(detail::kErfE0));
  const __m256 erfc_small = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_mul_ps(t, e));

  const __m256 rcp = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(t, _mm256_set1_ps(2.0f)));
  const __m256 w = _mm256_mul_ps(_mm256_sub_ps(t, _mm256_set1_ps(3.5f)), rcp);
  __m256 h = _mm256_set1_ps(detail::kErfcH9);
  h = madd(h, w, _mm256_set1_ps(detail::kErfcH8));
  h = madd(h, w, _mm256_set1_ps(detail::kErfcH7));
  h = madd(h, w, _mm256_set1_ps(detail::kErfcH6));
  h = madd(h, w, _mm256_set1_ps(detail::kErfcH5));
  h = madd(h, w, _mm256_set1_ps(detail::kErfcH4));
  h = madd(h, w, _mm256_set1_ps(detail::kErfcH3));
  h = madd(h, w, _mm256_set1_ps(detail::kErfcH2));
  h = madd(h, w, _mm256_set1_ps(detail::kErfcH1));
  h = madd(h, w, _mm256_set1_ps(detail::kErfcH0));
  const __m256 xh = _mm256_and_ps(ax, _mm256_castsi256_ps(_mm256_set1_epi32(detail::kHeadMask)));
  const __m256 half = _mm256_set1_ps(0.5f);
  const __m256 sq_hi = _mm256_mul_ps(half, _mm256_mul_ps(xh, xh));
  const __m256 sq_lo = _mm256_mul_ps(half, _mm256_mul_ps(_mm256_sub_ps(ax, xh), _mm256_add_ps(ax, xh)));
  const __m256 neg = _mm256_set1_ps(-0.0f);
  const __m256 erfc_large = _mm256_mul_ps(
      exp_hilo(_mm256_xor_ps(sq_hi, neg), _mm256_xor_ps(sq_lo, neg)), _mm256_mul_ps(h, rcp));
  const __m256 small = _mm256_cmp_ps(t, _mm256_set1_ps(detail::kGeluSplit), _CMP_LT_OQ);
  const __m256 erfc = _mm256_blendv_ps(erfc_large, erfc_small, small);
  const __m256 half_erfc = _mm256_mul_ps(half, erfc);
  const __m256 nonneg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
  const __m256 phi = _mm256_blendv_ps(half_erfc, _mm256_sub_ps(_mm256_set1_ps(1.0f), half_erfc), nonneg);
  return _mm256_mul_ps(x, phi);
}

// Horizontal sums.
static inline float hsum_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
static inline float hmax_ps(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Lane mask with the first `count` (0..8) lanes set, for maskload/maskstore.
static inline __m256i tail_mask(size_t count) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(count)), idx);
}

// float -> int8 with round-half-even and clamping to [lo, hi] (= [-128-zp, 127-zp]) before the
// zero point is added; 8 lanes in, 8 bytes out (low 64 bits of the result).
static inline __m128i quantize8_ps(__m256 v, __m256 lo, __m256 hi, __m256i zp) {
  v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
  const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), zp);
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  return _mm_packs_epi16(w, w);
}
// Same for 32 lanes (4 vectors) -> 32 bytes in order.
static inline __m256i quantize32_ps(__m256 a, __m256 b, __m256 c, __m256 d, __m256 lo, __m256 hi,
                                    __m256i zp) {
  const __m256i qa = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(a, lo), hi)), zp);
  const __m256i qb = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(b, lo), hi)), zp);
  const __m256i qc = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(c, lo), hi)), zp);
  const __m256i qd = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(d, lo), hi)), zp);
  const __m256i ab = _mm256_packs_epi32(qa, qb);  // a0-3 b0-3 | a4-7 b4-7
  const __m256i cd = _mm256_packs_epi32(qc, qd);
  const __m256i abcd = _mm256_packs_epi16(ab, cd);  // a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7
  return _mm256_permutevar8x32_epi32(abcd, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

}  // namespace avx2
}  // namespace kernels
}  // namespace edgebert
