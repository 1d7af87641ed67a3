// SPDX-License-Identifier: Apache-2.0
// test_session_plan.cpp: the memory plan of real sessions (the actual BERT op schedule): no two
// buffers that are live at the same op overlap (checked exhaustively, pairwise, independently of
// the planner's own checker), the greedy plan is never larger than the linear one, and the
// per-head buffers scale with threads, not heads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "kernels/attention.h"
#include "model.h"
#include "program/memory_planner.h"
#include "session.h"
#include "test_support.h"

using namespace edgebert;
using namespace edgebert::test;

namespace {

bool intervals_intersect(const BufferRequest& a, const BufferRequest& b) {
  return a.first_op <= b.last_op && b.first_op <= a.last_op;
}

size_t count_overlaps(const std::vector<BufferRequest>& r, const std::vector<size_t>& off) {
  size_t bad = 0;
  for (size_t i = 0; i < r.size(); ++i)
    for (size_t j = i + 1; j < r.size(); ++j) {
      if (!intervals_intersect(r[i], r[j]) || r[i].bytes == 0 || r[j].bytes == 0) continue;
      const bool disjoint = off[i] + r[i].bytes <= off[j] || off[j] + r[j].bytes <= off[i];
      bad += !disjoint;
    }
  return bad;
}

}  // namespace

TEST_CASE("real BERT schedules plan without overlaps and beat the linear plan", "[planner][session]") {
  for (const char* model : {"base2_h12", "base2_h1", "h192_3x64", "h128_4x32"}) {
    for (const char* kind : {"int8", "fp32"}) {
      std::unique_ptr<Model> m;
      std::string err;
      REQUIRE(Model::load_file(ebm_path(model, kind).c_str()).move_to(&m, &err));
      for (int threads : {1, 2, 3}) {
        for (int max_len : {1, 7, 128}) {
          INFO(model << " " << kind << " threads " << threads << " max " << max_len);
          SessionOptions o;
          o.threads = threads;
          o.max_seq_len = max_len;
          std::unique_ptr<Session> s;
          REQUIRE(Session::create(*m, o).move_to(&s, &err));
          const auto& reqs = s->buffers();
          const MemoryPlan& plan = s->plan();
          REQUIRE(plan.offsets.size() == reqs.size());
          CHECK(count_overlaps(reqs, plan.offsets) == 0);
          for (size_t i = 0; i < reqs.size(); ++i) {
            CHECK(plan.offsets[i] % 64 == 0);
            CHECK(plan.offsets[i] + reqs[i].bytes <= plan.arena_bytes);
          }
          MemoryPlan linear;
          const edgebert::Status linear_planned = plan_memory(reqs, PlanStrategy::kLinear, 64, &linear);
          INFO(linear_planned.message());
          REQUIRE(linear_planned.is_ok());
          CHECK(plan.arena_bytes <= linear.arena_bytes);
          CHECK(plan.naive_bytes == linear.arena_bytes);
          CHECK(s->arena_bytes() == plan.arena_bytes);
        }
      }
    }
  }
}

TEST_CASE("attention scratch scales with threads and a row tile, not with heads or n^2", "[planner][session]") {
  std::unique_ptr<Model> m;
  std::string err;
  REQUIRE(Model::load_file(ebm_path("base2_h12", "int8").c_str()).move_to(&m, &err));
  const size_t d = 64, heads = 12;
  for (size_t n : {size_t(40), size_t(128)}) {  // the test model has 128 positions
    for (int threads : {1, 2, 4}) {
      INFO("n=" << n << " threads=" << threads);
      SessionOptions o;
      o.threads = threads;
      o.max_seq_len = static_cast<int>(n);
      std::unique_ptr<Session> s;
      REQUIRE(Session::create(*m, o).move_to(&s, &err));
      // Per layer: packed K/V (a slot per head, or one slot with one thread), and per thread
      // scores (floats) and probabilities (bytes) for a tile of 32 query rows; nothing n x n.
      const size_t round64 = 63;
      // one packed slot per head with several threads; one thread reuses a single slot
      const size_t packed = (threads > 1 ? heads : 1) * ((kernels::attention_s8_packed_bytes(n, d) + round64) & ~round64);
      const size_t scratch = static_cast<size_t>(threads) * (((32 * n * 4 + round64) & ~round64) + ((32 * n + round64) & ~round64));
      size_t packed_seen = 0, scratch_seen = 0;
      for (const auto& r : s->buffers()) {
        if (r.name.find(".packed_kv") != std::string::npos) packed_seen += r.bytes;
        if (r.name.find(".scores") != std::string::npos || r.name.find(".probs") != std::string::npos)
          scratch_seen += r.bytes;
        CHECK(r.name.find(".head") == std::string::npos);  // no per-head buffers
      }
      CHECK(packed_seen == 2 * packed);  // 2 layers
      CHECK(scratch_seen == 2 * scratch);
      // the whole scratch of all threads is below one head's n x n scores + probabilities
      if (threads <= 2 && n == 128) CHECK(scratch < n * n * 5);
      const size_t others = n * 768 * 4 /*hidden*/ + n * 3072 /*intermediate*/ + n * 2304 /*qkv*/ + n * 768 * 2;
      CHECK(s->arena_bytes() <= others + packed + scratch + 4096);
      WARN("n " << n << ", threads " << threads << ": arena " << s->arena_bytes() << " bytes, naive " << s->naive_bytes());
    }
  }
}

