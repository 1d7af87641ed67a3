// SPDX-License-Identifier: Apache-2.0
// RMSNorm (LLaMA / Qwen3 / Gemma 3 "RMSNorm"): y = x / sqrt(mean(x^2) + eps) * gamma, over rows
// of the float residual stream (the pre-norm inputs of the LLM-block families) and over the
// heads of Q and K (Qwen3 / Gemma 3 q_norm, k_norm). Gemma's (1 + weight) form is the same with
// gamma = 1 + weight (the converter stores it so). The sum of squares and the int8 head norm
// have AVX2, AVX-512 and NEON variants (a profile of EmbeddingGemma put them at ~3 % of a run).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {

// sum_c x[c]^2 in double, in one fixed order: lane l = c mod 8 adds its squares in order, then
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)). A float's square is exact in double, so every
// variant (one zmm of 8 doubles on AVX-512) gives this value exactly, and the 8 chains do not wait
// on each other as one running sum did.
double sum_squares_f64(const float* x, size_t n);
double sum_squares_f64_portable(const float* x, size_t n);
#if defined(__x86_64__) || defined(__i386__)
double sum_squares_f64_avx2(const float* x, size_t n);
double sum_squares_f64_avx512(const float* x, size_t n);
#elif defined(__aarch64__)
double sum_squares_f64_neon(const float* x, size_t n);
#endif
// 1 / sqrt(sum_sq / n + eps) in double, as a float: every RMSNorm's inverse RMS.
float inverse_rms_of_sum(double sum_sq, size_t n, float eps);
// The fixed combine of the 8 lanes. (Static, as every inline helper of this header: it is included
// by files compiled for AVX2 / AVX-512, see attention.h.)
static inline double sum_squares_combine(const double lane[8]) {
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}
// The same order over computed values value(c) (a dequantized int8 row), portable.
template <class Value>
static inline double sum_squares_f64_of(const Value& value, size_t n) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t c = 0; c < n; ++c) {
    const double v = static_cast<double>(value(c));
    lane[c & 7] += v * v;
  }
  return sum_squares_combine(lane);
}
// A vector variant's tail: the squares of x[from, n) into their lanes, then the combine.
static inline double sum_squares_finish(double lane[8], const float* x, size_t from, size_t n) {
  for (size_t c = from; c < n; ++c) lane[c & 7] += static_cast<double>(x[c]) * x[c];
  return sum_squares_combine(lane);
}

// y[r, c] = (x[r, c] * (1 / sqrt(sum_squares_f64(x[r]) / cols + eps))) * gamma[c]. y may equal x
// (in place).
void rmsnorm_f32(const float* x, const float* gamma, float eps, size_t rows, size_t cols, float* y);

// Per-head RMSNorm of int8 heads in place: each of `heads` slices of head_dim channels (at
// offsets first + h * head_dim of rows of `stride` elements) is dequantized at in_scales[h],
// normalized with gamma [head_dim], and requantized at out_scales[h] (symmetric, round half to
// even, clamped to [-128, 127] as rope_s8 does). The mean square is exact: the int8 squares are
// summed in integers, then mean = sum * in_scale^2 / head_dim in double (head_inverse_rms), so
// the order of the sum does not matter; per channel, ((q * in_scale) * inv_rms) * gamma, times
// 1 / out_scale, in float. Every variant gives the same bytes.
void rmsnorm_heads_s8(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                      const float* gamma, float eps, const float* in_scales, const float* out_scales);
void rmsnorm_heads_s8_portable(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                               const float* gamma, float eps, const float* in_scales, const float* out_scales);
#if defined(__x86_64__) || defined(__i386__)
void rmsnorm_heads_s8_avx2(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                           const float* gamma, float eps, const float* in_scales, const float* out_scales);
void rmsnorm_heads_s8_avx512(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                             const float* gamma, float eps, const float* in_scales, const float* out_scales);
#elif defined(__aarch64__)
void rmsnorm_heads_s8_neon(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                           const float* gamma, float eps, const float* in_scales, const float* out_scales);
#endif
// 1 / sqrt(sum_q2 * in_scale^2 / head_dim + eps), in double, as a float.
float head_inverse_rms(int64_t sum_q2, float in_scale, size_t head_dim, float eps);
// The loop of every rmsnorm_heads_s8 variant: f(head's channels, h) for every head of every row.
template <class F>
static inline void rmsnorm_for_each_head(int8_t* x, size_t rows, size_t stride, size_t first, int heads, size_t head_dim,
                                         F f) {
  for (size_t r = 0; r < rows; ++r)
    for (int h = 0; h < heads; ++h) f(x + r * stride + first + static_cast<size_t>(h) * head_dim, h);
}
// A head's constants: its int8 squares summed exactly (`partial` holds those of channels
// [0, from), the rest are added here), the inverse RMS from that sum, the input scale and
// 1 / out_scale.
struct HeadNorm {
  float in, inv_rms, inv_out;
};
static inline HeadNorm head_norm_of(const int8_t* v, size_t from, size_t head_dim, int64_t partial, float in_scale,
                                    float out_scale, float eps) {
  for (size_t c = from; c < head_dim; ++c) partial += static_cast<int32_t>(v[c]) * v[c];
  return {in_scale, head_inverse_rms(partial, in_scale, head_dim, eps), 1.0f / out_scale};
}
// One channel of a head norm, the portable float steps: ((q * in) * inv_rms) * gamma, times 1 / out.
static inline int8_t rmsnorm_head_value(int8_t q, float in, float inv_rms, float gamma, float inv_out) {
  return detail::quantize_value_s8((((static_cast<float>(q) * in) * inv_rms) * gamma) * inv_out, -128.0f, 127.0f, 0);
}

}  // namespace kernels
}  // namespace edgebert
