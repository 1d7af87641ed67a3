// SPDX-License-Identifier: Apache-2.0
// sparse.h: reading sparse vectors (SPLADE's sparse_embedding [vocab]) as (id, weight) lists: the
// entries above a threshold, the largest k first, selected in the caller's arrays (a bounded
// min-heap, then sorted in place: no scratch, no allocation).
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert::tasks {

// The entries of weights[V] greater than `threshold`, largest first (equal weights: lower id
// first), at most k of them (k 0: all; ids / out hold min(k, V) entries). Returns their count.
size_t sparse_top_k(const float* weights, size_t V, size_t k, float threshold, int32_t* ids, float* out);

}  // namespace edgebert::tasks
