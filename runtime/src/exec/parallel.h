// SPDX-License-Identifier: Apache-2.0
// parallel.h: the row-parallel loop of the elementwise op kernels: f(first_row, rows) over
// [0, range) in tiles on the session's pool (inline without one). Allocation-free.
#pragma once

#include <cstddef>

#include <pthreadpool.h>

namespace edgebert::exec {

template <class F>
void parallel_rows(pthreadpool_t pool, size_t range, size_t tile, F& f) {
  pthreadpool_parallelize_1d_tile_1d(
      pool, [](void* ctx, size_t start, size_t count) { (*static_cast<F*>(ctx))(start, count); }, &f, range, tile, 0);
}

}  // namespace edgebert::exec
