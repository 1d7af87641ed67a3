// SPDX-License-Identifier: Apache-2.0
// Float <-> int8 conversions around the GEMMs: quantization of float activations (per tensor, or
// with per-input-channel factors) and the dequantize-and-add of a GEMM output into the float
// residual stream.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {
namespace kernels {

// y = clamp(round_half_even(x * (1 / scale)) + zero_point, -128, 127). Rounding is round half to
// EVEN (what cvtps2dq / fcvtns do). NaN maps to -128.
void quantize_s8(const float* x, size_t count, float scale, int32_t zero_point, int8_t* y);
void quantize_s8_portable(const float* x, size_t count, float scale, int32_t zero_point, int8_t* y);

// y[r,c] = quantize((x[r,c] * inv_factors[c]) with scale/zero_point; inv_factors may be nullptr.
void quantize_s8_per_channel(const float* x, size_t rows, size_t cols, const float* inv_factors,
                             float scale, int32_t zero_point, int8_t* y);
void quantize_s8_per_channel_portable(const float* x, size_t rows, size_t cols,
                                      const float* inv_factors, float scale, int32_t zero_point,
                                      int8_t* y);

// hidden[r,c] += (y[r,c] - zero_point) * scales[c]   (scales: per output channel, cols entries)
void residual_dequant_add_s8(float* hidden, const int8_t* y, size_t rows, size_t cols,
                             const float* scales, int32_t zero_point);
void residual_dequant_add_s8_portable(float* hidden, const int8_t* y, size_t rows, size_t cols,
                                      const float* scales, int32_t zero_point);

#if defined(__x86_64__) || defined(__i386__)
void quantize_s8_avx2(const float* x, size_t count, float scale, int32_t zero_point, int8_t* y);
void quantize_s8_per_channel_avx2(const float* x, size_t rows, size_t cols,
                                  const float* inv_factors, float scale, int32_t zero_point,
                                  int8_t* y);
void residual_dequant_add_s8_avx2(float* hidden, const int8_t* y, size_t rows, size_t cols,
                                  const float* scales, int32_t zero_point);
// AVX-512 F/BW/DQ/VL (cpu_has_avx512()); same bytes as portable.
void quantize_s8_avx512(const float* x, size_t count, float scale, int32_t zero_point, int8_t* y);
void quantize_s8_per_channel_avx512(const float* x, size_t rows, size_t cols,
                                    const float* inv_factors, float scale, int32_t zero_point,
                                    int8_t* y);
void residual_dequant_add_s8_avx512(float* hidden, const int8_t* y, size_t rows, size_t cols,
                                    const float* scales, int32_t zero_point);
#endif

}  // namespace kernels
}  // namespace edgebert
