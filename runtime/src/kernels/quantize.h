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

// The symmetric int8 scale of a row whose largest magnitude is absmax: absmax / 127, or 1 for a
// row of zeros (or a non-finite maximum: no scale represents it, the row saturates). The scale of
// dynamic per-row quantization, for a GEMM that takes each input row's scale at run time
// (XNNPACK's qd8 GEMMs; kernels/gated.h, xnn_gemm.h).
inline float dynamic_row_scale(float absmax) {
  return absmax > 0.f && absmax <= 3.4028234e38f ? absmax / 127.f : 1.f;
}
// One row quantized with its own dynamic_row_scale (zero point 0); returns the scale.
float quantize_s8_row_dynamic(const float* x, size_t count, int8_t* y);

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
