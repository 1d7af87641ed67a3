// SPDX-License-Identifier: Apache-2.0
// quantization.h: the int8 arithmetic the converter uses: symmetric per-row weight quantization
// and affine/symmetric activation parameters, matching what the runtime executes.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgebert::convert {

// Per-row symmetric int8: w[r, c] ~= q[r, c] * scales[r], q in [-127, 127].
struct RowQuantized {
  std::vector<int8_t> q;
  std::vector<float> scales;
};
RowQuantized quantize_rows_symmetric(const float* w, size_t rows, size_t cols);
// The same, with each row's clipping (76% .. 100% of its absmax, in 4% steps) chosen to minimise the
// squared error weighted per column by col_weight (the input channel's mean square: the GEMM's
// output error); col_weight null: plain absmax.
RowQuantized quantize_rows_weighted(const float* w, size_t rows, size_t cols, const float* col_weight);

// Activation quantization: real = (q - zero_point) * scale (per tensor), or, when
// `channel_scales` is non-empty, real = q * channel_scales[c] (symmetric per channel).
struct ActivationQuant {
  float scale = 1.f;
  int32_t zero_point = 0;
  std::vector<float> channel_scales;
  float observed_min = 0.f, observed_max = 0.f;
  bool mse = false;       // range chosen by the MSE clipping search (else min/max)
  bool headroom = false;  // per-channel ranges widened to the single-input bound (see activation_params.h)
};

// Affine parameters covering [min(lo, 0), max(hi, 0)] with 256 levels.
ActivationQuant affine_from_range(float lo, float hi);
// Symmetric scale absmax / 127 (floored so it is never zero).
float symmetric_scale(float absmax);

inline int8_t quantize_one(float x, float inv_scale, int32_t zero_point) {
  // round half to even (the default rounding mode), like the runtime's kernels
  const float r = std::nearbyint(x * inv_scale) + static_cast<float>(zero_point);
  return static_cast<int8_t>(r >= -128.f ? (r > 127.f ? 127.f : r) : -128.f);  // NaN -> -128
}

// x -> dequantize(quantize(x)) in place (per tensor, affine).
void fake_quantize(float* x, size_t count, const ActivationQuant& q);
// Per-channel symmetric fake quantization of a [rows, cols] matrix.
void fake_quantize_channels(float* x, size_t rows, size_t cols, const std::vector<float>& scales);

}  // namespace edgebert::convert
