// SPDX-License-Identifier: Apache-2.0
// Unit tests of the arena memory planner (runtime/src/planner): hand-made cases with known
// results, error handling, randomized property checks against an independent pairwise checker,
// validation of broken plans, the printable plan, and planning time at BERT-large scale.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "program/memory_planner.h"

using edgebert::BufferRequest;
using edgebert::format_plan;
using edgebert::MemoryPlan;
using edgebert::plan_is_valid;
using edgebert::plan_memory;

namespace {
// The planner's Status as the checks below read it: ok, with the message in *error.
bool planned(const edgebert::Status& status, std::string* error) {
  if (error) *error = status.message();
  return status.is_ok();
}
}  // namespace
using edgebert::PlanStrategy;

namespace {

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Independent of the planner's own checker: every pair, plainly.
bool pairwise_ok(const std::vector<BufferRequest>& reqs, const MemoryPlan& plan,
                 std::string* why) {
  if (plan.offsets.size() != reqs.size()) {
    *why = "offset count";
    return false;
  }
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].bytes > 0 && plan.offsets[i] + reqs[i].bytes > plan.arena_bytes) {
      *why = "buffer " + reqs[i].name + " past arena end";
      return false;
    }
    for (size_t j = i + 1; j < reqs.size(); ++j) {
      const bool time = reqs[i].first_op <= reqs[j].last_op && reqs[j].first_op <= reqs[i].last_op;
      const size_t ai = plan.offsets[i], bi = ai + reqs[i].bytes;
      const size_t aj = plan.offsets[j], bj = aj + reqs[j].bytes;
      const bool space = reqs[i].bytes > 0 && reqs[j].bytes > 0 && ai < bj && aj < bi;
      if (time && space) {
        *why = reqs[i].name + " and " + reqs[j].name;
        return false;
      }
    }
  }
  return true;
}

// Max over ops of the sum of live sizes (each rounded up to `alignment`), by brute force.
size_t lower_bound_bytes(const std::vector<BufferRequest>& reqs, size_t alignment) {
  if (reqs.empty()) return 0;
  int lo = reqs[0].first_op, hi = reqs[0].last_op;
  for (const auto& r : reqs) {
    lo = std::min(lo, r.first_op);
    hi = std::max(hi, r.last_op);
  }
  size_t best = 0;
  for (int op = lo; op <= hi; ++op) {
    size_t sum = 0;
    for (const auto& r : reqs) {
      if (r.first_op <= op && op <= r.last_op) sum += round_up(r.bytes, alignment);
    }
    best = std::max(best, sum);
  }
  return best;
}

MemoryPlan must_plan(const std::vector<BufferRequest>& reqs, PlanStrategy s, size_t alignment) {
  MemoryPlan plan;
  std::string error;
  const bool ok = planned(plan_memory(reqs, s, alignment, &plan), &error);
  INFO(error);
  REQUIRE(ok);
  REQUIRE(plan.offsets.size() == reqs.size());
  return plan;
}

