// SPDX-License-Identifier: Apache-2.0
// Shared numeric recipes of the kernels: the constants and the scalar (auto-vectorizable) math
// that the portable kernels use and that the vector kernels (AVX2, AVX-512, NEON) mirror lane by
// lane, operation for operation, so every path gives the same bits. A multiply-add is fused
// (one rounding) exactly where the recipe says so (fused_madd: the exp); everywhere else a * b + c
// is two roundings: the kernels are compiled with -ffp-contract=off, so no compiler fuses on its
// own, and no variant fuses what the portable code does not.
//
// Everything here has internal linkage (static inline) and uses compiler builtins instead of
// <cmath> inline functions: this header is also included by the *_avx2.cpp files, and an
// out-of-line copy of a shared inline function compiled with -mavx2 must never be picked by the
// linker for the portable code.
#pragma once

#include <cstdint>
#include <cstring>

namespace edgebert {
namespace kernels {
namespace detail {

// ---- attention recipes --------------------------------------------------------------------

// Score = int32 dot(q, k) * score_scale (float).
static inline float attention_score_scale(float q_scale, float k_scale, int head_dim) {
  return q_scale * k_scale / __builtin_sqrtf(static_cast<float>(head_dim));
}
// Probabilities are stored as unnormalized exponentials relative to the row maximum:
//   pq[j] = round_even(e[j] * kAttentionProbLevels), e[j] = exp(s[j] - max(s)) in (0, 1],
// so the largest entry of every row is exactly kAttentionProbLevels and the row's own scale
// follows its spread: a diffuse row over hundreds of keys keeps 7 bits per weight instead of
// rounding 1/n to 0 or 1 step of a fixed 1/255 grid. The PV sum is normalized by the sum of the
// quantized weights, so the weights the context uses sum to exactly 1:
//   context = clamp(round_even(acc * v_scale / (sum_j pq[j] * context_scale)) + zp),
//   acc = sum_j pq[j] * v[j] (int32).
// 127 (not 255) keeps vpmaddubsw's pair sums pq[j]*v[j] + pq[j+1]*v[j+1] within int16.
constexpr float kAttentionProbLevels = 127.0f;
static inline float attention_prob_multiplier() { return kAttentionProbLevels; }
static inline float attention_context_multiplier(float v_scale, float context_scale, int32_t prob_sum) {
  return v_scale / (static_cast<float>(prob_sum) * context_scale);
}

// ---- branch-free selection ---------------------------------------------------------------
// Selects are written with integer masks: GCC does not if-convert `c ? a : b` on floats under the
// default -ftrapping-math (the arms look like conditional FP operations), which would keep every
// loop below scalar.

static inline float bits_to_float(int32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
static inline int32_t float_to_bits(float f) {
  int32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
static inline float select_f(bool c, float a, float b) {
  const int32_t m = -static_cast<int32_t>(c);
  return bits_to_float((float_to_bits(a) & m) | (float_to_bits(b) & ~m));
}

// ---- rounding / clamping ------------------------------------------------------------------

// Round half to even for |v| < 2^22 (all callers clamp first). Branch-free and vectorizable.
static inline float round_half_even(float v) {
#if defined(__FLT_EVAL_METHOD__) && (__FLT_EVAL_METHOD__ != 0)
  return __builtin_nearbyintf(v);  // x87 excess precision would defeat the magic constant
#else
  const float kMagic = 12582912.0f;  // 1.5 * 2^23
  return (v + kMagic) - kMagic;
#endif
}

// max(v, lo) / min(v, hi) with the semantics of the SSE/AVX max/min instructions (a NaN becomes
// the bound), so the portable and AVX2 paths treat every input the same way.
static inline float clamp_lo(float v, float lo) { return select_f(v > lo, v, lo); }
static inline float clamp_hi(float v, float hi) { return select_f(v < hi, v, hi); }

// q = clamp(round_half_even(v) + zp, -128, 127), computed as round(clamp(v, -128-zp, 127-zp))+zp.
static inline int8_t quantize_value_s8(float v, float lo, float hi, int32_t zp) {
  v = clamp_hi(clamp_lo(v, lo), hi);
  return static_cast<int8_t>(static_cast<int32_t>(round_half_even(v)) + zp);
}

// ---- exp ------------------------------------------------------------------------------------
// exp(x) = 2^n * p(r): n = round_half_even(x / ln2) via the 1.5*2^23 "magic" addition (which also
// leaves n in the low mantissa bits), r = x - n*ln2 with a Cody-Waite split of ln2, p = degree-6
// polynomial (Chebyshev interpolant of e^r on [-0.35, 0.35] fitted for edgebert; 3e-9 relative in
// exact arithmetic, ~1e-7 in float). Inputs below kExpLo give 0 (also -inf and NaN); inputs above
// kExpHi are clamped to it.

constexpr float kExpLo = -87.3365448f;  // ln(FLT_MIN)
constexpr float kExpHi = 88.0f;
constexpr float kLog2e = 1.44269504089f;
constexpr float kExpMagic = 12582912.0f;         // 1.5 * 2^23
constexpr float kLn2Hi = 0.693145751953125f;     // 15 significant bits: n * kLn2Hi is exact
constexpr float kLn2Lo = 1.42860676533018e-06f;  // ln2 - kLn2Hi
constexpr float kExpP0 = 1.0f;
constexpr float kExpP1 = 1.0f;
constexpr float kExpP2 = 0.5f;
constexpr float kExpP3 = 1.66664049e-01f;
constexpr float kExpP4 = 4.16663401e-02f;
constexpr float kExpP5 = 8.37595854e-03f;
constexpr float kExpP6 = 1.39421481e-03f;
constexpr uint32_t kExpBias = 127u << 23;

// a * b + c with one rounding (fused multiply-add): the exp recipe below uses it for every
// multiply-add, as the vector variants' vfmadd / vfmaq do. On x86 the portable code is built
// without FMA instructions, so this is libm's (correct, slower) fmaf there; a portable build for
// an FMA-capable target computes it in one instruction.
static inline float fused_madd(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

// exp(hi + lo) where |lo| is small next to hi (lo joins after the range reduction).
static inline float exp_hilo(float hi, float lo) {
  const float x = clamp_hi(hi, kExpHi);
  const float xc = clamp_lo(x, kExpLo);
#if defined(__FLT_EVAL_METHOD__) && (__FLT_EVAL_METHOD__ != 0)
  const float nf = __builtin_nearbyintf((xc + lo) * kLog2e);
  const uint32_t pow2n = (static_cast<uint32_t>(static_cast<int32_t>(nf)) << 23) + kExpBias;
#else
  const float z = fused_madd(xc + lo, kLog2e, kExpMagic);  // low mantissa bits of z hold n
  const float nf = z - kExpMagic;
  const uint32_t pow2n = (static_cast<uint32_t>(float_to_bits(z)) << 23) + kExpBias;
#endif
  const float r = fused_madd(-nf, kLn2Lo, fused_madd(-nf, kLn2Hi, xc)) + lo;
  float p = kExpP6;
  p = fused_madd(p, r, kExpP5);
  p = fused_madd(p, r, kExpP4);
  p = fused_madd(p, r, kExpP3);
  p = fused_madd(p, r, kExpP2);
  p = fused_madd(p, r, kExpP1);
  p = fused_madd(p, r, kExpP0);
  const float y = p * bits_to_float(static_cast<int32_t>(pow2n));
  return select_f(x >= kExpLo, y, 0.0f);  // also maps -inf (and NaN) to 0
}
static inline float exp_approx(float x) { return exp_hilo(x, 0.0f); }

// ---- GELU -----------------------------------------------------------------------------------
// gelu(x) = x * Phi(x), Phi(x) = 1 - erfc(t)/2 for x >= 0 and erfc(t)/2 for x < 0, t = |x|/sqrt2.
//  * t < 0.75: erfc(t) = 1 - t * E(t^2), E = Taylor series of erf(t)/t to degree 8 in t^2.
//  * t >= 0.75: erfc(t) = exp(-t^2) * H(w) / (t + 2), w = (t - 3.5) / (t + 2) in [-0.6, 1),
//    H = degree-9 Chebyshev interpolant of (t + 2) * exp(t^2) * erfc(t) (fitted for edgebert;
//    max rel. error 4e-9 in exact arithmetic). t^2 = x^2/2 is formed exactly (x split into a
//    12-bit head and a tail) so exp(-t^2) keeps full relative accuracy in the far negative tail.

constexpr float kGeluSplit = 0.75f;
constexpr float kInvSqrt2 = 0.707106781187f;
constexpr float kErfE0 = 1.128379167e+00f;
constexpr float kErfE1 = -3.761263890e-01f;
constexpr float kErfE2 = 1.128379167e-01f;
constexpr float kErfE3 = -2.686617065e-02f;
constexpr float kErfE4 = 5.223977625e-03f;
constexpr float kErfE5 = -8.548327023e-04f;
constexpr float kErfE6 = 1.205533298e-04f;
constexpr float kErfE7 = -1.492565036e-05f;
constexpr float kErfE8 = 1.646211437e-06f;
constexpr float kErfcH0 = 8.541151081e-01f;
constexpr float kErfcH1 = -3.959231281e-01f;
constexpr float kErfcH2 = 1.277845683e-01f;
constexpr float kErfcH3 = -2.079143449e-02f;
constexpr float kErfcH4 = -2.813073195e-03f;
constexpr float kErfcH5 = 1.942958906e-03f;
constexpr float kErfcH6 = 4.891868618e-05f;
constexpr float kErfcH7 = -1.901009109e-04f;
constexpr float kErfcH8 = -1.462519153e-06f;
constexpr float kErfcH9 = 1.723109765e-05f;
constexpr int32_t kHeadMask = static_cast<int32_t>(0xFFFFF000u);  // keeps 12 significant bits

static inline float gelu_scalar(float x) {
  const float ax = bits_to_float(float_to_bits(x) & 0x7FFFFFFF);
  const float t = ax * kInvSqrt2;
  // small t
  const float t2 = t * t;
  float e = kErfE8;
  e = e * t2 + kErfE7;
  e = e * t2 + kErfE6;
  e = e * t2 + kErfE5;
  e = e * t2 + kErfE4;
  e = e * t2 + kErfE3;
  e = e * t2 + kErfE2;
  e = e * t2 + kErfE1;
  e = e * t2 + kErfE0;
  const float erfc_small = 1.0f - t * e;
  // large t
  const float rcp = 1.0f / (t + 2.0f);
  const float w = (t - 3.5f) * rcp;
  float h = kErfcH9;
  h = h * w + kErfcH8;
  h = h * w + kErfcH7;
  h = h * w + kErfcH6;
  h = h * w + kErfcH5;
  h = h * w + kErfcH4;
  h = h * w + kErfcH3;
  h = h * w + kErfcH2;
  h = h * w + kErfcH1;
  h = h * w + kErfcH0;
  const float xh = bits_to_float(float_to_bits(ax) & kHeadMask);
  const float sq_hi = 0.5f * (xh * xh);               // exact
  const float sq_lo = 0.5f * ((ax - xh) * (ax + xh));  // small correction
  const float erfc_large = exp_hilo(-sq_hi, -sq_lo) * (h * rcp);
  const float erfc = select_f(t < kGeluSplit, erfc_small, erfc_large);
  const float half_erfc = 0.5f * erfc;
  const float phi = select_f(x >= 0.0f, 1.0f - half_erfc, half_erfc);
  return x * phi;
}

}  // namespace detail
}  // namespace kernels
}  // namespace edgebert
