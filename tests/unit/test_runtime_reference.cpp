// SPDX-License-Identifier: Apache-2.0
// test_runtime_reference.cpp: the runtime against the independent numpy reference
// (tests/reference/bert_numpy.py, float64). fp32 models: max abs error <= 1e-3 on hidden states
// (real tokens), pooler and logits. int8 models: per-token cosine >= 0.99 against the reference.
// Every config (12x64 and 1x768 at hidden 768, 3x64, 4x32, F16/BF16/sharded/unprefixed
// checkpoints), sequence lengths 1, 7, the maximum, with and without padding, 1 and 2 threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "test_support.h"

using namespace edgebert::test;

namespace {

struct RunResult {
  std::vector<float> hidden, pooled, logits;
};

RunResult run_case(eb_session* s, const eb_model_info& info, const Case& c) {
  REQUIRE(eb_session_run_ids(s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) == EB_OK);
  RunResult r;
  const float* p = nullptr;
  int64_t shape[2];
  int32_t rank = 0;
  REQUIRE(eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, shape, &rank) == EB_OK);
  REQUIRE(rank == 2);
  REQUIRE(shape[0] == static_cast<int64_t>(c.ids.size()));
  REQUIRE(shape[1] == info.hidden_size);
  r.hidden.assign(p, p + shape[0] * shape[1]);
  if (info.has_pooler) {
    REQUIRE(eb_session_get_output(s, EB_OUTPUT_POOLER_OUTPUT, &p, shape, &rank) == EB_OK);
    r.pooled.assign(p, p + info.hidden_size);
  }
  if (info.num_labels > 0) {
    REQUIRE(eb_session_get_output(s, EB_OUTPUT_LOGITS, &p, shape, &rank) == EB_OK);
    REQUIRE(shape[0] == info.num_labels);
    r.logits.assign(p, p + info.num_labels);
  }
  return r;
}

}  // namespace

// Runs every reference model of `kind` at 1 and 2 threads (1 under qemu: CI time) over every
// case and hands the result to `check`.
template <class Check>
void for_each_reference_run(const char* kind, Check check) {
  for (const char* model : kModels) {
    ModelHandle m;
    char err[512];
    REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    eb_model_info info;
    REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
    CHECK(info.is_int8 == (std::string(kind) == "int8"));
    for (int threads : {1, 2}) {
      if (threads == 2 && emulated()) continue;  // (qemu: "1 and 2 threads give the same int8 result" below)
      SessionHandle s;
      open_session(m.m, threads, s);
      for (const char* cname : kCases) {
        const Case c = read_case(model, cname);
        INFO(model << " / " << cname << " / threads " << threads);
        check(c, run_case(s.s, info, c), static_cast<size_t>(info.hidden_size));
      }
    }
  }
}

TEST_CASE("fp32 runtime matches the numpy reference", "[reference][fp32]") {
  for_each_reference_run("fp32", [](const Case& c, const RunResult& r, size_t H) {
    double max_err = 0;
    for (size_t t = 0; t < c.ids.size(); ++t) {
      if (!c.mask[t]) continue;
      for (size_t i = 0; i < H; ++i) max_err = std::max(max_err, double(std::fabs(r.hidden[t * H + i] - c.hidden[t * H + i])));
    }
    CHECK(max_err <= 1e-3);
    for (size_t i = 0; i < r.pooled.size(); ++i) CHECK(std::fabs(r.pooled[i] - c.pooled[i]) <= 1e-3);
    REQUIRE(r.logits.size() == c.logits.size());
    for (size_t i = 0; i < r.logits.size(); ++i) CHECK(std::fabs(r.logits[i] - c.logits[i]) <= 1e-3);
  });
}

TEST_CASE("int8 runtime stays close to the numpy reference", "[reference][int8]") {
  for_each_reference_run("int8", [](const Case& c, const RunResult& r, size_t H) {
    double min_cos = 1, sum_cos = 0;
    int real = 0;
    for (size_t t = 0; t < c.ids.size(); ++t) {
      if (!c.mask[t]) continue;
      const double cs = cosine(&r.hidden[t * H], &c.hidden[t * H], H);
      min_cos = std::min(min_cos, cs);
      sum_cos += cs;
      ++real;
    }
    INFO("min per-token cosine " << min_cos << ", mean " << sum_cos / real);
    CHECK(min_cos >= 0.99);
    if (!r.pooled.empty()) CHECK(cosine(r.pooled.data(), c.pooled.data(), H) >= 0.99);
  });
}

