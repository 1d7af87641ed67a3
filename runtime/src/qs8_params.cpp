// SPDX-License-Identifier: Apache-2.0
// qs8_params.cpp: loops without branches over the channels, which the compiler vectorizes (this file
// is built with -fno-trapping-math, which lets it evaluate both sides of a select; values and
// rounding are unchanged, the code never reads the floating-point exception flags). In one scalar
// loop they took 0.46-0.57 ms of BERT-base's session creation (48 GEMMs, 83k channels), on the
// warm start's critical path (docs/weight-cache.md).
#include "qs8_params.h"

#include <cmath>

namespace edgebert {

// Adding and subtracting 2^52 rounds in the current rounding mode, as nearbyint does, for
// |x| < 2^52; larger magnitudes are integers already. (No libm call: nearbyint saves and restores
// the floating-point environment.)
int32_t int32_bias(double x) {
  constexpr double kTwo52 = 4503599627370496.0, kHi = 2147483520.0, kLo = -2147483520.0;
  const double t = std::copysign(kTwo52, x);
  double r = std::fabs(x) < kTwo52 ? (x + t) - t : x;
  r = r <= kHi ? r : kHi;  // NaN too
  r = r < kLo ? kLo : r;
  return static_cast<int32_t>(r);
}

bool qs8_channel_params(const LinearView& l, float* kernel_scale, int32_t* bias_out) {
  const size_t n = l.out > 0 ? static_cast<size_t>(l.out) : 0;
  const float* ws = l.weight_scales;
  if (l.output_scales) {
    const float* os = l.output_scales;
    for (size_t c = 0; c < n; ++c) kernel_scale[c] = ws[c] / os[c];
  } else {
    const float os = l.output_scale;
    for (size_t c = 0; c < n; ++c) kernel_scale[c] = ws[c] / os;
  }
  const double in = static_cast<double>(l.input_scale);
  if (l.bias) {
    const float* b = l.bias;
    for (size_t c = 0; c < n; ++c) bias_out[c] = int32_bias(static_cast<double>(b[c]) / (in * ws[c]));
  } else {
    for (size_t c = 0; c < n; ++c) bias_out[c] = int32_bias(0.0 / (in * ws[c]));
  }
  int bad = 0;
  const float is = l.input_scale;
  for (size_t c = 0; c < n; ++c) bad |= !(is * kernel_scale[c] < 256.f) | !(kernel_scale[c] >= 1e-30f);
  return bad == 0;
}

}  // namespace edgebert
