// SPDX-License-Identifier: Apache-2.0
// test_thread_governor.cpp: the pool-or-caller policy of multi-threaded sessions
// (runtime/src/thread_governor.h) fed synthetic run times and preemption counts (no clock, no
// load: the policy's decisions, not the machine's); then a 2-thread session beside busy threads
// that this test starts on every core: it must see the contention and send runs to the caller
// alone, with the one-thread session's bytes throughout (no time is asserted, only what it did).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "model.h"
#include "session.h"
#include "test_support.h"
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

TEST_CASE("thread governor: a 2-thread session beside busy threads leaves its pool, same bytes", "[governor][session]") {
  using namespace edgebert;
  std::unique_ptr<Model> m;
  std::string err;
  REQUIRE(Model::load_file(test::ebm_path("base2_h1", "int8").c_str()).move_to(&m, &err));
  const size_t hidden = static_cast<size_t>(m->config.hidden), n = 32;
  std::unique_ptr<Session> one, two;
  SessionOptions o;
  o.threads = 1;
  REQUIRE(Session::create(*m, o).move_to(&one, &err));
  o.threads = 2;
  o.adaptive_threads = true;  // whatever EDGEBERT_ADAPTIVE_THREADS says
  REQUIRE(Session::create(*m, o).move_to(&two, &err));
  std::vector<int32_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(1000 + 37 * i) % m->config.vocab;
  REQUIRE(one->run_ids(ids.data(), nullptr, nullptr, n) == EB_OK);
  const std::vector<float> want(one->last_hidden_state(), one->last_hidden_state() + n * hidden);

  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  const unsigned cores = std::max(2u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < cores; ++i)
    busy.emplace_back([&stop] {
      volatile unsigned x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  // until a run went to the caller alone and a few more ran there (a generous deadline: no time
  // is measured, it only bounds a failure)
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  size_t runs = 0, mismatches = 0;
  while (two->thread_governor().serial_runs() < 5 && std::chrono::steady_clock::now() < deadline) {
    if (two->run_ids(ids.data(), nullptr, nullptr, n) != EB_OK) break;
    ++runs;
    if (std::memcmp(two->last_hidden_state(), want.data(), want.size() * sizeof(float)) != 0) ++mismatches;
  }
  stop = true;
  for (auto& t : busy) t.join();
  INFO(runs << " runs, " << two->thread_governor().serial_runs() << " on the caller alone");
  CHECK(two->thread_governor().contended_verdicts() >= 1);
  CHECK(two->thread_governor().serial_runs() >= 5);
  CHECK(mismatches == 0);
  // the app's choice resets it: the next run is on the pool again, same bytes
  REQUIRE(two->set_num_threads(2) == EB_OK);
  REQUIRE(two->run_ids(ids.data(), nullptr, nullptr, n) == EB_OK);
  CHECK(std::memcmp(two->last_hidden_state(), want.data(), want.size() * sizeof(float)) == 0);
}
