// SPDX-License-Identifier: Apache-2.0
// gptq.cpp: GPTQ int4 rounding (see gptq.h). The upper Cholesky factor U of H^-1 that GPTQ's
// updates use is computed without forming H^-1: with P the index reversal and L the lower
// Cholesky factor of P H P, H^-1 = U^T U for U = P L^-1 P.
#include "converter/gptq.h"

#include <algorithm>
#include <cmath>

namespace edgebert::convert {
namespace {

// In place: the lower triangle of a [n, n] becomes its Cholesky factor L (a = L L^T). Rows are
// done four at a time so each earlier row is read once per four. False if not positive definite.
bool cholesky_lower(std::vector<double>& a, int n) {
  const size_t N = static_cast<size_t>(n);
  for (int i0 = 0; i0 < n; i0 += 4) {
    const int i1 = std::min(n, i0 + 4);
    for (int j = 0; j < i1; ++j) {
      const double* lj = &a[j * N];
      for (int i = std::max(i0, j); i < i1; ++i) {
        double* li = &a[i * N];
        double s = li[j];
        for (int k = 0; k < j; ++k) s -= li[k] * lj[k];
        if (i == j) {
          if (!(s > 0) || !std::isfinite(s)) return false;
          li[j] = std::sqrt(s);
        } else {
          li[j] = s / lj[j];
        }
      }
    }
  }
  return true;
}

// M = L^-1 for lower-triangular L (both [n, n], lower triangles).
std::vector<double> invert_lower(const std::vector<double>& l, int n) {
  const size_t N = static_cast<size_t>(n);
  std::vector<double> m(N * N, 0.0), acc(N);
  for (int i = 0; i < n; ++i) {
    // row i of M: M[i][j] = -sum_{k=j..i-1} L[i][k] M[k][j] / L[i][i] (j < i), 1 / L[i][i]
    std::fill(acc.begin(), acc.begin() + i, 0.0);
    const double* li = &l[i * N];
    for (int k = 0; k < i; ++k) {
      const double c = li[k];
      const double* mk = &m[k * N];
      for (int j = 0; j <= k; ++j) acc[j] += c * mk[j];
    }
    const double inv = 1.0 / li[i];
    double* mi = &m[i * N];
    for (int j = 0; j < i; ++j) mi[j] = -acc[j] * inv;
    mi[i] = inv;
  }
  return m;
}

}  // namespace

int4::Quantized gptq_quantize(const float* w, size_t rows, int cols, int block, std::vector<double> h, double damp) {
  const int n = cols;
  const size_t N = static_cast<size_t>(n);
  std::vector<bool> dead(N);
  double mean_diag = 0;
  for (int i = 0; i < n; ++i) mean_diag += h[i * N + i];
  mean_diag /= n;
  if (!(mean_diag > 0) || !std::isfinite(mean_diag)) return int4::quantize(w, rows, cols, block);
  for (int i = 0; i < n; ++i) {
    dead[i] = !(h[i * N + i] > 0);
    if (dead[i]) h[i * N + i] = mean_diag;
    h[i * N + i] += damp * mean_diag;
  }
  // P H P (reversed indices), lower triangle
  std::vector<double> a(N * N);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) a[i * N + j] = h[(N - 1 - j) * N + (N - 1 - i)];  // H[n-1-i][n-1-j], lower half read
  h.clear();
  h.shrink_to_fit();
  if (!cholesky_lower(a, n)) return int4::quantize(w, rows, cols, block);
  const std::vector<double> m = invert_lower(a, n);
  a.clear();
  a.shrink_to_fit();
  // U[i][j] = M[n-1-i][n-1-j], upper; kept as float rows (what the updates stream).
  std::vector<float> u(N * N, 0.f);
  for (int i = 0; i < n; ++i)
    for (int j = i; j < n; ++j) u[i * N + j] = static_cast<float>(m[(N - 1 - i) * N + (N - 1 - j)]);

  int4::Quantized q;
  q.block = block;
  const int width = int4::block_width(cols, block), nb = int4::blocks_per_row(cols, block);
  const size_t rb = int4::row_bytes(cols);
  q.packed.assign(rows * rb, 0);
  q.scales.assign(rows * static_cast<size_t>(nb), 0);
  // Rows are independent (H is shared): tiles of rows stream U once per tile.
  constexpr size_t kTile = 32;
  std::vector<float> tile(kTile * N), scale(kTile), err(kTile);
  for (size_t r0 = 0; r0 < rows; r0 += kTile) {
    const size_t nr = std::min(kTile, rows - r0);
    for (size_t r = 0; r < nr; ++r)
      for (int c = 0; c < n; ++c) tile[r * N + c] = dead[c] ? 0.f : w[(r0 + r) * N + c];
    for (int i = 0; i < n; ++i) {
      if (i % width == 0) {
        const int c1 = std::min(n, i + width);
        for (size_t r = 0; r < nr; ++r) {
          scale[r] = int4::block_scale(&tile[r * N + i], c1 - i);
          q.scales[(r0 + r) * nb + i / width] = int4::bf16_from_float(scale[r]);
        }
      }
      const float* ui = &u[i * N];
      for (size_t r = 0; r < nr; ++r) {
        float* t = &tile[r * N];
        const int v = int4::quantize_value(t[i], scale[r]);
        int4::set_value(q.packed.data() + (r0 + r) * rb, i, v);
        err[r] = (t[i] - static_cast<float>(v) * scale[r]) / ui[i];
      }
      for (size_t r = 0; r < nr; ++r) {
        float* t = &tile[r * N];
        const float e = err[r];
        for (int j = i + 1; j < n; ++j) t[j] -= e * ui[j];
      }
    }
    if (cols % 2)
      for (size_t r = 0; r < nr; ++r) int4::set_value(q.packed.data() + (r0 + r) * rb, cols, 0);
  }
  return q;
}

}  // namespace edgebert::convert
