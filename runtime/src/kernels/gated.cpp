// SPDX-License-Identifier: Apache-2.0
// Gated FFN activations: the gate table, the portable kernel and the dispatcher (see gated.h).
#include "kernels/gated.h"

#include <cmath>

#include "kernels/activation.h"
#include "kernels/dispatch.h"
#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {

double gate_activation_ref(GateKind kind, double x) {
  switch (kind) {
    case GateKind::kSwiglu: return x / (1.0 + std::exp(-x));
    case GateKind::kGegluTanh: return activation_ref(ActivationKind::kGeluTanh, x);
    case GateKind::kGlu: return 1.0 / (1.0 + std::exp(-x));
    case GateKind::kGeglu: break;
  }
  return activation_ref(ActivationKind::kGelu, x);
}

void build_gate_table_f32(GateKind kind, float gate_scale, int32_t gate_zp, float gate_table[256]) {
  for (int b = 0; b < 256; ++b) {
    const int32_t q = b < 128 ? b : b - 256;
    gate_table[b] = static_cast<float>(gate_activation_ref(kind, static_cast<double>(q - gate_zp) * gate_scale));
  }
}

namespace {
// Dynamic per-row form (gated.h): the products' maximum magnitude, then the quantization with it.
void gated_s8_rows_dynamic(const GatedArgs& a) {
  for (size_t r = 0; r < a.rows; ++r) {
    const int8_t* g = a.x + r * a.x_stride;
    const int8_t* u = g + a.inter;
    int8_t* y = a.y + r * a.y_stride;
    auto product = [&](size_t c) { return gated_product(a, g, u, c); };
    float absmax = 0.f;  // (a comparison, not std::fmax: GCC 12's aarch64 vectorizer crashes on that reduction)
    for (size_t c = 0; c < a.inter; ++c) {
      const float v = std::fabs(product(c));
      absmax = v > absmax ? v : absmax;
    }
    const float scale = dynamic_row_scale(absmax);
    const float inv = 1.0f / scale;
    for (size_t c = 0; c < a.inter; ++c) y[c] = detail::quantize_value_s8(product(c) * inv, -128.0f, 127.0f, 0);
    a.row_scales[r] = scale;
  }
}
}  // namespace

void gated_s8_portable(const GatedArgs& a) {
  if (a.row_scales) return gated_s8_rows_dynamic(a);
  const float inv = 1.0f / a.out_scale;
  const float lo = -128.0f - static_cast<float>(a.out_zp), hi = 127.0f - static_cast<float>(a.out_zp);
  for (size_t r = 0; r < a.rows; ++r) {
    const int8_t* g = a.x + r * a.x_stride;
    const int8_t* u = g + a.inter;
    int8_t* y = a.y + r * a.y_stride;
    for (size_t c = 0; c < a.inter; ++c) y[c] = detail::quantize_value_s8(gated_product(a, g, u, c) * inv, lo, hi, a.out_zp);
  }
}

void gated_s8(const GatedArgs& args) { kernel_table().gated_s8(args); }

}  // namespace kernels
}  // namespace edgebert
