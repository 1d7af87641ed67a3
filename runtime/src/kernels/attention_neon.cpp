// SPDX-License-Identifier: Apache-2.0
// Attention core for one head, int8, NEON implementations for aarch64: one for every ARMv8-A core
// (widening multiplies, vmull_s8 + vpadalq_s16) and one for cores with the dot-product extension
// (sdot, vdotq_s32; Cortex-A55/A75 and later), chosen at run time by attention_s8_kernel().
//
// Same recipe as attention_head_s8_portable (see attention.h and numerics.h), operation for
// operation: the int32 dot products are exact, the float steps (score scaling, exp, probability
// and context quantization) are the same IEEE operations (fused multiply-adds in the exp, as
// numerics.h's fused_madd; nothing else fused: -ffp-contract=off), so both give identical bytes.
//
// Layout (per call):
//   * only valid keys are used, in order (masked keys cost nothing): scores and probabilities of
//     row i are stored compacted at offset i*n;
//   * the pack step repacks V of the valid keys into `packed` in groups of 4 keys as
//     [group][d][4 keys] (vst4q_s8), a partial last group zero-padded; K is read in place;
//   * query rows go in blocks of 4: scores (4 rows x 4 keys per micro-kernel, straight from the
//     K rows) -> softmax -> uint8 probabilities -> P.V (4 rows x 16 channels with sdot, 4 x 8
//     with widening multiplies), requantized to the context.
// pq <= 127 (numerics.h), so probabilities are valid int8 operands for sdot / vmull_s8.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/attention_window.h"
#include "kernels/attention_window_impl.h"
#include "kernels/numerics.h"

// The dot-product micro-kernels are compiled for ARMv8.2-A + dotprod through a function attribute
// (not a per-file flag), so no other code of this file can pick up those instructions. Clang
// before 16 only declares vdotq_s32 when the whole file targets dotprod; there the sdot
// instruction is written as inline assembly (assembled with the function's target features).
#if defined(__clang__) && !defined(__ARM_FEATURE_DOTPROD) && __clang_major__ < 16
#define EB_SDOT_ASM 1
#define EB_TARGET_DOTPROD __attribute__((target("dotprod")))
#elif defined(__clang__)
#define EB_SDOT_ASM 0
#define EB_TARGET_DOTPROD __attribute__((target("dotprod")))
#else
#define EB_SDOT_ASM 0
#define EB_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif

