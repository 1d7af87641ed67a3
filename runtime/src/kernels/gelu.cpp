// SPDX-License-Identifier: Apache-2.0
// GELU: lookup-table construction for int8 activations, portable LUT application and float GELU,
// and the dispatchers.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/dispatch.h"
#include "kernels/gelu.h"
#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {

void build_gelu_lut_s8(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp, int8_t lut[256]) {
  const double inv_sqrt2 = 0.70710678118654752440;
  for (int b = 0; b < 256; ++b) {
    const int32_t q = b < 128 ? b : b - 256;
    const double x = static_cast<double>(q - in_zp) * static_cast<double>(in_scale);
    const double g = 0.5 * x * std::erfc(-x * inv_sqrt2);
    double v = g / static_cast<double>(out_scale);
    const double lo = -128.0 - out_zp, hi = 127.0 - out_zp;
    v = v > lo ? v : lo;  // NaN -> lo
    v = v < hi ? v : hi;
    lut[b] = static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) + out_zp);
  }
}

void apply_lut_s8_portable(int8_t* x, size_t count, const int8_t lut[256]) {
  for (size_t i = 0; i < count; ++i) x[i] = lut[static_cast<uint8_t>(x[i])];
}

void gelu_f32_portable(float* x, size_t count) {
  for (size_t i = 0; i < count; ++i) x[i] = detail::gelu_scalar(x[i]);
}

void apply_lut_s8(int8_t* x, size_t count, const int8_t lut[256]) { kernel_table().apply_lut_s8(x, count, lut); }

void gelu_f32(float* x, size_t count) { kernel_table().gelu_f32(x, count); }

}  // namespace kernels
}  // namespace edgebert