// A BERT-like schedule: per layer a fused QKV GEMM, per-head scores/probs/context on T workers
// (so only T heads' n x n buffers are live at once), output projection, LayerNorms and the FFN.
std::vector<BufferRequest> bert_like(int layers, int heads, int threads, size_t seq,
                                     size_t hidden, size_t ffn) {
  std::vector<BufferRequest> reqs;
  int op = 0;
  auto add = [&](std::string name, size_t bytes, int first, int last) {
    reqs.push_back({std::move(name), bytes, first, last});
  };
  int hidden_first = op;  // embeddings output
  ++op;
  for (int l = 0; l < layers; ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    const int qkv_op = op++;
    const int head_rounds = (heads + threads - 1) / threads;
    const int attn_first = op;
    for (int round = 0; round < head_rounds; ++round) {
      for (int t = 0; t < threads && round * threads + t < heads; ++t) {
        const std::string w = p + "worker" + std::to_string(t) + ".h" +
                              std::to_string(round * threads + t) + ".";
        add(w + "scores", seq * seq * 4, op, op + 1);
        add(w + "probs", seq * seq, op + 1, op + 2);
      }
      op += 3;
    }
    const int attn_last = op - 1;
    add(p + "qkv", seq * hidden * 3, qkv_op, attn_last);
    add(p + "context", seq * hidden, attn_first, op);
    const int out_proj = op++;
    add(p + "attn_out", seq * hidden * 4, out_proj, out_proj + 1);
    const int ln1 = op++;
    add(p + "hidden_in", seq * hidden * 4, hidden_first, ln1);
    add(p + "ln1", seq * hidden * 4, ln1, op + 3);
    const int ffn1 = op++;
    add(p + "ffn1", seq * ffn * 4, ffn1, ffn1 + 1);
    const int gelu = op++;
    add(p + "gelu_q", seq * ffn, gelu, gelu + 1);
    const int ffn2 = op++;
    add(p + "ffn2", seq * hidden * 4, ffn2, ffn2 + 1);
    hidden_first = op++;  // ln2: the next layer's input
  }
  add("last_hidden_state", seq * hidden * 4, hidden_first, op);
  return reqs;
}

}  // namespace

TEST_CASE("three buffers with disjoint lifetimes share offset 0", "[planner]") {
  const std::vector<BufferRequest> reqs = {
      {"a", 100, 0, 1}, {"b", 300, 2, 3}, {"c", 200, 4, 9}};
  const MemoryPlan plan = must_plan(reqs, PlanStrategy::kGreedyBySize, 1);
  CHECK(plan.offsets == std::vector<size_t>{0, 0, 0});
  CHECK(plan.arena_bytes == 300);
  CHECK(plan.naive_bytes == 600);
  CHECK(planned(plan_is_valid(reqs, plan), nullptr));
}

TEST_CASE("nested lifetimes reuse the space above the long-lived buffer", "[planner]") {
  // outer lives throughout; two short ones inside it at different times share one slot.
  const std::vector<BufferRequest> reqs = {
      {"outer", 1000, 0, 10}, {"inner1", 400, 2, 3}, {"inner2", 600, 5, 7}, {"inner3", 100, 8, 8}};
  const MemoryPlan plan = must_plan(reqs, PlanStrategy::kGreedyBySize, 1);
  CHECK(plan.offsets == std::vector<size_t>{0, 1000, 1000, 1000});
  CHECK(plan.arena_bytes == 1600);  // optimal: equals the peak live sum (outer + inner2)
  CHECK(plan.naive_bytes == 2100);
}

TEST_CASE("intervals are inclusive: sharing an op means overlapping", "[planner]") {
  const std::vector<BufferRequest> reqs = {{"a", 64, 0, 1}, {"b", 32, 1, 2}, {"c", 64, 2, 3}};
  const MemoryPlan plan = must_plan(reqs, PlanStrategy::kGreedyBySize, 1);
  // a and c are never live together (a ends at op 1, c starts at op 2): both at 0; b above.
  CHECK(plan.offsets == std::vector<size_t>{0, 64, 0});
  CHECK(plan.arena_bytes == 96);
}

TEST_CASE("greedy takes the lowest gap that fits", "[planner]") {
  // Largest first (ties: earlier first_op): long at 0; big0 conflicts with long -> 100;
  // small (op 0) conflicts with both -> 200; mid (ops 2..3) conflicts only with long -> 100.
  const std::vector<BufferRequest> reqs = {
      {"long", 100, 0, 3}, {"big0", 100, 0, 1}, {"mid", 50, 2, 3}, {"small", 50, 0, 0}};
  const MemoryPlan plan = must_plan(reqs, PlanStrategy::kGreedyBySize, 1);
  CHECK(plan.offsets == std::vector<size_t>{0, 100, 100, 200});
  CHECK(plan.arena_bytes == 250);
  CHECK(planned(plan_is_valid(reqs, plan), nullptr));

  // A hole below a placed buffer is found: a [0,100) ops 0..0, b [100,180) ops 0..5;
  // c (60 bytes, ops 2..3) conflicts only with b and goes into a's place at 0.
  const std::vector<BufferRequest> hole = {{"a", 100, 0, 0}, {"b", 80, 0, 5}, {"c", 60, 2, 3}};
  const MemoryPlan p2 = must_plan(hole, PlanStrategy::kGreedyBySize, 1);
  CHECK(p2.offsets == std::vector<size_t>{0, 100, 0});
  CHECK(p2.arena_bytes == 180);
}