TEST_CASE("padding does not change the real tokens' outputs", "[reference]") {
  // len7_pad has 4 real tokens then 3 padding tokens: running only the 4 real tokens must give
  // the same hidden states for them (fp32: to rounding; int8: bit-identical up to the run).
  for (const char* kind : {"fp32", "int8"}) {
    ModelHandle m;
    char err[512];
    REQUIRE(eb_model_load_file(ebm_path("h128_4x32", kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    SessionHandle s;
    REQUIRE(eb_session_create(m.m, nullptr, &s.s, err, sizeof err) == EB_OK);
    const Case c = read_case("h128_4x32", "len7_pad");
    size_t real = 0;
    while (real < c.mask.size() && c.mask[real]) ++real;
    REQUIRE(real == 4);
    REQUIRE(eb_session_run_ids(s.s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) == EB_OK);
    const float* p = nullptr;
    REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) == EB_OK);
    std::vector<float> padded(p, p + real * 128);
    REQUIRE(eb_session_run_ids(s.s, c.ids.data(), c.types.data(), nullptr, real) == EB_OK);
    REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) == EB_OK);
    for (size_t i = 0; i < real * 128; ++i) CHECK(std::fabs(padded[i] - p[i]) <= 1e-5);
  }
}

TEST_CASE("model loaded from caller memory gives the same result as from file", "[reference]") {
  const std::string path = ebm_path("tiny_f16", "int8");
  AlignedBuffer buf(read_bytes(path));
  ModelHandle a, b;
  char err[512];
  REQUIRE(eb_model_load_file(path.c_str(), &a.m, err, sizeof err) == EB_OK);
  REQUIRE(eb_model_load_memory(buf.data, buf.size, &b.m, err, sizeof err) == EB_OK);
  SessionHandle sa, sb;
  REQUIRE(eb_session_create(a.m, nullptr, &sa.s, err, sizeof err) == EB_OK);
  REQUIRE(eb_session_create(b.m, nullptr, &sb.s, err, sizeof err) == EB_OK);
  const Case c = read_case("tiny_f16", "len20_types");
  REQUIRE(eb_session_run_ids(sa.s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) == EB_OK);
  REQUIRE(eb_session_run_ids(sb.s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) == EB_OK);
  const float *pa, *pb;
  REQUIRE(eb_session_get_output(sa.s, EB_OUTPUT_LAST_HIDDEN_STATE, &pa, nullptr, nullptr) == EB_OK);
  REQUIRE(eb_session_get_output(sb.s, EB_OUTPUT_LAST_HIDDEN_STATE, &pb, nullptr, nullptr) == EB_OK);
  CHECK(std::memcmp(pa, pb, c.ids.size() * 64 * sizeof(float)) == 0);
}

TEST_CASE("1 and 2 threads give the same int8 result", "[reference][threads]") {
  ModelHandle m;
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path("base2_h12", "int8").c_str(), &m.m, err, sizeof err) == EB_OK);
  const Case c = read_case("base2_h12", "lenmax");
  std::vector<float> out[2];
  for (int t = 1; t <= 2; ++t) {
    SessionHandle s;
    eb_session_options o;
    eb_session_options_init(&o);
    o.num_threads = t;
    REQUIRE(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_OK);
    REQUIRE(eb_session_run_ids(s.s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) == EB_OK);
    const float* p;
    REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) == EB_OK);
    out[t - 1].assign(p, p + c.ids.size() * 768);
  }
  // Integer GEMMs and per-row kernels are deterministic regardless of the thread split.
  for (size_t i = 0; i < out[0].size(); ++i) REQUIRE(std::fabs(out[0][i] - out[1][i]) <= 1e-5f);
}

TEST_CASE("one model backs several sessions on different threads", "[threads][c-api]") {
  ModelHandle m;
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path("h192_3x64", "int8").c_str(), &m.m, err, sizeof err) == EB_OK);
  const Case c = read_case("h192_3x64", "lenmax");
  const size_t count = c.ids.size() * 192;
  std::vector<float> expected;
  {
    SessionHandle s;
    REQUIRE(eb_session_create(m.m, nullptr, &s.s, err, sizeof err) == EB_OK);
    REQUIRE(eb_session_run_ids(s.s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) == EB_OK);
    const float* p;
    REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) == EB_OK);
    expected.assign(p, p + count);
  }
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 3; ++t) {
    workers.emplace_back([&, t] {
      eb_session_options o;
      eb_session_options_init(&o);
      o.num_threads = 1 + t % 2;
      eb_session* s = nullptr;
      char e[256];
      if (eb_session_create(m.m, &o, &s, e, sizeof e) != EB_OK) {
        ++failures;
        return;
      }
      for (int rep = 0; rep < 5; ++rep) {
        if (eb_session_run_ids(s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) != EB_OK) {
          ++failures;
          break;
        }
        const float* p;
        if (eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) != EB_OK) {  // (a worker thread)
          ++failures;
          break;
        }
        for (size_t i = 0; i < count; ++i)
          if (std::fabs(p[i] - expected[i]) > 1e-5f) {
            ++mismatches;
            break;
          }
      }
      eb_session_destroy(s);
    });
  }
  for (auto& w : workers) w.join();
  CHECK(failures == 0);
  CHECK(mismatches == 0);
}
