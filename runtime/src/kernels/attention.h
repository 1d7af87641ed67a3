// SPDX-License-Identifier: Apache-2.0
// Attention core for one head: softmax(Q K^T / sqrt(d)) V, int8 (hot path) and fp32 (reference
// model). The QKV projections and the output projection are GEMMs and live elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {

// Int8 attention for one head. Numerics (identical recipe in every implementation):
//   acc_s[i,j] = sum_d q[i,d] * k[j,d]                                   (exact, int32)
//   s[i,j]     = float(acc_s) * (q_scale * k_scale / sqrt(head_dim))     (float)
//   e[i,j]     = exp(s[i,j] - max_j s[i,j]) over valid keys, 0 for masked keys
//   pq[i,j]    = round_half_even(e[i,j] * 127)        (uint8; 127 at the row maximum, see numerics.h)
//   acc[i,d]   = sum_j pq[i,j] * v[j,d]                                  (exact, int32)
//   context    = clamp(round_half_even(acc * v_scale / (sum_j pq[i,j] * context_scale)) + zp, -128, 127)
//                or, with context_f32, the float float(acc) * (v_scale / (sum_j pq[i,j] * context_scale))
//                unrounded (the caller sets context_scale 1: the context's value itself)
// A row with no attended key (every key masked, or every key of its window) gets what HF's eager /
// SDPA attention gives it: its scores are all finfo.min, so the softmax is uniform over all n keys
// (masked ones too) and the context is the mean of every value row (attention_s8_fill_unattended).
// Every implementation computes the same bytes: the int32 sums are exact and the float steps
// are the same IEEE operations in the same order (no fused multiply-adds, see numerics.h). A row's
// result does not depend on which other rows are computed with it (see AttentionS8Kernel).
//
// Two steps, so that the query rows of one head can be shared among threads:
//   pack(args)                  K and V of the valid keys -> args.packed (once per head);
//   rows(args, begin, end)      context rows [begin, end) from args.packed (read only, so any
//                               number of threads may run rows() of one head at once, each with
//                               its own scratch).
// Scratch of rows(): `scores` ((end - begin) * n floats, 64-byte aligned) and `probs`
// ((end - begin) * n bytes) hold row i's float scores/exps and quantized probabilities at offset
// (i - begin) * n (vector paths store only the valid keys, compacted); contents afterwards are
// unspecified. `packed` needs attention_s8_packed_bytes(n, head_dim) bytes, 64-byte aligned.
// No heap allocation. head_dim up to kAttentionMaxHeadDimAvx2 runs the AVX2-family paths
// (kAttentionMaxHeadDimNeon the NEON paths); larger heads fall back to the portable code.
struct AttentionHeadS8 {
  const int8_t* q;
  const int8_t* k;
  const int8_t* v;    // row i of Q is q + i*qkv_stride (head_dim entries); same for k, v
  size_t qkv_stride;  // in elements (= bytes)
  int n;
  int head_dim;
  float q_scale, k_scale, v_scale;  // symmetric (zero point 0) dequantization scales
  const uint8_t* key_mask;          // n entries: 1 = attend, 0 = padding key; nullptr = all valid
  float* scores;                    // scratch of rows(), see above
  uint8_t* probs;                   // scratch of rows(), see above
  int8_t* packed;                   // written by pack(), read by rows()
  int8_t* context;
  size_t context_stride;  // row i of the output at context + i*context_stride (head_dim entries)
  float context_scale;
  int32_t context_zero_point;  // q = clamp(round(x / scale) + zp, -128, 127)
  // When set, the context rows are written here as floats (row i at context_f32 + i*context_stride)
  // and `context` is not written: a caller that quantizes each whole row (every head) with its own
  // scale afterwards (the q/k-norm families' per-row output GEMM input, docs/llm-encoders.md).
  float* context_f32;
};

