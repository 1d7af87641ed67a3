// SPDX-License-Identifier: Apache-2.0
// test_threads.cpp: the multi-threaded uses of the runtime, checked for correctness here and for
// data races when built with -DEDGEBERT_TSAN=ON (scripts/reliability/tsan.sh): several sessions on
// several threads sharing one model, sessions with 2- and 3-thread pools, pooled sessions running
// concurrently, and the weight cache read ahead while models load. The oracle is a single-threaded session of the same model run first in the
// same process: int8 GEMMs and per-row kernels do not depend on the thread split, so every output
// must match it (to 1e-5, as test_runtime_reference's "1 and 2 threads" case).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "edgebert/edgebert.h"
#include "kernels/rope.h"
#include "program/rope_table.h"
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

// The weight cache file read ahead on a second thread while the model loads (XNNPACK 2024+:
// weight_cache_file::Prefetch; Debian 12's 2022 XNNPACK has no weight cache, so there the loads
// only report UNAVAILABLE): two threads loading the model with the same cache at once, a payload
// flipped between loads (rebuilt), and a model that fails to load while its cache is being read.
TEST_CASE("weight cache read ahead: concurrent loads, a flipped payload, a failing model", "[threads]") {
  const Fixture& f = fixture(true);
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string tag = "/eb_threads_" + std::to_string(::getpid());
  const std::string model = dir + tag + ".ebm", cache = dir + tag + ".ebwc", bad = dir + tag + "_bad.ebm";
  auto write = [](const std::string& path, const std::vector<uint8_t>& b) {
    FILE* out = std::fopen(path.c_str(), "wb");
    REQUIRE(out);
    REQUIRE(std::fwrite(b.data(), 1, b.size(), out) == b.size());
    REQUIRE(std::fclose(out) == 0);
  };
  write(model, f.bytes);
  write(bad, std::vector<uint8_t>(300, 0x5a));
  std::remove(cache.c_str());
  // loads `path` with the cache; its state, or -1 when the load fails; checks one output
  auto load = [&](const std::string& path, int* bad_outputs) -> int {
    eb_load_options o;
    eb_load_options_init(&o);
    o.weight_cache_path = cache.c_str();
    eb_model* m = nullptr;
    char err[256];
    if (eb_model_load_file_with_options(path.c_str(), &o, &m, err, sizeof err) != EB_OK) return -1;
    eb_weight_cache_state state = EB_WEIGHT_CACHE_NONE;
    const char* message = nullptr;
    if (eb_model_get_weight_cache(m, &state, &message) != EB_OK) state = EB_WEIGHT_CACHE_NONE;
    eb_session* s = nullptr;
    const std::vector<int32_t>& ids = f.inputs[2];
    const float* p = nullptr;
    if (eb_session_create(m, nullptr, &s, err, sizeof err) != EB_OK ||
        eb_session_run_ids(s, ids.data(), nullptr, nullptr, ids.size()) != EB_OK ||
        eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) != EB_OK)
      ++*bad_outputs;
    else
      for (size_t i = 0; i < ids.size() * 96; ++i)
        if (!(std::fabs(p[i] - f.expected[2][i]) <= 1e-5f)) {
          ++*bad_outputs;
          break;
        }
    eb_session_destroy(s);
    eb_model_free(m);
    return static_cast<int>(state);
  };
  int wrong = 0;
  const int first = load(model, &wrong);
  REQUIRE(first >= 0);
  const bool cached = first == EB_WEIGHT_CACHE_CREATED;  // else UNAVAILABLE: no weight cache here
  std::atomic<int> unexpected{0}, wrong_outputs{0};
  std::vector<std::thread> loaders;
  for (int t = 0; t < 2; ++t)
    loaders.emplace_back([&] {
      for (int i = 0; i < 4; ++i) {
        int w = 0;
        const int state = load(model, &w);
        wrong_outputs += w;
        unexpected += state != (cached ? EB_WEIGHT_CACHE_LOADED : first);
      }
    });
  for (auto& t : loaders) t.join();
  CHECK(unexpected == 0);
  CHECK(wrong_outputs == 0);
  if (cached) {
    FILE* io = std::fopen(cache.c_str(), "r+b");
    REQUIRE(io);
    uint8_t field[8];  // entry 0's offset: the table follows the 256-byte header (weight_cache_file.h)
    REQUIRE(std::fseek(io, 256 + 8, SEEK_SET) == 0);
    REQUIRE(std::fread(field, 1, 8, io) == 8);
    uint64_t offset = 0;
    for (int i = 0; i < 8; ++i) offset |= uint64_t(field[i]) << (8 * i);
    REQUIRE(std::fseek(io, static_cast<long>(offset + 10), SEEK_SET) == 0);
    const int c = std::fgetc(io);
    REQUIRE(c != EOF);
    REQUIRE(std::fseek(io, static_cast<long>(offset + 10), SEEK_SET) == 0);
    REQUIRE(std::fputc(c ^ 0x10, io) != EOF);
    REQUIRE(std::fclose(io) == 0);
    CHECK(load(model, &wrong) == EB_WEIGHT_CACHE_CREATED);  // the CRC32C saw it: rebuilt
  }
  for (int i = 0; i < 3; ++i) CHECK(load(bad, &wrong) == -1);  // its read-ahead is dropped
  CHECK(wrong == 0);
  std::remove(model.c_str());
  std::remove(bad.c_str());
  std::remove(cache.c_str());
}

TEST_CASE("a rotary table filled by sessions being created while runs read its rows", "[threads]") {
  // program/rope_table.h: Session::build fills the rows up to its length (fill_to) while sessions
  // created earlier read the rows below theirs. Readers check the rows they may read against a
  // whole build; fillers extend the table concurrently, out of order.
  const int dims = 64, positions = 1024;
  std::vector<float> whole(edgebert::kernels::rope_table_floats(positions, dims));
  edgebert::kernels::build_rope_table(10000.0, dims, positions, whole.data());
  edgebert::RopeTable table(10000.0, dims, positions);
  table.fill_to(40);
  const int readable = table.filled();
  REQUIRE(readable == edgebert::RopeTable::kBlock);
  std::atomic<int> wrong{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&] {
      const size_t floats = edgebert::kernels::rope_table_floats(static_cast<size_t>(readable), dims);
      while (!done.load())
        if (std::memcmp(table.data(), whole.data(), floats * sizeof(float)) != 0) ++wrong;
    });
  std::vector<std::thread> fillers;
  for (int want : {700, 130, 1024, 65, 300})
    fillers.emplace_back([&table, want] { table.fill_to(want); });
  for (auto& t : fillers) t.join();
  done = true;
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  REQUIRE(table.filled() == positions);
  CHECK(std::memcmp(table.data(), whole.data(), whole.size() * sizeof(float)) == 0);
}
