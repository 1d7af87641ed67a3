// SPDX-License-Identifier: Apache-2.0
// bench_stats.h: latency statistics for edgebert-bench (min, median, mean, percentiles, max).
// Percentiles use linear interpolation between closest ranks (numpy's default), so p50 of an
// even-sized sample is the mean of the two middle values.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace edgebert::tools {

struct LatencyStats {
  size_t count = 0;
  double min = 0, median = 0, mean = 0, p90 = 0, p99 = 0, max = 0, stddev = 0;
};

// p in [0, 100]; `sorted` must be ascending and non-empty.
inline double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.size() == 1) return sorted[0];
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

inline LatencyStats compute_stats(std::vector<double> samples) {
  LatencyStats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  double var = 0;
  for (double v : samples) var += (v - s.mean) * (v - s.mean);
  s.stddev = samples.size() > 1 ? std::sqrt(var / static_cast<double>(samples.size() - 1)) : 0.0;
  s.median = percentile_sorted(samples, 50);
  s.p90 = percentile_sorted(samples, 90);
  s.p99 = percentile_sorted(samples, 99);
  return s;
}

}  // namespace edgebert::tools
