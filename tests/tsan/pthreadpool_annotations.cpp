// SPDX-License-Identifier: Apache-2.0
// pthreadpool_annotations.cpp: tells ThreadSanitizer about pthreadpool's hand-over, for the TSan
// build only. Debian's libpthreadpool is not instrumented, and its workers wake and report back
// through futexes and atomics that TSan cannot see, so every access our tasks make on a worker
// looks unordered with the caller's accesses before and after the parallel call. (Debian's
// source package could not be fetched here to build an instrumented copy: see
// docs/reliability.md.) pthreadpool's documented contract is exactly two happens-before edges
// per call: everything the caller did before pthreadpool_parallelize_*() happens before every
// task, and every task happens before the call returns. These wrappers interpose the two
// entry points edgebert uses and state those two edges with __tsan_release/__tsan_acquire on
// two addresses ("start", the call's task record: caller releases, tasks acquire; "done", per
// pool: tasks release, caller acquires). Tasks never acquire "done", so two tasks of one call stay
// unordered for TSan and a race between them is still reported (tsan_race_control proves it).
#include <dlfcn.h>
#include <pthreadpool.h>
#include <sanitizer/tsan_interface.h>

#include <cstdlib>

namespace {

// pthreadpool.h also declares C++ overloads of these names (functor templates): name the C ones by type.
using Parallelize1d = void (*)(pthreadpool_t, pthreadpool_task_1d_t, void*, size_t, uint32_t);
using Parallelize1dTile1d = void (*)(pthreadpool_t, pthreadpool_task_1d_tile_1d_t, void*, size_t, size_t, uint32_t);

// "start" is the wrapper's own task record on the caller's stack: the caller releases its address
// after filling it in and every task acquires that address before reading the record (acquiring
// an address stored *inside* the record would read it unordered first: TSan reported exactly that
// once a new pool's fresh worker met a reused stack slot). "done" is per pool.
struct Handover {
  const void* done;
};

Handover handover(pthreadpool_t pool) {
  // One past the pool's handle: never dereferenced, it only names a synchronization object for TSan.
  return {reinterpret_cast<const char*>(pool) + 1};
}

// EDGEBERT_TSAN_NO_ANNOTATIONS=1 turns the annotations off, to show what TSan reports without
// them (docs/reliability.md).
bool disabled() {
  static const bool off = std::getenv("EDGEBERT_TSAN_NO_ANNOTATIONS") != nullptr;
  return off;
}

template <class F>
F real(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) std::abort();
  return reinterpret_cast<F>(f);
}

struct Task1d {
  pthreadpool_task_1d_t task;
  void* context;
  Handover h;
};
void run_1d(void* ctx, size_t i) {
  __tsan_acquire(ctx);  // before the first read of *ctx (see "start" above)
  auto* t = static_cast<Task1d*>(ctx);
  t->task(t->context, i);
  __tsan_release(const_cast<void*>(t->h.done));
}

struct Task1dTile {
  pthreadpool_task_1d_tile_1d_t task;
  void* context;
  Handover h;
};
void run_1d_tile(void* ctx, size_t start, size_t count) {
  __tsan_acquire(ctx);  // before the first read of *ctx (see "start" above)
  auto* t = static_cast<Task1dTile*>(ctx);
  t->task(t->context, start, count);
  __tsan_release(const_cast<void*>(t->h.done));
}

}  // namespace

extern "C" void pthreadpool_parallelize_1d(pthreadpool_t pool, pthreadpool_task_1d_t task, void* context,
                                           size_t range, uint32_t flags) {
  static const auto next = real<Parallelize1d>("pthreadpool_parallelize_1d");
  if (!pool || disabled()) return next(pool, task, context, range, flags);  // !pool: inline on the caller
  Task1d t{task, context, handover(pool)};
  __tsan_release(&t);
  next(pool, run_1d, &t, range, flags);
  __tsan_acquire(const_cast<void*>(t.h.done));
}

extern "C" void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t task,
                                                   void* context, size_t range, size_t tile, uint32_t flags) {
  static const auto next =
      real<Parallelize1dTile1d>("pthreadpool_parallelize_1d_tile_1d");
  if (!pool || disabled()) return next(pool, task, context, range, tile, flags);
  Task1dTile t{task, context, handover(pool)};
  __tsan_release(&t);
  next(pool, run_1d_tile, &t, range, tile, flags);
  __tsan_acquire(const_cast<void*>(t.h.done));
}