TEST_CASE("alignment is respected for offsets, arena and naive totals", "[planner]") {
  const std::vector<BufferRequest> reqs = {
      {"a", 1, 0, 5}, {"b", 65, 0, 5}, {"c", 100, 0, 5}, {"d", 64, 6, 7}};
  for (size_t alignment : {size_t{1}, size_t{16}, size_t{64}, size_t{48}}) {
    for (PlanStrategy s : {PlanStrategy::kGreedyBySize, PlanStrategy::kLinear}) {
      const MemoryPlan plan = must_plan(reqs, s, alignment);
      size_t naive = 0;
      for (const auto& r : reqs) naive += round_up(r.bytes, alignment);
      CHECK(plan.naive_bytes == naive);
      CHECK(plan.arena_bytes % alignment == 0);
      for (size_t off : plan.offsets) CHECK(off % alignment == 0);
      CHECK(planned(plan_is_valid(reqs, plan), nullptr));
    }
  }
  const MemoryPlan p64 = must_plan(reqs, PlanStrategy::kGreedyBySize, 64);
  CHECK(p64.naive_bytes == 64 + 128 + 128 + 64);
  CHECK(p64.arena_bytes == 320);  // a, b, c all live together: 64 + 128 + 128
}

TEST_CASE("linear lays buffers back to back in request order", "[planner]") {
  const std::vector<BufferRequest> reqs = {{"a", 10, 0, 0}, {"b", 0, 0, 0}, {"c", 20, 5, 6}};
  const MemoryPlan plan = must_plan(reqs, PlanStrategy::kLinear, 8);
  CHECK(plan.offsets == std::vector<size_t>{0, 16, 16});
  CHECK(plan.arena_bytes == 40);
  CHECK(plan.naive_bytes == 40);
}

TEST_CASE("zero-size buffers are accepted and occupy nothing", "[planner]") {
  const std::vector<BufferRequest> reqs = {
      {"empty0", 0, 0, 9}, {"a", 128, 0, 9}, {"empty1", 0, 3, 3}, {"b", 64, 0, 9}};
  const MemoryPlan plan = must_plan(reqs, PlanStrategy::kGreedyBySize, 16);
  CHECK(plan.arena_bytes == 192);
  CHECK(plan.naive_bytes == 192);
  CHECK(plan.offsets[0] == 0);
  CHECK(plan.offsets[2] == 0);
  CHECK(planned(plan_is_valid(reqs, plan), nullptr));

  const std::vector<BufferRequest> only_empty = {{"e", 0, 0, 0}, {"f", 0, 0, 0}};
  const MemoryPlan p2 = must_plan(only_empty, PlanStrategy::kGreedyBySize, 64);
  CHECK(p2.arena_bytes == 0);
  CHECK(p2.naive_bytes == 0);

  const MemoryPlan p3 = must_plan({}, PlanStrategy::kGreedyBySize, 64);
  CHECK(p3.offsets.empty());
  CHECK(p3.arena_bytes == 0);
}