namespace edgebert {
namespace kernels {

namespace {

constexpr int kMaxHd = kAttentionMaxHeadDimNeon;

EB_TARGET_DOTPROD static inline int32x4_t sdot(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if EB_SDOT_ASM
  __asm__("sdot %0.4s, %1.16b, %2.16b" : "+w"(acc) : "w"(a), "w"(b));
  return acc;
#else
  return vdotq_s32(acc, a, b);
#endif
}

// ---- scores: 4 query rows x 4 keys over the first len16 (multiple of 16) channels.
// out[r] = [q_r . k_0, q_r . k_1, q_r . k_2, q_r . k_3] (partial: channels [0, len16)).
// Dot-product form: per 16 channels, 16 independent accumulators of 4 partial sums each, reduced
// with pairwise adds at the end.
EB_TARGET_DOTPROD __attribute__((noinline)) static void qk_4x4_dot(const int8_t* const q[4],
                                                                   const int8_t* const k[4], int len16,
                                                                   int32x4_t out[4]) {
  int32x4_t c[4][4];
  for (auto& row : c)
    for (auto& x : row) x = vdupq_n_s32(0);
  for (int d = 0; d < len16; d += 16) {
    const int8x16_t b0 = vld1q_s8(k[0] + d), b1 = vld1q_s8(k[1] + d);
    const int8x16_t b2 = vld1q_s8(k[2] + d), b3 = vld1q_s8(k[3] + d);
    for (int r = 0; r < 4; ++r) {
      const int8x16_t a = vld1q_s8(q[r] + d);
      c[r][0] = sdot(c[r][0], a, b0);
      c[r][1] = sdot(c[r][1], a, b1);
      c[r][2] = sdot(c[r][2], a, b2);
      c[r][3] = sdot(c[r][3], a, b3);
    }
  }
  for (int r = 0; r < 4; ++r) out[r] = vpaddq_s32(vpaddq_s32(c[r][0], c[r][1]), vpaddq_s32(c[r][2], c[r][3]));
}

// Same with widening multiplies: vmull_s8 of 8 channel pairs (int16, never overflows: one product
// is at most 128*128) accumulated pairwise into int32 with vpadalq_s16.
__attribute__((noinline)) static void qk_4x4_plain(const int8_t* const q[4], const int8_t* const k[4], int len16,
                                                   int32x4_t out[4]) {
  int32x4_t c[4][4];
  for (auto& row : c)
    for (auto& x : row) x = vdupq_n_s32(0);
  for (int d = 0; d < len16; d += 8) {  // 8 channels per step: 16 accumulators + 8 operands fit the registers
    int8x8_t b[4];
    for (int t = 0; t < 4; ++t) b[t] = vld1_s8(k[t] + d);
    for (int r = 0; r < 4; ++r) {
      const int8x8_t a = vld1_s8(q[r] + d);
      for (int t = 0; t < 4; ++t) c[r][t] = vpadalq_s16(c[r][t], vmull_s8(a, b[t]));
    }
  }
  for (int r = 0; r < 4; ++r) out[r] = vpaddq_s32(vpaddq_s32(c[r][0], c[r][1]), vpaddq_s32(c[r][2], c[r][3]));
}

// ---- P.V over `ngroups` packed groups of 4 keys (vp: this channel tile of the first group,
// groups gstride bytes apart); p[r] + 4*g holds row r's 4 probabilities of group g.
// acc[r][c] += context accumulators of channels 4c..4c+3 (c < 4 for the dot form, < 2 for plain).
EB_TARGET_DOTPROD __attribute__((noinline)) static void pv_4x16_dot(const uint8_t* const p[4], const int8_t* vp,
                                                                    size_t gstride, int ngroups,
                                                                    int32x4_t acc[4][4]) {
  int32x4_t c[4][4];
  for (int r = 0; r < 4; ++r)
    for (int t = 0; t < 4; ++t) c[r][t] = acc[r][t];
  for (int g = 0; g < ngroups; ++g, vp += gstride) {
    const int8x16_t v0 = vld1q_s8(vp), v1 = vld1q_s8(vp + 16), v2 = vld1q_s8(vp + 32), v3 = vld1q_s8(vp + 48);
    for (int r = 0; r < 4; ++r) {
      uint32_t w;
      std::memcpy(&w, p[r] + 4 * g, 4);
      const int8x16_t pr = vreinterpretq_s8_u32(vdupq_n_u32(w));
      c[r][0] = sdot(c[r][0], v0, pr);
      c[r][1] = sdot(c[r][1], v1, pr);
      c[r][2] = sdot(c[r][2], v2, pr);
      c[r][3] = sdot(c[r][3], v3, pr);
    }
  }
  for (int r = 0; r < 4; ++r)
    for (int t = 0; t < 4; ++t) acc[r][t] = c[r][t];
}

__attribute__((noinline)) static void pv_4x8_plain(const uint8_t* const p[4], const int8_t* vp, size_t gstride,
                                                   int ngroups, int32x4_t acc[4][4]) {
  // c[r][2t] / c[r][2t+1]: channels (4t, 4t+1) / (4t+2, 4t+3) as pair sums over the 4 keys
  int32x4_t c[4][4];
  for (auto& row : c)
    for (auto& x : row) x = vdupq_n_s32(0);
  for (int g = 0; g < ngroups; ++g, vp += gstride) {
    const int8x16_t v0 = vld1q_s8(vp), v1 = vld1q_s8(vp + 16);
    for (int r = 0; r < 4; ++r) {
      uint32_t w;
      std::memcpy(&w, p[r] + 4 * g, 4);
      const int8x16_t pr = vreinterpretq_s8_u32(vdupq_n_u32(w));
      c[r][0] = vpadalq_s16(c[r][0], vmull_s8(vget_low_s8(v0), vget_low_s8(pr)));
      c[r][1] = vpadalq_s16(c[r][1], vmull_high_s8(v0, pr));
      c[r][2] = vpadalq_s16(c[r][2], vmull_s8(vget_low_s8(v1), vget_low_s8(pr)));
      c[r][3] = vpadalq_s16(c[r][3], vmull_high_s8(v1, pr));
    }
  }
  for (int r = 0; r < 4; ++r) {
    acc[r][0] = vaddq_s32(acc[r][0], vpaddq_s32(c[r][0], c[r][1]));
    acc[r][1] = vaddq_s32(acc[r][1], vpaddq_s32(c[r][2], c[r][3]));
  }
}

// ---- float steps, lane for lane the scalar recipes of numerics.h (fused multiply-adds exactly
// where they have fused_madd: the exp)

// detail::exp_approx(x) for x that is not NaN.
static inline float32x4_t exp_ps(float32x4_t x_in) {
  using namespace detail;
  const float32x4_t x = vminq_f32(x_in, vdupq_n_f32(kExpHi));
  const float32x4_t xc = vmaxq_f32(x, vdupq_n_f32(kExpLo));
  const float32x4_t magic = vdupq_n_f32(kExpMagic);
  const float32x4_t z = vfmaq_f32(magic, xc, vdupq_n_f32(kLog2e));
  const float32x4_t nf = vsubq_f32(z, magic);
  const uint32x4_t pow2n = vaddq_u32(vshlq_n_u32(vreinterpretq_u32_f32(z), 23), vdupq_n_u32(kExpBias));
  const float32x4_t r = vfmsq_f32(vfmsq_f32(xc, nf, vdupq_n_f32(kLn2Hi)), nf, vdupq_n_f32(kLn2Lo));
  float32x4_t p = vdupq_n_f32(kExpP6);
  p = vfmaq_f32(vdupq_n_f32(kExpP5), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpP4), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpP3), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpP2), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpP1), p, r);
  p = vfmaq_f32(vdupq_n_f32(kExpP0), p, r);
  const float32x4_t y = vmulq_f32(p, vreinterpretq_f32_u32(pow2n));
  return vbslq_f32(vcgeq_f32(x, vdupq_n_f32(kExpLo)), y, vdupq_n_f32(0.0f));
}

