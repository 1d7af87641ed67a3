// SPDX-License-Identifier: Apache-2.0
// token_pooling.cpp: PyLate's hierarchical token pooling (token_pooling.h). The linkage follows
// scipy 1.10-1.15's nn_chain / label / fcluster "maxclust" (scipy/cluster/_hierarchy.pyx), so that
// ties and label order come out as scipy's: written from its documented semantics and checked
// against scipy itself (tests/reference/colbert_numpy.py, test_colbert).
#include "tasks/token_pooling.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <utility>

namespace edgebert::tasks {
namespace {

// Index of (i, j), i != j, in a condensed m x m matrix (scipy's row-major upper triangle).
inline size_t condensed(size_t m, size_t i, size_t j) {
  if (i > j) std::swap(i, j);
  return m * i - i * (i + 1) / 2 + (j - i - 1);
}

// Ward's Lance-Williams update: the distance from cluster i to the union of x and y.
inline double ward_update(double d_xi, double d_yi, double d_xy, double n_x, double n_y, double n_i) {
  const double t = 1.0 / (n_x + n_y + n_i);
  return std::sqrt((n_i + n_x) * t * d_xi * d_xi + (n_i + n_y) * t * d_yi * d_yi - n_i * t * d_xy * d_xy);
}

// Euclidean distances between the rows of S = E E^T for E [m, dim] (the rows of PyLate's distance
// matrix 1 - S differ as S's do): ||S_i - S_j||^2 = P_ii + P_jj - 2 P_ij with P = E (E^T E) E^T,
// m^2 dim work instead of m^3. Condensed, in double.
std::vector<double> row_distances(const float* e, size_t m, size_t dim) {
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  // sizes whose products (dim^2, m (m - 1) / 2; m dim is checked by the caller) cannot be had
  if (dim > kMax / dim || (m > 1 && m - 1 > kMax / 2 / m)) throw std::bad_alloc();
  std::vector<double> gram(dim * dim, 0.0);  // E^T E
  for (size_t r = 0; r < m; ++r)
    for (size_t a = 0; a < dim; ++a) {
      const double ea = e[r * dim + a];
      for (size_t b = 0; b < dim; ++b) gram[a * dim + b] += ea * e[r * dim + b];
    }
  std::vector<double> f(m * dim, 0.0);  // E (E^T E)
  for (size_t r = 0; r < m; ++r)
    for (size_t a = 0; a < dim; ++a) {
      const double ea = e[r * dim + a];
      for (size_t b = 0; b < dim; ++b) f[r * dim + b] += ea * gram[a * dim + b];
    }
  auto p = [&](size_t i, size_t j) {
    double s = 0.0;
    for (size_t k = 0; k < dim; ++k) s += f[i * dim + k] * e[j * dim + k];
    return s;
  };
  std::vector<double> diag(m);
  for (size_t i = 0; i < m; ++i) diag[i] = p(i, i);
  std::vector<double> d(m * (m - 1) / 2);
  size_t at = 0;
  for (size_t i = 0; i < m; ++i)
    for (size_t j = i + 1; j < m; ++j) d[at++] = std::sqrt(std::max(0.0, diag[i] + diag[j] - 2.0 * p(i, j)));
  return d;
}

// scipy's LinkageUnionFind: the current cluster id of a row's set; merges get ids m, m + 1, ...
struct UnionFind {
  std::vector<size_t> parent;
  size_t next;
  explicit UnionFind(size_t m) : parent(2 * m - 1), next(m) { std::iota(parent.begin(), parent.end(), size_t{0}); }
  size_t find(size_t x) {
    size_t root = x;
    while (parent[root] != root) root = parent[root];
    while (parent[x] != root) x = std::exchange(parent[x], root);
    return root;
  }
  void merge(size_t x, size_t y) { parent[x] = parent[y] = next++; }
};

}  // namespace

std::vector<LinkageRow> ward_linkage(std::vector<double>& dist, size_t m) {
  std::vector<LinkageRow> z;
  if (m < 2) return z;
  z.reserve(m - 1);
  std::vector<double> size(m, 1.0);
  std::vector<size_t> chain;
  chain.reserve(m);
  for (size_t k = 0; k + 1 < m; ++k) {
    if (chain.empty())
      for (size_t i = 0; i < m; ++i)
        if (size[i] > 0) {
          chain.push_back(i);
          break;
        }
    size_t x = 0, y = 0;
    double best = 0.0;
    for (;;) {  // follow nearest neighbours until two are each other's
      x = chain.back();
      best = std::numeric_limits<double>::infinity();
      if (chain.size() > 1) {  // prefer the previous link on ties (no cycles)
        y = chain[chain.size() - 2];
        best = dist[condensed(m, x, y)];
      }
      for (size_t i = 0; i < m; ++i) {
        if (size[i] == 0 || i == x) continue;
        const double d = dist[condensed(m, x, i)];
        if (d < best) best = d, y = i;
      }
      if (chain.size() > 1 && y == chain[chain.size() - 2]) break;
      chain.push_back(y);
    }
    chain.resize(chain.size() - 2);
    if (x > y) std::swap(x, y);
    const double nx = size[x], ny = size[y];
    z.push_back(LinkageRow{x, y, best});
    size[x] = 0;        // x is dropped,
    size[y] = nx + ny;  // y becomes the union
    for (size_t i = 0; i < m; ++i) {
      if (size[i] == 0 || i == y) continue;
      double& dy = dist[condensed(m, i, y)];
      dy = ward_update(dist[condensed(m, i, x)], dy, best, nx, ny, size[i]);
    }
  }
  std::stable_sort(z.begin(), z.end(), [](const LinkageRow& a, const LinkageRow& b) { return a.distance < b.distance; });
  UnionFind uf(m);  // rows' slots -> cluster ids, smaller id first
  for (LinkageRow& r : z) {
    const size_t a = uf.find(r.left), b = uf.find(r.right);
    r.left = std::min(a, b);
    r.right = std::max(a, b);
    uf.merge(a, b);
  }
  return z;
}

std::vector<size_t> maxclust_labels(const std::vector<LinkageRow>& z, size_t m, size_t t) {
  std::vector<size_t> labels(m, 1);
  if (m < 2) return labels;
  // Each merge's largest distance in its subtree (scipy's max_dists; Ward's are already sorted).
  std::vector<double> max_dist(m - 1);
  auto sub = [&](size_t id) { return id < m ? 0.0 : max_dist[id - m]; };
  for (size_t k = 0; k < m - 1; ++k) max_dist[k] = std::max({z[k].distance, sub(z[k].left), sub(z[k].right)});
  auto clusters_at = [&](double cut) {
    size_t merged = 0;
    for (double d : max_dist) merged += d <= cut;
    return m - merged;
  };
  // scipy's binary search over merge indices (lower 0, upper m - 1) never tries the first merge:
  // the cut is the distance of the smallest index k >= 1 whose cut leaves at most t clusters (so
  // t >= m - 1 leaves m - 2). Two rows: one cluster (scipy reads an unset entry there).
  double cut = max_dist[m - 2];
  for (size_t k = 1; k + 1 < m; ++k)
    if (clusters_at(max_dist[k]) <= t) {
      cut = max_dist[k];
      break;
    }
  // fcluster's labels (scipy's cluster_monocrit): a depth-first walk from the root that enters a
  // merge's child merges first (left, then right) and labels its child rows on the way back (left,
  // then right); a merge within the cut gives its whole subtree the next label.
  struct Frame {
    size_t id;
    int stage;  // 0: entered, 1: left child done, 2: both children done
  };
  size_t next = 0;
  std::vector<Frame> stack{{2 * m - 2, 0}};
  std::vector<size_t> subtree;
  while (!stack.empty()) {
    Frame& f = stack.back();
    const LinkageRow& r = z[f.id - m];
    if (f.stage == 0 && max_dist[f.id - m] <= cut) {
      ++next;
      subtree.assign(1, f.id);
      while (!subtree.empty()) {
        const size_t c = subtree.back();
        subtree.pop_back();
        if (c < m) {
          labels[c] = next;
        } else {
          subtree.push_back(z[c - m].left);
          subtree.push_back(z[c - m].right);
        }
      }
      stack.pop_back();
      continue;
    }
    if (f.stage < 2) {
      const size_t child = f.stage == 0 ? r.left : r.right;
      ++f.stage;
      if (child >= m) stack.push_back(Frame{child, 0});  // (f is not used after this)
      continue;
    }
    if (r.left < m) labels[r.left] = ++next;
    if (r.right < m) labels[r.right] = ++next;
    stack.pop_back();
  }
  return labels;
}

size_t pool_token_vectors(const float* v, size_t rows, size_t dim, size_t pool_factor, size_t protected_rows,
                          float* out) {
  if (pool_factor <= 1) {  // PyLate does not pool: the rows as they are
    std::memcpy(out, v, rows * dim * sizeof(float));
    return rows;
  }
  protected_rows = std::min(protected_rows, rows);
  const size_t m = rows - protected_rows;
  if (m < 2) {  // nothing to cluster (scipy refuses fewer than 2): the row, then the protected ones
    std::memcpy(out, v + protected_rows * dim, m * dim * sizeof(float));
    std::memcpy(out + m * dim, v, protected_rows * dim * sizeof(float));
    return rows;
  }
  const float* e = v + protected_rows * dim;
  std::vector<double> dist = row_distances(e, m, dim);
  const std::vector<LinkageRow> z = ward_linkage(dist, m);
  const size_t t = std::max<size_t>(m / pool_factor, 1);
  const std::vector<size_t> labels = maxclust_labels(z, m, t);
  std::vector<double> sum(dim);
  size_t written = 0;
  for (size_t c = 1; c <= t; ++c) {  // PyLate's clusters 1..t that have rows, their means
    std::fill(sum.begin(), sum.end(), 0.0);
    size_t count = 0;
    for (size_t r = 0; r < m; ++r)
      if (labels[r] == c) {
        ++count;
        for (size_t k = 0; k < dim; ++k) sum[k] += e[r * dim + k];
      }
    if (count == 0) continue;
    for (size_t k = 0; k < dim; ++k) out[written * dim + k] = static_cast<float>(sum[k] / static_cast<double>(count));
    ++written;
  }
  std::memcpy(out + written * dim, v, protected_rows * dim * sizeof(float));
  return written + protected_rows;
}

}  // namespace edgebert::tasks
