// SPDX-License-Identifier: Apache-2.0
// quantization.cpp: weight and activation quantization helpers for the converter.
#include "converter/quantization.h"
#include "converter/target_clones.h"

#include <algorithm>
#include <cmath>
#include <thread>

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

namespace {

// Weighted squared error of quantizing `row` with `scale` (round half to even, saturate +-127).
EB_CLONES_AVX2 double weighted_row_error(const float* row, const float* weight,
                                                                             size_t n, float scale) {
  const float inv = 1.f / scale, magic = 12582912.f;  // 1.5 * 2^23
  float acc = 0.f;
#pragma omp simd reduction(+ : acc)
  for (size_t c = 0; c < n; ++c) {
    const float t = std::min(std::max(row[c] * inv, -127.f), 127.f);
    const float d = ((t + magic) - magic) * scale - row[c];
    acc += d * d * weight[c];
  }
  return acc;
}

}  // namespace

RowQuantized quantize_rows_weighted(const float* w, size_t rows, size_t cols, const float* col_weight) {
  RowQuantized r = quantize_rows_symmetric(w, rows, cols);
  if (!col_weight) return r;
  auto work = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const float* row = w + i * cols;
      const float amax = r.scales[i] * 127.f;
      double best = weighted_row_error(row, col_weight, cols, r.scales[i]);
      float best_scale = r.scales[i];
      for (int k = 1; k <= 6; ++k) {  // clip at 96% .. 76% of the row's absmax
        const float scale = std::max(amax * (1.f - 0.04f * k) / 127.f, kMinScale);
        const double e = weighted_row_error(row, col_weight, cols, scale);
        if (e < best) best = e, best_scale = scale;
      }
      if (best_scale != r.scales[i]) {
        r.scales[i] = best_scale;
        const float inv = 1.f / best_scale;
        for (size_t c = 0; c < cols; ++c)
          r.q[i * cols + c] = static_cast<int8_t>(std::clamp(std::nearbyint(row[c] * inv), -127.f, 127.f));
      }
    }
  };
  const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  if (threads == 1 || rows * cols < (1u << 18)) {
    work(0, rows);
    return r;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    const size_t b = rows * t / threads, e = rows * (t + 1) / threads;
    if (b < e) pool.emplace_back(work, b, e);
  }
  for (auto& th : pool) th.join();
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
