// SPDX-License-Identifier: Apache-2.0
// gptq.cpp: GPTQ int4 rounding (see gptq.h). The upper Cholesky factor U of H^-1 that GPTQ's
// updates use is computed without forming H^-1: with P the index reversal and L the lower
// Cholesky factor of P H P, H^-1 = U^T U for U = P L^-1 P.
#include "converter/gptq.h"

#include <algorithm>
#include <cmath>

namespace edgebert::convert {
namespace {

// sum_k x[k] y[k] over k < n, in four running sums (one chain of dependent additions made the
// Cholesky factorization below latency-bound: 3x slower for a 3072-wide FFN)
double dot(const double* x, const double* y, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int k = 0;
  for (; k + 4 <= n; k += 4) {
    s0 += x[k] * y[k];
    s1 += x[k + 1] * y[k + 1];
    s2 += x[k + 2] * y[k + 2];
    s3 += x[k + 3] * y[k + 3];
  }
  for (; k < n; ++k) s0 += x[k] * y[k];
  return (s0 + s1) + (s2 + s3);
}

// In place: the lower triangle of a [n, n] becomes its Cholesky factor L (a = L L^T). Rows are
// done kRows at a time so each earlier row is read once per kRows (the triangle outgrows the caches:
// 36 MB at n = 3072), while the block's rows stay in L2. False if not positive definite.
bool cholesky_lower(std::vector<double>& a, int n) {
  const size_t N = static_cast<size_t>(n);
  constexpr int kRows = 16;
  for (int i0 = 0; i0 < n; i0 += kRows) {
    const int i1 = std::min(n, i0 + kRows);
    for (int j = 0; j < i1; ++j) {
      const double* lj = &a[j * N];
      for (int i = std::max(i0, j); i < i1; ++i) {
        double* li = &a[i * N];
        const double s = li[j] - dot(li, lj, j);
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

// M = L^-1 for lower-triangular L (both [n, n], lower triangles). Row i of M is
// M[i][j] = -sum_{k=j..i-1} L[i][k] M[k][j] / L[i][i] (j < i), M[i][i] = 1 / L[i][i]. Rows are
// made kRows at a time, so each earlier row of M (the whole triangle: 36 MB at n = 3072, more
// than the caches) is read once per kRows rows instead of once per row; every sum still adds its
// terms in increasing k, so the result does not depend on kRows.
std::vector<double> invert_lower(const std::vector<double>& l, int n) {
  constexpr int kRows = 8;
  const size_t N = static_cast<size_t>(n);
  std::vector<double> m(N * N, 0.0), acc(N * kRows);  // acc[j * kRows + r]: row i0 + r's sum at column j
  for (int i0 = 0; i0 < n; i0 += kRows) {
    const int i1 = std::min(n, i0 + kRows);
    std::fill(acc.begin(), acc.begin() + static_cast<size_t>(i1) * kRows, 0.0);
    double c[kRows] = {};
    for (int k = 0; k < i0; ++k) {  // the rows before this block, streamed once for all of its rows
      for (int r = 0; r < i1 - i0; ++r) c[r] = l[(i0 + r) * N + k];
      const double* mk = &m[k * N];
      for (int j = 0; j <= k; ++j) {
        double* a = &acc[static_cast<size_t>(j) * kRows];
        for (int r = 0; r < kRows; ++r) a[r] += c[r] * mk[j];
      }
    }
    for (int i = i0; i < i1; ++i) {  // then the block's own earlier rows, in order
      const int r = i - i0;
      const double* li = &l[i * N];
      for (int k = i0; k < i; ++k) {
        const double ck = li[k];
        const double* mk = &m[k * N];
        for (int j = 0; j <= k; ++j) acc[static_cast<size_t>(j) * kRows + r] += ck * mk[j];
      }
      const double inv = 1.0 / li[i];
      double* mi = &m[i * N];
      for (int j = 0; j < i; ++j) mi[j] = -acc[static_cast<size_t>(j) * kRows + r] * inv;
      mi[i] = inv;
    }
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
