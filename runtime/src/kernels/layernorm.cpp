// SPDX-License-Identifier: Apache-2.0
// LayerNorm (float) and LayerNorm fused with int8 quantization: portable implementations and the
// dispatchers. Row statistics use 16 fixed partial sums (lane l takes columns c with c % 16 == l),
// combined as combine16() does; every vector variant keeps that order and uses no fused
// multiply-add, so all of them give the same bytes as this code.
#include <cstddef>
#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/layernorm.h"
#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {

namespace {

struct RowStats {
  float mean;
  float rstd;
};

inline float combine16(const float* a) {
  float v[8];
  for (int l = 0; l < 8; ++l) v[l] = a[l] + a[l + 8];
  return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}

RowStats row_stats(const float* x, size_t cols, float eps) {
  float acc[16] = {};
  size_t c = 0;
  for (; c + 16 <= cols; c += 16)
    for (int l = 0; l < 16; ++l) acc[l] += x[c + l];
  for (int l = 0; c < cols; ++c, ++l) acc[l] += x[c];
  const float mean = combine16(acc) / static_cast<float>(cols);
  float acc2[16] = {};
  c = 0;
  for (; c + 16 <= cols; c += 16) {
    for (int l = 0; l < 16; ++l) {
      const float d = x[c + l] - mean;
      acc2[l] += d * d;
    }
  }
  for (int l = 0; c < cols; ++c, ++l) {
    const float d = x[c] - mean;
    acc2[l] += d * d;
  }
  const float var = combine16(acc2) / static_cast<float>(cols);
  return {mean, 1.0f / __builtin_sqrtf(var + eps)};
}

}  // namespace

void layernorm_f32_portable(const float* x, const float* gamma, const float* beta, float eps, size_t rows,
                            size_t cols, float* y) {
  if (cols == 0) return;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const RowStats st = row_stats(xr, cols, eps);
    if (beta == nullptr) {
      for (size_t c = 0; c < cols; ++c) yr[c] = (xr[c] - st.mean) * st.rstd * gamma[c];
    } else {
      for (size_t c = 0; c < cols; ++c) yr[c] = (xr[c] - st.mean) * st.rstd * gamma[c] + beta[c];
    }
  }
}

void layernorm_quantize_s8_portable(float* x_inout, const float* gamma, const float* beta, float eps,
                                    size_t rows, size_t cols, const float* inv_factors, float scale,
                                    int32_t zero_point, int8_t* y) {
  if (cols == 0) return;
  const float inv = 1.0f / scale;
  const float lo = -128.0f - static_cast<float>(zero_point), hi = 127.0f - static_cast<float>(zero_point);
  for (size_t r = 0; r < rows; ++r) {
    float* xr = x_inout + r * cols;
    int8_t* yr = y + r * cols;
    const RowStats st = row_stats(xr, cols, eps);
    if (beta == nullptr) {  // no bias: the values as layernorm_f32 computes them without one
      for (size_t c = 0; c < cols; ++c) xr[c] = (xr[c] - st.mean) * st.rstd * gamma[c];
    } else {
      for (size_t c = 0; c < cols; ++c) xr[c] = (xr[c] - st.mean) * st.rstd * gamma[c] + beta[c];
    }
    if (inv_factors == nullptr) {
      for (size_t c = 0; c < cols; ++c) yr[c] = detail::quantize_value_s8(xr[c] * inv, lo, hi, zero_point);
    } else {
      for (size_t c = 0; c < cols; ++c)
        yr[c] = detail::quantize_value_s8((xr[c] * inv_factors[c]) * inv, lo, hi, zero_point);
    }
  }
}

void layernorm_f32(const float* x, const float* gamma, const float* beta, float eps, size_t rows, size_t cols,
                   float* y) {
  kernel_table().layernorm_f32(x, gamma, beta, eps, rows, cols, y);
}

void layernorm_quantize_s8(float* x_inout, const float* gamma, const float* beta, float eps, size_t rows,
                           size_t cols, const float* inv_factors, float scale, int32_t zero_point, int8_t* y) {
  kernel_table().layernorm_quantize_s8(x_inout, gamma, beta, eps, rows, cols, inv_factors, scale, zero_point, y);
}

}  // namespace kernels
}  // namespace edgebert
