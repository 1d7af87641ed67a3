// SPDX-License-Identifier: Apache-2.0
// parallel.h: the row-parallel loop of the elementwise op kernels: f(first_row, rows) over
// [0, range) in tiles on the session's pool (inline without one), and the end of a run on the pool.
// Allocation-free.
#pragma once

#include <cstddef>

#include <pthreadpool.h>

namespace edgebert::exec {

template <class F>
void parallel_rows(pthreadpool_t pool, size_t range, size_t tile, F& f) {
  pthreadpool_parallelize_1d_tile_1d(
      pool, [](void* ctx, size_t start, size_t count) { (*static_cast<F*>(ctx))(start, count); }, &f, range, tile, 0);
}

// Ends a run on the pool: its workers wait on a futex for the next run instead of spinning
// (pthreadpool's workers spin for about a million iterations after each parallel call before they
// sleep). Within a run they keep spinning between ops; between runs a spinning worker only takes a
// core from the caller's own work (tokenizing the next texts) or from other processes. XNNPACK's
// runtime does the same with XNN_FLAG_YIELD_WORKERS after its last operator; the operator API has
// no such call, so it is a no-op task on every worker with PTHREADPOOL_FLAG_YIELD_WORKERS.
// Allocation-free.
inline void yield_workers(pthreadpool_t pool) {
  const size_t threads = pool ? pthreadpool_get_threads_count(pool) : 0;
  if (threads < 2) return;
  pthreadpool_parallelize_1d(
      pool, [](void*, size_t) {}, nullptr, threads, PTHREADPOOL_FLAG_YIELD_WORKERS);
}

}  // namespace edgebert::exec