static float row_max(const float* s, int len) {
  float32x4_t m0 = vdupq_n_f32(-__builtin_inff()), m1 = m0;
  int j = 0;
  for (; j + 8 <= len; j += 8) {
    m0 = vmaxq_f32(m0, vld1q_f32(s + j));
    m1 = vmaxq_f32(m1, vld1q_f32(s + j + 4));
  }
  float m = vmaxvq_f32(vmaxq_f32(m0, m1));
  for (; j < len; ++j) m = s[j] > m ? s[j] : m;
  return m;
}

// out[j] = round_half_even(min(exp(s[j] - m) * 127, 127)) for j < len; returns their sum.
static int32_t softmax_quantize_row(const float* s, int len, float m, uint8_t* out) {
  const float32x4_t vm = vdupq_n_f32(m);
  const float32x4_t pm = vdupq_n_f32(detail::attention_prob_multiplier());
  const float32x4_t top = vdupq_n_f32(detail::kAttentionProbLevels);
  uint32x4_t sum = vdupq_n_u32(0);
  int j = 0;
  for (; j + 16 <= len; j += 16) {
    int32x4_t q[4];
    for (int t = 0; t < 4; ++t) {
      const float32x4_t e = exp_ps(vsubq_f32(vld1q_f32(s + j + 4 * t), vm));
      q[t] = vcvtnq_s32_f32(vminq_f32(vmulq_f32(e, pm), top));
    }
    const int16x8_t lo = vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]));
    const int16x8_t hi = vcombine_s16(vmovn_s32(q[2]), vmovn_s32(q[3]));
    const uint8x16_t b = vcombine_u8(vmovn_u16(vreinterpretq_u16_s16(lo)), vmovn_u16(vreinterpretq_u16_s16(hi)));
    vst1q_u8(out + j, b);
    sum = vpadalq_u16(sum, vpaddlq_u8(b));
  }
  int32_t total = static_cast<int32_t>(vaddvq_u32(sum));
  for (; j < len; ++j) {
    const float e = detail::exp_approx(s[j] - m);
    const float v = detail::clamp_hi(e * detail::attention_prob_multiplier(), detail::kAttentionProbLevels);
    out[j] = static_cast<uint8_t>(static_cast<int32_t>(detail::round_half_even(v)));
    total += out[j];
  }
  return total;
}

