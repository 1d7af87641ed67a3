// SPDX-License-Identifier: Apache-2.0
// Float <-> int8 conversions around the GEMMs: portable implementations and dispatchers.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/numerics.h"
#include "kernels/quantize.h"

namespace edgebert {
namespace kernels {

void quantize_s8_portable(const float* x, size_t count, float scale, int32_t zero_point, int8_t* y) {
  const float inv = 1.0f / scale;
  const float lo = -128.0f - static_cast<float>(zero_point), hi = 127.0f - static_cast<float>(zero_point);
  for (size_t i = 0; i < count; ++i) y[i] = detail::quantize_value_s8(x[i] * inv, lo, hi, zero_point);
}

float quantize_s8_row_dynamic(const float* x, size_t count, int8_t* y) {
  // The maximum in 8 lanes (a loop the compiler vectorizes; a NaN never compares greater, so it is
  // skipped as std::fmax skips it), then the dispatched quantize_s8: every kernel table gives the
  // same scale and bytes.
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= count; i += 8)
    for (size_t l = 0; l < 8; ++l) {
      const float a = std::fabs(x[i + l]);
      lane[l] = a > lane[l] ? a : lane[l];
    }
  float absmax = 0.f;
  for (; i < count; ++i) absmax = std::fabs(x[i]) > absmax ? std::fabs(x[i]) : absmax;
  for (float a : lane) absmax = a > absmax ? a : absmax;
  const float scale = dynamic_row_scale(absmax);
  quantize_s8(x, count, scale, 0, y);
  return scale;
}

void quantize_s8_per_channel_portable(const float* x, size_t rows, size_t cols, const float* inv_factors,
                                      float scale, int32_t zero_point, int8_t* y) {
  if (inv_factors == nullptr) {
    quantize_s8_portable(x, rows * cols, scale, zero_point, y);
    return;
  }
  const float inv = 1.0f / scale;
  const float lo = -128.0f - static_cast<float>(zero_point), hi = 127.0f - static_cast<float>(zero_point);
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    int8_t* yr = y + r * cols;
    for (size_t c = 0; c < cols; ++c)
      yr[c] = detail::quantize_value_s8((xr[c] * inv_factors[c]) * inv, lo, hi, zero_point);
  }
}

void residual_dequant_add_s8_portable(float* hidden, const int8_t* y, size_t rows, size_t cols,
                                      const float* scales, int32_t zero_point) {
  for (size_t r = 0; r < rows; ++r) {
    float* h = hidden + r * cols;
    const int8_t* yr = y + r * cols;
    for (size_t c = 0; c < cols; ++c)
      h[c] += static_cast<float>(static_cast<int32_t>(yr[c]) - zero_point) * scales[c];
  }
}

void quantize_s8(const float* x, size_t count, float scale, int32_t zero_point, int8_t* y) {
  kernel_table().quantize_s8(x, count, scale, zero_point, y);
}

void quantize_s8_per_channel(const float* x, size_t rows, size_t cols, const float* inv_factors, float scale,
                             int32_t zero_point, int8_t* y) {
  kernel_table().quantize_s8_per_channel(x, rows, cols, inv_factors, scale, zero_point, y);
}

void residual_dequant_add_s8(float* hidden, const int8_t* y, size_t rows, size_t cols, const float* scales,
                             int32_t zero_point) {
  kernel_table().residual_dequant_add_s8(hidden, y, rows, cols, scales, zero_point);
}

}  // namespace kernels
}  // namespace edgebert