TEST_CASE("the op list defines the lifetimes: first writer to last reader, outputs to the end", "[planner][session][schedule]") {
  for (const char* model : {"base2_h12", "task_bert_qa", "task_distil_seqcls_relu", "task_st_mean_norm", "task_bert_token"}) {
    for (const char* kind : {"int8", "fp32"}) {
      INFO(model << " " << kind);
      std::unique_ptr<Model> m;
      std::string err;
      REQUIRE(Model::load_file(ebm_path(model, kind).c_str()).move_to(&m, &err));
      SessionOptions o;
      o.threads = 2;
      o.max_seq_len = 32;
      std::unique_ptr<Session> s;
      REQUIRE(Session::create(*m, o).move_to(&s, &err));
      const Program& sc = s->program();
      REQUIRE(sc.buffers().size() == s->buffers().size());
      CHECK(count_overlaps(s->buffers(), s->plan().offsets) == 0);
      const int last = static_cast<int>(sc.ops().size()) - 1;
      for (size_t b = 0; b < sc.buffers().size(); ++b) {
        const BufferRequest& r = s->buffers()[b];
        INFO(r.name);
        int first_touch = -1, last_touch = -1;
        bool written_first = false;
        for (int i = 0; i <= last; ++i) {
          const Op& op = sc.ops()[static_cast<size_t>(i)];
          const bool in = std::find(op.inputs.begin(), op.inputs.end(), static_cast<int>(b)) != op.inputs.end();
          const bool out = std::find(op.outputs.begin(), op.outputs.end(), static_cast<int>(b)) != op.outputs.end();
          if ((in || out) && first_touch < 0) first_touch = i, written_first = out;
          if (in || out) last_touch = i;
        }
        CHECK(written_first);
        // a stretch of per-sequence ops runs once per sequence: what it touches lives over all of it
        int stretch_first = first_touch, stretch_last = last_touch;
        while (stretch_first > 0 && sc.ops()[static_cast<size_t>(first_touch)].per_sequence &&
               sc.ops()[static_cast<size_t>(stretch_first - 1)].per_sequence)
          --stretch_first;
        while (stretch_last < last && sc.ops()[static_cast<size_t>(last_touch)].per_sequence &&
               sc.ops()[static_cast<size_t>(stretch_last + 1)].per_sequence)
          ++stretch_last;
        CHECK(r.first_op == stretch_first);
        CHECK(r.last_op == (sc.buffers()[b].graph_output ? last : stretch_last));
      }
      // the task's outputs are graph outputs
      const char* head = m->task == Task::kQuestionAnswering     ? "end_logits"
                         : m->task == Task::kSentenceEmbedding   ? "sentence_embedding"
                         : m->task == Task::kTokenClassification ? "token_logits"
                                                                 : "logits";
      const int hb = sc.find_buffer(head);
      REQUIRE(hb >= 0);
      CHECK(sc.buffers()[static_cast<size_t>(hb)].graph_output);
      CHECK(sc.buffers()[static_cast<size_t>(sc.find_buffer("hidden"))].graph_output);
      CHECK(sc.format(32, 2).find(head) != std::string::npos);
    }
  }
}
