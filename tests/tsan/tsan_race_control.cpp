// SPDX-License-Identifier: Apache-2.0
// tsan_race_control.cpp: negative control for the TSan build. Two tasks of one
// pthreadpool_parallelize_1d call write the same variable with no synchronization between them
// (they meet at a relaxed-atomic spin barrier, which orders nothing for TSan, so they really run
// at once on two threads), a thousand times each. ThreadSanitizer must report this race even with
// pthreadpool_annotations.cpp linked in: the annotations order the caller with the tasks, never
// the tasks with each other. CTest passes when the report appears.
#include <pthreadpool.h>

#include <atomic>
#include <cstdio>

namespace {
std::atomic<int> g_arrived{0};
int g_shared = 0;  // written by both tasks
}  // namespace

int main() {
  pthreadpool_t pool = pthreadpool_create(2);
  if (!pool) return 1;
  pthreadpool_parallelize_1d(
      pool,
      [](void*, size_t i) {
        g_arrived.fetch_add(1, std::memory_order_relaxed);
        while (g_arrived.load(std::memory_order_relaxed) < 2) {
        }
        // Many separate writes, not one: TSan checks and updates its shadow memory without
        // locking, so one pair of truly simultaneous accesses can slip through (and at -O2 the
        // compiler would fold a plain loop into one). The empty asm keeps every write.
        for (int k = 0; k < 1000; ++k) {
          g_shared += static_cast<int>(i) + 1;
          asm volatile("" ::: "memory");
        }
      },
      nullptr, 2, 0);
  pthreadpool_destroy(pool);
  std::printf("shared = %d\n", g_shared);
  return 0;
}