// Row i of the context: its int8 row, or null when the context is float; and its float row, or null.
static inline int8_t* attention_context_row(const AttentionHeadS8& a, int i) {
  return a.context_f32 ? nullptr : a.context + static_cast<size_t>(i) * a.context_stride;
}
static inline float* attention_context_row_f32(const AttentionHeadS8& a, int i) {
  return a.context_f32 ? a.context_f32 + static_cast<size_t>(i) * a.context_stride : nullptr;
}

constexpr int kAttentionMaxHeadDimAvx2 = 1024;
constexpr int kAttentionMaxHeadDimNeon = 1024;

// Scratch sizes the caller must provide for `rows` query rows of a head of n tokens. The inline
// helpers of this header are static: it is included by files compiled for AVX2 / AVX-512, and an
// out-of-line copy of a shared inline function compiled with those flags must never be what the
// linker keeps for the portable code (see numerics.h).
static constexpr size_t attention_s8_scores_floats(size_t rows, size_t n) { return rows * n; }
static constexpr size_t attention_s8_probs_bytes(size_t rows, size_t n) { return rows * n; }
// Packed K and V of one head (every implementation's layout fits).
static constexpr size_t attention_s8_packed_bytes(size_t n, size_t head_dim) {
  return (n + 4) * head_dim + (n + 16) * (head_dim + 8) + 256;
}

// Keys that are attended (key_mask[j] != 0; all n without a mask). Every implementation's pack
// and rows steps derive their layout from it.
static inline int attention_valid_keys(const uint8_t* key_mask, int n) {
  if (key_mask == nullptr) return n;
  int valid = 0;
  for (int j = 0; j < n; ++j) valid += key_mask[j] != 0;
  return valid;
}

// Context rows [row_begin, row_end) that attend no key: as HF, where such a row's additive mask is
// finfo.min at every key, so softmax is uniform over all n keys, the mean of all n value rows,
// quantized as any context: clamp(round_half_even(sum_j v[j,d] * v_scale / (n * context_scale)) +
// zp) (the int32 sum exact, one float product and quotient: every variant's bytes).
static inline void attention_s8_fill_unattended(const AttentionHeadS8& a, int row_begin, int row_end) {
  const int32_t zp = a.context_zero_point;
  const float lo = -128.0f - static_cast<float>(zp), hi = 127.0f - static_cast<float>(zp);
  const float mult = a.v_scale / (static_cast<float>(a.n) * a.context_scale);
  for (int d = 0; d < a.head_dim; ++d) {
    int32_t sum = 0;
    for (int j = 0; j < a.n; ++j) sum += a.v[static_cast<size_t>(j) * a.qkv_stride + d];
    const float x = static_cast<float>(sum) * mult;
    const int8_t q = detail::quantize_value_s8(x, lo, hi, zp);
    for (int i = row_begin; i < row_end; ++i) {
      if (float* f = attention_context_row_f32(a, i))
        f[d] = x;
      else
        attention_context_row(a, i)[d] = q;
    }
  }
}

// The scalar constants of the portable int8 rows: the score scale and the context's clamp bounds
// around its zero point (q = clamp(round(x) + zp): x in [lo, hi]).
struct AttentionS8Scalars {
  float score_scale, lo, hi;
  int32_t zp;
};
static inline AttentionS8Scalars attention_s8_scalars(const AttentionHeadS8& a) {
  const int32_t zp = a.context_zero_point;
  return {detail::attention_score_scale(a.q_scale, a.k_scale, a.head_dim), -128.0f - static_cast<float>(zp),
          127.0f - static_cast<float>(zp), zp};
}

// One implementation: its pack and rows steps share a private layout of `packed`.
struct AttentionS8Kernel {
  const char* name;
  void (*pack)(const AttentionHeadS8& args);
  void (*rows)(const AttentionHeadS8& args, int row_begin, int row_end);
};