TEST_CASE("bad requests are rejected with a message and the plan is left untouched",
          "[planner]") {
  MemoryPlan plan;
  plan.arena_bytes = 12345;
  std::string error;

  SECTION("first_op > last_op") {
    const std::vector<BufferRequest> reqs = {{"ok", 8, 0, 1}, {"layer2.bad", 8, 5, 4}};
    for (PlanStrategy s : {PlanStrategy::kGreedyBySize, PlanStrategy::kLinear}) {
      error.clear();
      CHECK_FALSE(planned(plan_memory(reqs, s, 16, &plan), &error));
      CHECK(error.find("layer2.bad") != std::string::npos);
      CHECK(plan.arena_bytes == 12345);
    }
  }
  SECTION("alignment 0") {
    CHECK_FALSE(planned(plan_memory({{"a", 8, 0, 0}}, PlanStrategy::kGreedyBySize, 0, &plan), &error));
    CHECK_FALSE(error.empty());
  }
  SECTION("size overflows when aligned") {
    const size_t huge = std::numeric_limits<size_t>::max() - 3;
    CHECK_FALSE(
        planned(plan_memory({{"huge", huge, 0, 0}}, PlanStrategy::kGreedyBySize, 64, &plan), &error));
    CHECK(error.find("huge") != std::string::npos);
  }
  SECTION("sum of sizes overflows") {
    const size_t half = std::numeric_limits<size_t>::max() / 2 + 1;
    CHECK_FALSE(planned(plan_memory({{"h1", half, 0, 0}, {"h2", half, 1, 1}},
                            PlanStrategy::kGreedyBySize, 1, &plan), &error));
    CHECK_FALSE(error.empty());
  }
  SECTION("null plan") {
    CHECK_FALSE(planned(plan_memory({{"a", 8, 0, 0}}, PlanStrategy::kGreedyBySize, 1, nullptr), &error));
    CHECK_FALSE(planned(plan_memory({{"a", 8, 0, 0}}, PlanStrategy::kGreedyBySize, 1, nullptr), nullptr));
  }
  CHECK(plan.arena_bytes == 12345);
}

TEST_CASE("randomized: greedy plans are valid, beat linear, respect the lower bound",
          "[planner][random]") {
  std::mt19937_64 rng(20240611);
  const size_t alignments[] = {1, 4, 16, 64, 48};
  int instances = 0;
  for (int iter = 0; iter < 500; ++iter) {
    const int n = std::uniform_int_distribution<int>(0, 70)(rng);
    const int ops = std::uniform_int_distribution<int>(1, 50)(rng);
    const size_t alignment = alignments[iter % 5];
    std::vector<BufferRequest> reqs;
    for (int i = 0; i < n; ++i) {
      BufferRequest r;
      r.name = "buf" + std::to_string(i);
      const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
      if (kind == 0) {
        r.bytes = 0;
      } else if (kind < 4) {
        r.bytes = std::uniform_int_distribution<size_t>(1, 100)(rng);
      } else {
        r.bytes = std::uniform_int_distribution<size_t>(1, size_t{1} << 20)(rng);
      }
      const int a = std::uniform_int_distribution<int>(0, ops - 1)(rng);
      // Mostly short lifetimes, some long (like residual streams / weights-of-a-layer).
      const int len = std::uniform_int_distribution<int>(0, 9)(rng) < 8
                          ? std::uniform_int_distribution<int>(0, 4)(rng)
                          : std::uniform_int_distribution<int>(0, ops)(rng);
      r.first_op = a;
      r.last_op = std::min(ops - 1, a + len);
      reqs.push_back(r);
    }
    const MemoryPlan greedy = must_plan(reqs, PlanStrategy::kGreedyBySize, alignment);
    const MemoryPlan linear = must_plan(reqs, PlanStrategy::kLinear, alignment);

    std::string why;
    INFO("iteration " << iter << " n " << n << " alignment " << alignment);
    REQUIRE(pairwise_ok(reqs, greedy, &why));
    REQUIRE(pairwise_ok(reqs, linear, &why));
    std::string error;
    CHECK(planned(plan_is_valid(reqs, greedy), &error));
    CHECK(planned(plan_is_valid(reqs, linear), &error));

    size_t naive = 0;
    size_t max_end = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
      naive += round_up(reqs[i].bytes, alignment);
      REQUIRE(greedy.offsets[i] % alignment == 0);
      REQUIRE(linear.offsets[i] % alignment == 0);
      max_end = std::max(max_end, greedy.offsets[i] + round_up(reqs[i].bytes, alignment));
    }
    CHECK(greedy.naive_bytes == naive);
    CHECK(linear.naive_bytes == naive);
    CHECK(linear.arena_bytes == naive);
    CHECK(greedy.arena_bytes <= linear.arena_bytes);
    CHECK(greedy.arena_bytes == max_end);
    CHECK(greedy.arena_bytes >= lower_bound_bytes(reqs, alignment));

    // Deterministic.
    const MemoryPlan again = must_plan(reqs, PlanStrategy::kGreedyBySize, alignment);
    CHECK(again.offsets == greedy.offsets);
    ++instances;
  }
  CHECK(instances == 500);
}

