// SPDX-License-Identifier: Apache-2.0
// Sentence pooling over the attention mask and QA logit splitting (see pooling.h).
#include "kernels/pooling.h"

#include <cmath>

namespace edgebert {
namespace kernels {

void sentence_pool_f32(const float* h, size_t n, size_t H, const uint8_t* mask, PoolingKind mode, bool normalize,
                       float* out) {
  size_t count = 0;
  for (size_t t = 0; t < n; ++t) count += mask ? mask[t] : 1;
  const double denom = mode == PoolingKind::kMeanSqrtLen ? std::sqrt(std::fmax(static_cast<double>(count), 1e-9))
                                                         : std::fmax(static_cast<double>(count), 1e-9);
  size_t last = 0;  // kLastToken: the last row whose mask is 1 (row 0 when none is)
  for (size_t t = n; t-- > 0;)
    if (!mask || mask[t]) {
      last = t;
      break;
    }
  for (size_t i = 0; i < H; ++i) {
    if (mode == PoolingKind::kCls) {
      out[i] = h[i];
    } else if (mode == PoolingKind::kLastToken) {
      out[i] = h[last * H + i];
    } else if (mode == PoolingKind::kMax) {
      float m = -1e9f;
      for (size_t t = 0; t < n; ++t) {
        const float v = mask && !mask[t] ? -1e9f : h[t * H + i];
        m = v > m ? v : m;
      }
      out[i] = m;
    } else {
      double s = 0.0;
      for (size_t t = 0; t < n; ++t)
        if (!mask || mask[t]) s += h[t * H + i];
      out[i] = static_cast<float>(s / denom);
    }
  }
  if (normalize) l2_normalize_f32(out, H);
}

void l2_normalize_f32(float* v, size_t n) {
  double ss = 0.0;
  for (size_t i = 0; i < n; ++i) ss += static_cast<double>(v[i]) * v[i];
  const double inv = 1.0 / std::fmax(std::sqrt(ss), 1e-12);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(v[i] * inv);
}

void split_span_logits(const float* qa, size_t n, float* start, float* end) {
  for (size_t t = 0; t < n; ++t) {
    start[t] = qa[2 * t];
    end[t] = qa[2 * t + 1];
  }
}

}  // namespace kernels
}  // namespace edgebert