// 4 int32 accumulators -> 4 int8 context values (as detail::quantize_value_s8).
static inline int32x4_t requant4(int32x4_t acc, float32x4_t mult, float32x4_t lo, float32x4_t hi, int32x4_t zp) {
  const float32x4_t f = vminq_f32(vmaxq_f32(vmulq_f32(vcvtq_f32_s32(acc), mult), lo), hi);
  return vaddq_s32(vcvtnq_s32_f32(f), zp);
}

// Packs rows r[0..3] (nullptr = zero row) of len bytes into dst[d*4 + t] = r[t][d].
static void pack_group4(const int8_t* const r[4], int len, int8_t* dst) {
  int d = 0;
  const int8x16_t zero = vdupq_n_s8(0);
  for (; d + 16 <= len; d += 16) {
    int8x16x4_t v;
    v.val[0] = r[0] ? vld1q_s8(r[0] + d) : zero;
    v.val[1] = r[1] ? vld1q_s8(r[1] + d) : zero;
    v.val[2] = r[2] ? vld1q_s8(r[2] + d) : zero;
    v.val[3] = r[3] ? vld1q_s8(r[3] + d) : zero;
    vst4q_s8(dst + 4 * d, v);
  }
  for (; d < len; ++d)
    for (int t = 0; t < 4; ++t) dst[4 * d + t] = r[t] ? r[t][d] : 0;
}

// Pack step: V of the valid keys in groups of 4 (the partial last group zero-padded), then 64
// zero bytes (the last channel tile reads up to 64 bytes past a group). K is read in place.
void pack_s8(const AttentionHeadS8& a) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || hd > kMaxHd) return;
  const size_t stride = a.qkv_stride, gstride = 4 * static_cast<size_t>(hd);
  const int8_t* vg[4] = {nullptr, nullptr, nullptr, nullptr};
  int nv = 0, g = 0;
  for (int j = 0; j < n; ++j) {
    if (a.key_mask != nullptr && a.key_mask[j] == 0) continue;
    vg[nv++] = a.v + static_cast<size_t>(j) * stride;
    if (nv == 4) {
      pack_group4(vg, hd, a.packed + static_cast<size_t>(g++) * gstride);
      nv = 0;
      for (auto& p : vg) p = nullptr;
    }
  }
  if (nv > 0) pack_group4(vg, hd, a.packed + static_cast<size_t>(g++) * gstride);
  std::memset(a.packed + static_cast<size_t>(g) * gstride, 0, 64);
}

// Scores of 4 query rows (rows of them stored) against kc <= 4 keys kp[0..kc) (kp[t] for t >= kc
// is set to kp[0] here): srow[r][j0 + t] = (q_r . k_t) * scale.
template <bool kDot>
static void scores_4x4(const int8_t* const qr[4], const int8_t* kp[4], int kc, int rows, int hd, float32x4_t vscale,
                       float* const srow[4], int j0) {
  for (int t = kc; t < 4; ++t) kp[t] = kp[0];
  const int len16 = hd & ~15;
  int32x4_t acc[4];
  if (kDot)
    qk_4x4_dot(qr, kp, len16, acc);
  else
    qk_4x4_plain(qr, kp, len16, acc);
  if (len16 < hd) {  // channel tail
    alignas(16) int32_t tmp[4][4];
    for (int r = 0; r < 4; ++r) vst1q_s32(tmp[r], acc[r]);
    for (int r = 0; r < rows; ++r)
      for (int t = 0; t < kc; ++t) {
        int32_t s = 0;
        for (int d = len16; d < hd; ++d) s += static_cast<int32_t>(qr[r][d]) * static_cast<int32_t>(kp[t][d]);
        tmp[r][t] += s;
      }
    for (int r = 0; r < 4; ++r) acc[r] = vld1q_s32(tmp[r]);
  }
  for (int r = 0; r < rows; ++r) {
    const float32x4_t f = vmulq_f32(vcvtq_f32_s32(acc[r]), vscale);
    if (kc == 4) {
      vst1q_f32(srow[r] + j0, f);
    } else {
      alignas(16) float tmp[4];
      vst1q_f32(tmp, f);
      for (int t = 0; t < kc; ++t) srow[r][j0 + t] = tmp[t];
    }
  }
}

