// SPDX-License-Identifier: Apache-2.0
// RMSNorm (LLaMA / Qwen3 / Gemma 3 "RMSNorm"): y = x / sqrt(mean(x^2) + eps) * gamma, over rows
// of the float residual stream (the pre-norm inputs of the LLM-block families) and over the
// heads of Q and K (Qwen3 / Gemma 3 q_norm, k_norm). Gemma's (1 + weight) form is the same with
// gamma = 1 + weight (the converter stores it so). Portable only: a pass over the row next to
// the GEMMs (add vector variants to dispatch.h if a profile says so).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {
namespace kernels {

// y[r, c] = x[r, c] * (1 / sqrt(sum_c x[r, c]^2 / cols + eps)) * gamma[c]; the sum of squares is
// accumulated in double. y may equal x (in place).
void rmsnorm_f32(const float* x, const float* gamma, float eps, size_t rows, size_t cols, float* y);

// Per-head RMSNorm of int8 heads in place: each of `heads` slices of head_dim channels (at
// offsets first + h * head_dim of rows of `stride` elements) is dequantized at in_scales[h],
// normalized with gamma [head_dim], and requantized at out_scales[h] (symmetric, round half to
// even, clamped to [-128, 127] as rope_s8 does).
void rmsnorm_heads_s8(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                      const float* gamma, float eps, const float* in_scales, const float* out_scales);

}  // namespace kernels
}  // namespace edgebert
