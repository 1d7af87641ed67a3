// SPDX-License-Identifier: Apache-2.0
// accuracy_metrics.h: the int8-vs-fp32 metrics of edgebert-eval and tests/unit/test_accuracy.cpp
// (header-only): per-token cosine over all dimensions and over the "ordinary" dimensions (all
// but the few with the largest RMS, where structured outliers live), aggregated as min / mean.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace edgebert::tools {

// cos(a, b) over n values; a pair of zero vectors counts as identical.
inline double cosine(const float* a, const float* b, size_t n, const uint8_t* keep = nullptr) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; ++i) {
    if (keep && !keep[i]) continue;
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  if (aa == 0 || bb == 0) return aa == bb ? 1.0 : 0.0;
  return ab / std::sqrt(aa * bb);
}

struct MinMean {
  double min = 1.0, sum = 0.0;
  size_t count = 0;
  void add(double v) {
    min = count ? std::min(min, v) : v;
    sum += v;
    ++count;
  }
  double mean() const { return count ? sum / count : 1.0; }
};

// Mask of the ordinary dimensions: 1 for every dimension except the `exclude_top` with the
// largest sum of squares (ties: lower index kept as ordinary).
inline std::vector<uint8_t> ordinary_dims(const std::vector<double>& sum_squares, int exclude_top) {
  std::vector<uint8_t> keep(sum_squares.size(), 1);
  std::vector<size_t> order(sum_squares.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sum_squares[a] > sum_squares[b]; });
  for (int i = 0; i < exclude_top && i < static_cast<int>(order.size()); ++i) keep[order[i]] = 0;
  return keep;
}

// Per-token comparison of two [n, hidden] hidden-state matrices.
struct TokenCosines {
  MinMean all, ordinary;
  double err2 = 0, ref2 = 0;  // squared error and reference energy (relative L2 error)
  void add(const float* test, const float* ref, size_t n, size_t hidden, const uint8_t* keep) {
    for (size_t t = 0; t < n; ++t) {
      all.add(cosine(test + t * hidden, ref + t * hidden, hidden));
      ordinary.add(cosine(test + t * hidden, ref + t * hidden, hidden, keep));
    }
    for (size_t i = 0; i < n * hidden; ++i) {
      const double d = double(test[i]) - ref[i];
      err2 += d * d;
      ref2 += double(ref[i]) * ref[i];
    }
  }
  double rel_error() const { return ref2 > 0 ? std::sqrt(err2 / ref2) : 0.0; }
};

}  // namespace edgebert::tools