// The P.V step of a block of 4 query rows: ngroups packed groups from vpack with the rows'
// probabilities pr[r] (4 per group), plus the partial group vtail (nullptr: none) with tail_p[r],
// requantized into out[r] (rows of them) with out_mult[r], or for a float context (out_f32[r]) the
// floats acc * out_mult[r].
template <bool kDot>
static void pv_rows(const uint8_t* const pr[4], const uint8_t* const tail_p[4], const int8_t* vpack, const int8_t* vtail,
                    int ngroups, int hd, int rows, const float out_mult[4], int32_t zp, int8_t* const out[4],
                    float* const out_f32[4]) {
  const size_t gstride = 4 * static_cast<size_t>(hd);
  const float32x4_t lo = vdupq_n_f32(-128.0f - static_cast<float>(zp));
  const float32x4_t hi = vdupq_n_f32(127.0f - static_cast<float>(zp));
  const int32x4_t vzp = vdupq_n_s32(zp);
  constexpr int kTile = kDot ? 16 : 8;  // channels per P.V micro-kernel call
  for (int d0 = 0; d0 < hd; d0 += kTile) {
    int32x4_t acc[4][4];
    for (auto& row : acc)
      for (auto& x : row) x = vdupq_n_s32(0);
    if (kDot) {
      pv_4x16_dot(pr, vpack + 4 * d0, gstride, ngroups, acc);
      if (vtail != nullptr) pv_4x16_dot(tail_p, vtail + 4 * d0, gstride, 1, acc);
    } else {
      pv_4x8_plain(pr, vpack + 4 * d0, gstride, ngroups, acc);
      if (vtail != nullptr) pv_4x8_plain(tail_p, vtail + 4 * d0, gstride, 1, acc);
    }
    const int cnt = hd - d0 < kTile ? hd - d0 : kTile;
    for (int r = 0; r < rows; ++r) {
      const float32x4_t mult = vdupq_n_f32(out_mult[r]);
      if (out_f32[r] != nullptr) {
        alignas(16) float tmp[16];
        float* dst = cnt == kTile ? out_f32[r] + d0 : tmp;
        for (int k = 0; k < kTile / 4; ++k) vst1q_f32(dst + 4 * k, vmulq_f32(vcvtq_f32_s32(acc[r][k]), mult));
        if (cnt < kTile) std::memcpy(out_f32[r] + d0, tmp, static_cast<size_t>(cnt) * sizeof(float));
        continue;
      }
      int16x8_t w0 = vcombine_s16(vqmovn_s32(requant4(acc[r][0], mult, lo, hi, vzp)),
                                  vqmovn_s32(requant4(acc[r][1], mult, lo, hi, vzp)));
      int16x8_t w1 = w0;
      if (kDot)
        w1 = vcombine_s16(vqmovn_s32(requant4(acc[r][2], mult, lo, hi, vzp)),
                          vqmovn_s32(requant4(acc[r][3], mult, lo, hi, vzp)));
      const int8x16_t b = vcombine_s8(vqmovn_s16(w0), vqmovn_s16(w1));
      if (cnt == 16) {
        vst1q_s8(out[r] + d0, b);
      } else if (cnt == 8) {
        vst1_s8(out[r] + d0, vget_low_s8(b));
      } else {
        alignas(16) int8_t tmp[16];
        vst1q_s8(tmp, b);
        std::memcpy(out[r] + d0, tmp, static_cast<size_t>(cnt));
      }
    }
  }
}

