// Attention core for one head: softmax(Q K^T / sqrt(d)) V, int8 (hot path) and fp32 (reference
// model). The QKV projections and the output projection are GEMMs and live elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {
namespace kernels {

// Int8 attention for one head. Numerics (identical recipe in every implementation):
//   acc_s[i,j] = sum_d q[i,d] * k[j,d]                                   (exact, int32)
//   s[i,j]     = float(acc_s) * (q_scale * k_scale / sqrt(head_dim))     (float)
//   e[i,j]     = exp(s[i,j] - max_j s[i,j]) over valid keys, 0 for masked keys
//   pq[i,j]    = round_half_even(e[i,j] * 127)        (uint8; 127 at the row maximum, see numerics.h)
//   acc[i,d]   = sum_j pq[i,j] * v[j,d]                                  (exact, int32)
//   context    = clamp(round_half_even(acc * v_scale / (sum_j pq[i,j] * context_scale)) + zp, -128, 127)
// If every key is masked, every context row is context_zero_point.
// Implementations differ only in exp (<= ~1 ulp), float summation order and FMA use, so results
// agree except where a value lands within rounding noise of a .5 tie (then off by one).
// Scratch: `scores` (n*n floats) and `probs` (n*n bytes) hold row i's float scores/exps and
// quantized probabilities at offset i*n (the AVX2 path stores only the valid keys, compacted);
// `packed` (2*n*head_dim + 64 bytes) holds the AVX2 path's repacked K and V. Contents after the
// call are unspecified. No heap allocation. head_dim up to kAttentionMaxHeadDimAvx2 runs the AVX2
// path (kAttentionMaxHeadDimNeon the NEON paths, which store compacted rows like AVX2 and use
// `packed` for V only); larger heads fall back to the portable code.
struct AttentionHeadS8 {
  const int8_t* q;
  const int8_t* k;
  const int8_t* v;    // row i of Q is q + i*qkv_stride (head_dim entries); same for k, v
  size_t qkv_stride;  // in elements (= bytes)
  int n;
  int head_dim;
  float q_scale, k_scale, v_scale;  // symmetric (zero point 0) dequantization scales
  const uint8_t* key_mask;          // n entries: 1 = attend, 0 = padding key; nullptr = all valid
  float* scores;                    // scratch, n*n floats (64-byte aligned)
  uint8_t* probs;                   // scratch, n*n bytes (64-byte aligned)
  int8_t* packed;                   // scratch, 2*n*head_dim + 64 bytes
  int8_t* context;
  size_t context_stride;  // row i of the output at context + i*context_stride (head_dim entries)
  float context_scale;
  int32_t context_zero_point;  // q = clamp(round(x / scale) + zp, -128, 127)
};

constexpr int kAttentionMaxHeadDimAvx2 = 1024;
constexpr int kAttentionMaxHeadDimNeon = 1024;

// Scratch sizes the caller must provide for a head of n tokens and head_dim channels.
constexpr size_t attention_s8_scores_floats(size_t n) { return n * n; }
constexpr size_t attention_s8_probs_bytes(size_t n) { return n * n; }
constexpr size_t attention_s8_packed_bytes(size_t n, size_t head_dim) { return 2 * n * head_dim + 64; }

void attention_head_s8(const AttentionHeadS8& args);  // picks the best implementation
void attention_head_s8_portable(const AttentionHeadS8& args);
#if defined(__x86_64__) || defined(__i386__)
void attention_head_s8_avx2(const AttentionHeadS8& args);  // requires cpu_has_avx2_fma()
// The AVX2 kernel with vpdpbusd for P.V; bit-identical results.
void attention_head_s8_avx512vnni(const AttentionHeadS8& args);  // requires cpu_has_avx512vnni()
void attention_head_s8_avxvnni(const AttentionHeadS8& args);     // requires cpu_has_avxvnni()
#endif
#if defined(__aarch64__)
void attention_head_s8_neon(const AttentionHeadS8& args);      // any ARMv8-A core
void attention_head_s8_neon_dot(const AttentionHeadS8& args);  // requires cpu_has_neon_dot()
#endif

// Float attention for one head (reference model):
//   p[i,:] = softmax_j(q_i . k_j / sqrt(head_dim)) over valid keys (masked keys get 0)
//   context[i,:] = sum_j p[i,j] * v[j,:]
// A row with every key masked gets a zero context. qkv_stride and context_stride are in floats.
// `scores` (n*n floats) is scratch (row i at offset i*n). No heap allocation.
struct AttentionHeadF32 {
  const float* q;
  const float* k;
  const float* v;
  size_t qkv_stride;
  int n;
  int head_dim;
  const uint8_t* key_mask;  // n entries or nullptr
  float* scores;            // scratch, n*n floats
  float* context;
  size_t context_stride;
};

void attention_head_f32(const AttentionHeadF32& args);
void attention_head_f32_portable(const AttentionHeadF32& args);
#if defined(__x86_64__) || defined(__i386__)
void attention_head_f32_avx2(const AttentionHeadF32& args);
#endif

}  // namespace kernels
}  // namespace edgebert
