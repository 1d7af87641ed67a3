// SPDX-License-Identifier: Apache-2.0
// RMSNorm kernels (see rmsnorm.h): portable.
#include "kernels/rmsnorm.h"

#include <cmath>

#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {
namespace {

float inverse_rms(const float* x, size_t cols, float eps) {
  double ss = 0;
  for (size_t c = 0; c < cols; ++c) ss += static_cast<double>(x[c]) * x[c];
  return static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(cols) + static_cast<double>(eps)));
}

}  // namespace

void rmsnorm_f32(const float* x, const float* gamma, float eps, size_t rows, size_t cols, float* y) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const float inv = inverse_rms(xr, cols, eps);
    for (size_t c = 0; c < cols; ++c) yr[c] = (xr[c] * inv) * gamma[c];
  }
}

void rmsnorm_heads_s8(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                      const float* gamma, float eps, const float* in_scales, const float* out_scales) {
  float buf[1024];
  const size_t d = static_cast<size_t>(head_dim);
  if (d > sizeof(buf) / sizeof(buf[0])) return;  // the loader refuses head_dim > 1024
  for (size_t r = 0; r < rows; ++r)
    for (int h = 0; h < heads; ++h) {
      int8_t* v = x + r * stride + first + static_cast<size_t>(h) * d;
      for (size_t c = 0; c < d; ++c) buf[c] = static_cast<float>(v[c]) * in_scales[h];
      rmsnorm_f32(buf, gamma, eps, 1, d, buf);
      const float inv = 1.0f / out_scales[h];
      for (size_t c = 0; c < d; ++c) v[c] = detail::quantize_value_s8(buf[c] * inv, -128.0f, 127.0f, 0);
    }
}

}  // namespace kernels
}  // namespace edgebert
