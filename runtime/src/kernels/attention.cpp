// SPDX-License-Identifier: Apache-2.0
// Attention core for one head: portable implementations (int8 and fp32) and the dispatchers.
// The loops are written so that GCC/Clang can auto-vectorize them (fixed-width partial sums for
// the float reductions, branch-free math from numerics.h).
#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_window.h"
#include "kernels/dispatch.h"
#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {

namespace {

constexpr float kNegInf = -__builtin_inff();

int32_t dot_s8(const int8_t* a, const int8_t* b, int len) {
  int32_t s = 0;
  for (int d = 0; d < len; ++d) s += static_cast<int32_t>(a[d]) * static_cast<int32_t>(b[d]);
  return s;
}

// Scores of query rows q0 and q1 (q1 may be nullptr) against all n keys into s0 / s1 (masked keys
// get -inf). Two rows x two keys per inner loop: four independent int8 dot products that share
// their loads, which the vectorizer turns into widening multiply-adds.
void score_rows_s8(const int8_t* q0, const int8_t* q1, const int8_t* k, size_t stride, int n, int hd,
                   const uint8_t* mask, float scale, float* s0, float* s1) {
  int j = 0;
  if (q1 != nullptr) {
    for (; j + 2 <= n; j += 2) {
      const int8_t* k0 = k + static_cast<size_t>(j) * stride;
      const int8_t* k1 = k0 + stride;
      int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
      for (int d = 0; d < hd; ++d) {
        const int32_t x0 = q0[d], x1 = q1[d], y0 = k0[d], y1 = k1[d];
        a00 += x0 * y0;
        a01 += x0 * y1;
        a10 += x1 * y0;
        a11 += x1 * y1;
      }
      s0[j] = static_cast<float>(a00) * scale;
      s0[j + 1] = static_cast<float>(a01) * scale;
      s1[j] = static_cast<float>(a10) * scale;
      s1[j + 1] = static_cast<float>(a11) * scale;
    }
    for (; j < n; ++j) {
      const int8_t* kj = k + static_cast<size_t>(j) * stride;
      s0[j] = static_cast<float>(dot_s8(q0, kj, hd)) * scale;
      s1[j] = static_cast<float>(dot_s8(q1, kj, hd)) * scale;
    }
  } else {
    for (; j < n; ++j) s0[j] = static_cast<float>(dot_s8(q0, k + static_cast<size_t>(j) * stride, hd)) * scale;
  }
  if (mask != nullptr) {
    for (j = 0; j < n; ++j) {
      if (mask[j] != 0) continue;
      s0[j] = kNegInf;
      if (s1 != nullptr) s1[j] = kNegInf;
    }
  }
}

float dot_f32(const float* a, const float* b, int len) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int d = 0;
  for (; d + 8 <= len; d += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[d + l] * b[d + l];
  for (int l = 0; d < len; ++d, ++l) acc[l] += a[d] * b[d];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));  // = AVX2's hadd tree
}

float row_max(const float* s, int len) {
  float m[8] = {kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf};
  int j = 0;
  for (; j + 8 <= len; j += 8)
    for (int l = 0; l < 8; ++l) m[l] = s[j + l] > m[l] ? s[j + l] : m[l];
  for (; j < len; ++j) m[0] = s[j] > m[0] ? s[j] : m[0];
  for (int l = 1; l < 8; ++l) m[0] = m[l] > m[0] ? m[l] : m[0];
  return m[0];
}

// s[j] <- exp(s[j] - m) (masked entries hold -inf and become 0); returns the sum.
float exp_row(float* s, int len, float m) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int j = 0;
  for (; j + 8 <= len; j += 8) {
    for (int l = 0; l < 8; ++l) {
      const float e = detail::exp_approx(s[j + l] - m);
      s[j + l] = e;
      acc[l] += e;
    }
  }
  for (int l = 0; j < len; ++j, ++l) {
    const float e = detail::exp_approx(s[j] - m);
    s[j] = e;
    acc[l] += e;
  }
  return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));  // = avx2::hsum_ps
}

}  // namespace

// ---------------------------------------------------------------------------------------------
static void attention_s8_pack_portable(const AttentionHeadS8&) {}  // reads K and V in place

