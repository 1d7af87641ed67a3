// SPDX-License-Identifier: Apache-2.0
// test_threads.cpp: the multi-threaded uses of the runtime, checked for correctness here and for
// data races when built with -DEDGEBERT_TSAN=ON (scripts/reliability/tsan.sh): several sessions on
// several threads sharing one model, sessions with 2- and 3-thread pools, and pooled sessions
// running concurrently. The oracle is a single-threaded session of the same model run first in the
// same process: int8 GEMMs and per-row kernels do not depend on the thread split, so every output
// must match it (to 1e-5, as test_runtime_reference's "1 and 2 threads" case).
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "edgebert/edgebert.h"
#include "tiny_model.h"

using edgebert::fuzz::AlignedCopy;
using edgebert::fuzz::TinyShape;

namespace {

// 2 layers, 6 heads: a 2- or 3-thread session runs its heads in several waves.
TinyShape shape() {
  TinyShape s;
  s.hidden = 96;
  s.heads = 6;
  s.layers = 2;
  s.intermediate = 192;
  s.max_position = 32;
  return s;
}

struct Fixture {
  std::vector<uint8_t> bytes;
  AlignedCopy* copy;
  eb_model* model = nullptr;
  std::vector<std::vector<int32_t>> inputs;   // varied lengths and ids
  std::vector<std::vector<float>> expected;   // single-threaded last_hidden_state per input
  std::vector<std::vector<float>> pooled;     // single-threaded pooler_output per input

  explicit Fixture(bool int8) : bytes(edgebert::fuzz::make_tiny_model(int8, shape())) {
    copy = new AlignedCopy(bytes.data(), bytes.size());
    char err[256];
    REQUIRE(eb_model_load_memory(copy->data(), copy->size(), &model, err, sizeof err) == EB_OK);
    const int32_t vocab = static_cast<int32_t>(edgebert::fuzz::tiny_vocabulary().size());
    for (size_t len : {1u, 5u, 17u, 32u, 9u}) {
      std::vector<int32_t> ids(len);
      for (size_t i = 0; i < len; ++i) ids[i] = static_cast<int32_t>((i * 7 + len) % vocab);
      inputs.push_back(ids);
    }
    eb_session* s = nullptr;
    REQUIRE(eb_session_create(model, nullptr, &s, err, sizeof err) == EB_OK);
    for (const auto& ids : inputs) {
      REQUIRE(eb_session_run_ids(s, ids.data(), nullptr, nullptr, ids.size()) == EB_OK);
      const float* p = nullptr;
      REQUIRE(eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) == EB_OK);
      expected.emplace_back(p, p + ids.size() * 96);
      REQUIRE(eb_session_get_output(s, EB_OUTPUT_POOLER_OUTPUT, &p, nullptr, nullptr) == EB_OK);
      pooled.emplace_back(p, p + 96);
    }
    eb_session_destroy(s);
  }
  ~Fixture() {
    eb_model_free(model);
    delete copy;
  }

  // Creates a session with `threads` workers and runs every input `reps` times; returns the
  // number of failed calls plus mismatched outputs.
  int run_all(int threads, int reps) const {
    eb_session_options o;
    eb_session_options_init(&o);
    o.num_threads = threads;
    eb_session* s = nullptr;
    char err[256];
    if (eb_session_create(model, &o, &s, err, sizeof err) != EB_OK) return 1;
    int bad = 0;
    for (int r = 0; r < reps; ++r)
      for (size_t k = 0; k < inputs.size(); ++k) {
        const size_t n = inputs[(k + r) % inputs.size()].size();
        const size_t which = (k + r) % inputs.size();
        if (eb_session_run_ids(s, inputs[which].data(), nullptr, nullptr, n) != EB_OK) {
          ++bad;
          continue;
        }
        const float* p = nullptr;
        if (eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) != EB_OK) {  // (a worker thread:
          ++bad;                                                                                      // no REQUIRE here)
          continue;
        }
        for (size_t i = 0; i < n * 96; ++i)
          if (!(std::fabs(p[i] - expected[which][i]) <= 1e-5f)) {
            ++bad;
            break;
          }
        if (eb_session_get_output(s, EB_OUTPUT_POOLER_OUTPUT, &p, nullptr, nullptr) != EB_OK) {
          ++bad;
          continue;
        }
        for (size_t i = 0; i < 96; ++i)
          if (!(std::fabs(p[i] - pooled[which][i]) <= 1e-5f)) {
            ++bad;
            break;
          }
      }
    eb_session_destroy(s);
    return bad;
  }
};

// Runs run_all(threads_per_session[i]) on one std::thread per entry, all at once.
int concurrently(const Fixture& f, const std::vector<int>& threads_per_session, int reps) {
  std::atomic<int> bad{0};
  std::vector<std::thread> workers;
  for (int t : threads_per_session) workers.emplace_back([&f, &bad, t, reps] { bad += f.run_all(t, reps); });
  for (auto& w : workers) w.join();
  return bad.load();
}

// Built once per process (the conversion dominates the test's time under TSan).
const Fixture& fixture(bool int8) {
  static const Fixture int8_model(true), fp32_model(false);
  return int8 ? int8_model : fp32_model;
}

}  // namespace

TEST_CASE("four single-threaded sessions on four threads share one model", "[threads]") {
  for (bool int8 : {true, false}) {
    INFO((int8 ? "int8" : "fp32"));
    const Fixture& f = fixture(int8);
    CHECK(concurrently(f, {1, 1, 1, 1}, 3) == 0);
  }
}

TEST_CASE("2- and 3-thread pools give the single-threaded result", "[threads]") {
  for (bool int8 : {true, false}) {
    INFO((int8 ? "int8" : "fp32"));
    const Fixture& f = fixture(int8);
    CHECK(f.run_all(2, 3) == 0);
    CHECK(f.run_all(3, 3) == 0);
  }
}

TEST_CASE("pooled sessions run concurrently on one model", "[threads]") {
  const Fixture& f = fixture(true);
  CHECK(concurrently(f, {2, 3, 1}, 3) == 0);
}
