// SPDX-License-Identifier: Apache-2.0
// RMSNorm kernels (see rmsnorm.h): portable, and the dispatcher of the int8 head norm.
#include "kernels/rmsnorm.h"

#include <cmath>

#include "kernels/dispatch.h"
#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {
namespace {

float inverse_rms(const float* x, size_t cols, float eps) {
  return inverse_rms_of_sum(sum_squares_f64(x, cols), cols, eps);
}

}  // namespace

float inverse_rms_of_sum(double sum_sq, size_t n, float eps) {
  return static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + static_cast<double>(eps)));
}

double sum_squares_f64_portable(const float* x, size_t n) {
  return sum_squares_f64_of([x](size_t c) { return x[c]; }, n);
}

double sum_squares_f64(const float* x, size_t n) { return kernel_table().sum_squares_f64(x, n); }

void rmsnorm_f32(const float* x, const float* gamma, float eps, size_t rows, size_t cols, float* y) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const float inv = inverse_rms(xr, cols, eps);
    for (size_t c = 0; c < cols; ++c) yr[c] = (xr[c] * inv) * gamma[c];
  }
}

float head_inverse_rms(int64_t sum_q2, float in_scale, size_t head_dim, float eps) {
  const double s = static_cast<double>(in_scale);
  return inverse_rms_of_sum(static_cast<double>(sum_q2) * (s * s), head_dim, eps);
}

void rmsnorm_heads_s8_portable(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                               const float* gamma, float eps, const float* in_scales, const float* out_scales) {
  const size_t d = static_cast<size_t>(head_dim);
  rmsnorm_for_each_head(x, rows, stride, first, heads, d, [&](int8_t* v, int h) {
    const HeadNorm hn = head_norm_of(v, 0, d, 0, in_scales[h], out_scales[h], eps);
    for (size_t c = 0; c < d; ++c) v[c] = rmsnorm_head_value(v[c], hn.in, hn.inv_rms, gamma[c], hn.inv_out);
  });
}

void rmsnorm_heads_s8(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                      const float* gamma, float eps, const float* in_scales, const float* out_scales) {
  kernel_table().rmsnorm_heads_s8(x, rows, stride, first, heads, head_dim, gamma, eps, in_scales, out_scales);
}

}  // namespace kernels
}  // namespace edgebert