static void attention_s8_rows_portable(const AttentionHeadS8& a, int row_begin, int row_end) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || row_begin >= row_end) return;
  if (attention_valid_keys(a.key_mask, n) == 0) {
    attention_s8_fill_unattended(a, row_begin, row_end);
    return;
  }
  const size_t stride = a.qkv_stride;
  const auto [score_scale, lo, hi, zp] = attention_s8_scalars(a);

  for (int i = row_begin; i < row_end; ++i) {
    float* s = a.scores + static_cast<size_t>(i - row_begin) * n;
    uint8_t* p = a.probs + static_cast<size_t>(i - row_begin) * n;
    if ((i - row_begin) % 2 == 0) {  // scores for rows i and i+1
      const bool pair = i + 1 < row_end;
      score_rows_s8(a.q + static_cast<size_t>(i) * stride, pair ? a.q + static_cast<size_t>(i + 1) * stride : nullptr,
                    a.k, stride, n, hd, a.key_mask, score_scale, s, pair ? s + n : nullptr);
    }
    const float m = row_max(s, n);
    exp_row(s, n, m);
    const float pm = detail::attention_prob_multiplier();
    int32_t prob_sum = 0;
    for (int j = 0; j < n; ++j) {
      const float v = detail::clamp_hi(s[j] * pm, detail::kAttentionProbLevels);
      p[j] = static_cast<uint8_t>(static_cast<int32_t>(detail::round_half_even(v)));
      prob_sum += p[j];
    }
    const float out_mult = detail::attention_context_multiplier(a.v_scale, a.context_scale, prob_sum);

    int8_t* ctx = attention_context_row(a, i);
    float* ctx_f32 = attention_context_row_f32(a, i);
    constexpr int kChunk = 256;
    int32_t acc[kChunk];
    for (int d0 = 0; d0 < hd; d0 += kChunk) {
      const int cnt = hd - d0 < kChunk ? hd - d0 : kChunk;
      for (int d = 0; d < cnt; ++d) acc[d] = 0;
      for (int j = 0; j < n; ++j) {
        const int32_t pj = p[j];
        if (pj == 0) continue;
        const int8_t* vj = a.v + static_cast<size_t>(j) * stride + d0;
        for (int d = 0; d < cnt; ++d) acc[d] += pj * static_cast<int32_t>(vj[d]);
      }
      if (ctx_f32)
        for (int d = 0; d < cnt; ++d) ctx_f32[d0 + d] = static_cast<float>(acc[d]) * out_mult;
      else
        for (int d = 0; d < cnt; ++d)
          ctx[d0 + d] = detail::quantize_value_s8(static_cast<float>(acc[d]) * out_mult, lo, hi, zp);
    }
  }
}

// ---------------------------------------------------------------------------------------------
void attention_rows_f32_portable(const AttentionHeadF32& a, int row_begin, int row_end) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || row_begin >= row_end) return;
  if (attention_valid_keys(a.key_mask, n) == 0) {  // no key attended: HF's uniform softmax
    attention_f32_fill_unattended(a, row_begin, row_end);
    return;
  }
  const size_t stride = a.qkv_stride;
  const float scale = 1.0f / __builtin_sqrtf(static_cast<float>(hd));
  for (int i = row_begin; i < row_end; ++i) {
    float* s = a.scores + static_cast<size_t>(i - row_begin) * n;
    const float* qi = a.q + static_cast<size_t>(i) * stride;
    for (int j = 0; j < n; ++j) {
      if (a.key_mask != nullptr && a.key_mask[j] == 0) {
        s[j] = kNegInf;
      } else {
        s[j] = dot_f32(qi, a.k + static_cast<size_t>(j) * stride, hd) * scale;
      }
    }
    const float m = row_max(s, n);
    const float inv = 1.0f / exp_row(s, n, m);
    float* ctx = a.context + static_cast<size_t>(i) * a.context_stride;
    for (int d = 0; d < hd; ++d) ctx[d] = 0.0f;
    for (int j = 0; j < n; ++j) {
      const float pj = s[j] * inv;
      s[j] = pj;
      if (pj == 0.0f) continue;
      const float* vj = a.v + static_cast<size_t>(j) * stride;
      for (int d = 0; d < hd; ++d) ctx[d] += pj * vj[d];
    }
  }
}