extern const AttentionS8Kernel kAttentionS8Portable;
#if defined(__x86_64__) || defined(__i386__)
extern const AttentionS8Kernel kAttentionS8Avx2;  // requires cpu_has_avx2_fma()
// The AVX2 kernel with vpdpbusd for Q.K^T and P.V; bit-identical results.
extern const AttentionS8Kernel kAttentionS8Avx512Vnni;  // requires cpu_has_avx512vnni()
extern const AttentionS8Kernel kAttentionS8AvxVnni;     // requires cpu_has_avxvnni()
// 512-bit: 16 keys per Q.K^T vector and 16 channels per P.V vector, zmm vpdpbusd; same bytes.
extern const AttentionS8Kernel kAttentionS8Avx512;  // requires cpu_has_avx512()
#endif
#if defined(__aarch64__)
extern const AttentionS8Kernel kAttentionS8Neon;     // any ARMv8-A core
extern const AttentionS8Kernel kAttentionS8NeonDot;  // requires cpu_has_neon_dot()
#endif

const AttentionS8Kernel& attention_s8_kernel();  // kernel_table().attention_s8 (dispatch.h)

// Whole head in one call: pack, then rows [0, n) (scratch for n rows).
void attention_head_s8_with(const AttentionS8Kernel& kernel, const AttentionHeadS8& args);
void attention_head_s8(const AttentionHeadS8& args);  // with attention_s8_kernel()
void attention_head_s8_portable(const AttentionHeadS8& args);
#if defined(__x86_64__) || defined(__i386__)
void attention_head_s8_avx2(const AttentionHeadS8& args);
void attention_head_s8_avx512vnni(const AttentionHeadS8& args);
void attention_head_s8_avxvnni(const AttentionHeadS8& args);
void attention_head_s8_avx512(const AttentionHeadS8& args);
#endif
#if defined(__aarch64__)
void attention_head_s8_neon(const AttentionHeadS8& args);
void attention_head_s8_neon_dot(const AttentionHeadS8& args);
#endif

// Float attention for one head (reference model):
//   p[i,:] = softmax_j(q_i . k_j / sqrt(head_dim)) over valid keys (masked keys get 0)
//   context[i,:] = sum_j p[i,j] * v[j,:]
// A row with every key masked gets a zero context. qkv_stride and context_stride are in floats.
// rows(args, begin, end) computes context rows [begin, end); `scores` ((end - begin) * n floats)
// is its scratch (row i at offset (i - begin) * n). No heap allocation, nothing shared between
// calls, so threads may compute different rows of one head at once.
struct AttentionHeadF32 {
  const float* q;
  const float* k;
  const float* v;
  size_t qkv_stride;
  int n;
  int head_dim;
  const uint8_t* key_mask;  // n entries or nullptr
  float* scores;            // scratch, see above
  float* context;
  size_t context_stride;
};

// fp32 rows that attend no key: the mean of all n value rows, as attention_s8_fill_unattended
// (a sum in key order, then one division: every variant's bits).
static inline void attention_f32_fill_unattended(const AttentionHeadF32& a, int row_begin, int row_end) {
  for (int d = 0; d < a.head_dim; ++d) {
    float sum = 0.0f;
    for (int j = 0; j < a.n; ++j) sum += a.v[static_cast<size_t>(j) * a.qkv_stride + d];
    const float mean = sum / static_cast<float>(a.n);
    for (int i = row_begin; i < row_end; ++i) a.context[static_cast<size_t>(i) * a.context_stride + d] = mean;
  }
}

void attention_rows_f32(const AttentionHeadF32& args, int row_begin, int row_end);  // best for this CPU
void attention_rows_f32_portable(const AttentionHeadF32& args, int row_begin, int row_end);
#if defined(__x86_64__) || defined(__i386__)
void attention_rows_f32_avx2(const AttentionHeadF32& args, int row_begin, int row_end);
#endif
// Whole head: rows [0, n) (scratch for n rows).
void attention_head_f32(const AttentionHeadF32& args);
void attention_head_f32_portable(const AttentionHeadF32& args);
#if defined(__x86_64__) || defined(__i386__)
void attention_head_f32_avx2(const AttentionHeadF32& args);
#endif

}  // namespace kernels
}  // namespace edgebert