// Row pointers of the query block [i0, i0 + rows): query, scores, probabilities, context (missing
// rows repeat row 0 and are never stored).
static void block_rows(const AttentionHeadS8& a, int i0, int rows, int row_begin, const int8_t* qr[4], float* srow[4],
                       uint8_t* prow[4], int8_t* out[4], float* out_f32[4]) {
  for (int r = 0; r < 4; ++r) {
    const int rr = r < rows ? r : 0;
    qr[r] = a.q + static_cast<size_t>(i0 + rr) * a.qkv_stride;
    srow[r] = a.scores + static_cast<size_t>(i0 - row_begin + rr) * a.n;
    prow[r] = a.probs + static_cast<size_t>(i0 - row_begin + rr) * a.n;
    out[r] = attention_context_row(a, i0 + rr);
    out_f32[r] = attention_context_row_f32(a, i0 + rr);
  }
}

template <bool kDot>
void rows_s8(const AttentionHeadS8& a, int row_begin, int row_end) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || row_begin >= row_end) return;
  if (hd > kMaxHd) {
    kAttentionS8Portable.rows(a, row_begin, row_end);
    return;
  }
  const size_t stride = a.qkv_stride;
  const int32_t zp = a.context_zero_point;
  const size_t row_bytes = static_cast<size_t>(hd);
  const uint8_t* mask = a.key_mask;
  const int nvalid = attention_valid_keys(a.key_mask, a.n);
  if (nvalid == 0) {
    attention_s8_fill_unattended(a, row_begin, row_end);
    return;
  }
  const int ngroups = nvalid / 4, vrem = nvalid % 4;
  const size_t gstride = 4 * row_bytes;
  const int8_t* vpack = a.packed;
  const int8_t* vtail = a.packed + static_cast<size_t>(ngroups) * gstride;

  const float32x4_t vscale = vdupq_n_f32(detail::attention_score_scale(a.q_scale, a.k_scale, hd));

  for (int i0 = row_begin; i0 < row_end; i0 += 4) {
    const int rows = row_end - i0 < 4 ? row_end - i0 : 4;
    const int8_t* qr[4];
    float* srow[4];
    uint8_t* prow[4];
    int8_t* out[4];
    float* out_f32[4];
    block_rows(a, i0, rows, row_begin, qr, srow, prow, out, out_f32);

    // ---- scores of the valid keys, 4 at a time, compacted
    int jn = 0;  // next key to look at
    for (int j0 = 0; j0 < nvalid; j0 += 4) {
      const int8_t* kp[4] = {nullptr, nullptr, nullptr, nullptr};
      int kc = 0;
      for (; kc < 4 && jn < n; ++jn) {
        if (mask != nullptr && mask[jn] == 0) continue;
        kp[kc++] = a.k + static_cast<size_t>(jn) * stride;
      }
      scores_4x4<kDot>(qr, kp, kc, rows, hd, vscale, srow, j0);
    }

    // ---- softmax -> uint8 probabilities
    float out_mult[4] = {0, 0, 0, 0};
    for (int r = 0; r < rows; ++r) {
      const float m = row_max(srow[r], nvalid);
      const int32_t prob_sum = softmax_quantize_row(srow[r], nvalid, m, prow[r]);
      out_mult[r] = detail::attention_context_multiplier(a.v_scale, a.context_scale, prob_sum);
    }
    // the partial group's probabilities, zero-padded to 4
    alignas(4) uint8_t tail_p[4][4];
    const uint8_t* tail_ptr[4];
    for (int r = 0; r < 4; ++r) {
      for (int t = 0; t < 4; ++t) tail_p[r][t] = t < vrem ? prow[r][4 * ngroups + t] : 0;
      tail_ptr[r] = tail_p[r];
    }
    const uint8_t* const pr[4] = {prow[0], prow[1], prow[2], prow[3]};

    // ---- context = P.V, requantized
    pv_rows<kDot>(pr, tail_ptr, vpack, vrem > 0 ? vtail : nullptr, ngroups, hd, rows, out_mult, zp, out, out_f32);
  }
}