TEST_CASE("plan_is_valid catches broken plans", "[planner]") {
  const std::vector<BufferRequest> reqs = {
      {"layer0.qkv", 300, 0, 4}, {"worker0.scores", 100, 1, 2}, {"worker1.scores", 100, 1, 2},
      {"layer0.ffn1", 400, 5, 6}};
  MemoryPlan plan = must_plan(reqs, PlanStrategy::kGreedyBySize, 1);
  std::string error;
  REQUIRE(planned(plan_is_valid(reqs, plan), &error));

  SECTION("two live buffers at the same offset") {
    plan.offsets[2] = plan.offsets[1];
    CHECK_FALSE(planned(plan_is_valid(reqs, plan), &error));
    CHECK(error.find("worker0.scores") != std::string::npos);
    CHECK(error.find("worker1.scores") != std::string::npos);
    std::string why;
    CHECK_FALSE(pairwise_ok(reqs, plan, &why));
  }
  SECTION("a one-byte partial overlap") {
    // qkv occupies [0,300); push worker0 down to start at 299.
    REQUIRE(plan.offsets[0] == 0);
    plan.offsets[1] = 299;
    plan.arena_bytes = std::max<size_t>(plan.arena_bytes, 399);
    CHECK_FALSE(planned(plan_is_valid(reqs, plan), &error));
    CHECK(error.find("layer0.qkv") != std::string::npos);
  }
  SECTION("overlap in address is fine when lifetimes are disjoint") {
    plan.offsets[3] = 0;  // ffn1 (ops 5..6) over qkv (ops 0..4)
    CHECK(planned(plan_is_valid(reqs, plan), &error));
  }
  SECTION("buffer past the arena end") {
    plan.arena_bytes -= 1;
    CHECK_FALSE(planned(plan_is_valid(reqs, plan), &error));
  }
  SECTION("wrong number of offsets") {
    plan.offsets.pop_back();
    CHECK_FALSE(planned(plan_is_valid(reqs, plan), &error));
  }
  SECTION("offset + bytes overflows") {
    plan.offsets[3] = std::numeric_limits<size_t>::max() - 10;
    plan.arena_bytes = std::numeric_limits<size_t>::max();
    CHECK_FALSE(planned(plan_is_valid(reqs, plan), &error));
  }
  SECTION("invalid interval") {
    std::vector<BufferRequest> bad = reqs;
    bad[1].first_op = 3;
    CHECK_FALSE(planned(plan_is_valid(bad, plan), &error));
  }
}

