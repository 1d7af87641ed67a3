// SPDX-License-Identifier: Apache-2.0
// FFN activations by kind: float kernels and int8 lookup tables (see activation.h).
#include "kernels/activation.h"

#include <cmath>

#include "kernels/gelu.h"

namespace edgebert {
namespace kernels {

double activation_ref(ActivationKind kind, double x) {
  switch (kind) {
    case ActivationKind::kRelu: return x > 0.0 ? x : 0.0;
    case ActivationKind::kGeluTanh: {
      const double k = 0.79788456080286535588;  // sqrt(2 / pi)
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    case ActivationKind::kGelu: break;
  }
  return 0.5 * x * std::erfc(-x * 0.70710678118654752440);
}

void build_activation_lut_s8(ActivationKind kind, float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                             int8_t lut[256]) {
  if (kind == ActivationKind::kGelu) {
    build_gelu_lut_s8(in_scale, in_zp, out_scale, out_zp, lut);
    return;
  }
  for (int b = 0; b < 256; ++b) {
    const int32_t q = b < 128 ? b : b - 256;
    double v = activation_ref(kind, static_cast<double>(q - in_zp) * static_cast<double>(in_scale)) /
               static_cast<double>(out_scale);
    const double lo = -128.0 - out_zp, hi = 127.0 - out_zp;
    v = v > lo ? v : lo;  // NaN -> lo
    v = v < hi ? v : hi;
    lut[b] = static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) + out_zp);
  }
}

void activation_f32(ActivationKind kind, float* x, size_t count) {
  switch (kind) {
    case ActivationKind::kGelu: gelu_f32(x, count); return;
    case ActivationKind::kRelu:
      for (size_t i = 0; i < count; ++i) x[i] = x[i] > 0.f ? x[i] : 0.f;
      return;
    case ActivationKind::kGeluTanh:
      for (size_t i = 0; i < count; ++i) {
        const float v = x[i];
        x[i] = 0.5f * v * (1.f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
      }
      return;
  }
}

}  // namespace kernels
}  // namespace edgebert
