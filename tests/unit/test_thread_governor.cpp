// SPDX-License-Identifier: Apache-2.0
// test_thread_governor.cpp: the pool-or-caller policy of multi-threaded sessions
// (runtime/src/thread_governor.h) fed synthetic run times and preemption counts (no clock, no
// load: the policy's decisions, not the machine's). That a session gives the same bytes on its
// pool and on the caller alone is test_composition's thread switch and test_no_alloc's [threads].
#include <catch2/catch.hpp>

#include "thread_governor.h"

using edgebert::ThreadGovernor;

namespace {
constexpr int64_t kMs = 1'000'000;

// Runs of run_ms each with `preemptions` each, from *now; returns how many went to the pool.
int feed(ThreadGovernor& g, int64_t* now, int runs, int64_t run_ms, int64_t preemptions) {
  int pooled = 0;
  for (int i = 0; i < runs; ++i) {
    const bool pool = g.use_pool(*now);
    *now += run_ms * kMs;
    if (pool) {
      ++pooled;
      g.after_pool_run(*now, run_ms * kMs, preemptions);
    }
  }
  return pooled;
}

// Runs on the pool until one is found contended; returns when that run ended (the hold's start).
int64_t until_contended(ThreadGovernor& g, int64_t* now, int64_t run_ms, int64_t preemptions) {
  const int64_t verdicts = g.contended_verdicts();
  while (g.contended_verdicts() == verdicts) {
    REQUIRE(g.use_pool(*now));
    *now += run_ms * kMs;
    g.after_pool_run(*now, run_ms * kMs, preemptions);
  }
  return *now;
}
}  // namespace

TEST_CASE("thread governor: quiet cores keep every run on the pool", "[governor]") {
  ThreadGovernor g;
  int64_t now = 0;
  // 30-50 preemptions a second over the process (a quiet 2-core VM): 1 per 25 ms
  int pooled = 0;
  for (int i = 0; i < 4000; ++i) pooled += feed(g, &now, 1, 3, i % 8 == 0 ? 1 : 0);
  CHECK(pooled == 4000);
  // long runs with many preemptions in all, at a quiet rate (Qwen3 at 512 tokens: 280 ms, 11)
  CHECK(feed(g, &now, 50, 280, 11) == 50);
  CHECK(g.serial_runs() == 0);
  CHECK(g.contended_verdicts() == 0);
}

TEST_CASE("thread governor: contended cores send runs to the caller, retries back off, quiet returns", "[governor]") {
  ThreadGovernor g;
  int64_t now = 0;
  // a busy loop beside the session: 3 ms runs, 2 preemptions each (~670 a second)
  const int first = feed(g, &now, 10, 3, 2);
  CHECK(first == ThreadGovernor::kMinPreemptions / 2);  // the verdict comes with the 10th preemption
  CHECK(g.contended_verdicts() == 1);
  CHECK(g.serial_runs() == 10 - first);
  // held on the caller for the first hold, then one window's try on the pool
  const int64_t held_until = now - 3 * kMs * (10 - first) + ThreadGovernor::kFirstHoldNs;
  feed(g, &now, static_cast<int>((held_until - now) / (3 * kMs)), 3, 2);
  CHECK(g.contended_verdicts() == 1);
  now = held_until;
  CHECK(g.use_pool(now));
  g.after_pool_run(now + 3 * kMs, 3 * kMs, 10);  // still loaded: back to the caller, for twice as long
  now += 3 * kMs;
  CHECK(g.contended_verdicts() == 2);
  CHECK_FALSE(g.use_pool(now + ThreadGovernor::kFirstHoldNs));
  CHECK_FALSE(g.use_pool(now + 2 * ThreadGovernor::kFirstHoldNs - 1));
  now += 2 * ThreadGovernor::kFirstHoldNs;
  // the load is gone: quiet windows keep the pool and reset the hold
  CHECK(feed(g, &now, 100, 3, 0) == 100);
  CHECK(g.contended_verdicts() == 2);
  const int64_t start = until_contended(g, &now, 3, 2);
  CHECK(g.contended_verdicts() == 3);
  CHECK_FALSE(g.use_pool(start + ThreadGovernor::kFirstHoldNs - 1));
  CHECK(g.use_pool(start + ThreadGovernor::kFirstHoldNs));  // the first hold again, not the fourth
}

TEST_CASE("thread governor: the hold stops doubling at its maximum; reset and disabled", "[governor]") {
  ThreadGovernor g;
  int64_t now = 0;
  for (int k = 0; k < 12; ++k) {
    while (!g.use_pool(now)) now += 10 * kMs;
    g.after_pool_run(now + kMs, kMs, 100);
    now += kMs;
  }
  CHECK(g.contended_verdicts() == 12);
  CHECK_FALSE(g.use_pool(now + ThreadGovernor::kMaxHoldNs - 1));
  CHECK(g.use_pool(now + ThreadGovernor::kMaxHoldNs));
  g.after_pool_run(now + ThreadGovernor::kMaxHoldNs + kMs, kMs, 100);
  g.reset();
  CHECK(g.use_pool(now + ThreadGovernor::kMaxHoldNs + 2 * kMs));

  ThreadGovernor off(false);
  int64_t t = 0;
  CHECK(feed(off, &t, 100, 3, 50) == 100);
  CHECK(off.contended_verdicts() == 0);
}