// ---- sliding window (attention_window.h), blocked as the AVX-512 variant: V of every key packed
// once in groups of 4 from key 0 (padding keys too; the mask is applied per row), K read in place;
// per block of 4 query rows the scores of the band's keys [band.base, band.hi) 4 at a time, each
// row's window softmax (window_band_row) and P.V over the band's groups. The portable window
// body's bytes: exact int32 sums, the same float steps per key, zero probabilities add nothing.
void pack_window_s8(const AttentionHeadS8& a) {
  pack_window_all_keys(a, pack_s8);
}

template <bool kDot>
void rows_window_s8(const AttentionHeadS8& a, KeyWindow window, int row_begin, int row_end) {
  if (window_rows_done_elsewhere(a, window, row_begin, row_end, kMaxHd)) return;
  const int n = a.n, hd = a.head_dim;
  const size_t stride = a.qkv_stride;
  const float32x4_t vscale = vdupq_n_f32(detail::attention_score_scale(a.q_scale, a.k_scale, hd));
  for_each_band_block(row_begin, row_end, window, n, [&](int i0, int rows, const WindowBand& band) {
    const int8_t* qr[4];
    float* srow[4];
    uint8_t* prow[4];
    int8_t* out[4];
    float* out_f32[4];
    block_rows(a, i0, rows, row_begin, qr, srow, prow, out, out_f32);
    for (int j0 = band.base; j0 < band.hi; j0 += 4) {  // scores at their key index
      const int kc = band.hi - j0 < 4 ? band.hi - j0 : 4;
      const int8_t* kp[4] = {nullptr, nullptr, nullptr, nullptr};
      for (int t = 0; t < kc; ++t) kp[t] = a.k + static_cast<size_t>(j0 + t) * stride;
      scores_4x4<kDot>(qr, kp, kc, rows, hd, vscale, srow, j0);
    }
    float out_mult[4] = {0, 0, 0, 0};
    bool empty[4] = {false, false, false, false};
    for (int r = 0; r < rows; ++r)
      empty[r] = !window_band_row(a, window, i0 + r, band, srow[r], prow[r], row_max, softmax_quantize_row, &out_mult[r]);
    const uint8_t* const pr[4] = {prow[0], prow[1], prow[2], prow[3]};
    const int8_t* vpack;
    const int8_t* vtail;
    int ngroups;
    int32_t tail_word[4];
    window_band_pv(band, a.packed, n, hd, pr, &vpack, &ngroups, &vtail, tail_word);
    alignas(4) uint8_t tail_p[4][4];
    const uint8_t* tail_ptr[4];
    for (int r = 0; r < 4; ++r) {
      std::memcpy(tail_p[r], &tail_word[r], 4);  // little-endian: key t in byte t
      tail_ptr[r] = tail_p[r];
    }
    pv_rows<kDot>(pr, tail_ptr, vpack, vtail, ngroups,
                  hd, rows, out_mult, a.context_zero_point, out, out_f32);
    for (int r = 0; r < rows; ++r)
      if (empty[r]) attention_s8_fill_unattended(a, i0 + r, i0 + r + 1);
  });
}

}  // namespace

const AttentionS8Kernel kAttentionS8Neon = {"neon", pack_s8, rows_s8<false>};
const AttentionS8Kernel kAttentionS8NeonDot = {"neon_dot", pack_s8, rows_s8<true>};

void attention_s8_pack_window_neon(const AttentionHeadS8& a) { pack_window_s8(a); }
void attention_s8_rows_window_neon(const AttentionHeadS8& a, KeyWindow window, int row_begin, int row_end) {
  rows_window_s8<false>(a, window, row_begin, row_end);
}
void attention_s8_rows_window_neon_dot(const AttentionHeadS8& a, KeyWindow window, int row_begin, int row_end) {
  rows_window_s8<true>(a, window, row_begin, row_end);
}

}  // namespace kernels
}  // namespace edgebert

#endif  // __aarch64__
