// SPDX-License-Identifier: Apache-2.0
// sparse.cpp: top-k selection of a sparse vector's entries (see sparse.h).
#include "tasks/sparse.h"

#include <utility>

namespace edgebert::tasks {
namespace {

// "a ranks before b": the larger weight, then the lower id.
bool before(float wa, int32_t ia, float wb, int32_t ib) { return wa > wb || (wa == wb && ia < ib); }

// The heap over the parallel arrays keeps its worst-ranked entry at the root.
void sift_down(int32_t* ids, float* w, size_t n, size_t i) {
  for (;;) {
    const size_t l = 2 * i + 1, r = l + 1;
    size_t worst = i;
    if (l < n && before(w[worst], ids[worst], w[l], ids[l])) worst = l;
    if (r < n && before(w[worst], ids[worst], w[r], ids[r])) worst = r;
    if (worst == i) return;
    std::swap(ids[i], ids[worst]);
    std::swap(w[i], w[worst]);
    i = worst;
  }
}

void sift_up(int32_t* ids, float* w, size_t i) {
  while (i > 0) {
    const size_t p = (i - 1) / 2;
    if (!before(w[p], ids[p], w[i], ids[i])) return;
    std::swap(ids[i], ids[p]);
    std::swap(w[i], w[p]);
    i = p;
  }
}

}  // namespace

size_t sparse_top_k(const float* weights, size_t V, size_t k, float threshold, int32_t* ids, float* out) {
  if (k == 0 || k > V) k = V;
  size_t n = 0;
  for (size_t c = 0; c < V; ++c) {
    const float v = weights[c];
    if (!(v > threshold)) continue;
    const int32_t id = static_cast<int32_t>(c);
    if (n < k) {
      ids[n] = id;
      out[n] = v;
      sift_up(ids, out, n++);
    } else if (before(v, id, out[0], ids[0])) {
      ids[0] = id;
      out[0] = v;
      sift_down(ids, out, n, 0);
    }
  }
  for (size_t end = n; end > 1; --end) {  // heap sort: the worst goes last
    std::swap(ids[0], ids[end - 1]);
    std::swap(out[0], out[end - 1]);
    sift_down(ids, out, end - 1, 0);
  }
  return n;
}

}  // namespace edgebert::tasks