const AttentionS8Kernel kAttentionS8Portable = {"portable", attention_s8_pack_portable, attention_s8_rows_portable};

// ---------------------------------------------------------------------------------------------
const AttentionS8Kernel& attention_s8_kernel() { return *kernel_table().attention_s8; }

void attention_head_s8_with(const AttentionS8Kernel& kernel, const AttentionHeadS8& args) {
  kernel.pack(args);
  kernel.rows(args, 0, args.n);
}

void attention_head_s8(const AttentionHeadS8& args) { attention_head_s8_with(attention_s8_kernel(), args); }
void attention_head_s8_portable(const AttentionHeadS8& args) { attention_head_s8_with(kAttentionS8Portable, args); }
#if defined(__x86_64__) || defined(__i386__)
void attention_head_s8_avx512(const AttentionHeadS8& args) { attention_head_s8_with(kAttentionS8Avx512, args); }
void attention_head_s8_avx2(const AttentionHeadS8& args) { attention_head_s8_with(kAttentionS8Avx2, args); }
void attention_head_s8_avx512vnni(const AttentionHeadS8& args) { attention_head_s8_with(kAttentionS8Avx512Vnni, args); }
void attention_head_s8_avxvnni(const AttentionHeadS8& args) { attention_head_s8_with(kAttentionS8AvxVnni, args); }
#endif
#if defined(__aarch64__)
void attention_head_s8_neon(const AttentionHeadS8& args) { attention_head_s8_with(kAttentionS8Neon, args); }
void attention_head_s8_neon_dot(const AttentionHeadS8& args) { attention_head_s8_with(kAttentionS8NeonDot, args); }
#endif

// Key window (attention_window.h): row i over the keys [i - before, i + after] only, each step the
// operation of attention_rows_f32_portable on that key range (a window covering [0, n): its bytes).
void attention_rows_window_f32(const AttentionHeadF32& a, KeyWindow window, int row_begin, int row_end) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || row_begin >= row_end || !window_valid(window)) return;
  const size_t stride = a.qkv_stride;
  const float scale = 1.0f / __builtin_sqrtf(static_cast<float>(hd));
  for (int i = row_begin; i < row_end; ++i) {
    float* s = a.scores + static_cast<size_t>(i - row_begin) * n;
    const float* qi = a.q + static_cast<size_t>(i) * stride;
    const int j0 = window_first_key(window, i), j1 = window_end_key(window, i, n);  // keys [j0, j1)
    const int len = j1 - j0;
    int valid = 0;
    for (int j = j0; j < j1; ++j) {
      if (a.key_mask != nullptr && a.key_mask[j] == 0) {
        s[j - j0] = kNegInf;
      } else {
        s[j - j0] = dot_f32(qi, a.k + static_cast<size_t>(j) * stride, hd) * scale;
        ++valid;
      }
    }
    if (valid == 0) {  // every key of the window is padding: HF's uniform softmax over all keys
      attention_f32_fill_unattended(a, i, i + 1);
      continue;
    }
    float* ctx = a.context + static_cast<size_t>(i) * a.context_stride;
    for (int d = 0; d < hd; ++d) ctx[d] = 0.0f;
    const float m = row_max(s, len);
    const float inv = 1.0f / exp_row(s, len, m);
    for (int j = 0; j < len; ++j) {
      const float pj = s[j] * inv;
      s[j] = pj;
      if (pj == 0.0f) continue;
      const float* vj = a.v + static_cast<size_t>(j0 + j) * stride;
      for (int d = 0; d < hd; ++d) ctx[d] += pj * vj[d];
    }
  }
}

void attention_rows_f32(const AttentionHeadF32& args, int row_begin, int row_end) {
  kernel_table().attention_rows_f32(args, row_begin, row_end);
}

void attention_head_f32(const AttentionHeadF32& args) { attention_rows_f32(args, 0, args.n); }
void attention_head_f32_portable(const AttentionHeadF32& args) { attention_rows_f32_portable(args, 0, args.n); }
#if defined(__x86_64__) || defined(__i386__)
void attention_head_f32_avx2(const AttentionHeadF32& args) { attention_rows_f32_avx2(args, 0, args.n); }
#endif

}  // namespace kernels
}  // namespace edgebert
