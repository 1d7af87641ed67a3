// SPDX-License-Identifier: Apache-2.0
// test_alloc_failure.cpp: fault injection. Every heap allocation made while loading a model (from
// a file and from memory) and while creating a session (1 and 2 threads, int8 and fp32) is made
// to fail in turn, through the process-wide allocation hook of tools/alloc_counter.cpp (malloc
// family and operator new; XNNPACK's allocations go through edgebert's allocator and so through
// malloc too). Each attempt must end in a clean status with a message and a NULL handle, or
// (when the failure was absorbed) in a handle that works and gives the reference output. Under
// ASan + LSan (the sanitize build) nothing may leak on any of these paths.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "test_support.h"

using namespace edgebert::test;
using namespace edgebert::tools;

namespace {

// No std::string here: the attempt itself must not allocate inside the counted window.
struct Attempt {
  eb_status status = EB_OK;
  char message[512] = "";
};

// A failed attempt must name out-of-memory: EB_ERROR_OUT_OF_MEMORY, or EB_ERROR_BACKEND when
// XNNPACK or the thread pool reported it (their message says so).
bool clean_failure(const Attempt& a) {
  const std::string message = a.message;
  if (message.empty()) return false;
  if (a.status == EB_ERROR_OUT_OF_MEMORY) return true;
  return a.status == EB_ERROR_BACKEND &&
         (message.find("out of memory") != std::string::npos || message.find("thread pool") != std::string::npos);
}

// Runs `attempt` once to count its allocations, then once per allocation with that one failing.
// Returns the number of allocations; checks each attempt.
template <class F>
long fail_each_allocation(const char* what, F&& attempt) {
  alloc_counter_start();
  const Attempt clean = attempt();
  const long total = alloc_counter_stop();
  REQUIRE(clean.status == EB_OK);
  REQUIRE(total > 0);
  long failed = 0, absorbed = 0;
  for (long i = 1; i <= total; ++i) {
    alloc_fail_at(i);
    alloc_counter_start();
    const Attempt a = attempt();
    alloc_counter_stop();
    const bool injected = alloc_failure_injected();
    alloc_fail_at(0);
    INFO(what << ": allocation " << i << " of " << total << " failed -> status " << a.status << " '" << a.message
              << "'");
    if (a.status == EB_OK) {
      ++absorbed;
    } else {
      CHECK(injected);
      CHECK(clean_failure(a));
      failed += injected && clean_failure(a);
    }
  }
  std::printf("fault injection: %s: %ld allocations, %ld failed cleanly, %ld absorbed\n", what, total, failed, absorbed);
  return total;
}

// Loads `path` (from the file, or from an aligned copy in memory).
Attempt load(const char* path, const AlignedBuffer* memory) {
  Attempt a;
  eb_model* m = nullptr;
  a.status = memory ? eb_model_load_memory(memory->data, memory->size, &m, a.message, sizeof a.message)
                    : eb_model_load_file(path, &m, a.message, sizeof a.message);
  if (a.status != EB_OK && m != nullptr) a.message[0] = '\0';  // a failure must not return a handle
  if (a.status == EB_OK) {
    eb_model_info info;
    if (eb_model_get_info(m, &info) != EB_OK) a.status = EB_ERROR_BAD_STATE;
  }
  eb_model_free(m);
  return a;
}

// Creates a session on `m` and, when that succeeds, runs it once and compares with `expected`.
Attempt create_and_run(eb_model* m, int threads, const Case& c, const std::vector<float>* expected,
                       std::vector<float>* out = nullptr) {
  Attempt a;
  eb_session_options o;
  eb_session_options_init(&o);
  o.num_threads = threads;
  eb_session* s = nullptr;
  a.status = eb_session_create(m, &o, &s, a.message, sizeof a.message);
  if (a.status != EB_OK) {
    if (s != nullptr) a.message[0] = '\0';
    return a;
  }
  if (eb_session_run_ids(s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) != EB_OK) {
    a.status = EB_ERROR_BAD_STATE;
  } else {
    const float* p = nullptr;
    int64_t shape[2];
    eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, shape, nullptr);
    const size_t count = static_cast<size_t>(shape[0] * shape[1]);
    if (out) out->assign(p, p + count);  // only outside the counted attempts
    // The same kind of session on the same input: bit-identical to the reference.
    if (expected && (expected->size() != count || std::memcmp(p, expected->data(), count * sizeof(float)) != 0))
      a.status = EB_ERROR_BAD_STATE;
  }
  eb_session_destroy(s);
  return a;
}

}  // namespace

TEST_CASE("every allocation while loading a model fails in turn", "[fault]") {
  for (const char* model : {"tiny_f16", "h128_4x32"}) {
    for (const char* kind : {"int8", "fp32"}) {
      const std::string path = ebm_path(model, kind);
      const AlignedBuffer memory(read_bytes(path));
      REQUIRE(memory.size > 0);
      load(path.c_str(), nullptr);  // one-time initializations happen outside the counted attempts
      const std::string what = std::string(model) + "." + kind;
      fail_each_allocation((what + " load_file").c_str(), [&] { return load(path.c_str(), nullptr); });
      fail_each_allocation((what + " load_memory").c_str(), [&] { return load(path.c_str(), &memory); });
    }
  }
}

TEST_CASE("every allocation while creating a session fails in turn", "[fault]") {
  for (const char* kind : {"int8", "fp32"}) {
    ModelHandle m;
    char err[512];
    REQUIRE(eb_model_load_file(ebm_path("h128_4x32", kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    const Case c = read_case("h128_4x32", "len7");
    for (int threads : {1, 2}) {
      std::vector<float> expected;
      REQUIRE(create_and_run(m.m, threads, c, nullptr, &expected).status == EB_OK);  // also warms up XNNPACK
      const std::string what = std::string("h128_4x32.") + kind + " session, " + std::to_string(threads) + " thread(s)";
      fail_each_allocation(what.c_str(), [&] { return create_and_run(m.m, threads, c, &expected); });
    }
  }
}