TEST_CASE("format_plan lists every buffer and both totals", "[planner]") {
  const auto reqs = bert_like(2, 4, 2, 16, 64, 256);
  const MemoryPlan plan = must_plan(reqs, PlanStrategy::kGreedyBySize, 64);
  const std::string text = format_plan(reqs, plan, false);
  for (const auto& r : reqs) CHECK(text.find(r.name) != std::string::npos);
  CHECK(text.find(std::to_string(plan.arena_bytes)) != std::string::npos);
  CHECK(text.find(std::to_string(plan.naive_bytes)) != std::string::npos);
  CHECK(text.find("arena") != std::string::npos);
  CHECK(text.find("naive") != std::string::npos);
  CHECK(text.find("saving") != std::string::npos);
  CHECK(text.find('#') == std::string::npos);  // no timeline asked for

  const std::string with_timeline = format_plan(reqs, plan, true);
  CHECK(with_timeline.find("timeline") != std::string::npos);
  CHECK(with_timeline.find('#') != std::string::npos);
  for (const auto& r : reqs) CHECK(with_timeline.find(r.name) != std::string::npos);
  // One timeline row per buffer: each name appears twice (table + timeline).
  CHECK(std::count(with_timeline.begin(), with_timeline.end(), '\n') >=
        static_cast<std::ptrdiff_t>(2 * reqs.size()));

  // Wide schedules are bucketed; very many buffers skip the timeline.
  const std::vector<BufferRequest> wide = {{"early", 10, 0, 5}, {"late", 10, 990, 999}};
  const std::string w = format_plan(wide, must_plan(wide, PlanStrategy::kGreedyBySize, 1), true);
  CHECK(w.find("one column = 10 ops") != std::string::npos);
  std::vector<BufferRequest> many;
  for (int i = 0; i < 300; ++i) many.push_back({"b" + std::to_string(i), 8, i, i + 1});
  const std::string m = format_plan(many, must_plan(many, PlanStrategy::kGreedyBySize, 8), true);
  CHECK(m.find("timeline") == std::string::npos);
  CHECK(m.find("b299") != std::string::npos);

  // An empty plan prints without crashing; a mismatched plan does too.
  CHECK(format_plan({}, MemoryPlan{}, true).find("naive") != std::string::npos);
  CHECK(format_plan(reqs, MemoryPlan{}, true).find(reqs[0].name) != std::string::npos);
}

TEST_CASE("BERT-like schedule: per-worker head buffers are reused", "[planner]") {
  const auto reqs = bert_like(12, 12, 2, 128, 768, 3072);
  const MemoryPlan greedy = must_plan(reqs, PlanStrategy::kGreedyBySize, 64);
  std::string why;
  REQUIRE(pairwise_ok(reqs, greedy, &why));
  const size_t lower = lower_bound_bytes(reqs, 64);
  CHECK(greedy.arena_bytes >= lower);
  CHECK(greedy.arena_bytes * 10 < greedy.naive_bytes);  // >90% saving over 12 layers
  CHECK(greedy.arena_bytes <= lower + lower / 2);        // and close to the bound
}

TEST_CASE("greedy planning is fast enough for large models", "[planner][perf]") {
  // ~1900 buffers (a 24-layer schedule with 36 heads, 4 workers), and 1000 random ones.
  std::vector<BufferRequest> big = bert_like(24, 36, 4, 384, 1024, 4096);
  REQUIRE(big.size() > 1800);
  std::mt19937 rng(7);
  std::vector<BufferRequest> random;
  for (int i = 0; i < 1000; ++i) {
    const int a = std::uniform_int_distribution<int>(0, 799)(rng);
    const int len = std::uniform_int_distribution<int>(0, 6)(rng);
    random.push_back({"r" + std::to_string(i),
                      std::uniform_int_distribution<size_t>(1, 1 << 22)(rng), a, a + len});
  }
  for (const std::vector<BufferRequest>* reqs : {&big, &random}) {
    MemoryPlan plan;
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(planned(plan_memory(*reqs, PlanStrategy::kGreedyBySize, 64, &plan), &error));
    const auto t1 = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    REQUIRE(planned(plan_is_valid(*reqs, plan), &error));
    WARN("greedy plan of " << reqs->size() << " buffers: " << ms << " ms");
    CHECK(ms < 200.0);  // generous for Debug builds under load; Release is ~100x below
  }
}
