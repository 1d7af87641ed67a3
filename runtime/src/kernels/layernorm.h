// SPDX-License-Identifier: Apache-2.0
// LayerNorm over the float residual stream, alone or fused with the int8 quantization of its
// output (the quantized copy feeds the next GEMM; the residual stream stays float).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {
namespace kernels {

// y[r,c] = (x[r,c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c], two-pass statistics
// (mean, then the mean of squared centered values); beta == nullptr: no bias (the "+ beta[c]" is
// not computed). y may equal x (in place). Every variant
// gives the bytes of the portable one (same summation order, no fused multiply-add).
void layernorm_f32(const float* x, const float* gamma, const float* beta, float eps, size_t rows,
                   size_t cols, float* y);
void layernorm_f32_portable(const float* x, const float* gamma, const float* beta, float eps,
                            size_t rows, size_t cols, float* y);

// LayerNorm in place on x_inout AND y[r,c] = quantize(x_out[r,c] * inv_factors[c]) in the same
// pass (inv_factors: per-input-channel factors of the next GEMM, cols entries, or nullptr = 1).
// Quantization as quantize_s8 (round half to even, clamp to [-128, 127]). beta may be nullptr.
void layernorm_quantize_s8(float* x_inout, const float* gamma, const float* beta, float eps,
                           size_t rows, size_t cols, const float* inv_factors, float scale,
                           int32_t zero_point, int8_t* y);
void layernorm_quantize_s8_portable(float* x_inout, const float* gamma, const float* beta,
                                    float eps, size_t rows, size_t cols, const float* inv_factors,
                                    float scale, int32_t zero_point, int8_t* y);

#if defined(__x86_64__) || defined(__i386__)
void layernorm_f32_avx2(const float* x, const float* gamma, const float* beta, float eps,
                        size_t rows, size_t cols, float* y);
void layernorm_quantize_s8_avx2(float* x_inout, const float* gamma, const float* beta, float eps,
                                size_t rows, size_t cols, const float* inv_factors, float scale,
                                int32_t zero_point, int8_t* y);
// AVX-512 (cpu_has_avx512()): one 16-lane accumulator = the 16 partial sums.
void layernorm_f32_avx512(const float* x, const float* gamma, const float* beta, float eps,
                          size_t rows, size_t cols, float* y);
void layernorm_quantize_s8_avx512(float* x_inout, const float* gamma, const float* beta, float eps,
                                  size_t rows, size_t cols, const float* inv_factors, float scale,
                                  int32_t zero_point, int8_t* y);
#endif

}  // namespace kernels
}  // namespace edgebert
