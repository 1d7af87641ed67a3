// quantization.cpp: weight and activation quantization helpers for the converter.
#include "converter/quantization.h"

#include <algorithm>
#include <cmath>

namespace edgebert::convert {

namespace {
constexpr float kMinScale = 1e-12f;
}

RowQuantized quantize_rows_symmetric(const float* w, size_t rows, size_t cols) {
  RowQuantized r;
  r.q.resize(rows * cols);
  r.scales.resize(rows);
  for (size_t i = 0; i < rows; ++i) {
    const float* row = w + i * cols;
    float absmax = 0.f;
    for (size_t c = 0; c < cols; ++c) absmax = std::max(absmax, std::fabs(row[c]));
    const float scale = std::max(absmax / 127.f, kMinScale);
    r.scales[i] = scale;
    const float inv = 1.f / scale;
    for (size_t c = 0; c < cols; ++c) {
      const float v = std::nearbyint(row[c] * inv);
      r.q[i * cols + c] = static_cast<int8_t>(std::clamp(v, -127.f, 127.f));
    }
  }
  return r;
}

float symmetric_scale(float absmax) { return std::max(absmax / 127.f, 1e-8f); }

ActivationQuant affine_from_range(float lo, float hi) {
  ActivationQuant q;
  q.observed_min = lo;
  q.observed_max = hi;
  lo = std::min(lo, 0.f);
  hi = std::max(hi, 0.f);
  if (!(hi - lo > 1e-8f)) hi = lo + 1e-8f;
  q.scale = (hi - lo) / 255.f;
  const float zp = -128.f - lo / q.scale;
  q.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(zp), -128.f, 127.f));
  return q;
}

void fake_quantize(float* x, size_t count, const ActivationQuant& q) {
  const float inv = 1.f / q.scale;
  for (size_t i = 0; i < count; ++i) x[i] = (quantize_one(x[i], inv, q.zero_point) - q.zero_point) * q.scale;
}

void fake_quantize_channels(float* x, size_t rows, size_t cols, const std::vector<float>& scales) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) {
      float& v = x[r * cols + c];
      v = quantize_one(v, 1.f / scales[c], 0) * scales[c];
    }
}

}  // namespace edgebert::convert
