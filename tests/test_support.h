// SPDX-License-Identifier: Apache-2.0
// test_support.h: shared helpers for the integration tests: locating the generated test data,
// reading reference cases and golden outputs, loading models into aligned memory, metrics.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "edgebert/edgebert.h"

namespace edgebert::test {

// Under qemu (scripts/arm/test_arm.sh sets EDGEBERT_EMULATED; CI time) tests that repeat a case
// per thread count or precision run a documented part of it: the x86-64 stages of both XNNPACK
// generations run everything.
inline bool emulated() { return std::getenv("EDGEBERT_EMULATED") != nullptr; }

inline std::string testdata_dir() {
  const char* d = std::getenv("EDGEBERT_TESTDATA");
  return d ? d : "build/testdata";
}
inline std::string ebm_path(const std::string& model, const std::string& kind) {
  return testdata_dir() + "/ebm/" + model + "." + kind + ".ebm";
}

inline std::vector<int32_t> read_ints(const std::string& path) {
  std::ifstream f(path);
  std::vector<int32_t> v;
  long x;
  while (f >> x) v.push_back(static_cast<int32_t>(x));
  return v;
}

inline std::vector<float> read_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 4);  // a missing file gives {}
  return v;
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

struct Case {
  std::string model, name;
  std::vector<int32_t> ids, mask, types;
  std::vector<float> hidden, pooled, logits;
};

inline Case read_case(const std::string& model, const std::string& name) {
  const std::string d = testdata_dir() + "/" + model + "/cases/" + name + "/";
  Case c;
  c.model = model;
  c.name = name;
  c.ids = read_ints(d + "ids.txt");
  c.mask = read_ints(d + "mask.txt");
  c.types = read_ints(d + "types.txt");
  c.hidden = read_f32(d + "last_hidden_state.f32");
  c.pooled = read_f32(d + "pooler_output.f32");
  std::ifstream lf(d + "logits.f32");
  if (lf) c.logits = read_f32(d + "logits.f32");
  return c;
}

// 64-byte aligned copy of a file, for eb_model_load_memory.
struct AlignedBuffer {
  uint8_t* data = nullptr;
  size_t size = 0;
  AlignedBuffer() = default;
  explicit AlignedBuffer(const std::vector<uint8_t>& bytes) : size(bytes.size()) {
    data = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64 + 64));
    if (!bytes.empty()) std::memcpy(data, bytes.data(), bytes.size());
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(data); }
};

inline double cosine(const float* a, const float* b, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return (aa == 0 || bb == 0) ? (aa == bb ? 1.0 : 0.0) : ab / std::sqrt(aa * bb);
}

// RAII wrappers around the C API for tests.
// Built with a sanitizer (GCC's macros, clang's __has_feature): tests that time or measure
// memory skip those checks, and the heaviest matrices run a part.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

struct ModelHandle {
  eb_model* m = nullptr;
  ~ModelHandle() { eb_model_free(m); }
};
struct SessionHandle {
  eb_session* s = nullptr;
  ~SessionHandle() { eb_session_destroy(s); }
};
// Opens `s` on `m` with the default options and `threads` threads (the test fails if it cannot).
inline void open_session(const eb_model* m, int threads, SessionHandle& s) {
  eb_session_options o;
  eb_session_options_init(&o);
  o.num_threads = threads;
  char err[512] = "";
  const eb_status created = eb_session_create(m, &o, &s.s, err, sizeof err);
  INFO(err);
  REQUIRE(created == EB_OK);
}

// Loads the model file `path` into `m` and opens `s` on it with `threads` threads, a maximum
// sequence length and a packed-run budget (the test fails if either cannot be done).
inline void open_model_session(const std::string& path, int threads, int max_len, int batch_tokens, ModelHandle* m,
                               SessionHandle* s) {
  char err[512] = "";
  REQUIRE(eb_model_load_file(path.c_str(), &m->m, err, sizeof err) == EB_OK);
  eb_session_options o;
  eb_session_options_init(&o);
  o.num_threads = threads;
  o.max_sequence_length = max_len;
  o.max_batch_tokens = batch_tokens;
  const eb_status created = eb_session_create(m->m, &o, &s->s, err, sizeof err);
  INFO(err);
  REQUIRE(created == EB_OK);
}

inline const char* const kModels[] = {"base2_h12", "base2_h1",     "h192_3x64",    "h128_4x32", "h128_4x32_std002",
                                      "tiny_f16",  "tiny_bf16",    "tiny_sharded", "tiny_noprefix"};
inline const char* const kCases[] = {"len1", "len7", "lenmax", "len7_pad", "len20_types"};

// Every output of the last run that belongs to one sequence (tokens [t0, t0 + n), per-sequence
// row `row`), indexed by eb_output (empty: the model has no such output). bge-m3's token vectors
// (fewer rows than the run's tokens) leave out each sequence's first token: sequence `row` has
// n - 1 rows after those of the sequences before it.
inline std::vector<std::vector<float>> sequence_outputs(const eb_session* s, size_t t0, size_t n, size_t row) {
  std::vector<std::vector<float>> r(EB_OUTPUT_COUNT);
  int64_t hidden_shape[2] = {0, 0};
  if (eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, nullptr, hidden_shape, nullptr) != EB_OK) hidden_shape[0] = 0;
  for (int out = 0; out < EB_OUTPUT_COUNT; ++out) {
    const float* p = nullptr;
    int64_t shape[2] = {0, 0};
    int32_t rank = 0;
    if (eb_session_get_output(s, static_cast<eb_output>(out), &p, shape, &rank) != EB_OK) continue;
    const bool per_token = out == EB_OUTPUT_LAST_HIDDEN_STATE || out == EB_OUTPUT_START_LOGITS ||
                           out == EB_OUTPUT_END_LOGITS || out == EB_OUTPUT_TOKEN_LOGITS ||
                           out == EB_OUTPUT_TOKEN_VECTORS;
    if (out == EB_OUTPUT_TOKEN_VECTORS && shape[0] < hidden_shape[0]) {  // bge-m3: without [CLS]
      size_t first = 0;
      for (size_t j = 0; j < row; ++j) {
        eb_sequence_info q{};
        if (eb_session_get_sequence(s, j, &q) == EB_OK && q.tokens > 0) first += static_cast<size_t>(q.tokens) - 1;
      }
      const size_t w = static_cast<size_t>(shape[1]), kept = n > 0 ? n - 1 : 0;
      r[static_cast<size_t>(out)].assign(p + first * w, p + (first + kept) * w);
    } else if (per_token) {
      const size_t w = rank == 2 ? static_cast<size_t>(shape[1]) : 1;
      r[static_cast<size_t>(out)].assign(p + t0 * w, p + (t0 + n) * w);
    } else {
      const size_t w = static_cast<size_t>(rank == 2 ? shape[1] : shape[0]);
      r[static_cast<size_t>(out)].assign(p + row * w, p + (row + 1) * w);
    }
  }
  return r;
}

}  // namespace edgebert::test
