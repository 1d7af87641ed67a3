// SPDX-License-Identifier: Apache-2.0
// test_alloc_failure.cpp: fault injection. Every heap allocation made while loading a model (from
// a file and from memory) and while creating a session (1 and 2 threads, int8 and fp32) is made
// to fail in turn, through the process-wide allocation hook of tools/alloc_counter.cpp (malloc
// family and operator new; XNNPACK's allocations go through edgebert's allocator and so through
// malloc too). Each attempt must end in a clean status with a message and a NULL handle, or
// (when the failure was absorbed) in a handle that works and gives the reference output. The
// same over every run entry point (a fresh session each time, so first-run set-up is counted):
// EB_ERROR_OUT_OF_MEMORY with a message, no outputs left, a session that still runs; never an
// exception out of the library. Under ASan + LSan (the sanitize build) nothing may leak on any of
// these paths.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "converter/converter.h"
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

// Runs `attempt` with allocation `i` (1-based, of the counted window) failing; *injected: whether
// the attempt reached it.
template <class F>
Attempt with_failure_at(long i, bool* injected, F&& attempt) {
  alloc_fail_at(i);
  alloc_counter_start();
  const Attempt a = attempt();
  alloc_counter_stop();
  *injected = alloc_failure_injected();
  alloc_fail_at(0);
  return a;
}

// Checks one injected attempt and counts it: absorbed (EB_OK) or failed, which must be clean.
// Returns whether it failed.
bool judge(const std::string& what, long i, long total, const Attempt& a, bool injected, long* failed, long* absorbed) {
  INFO(what << ": allocation " << i << " of " << total << " failed -> status " << a.status << " '" << a.message << "'");
  if (a.status == EB_OK) {
    ++*absorbed;
    return false;
  }
  CHECK(injected);
  CHECK(clean_failure(a));
  *failed += injected && clean_failure(a);
  return true;
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
    bool injected = false;
    const Attempt a = with_failure_at(i, &injected, attempt);
    judge(what, i, total, a, injected, &failed, &absorbed);
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
    if (eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, shape, nullptr) != EB_OK) {
      a.status = EB_ERROR_BAD_STATE;
      return a;
    }
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

namespace {

// A session of up to 64 tokens on `m`, made outside any counted window.
eb_session* session_of(eb_model* m) {
  eb_session_options o;
  eb_session_options_init(&o);
  o.max_sequence_length = 64;
  eb_session* s = nullptr;
  char err[512];
  REQUIRE(eb_session_create(m, &o, &s, err, sizeof err) == EB_OK);
  return s;
}

// `run` on a fresh session, once to count its allocations, then once per allocation with that
// one failing. A failure must be EB_ERROR_OUT_OF_MEMORY (or a backend error saying out of memory)
// with a message, leave no outputs, and leave a session whose next run succeeds.
template <class Run>
long fail_each_run_allocation(const std::string& what, eb_model* m, Run&& run) {
  eb_session* s = session_of(m);
  alloc_counter_start();
  const eb_status clean = run(s);
  const long total = alloc_counter_stop();
  eb_session_destroy(s);
  INFO(what);
  REQUIRE(clean == EB_OK);
  long failed = 0, absorbed = 0;
  for (long i = 1; i <= total; ++i) {
    s = session_of(m);
    bool injected = false;
    Attempt a = with_failure_at(i, &injected, [&] {
      Attempt r;
      r.status = run(s);
      return r;
    });
    std::snprintf(a.message, sizeof a.message, "%s", a.status == EB_OK ? "" : eb_session_last_error(s));
    if (judge(what, i, total, a, injected, &failed, &absorbed)) {
      INFO(what << ": after allocation " << i << " failed");
      const float* out = nullptr;
      CHECK(eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &out, nullptr, nullptr) == EB_ERROR_BAD_STATE);
      CHECK(run(s) == EB_OK);
    }
    eb_session_destroy(s);
  }
  std::printf("fault injection: %s: %ld allocations, %ld failed cleanly, %ld absorbed\n", what.c_str(), total, failed,
              absorbed);
  return total;
}

// task_bert_qa with a small SentencePiece-style Unigram tokenizer.json (NFKC normalizer): a long
// run of combining marks grows the normalizer's scratch, so runs on it do allocate.
std::string unigram_qa_model(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const fs::path ckpt = dir / "qa";
  fs::copy(testdata_dir() + "/task_bert_qa", ckpt, fs::copy_options::recursive);
  fs::remove(ckpt / "vocab.txt");
  std::ofstream(ckpt / "tokenizer.json") << R"({"added_tokens": [{"id": 1, "content": "</s>", "special": true}],
    "normalizer": {"type": "NFKC"},
    "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": true},
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
      "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
               {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "</s>", "type_id": 1}}],
      "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
    "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0], ["</s>", 0], ["\u2581", -2], ["\u2581a", -1],
              ["b", -2], ["\u2581he", -3], ["llo", -3]]}})";
  edgebert::convert::ConvertOptions o;
  o.input_dir = ckpt.string();
  o.fp32 = true;
  o.quiet = true;
  o.error_report = false;
  const edgebert::convert::ConvertResult r = edgebert::convert::convert_checkpoint(o);
  const std::string path = (dir / "qa.ebm").string();
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(r.buffer.data()), static_cast<std::streamsize>(r.buffer.size()));
  return path;
}

}  // namespace

TEST_CASE("every allocation of every run entry point fails in turn", "[fault][run]") {
  char tmpl[] = "/tmp/eb_alloc_runs_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::filesystem::path dir = tmpl;
  // "a" and 3000 combining acute accents: one normalization segment longer than the scratch
  std::string marks = "hello a";
  for (int i = 0; i < 3000; ++i) marks += "\xCC\x81";
  marks += " b";
  const std::vector<std::pair<std::string, std::string>> models = {
      {"vocab.txt WordPiece", ebm_path("task_bert_qa", "int8")}, {"Unigram tokenizer.json", unigram_qa_model(dir)}};
  long runs_that_allocate = 0;
  for (const auto& [kind, path] : models) {
    ModelHandle m;
    char err[512];
    REQUIRE(eb_model_load_file(path.c_str(), &m.m, err, sizeof err) == EB_OK);
    eb_model_info info;
    REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
    const int32_t ids[5] = {2, 5, 6, 4, 1};
    const size_t lengths[2] = {3, 2};
    const std::vector<float> emb(4 * static_cast<size_t>(info.hidden_size), 0.01f);
    const char* texts[3] = {"hello", marks.c_str(), "a b"};
    const char* pairs_b[3] = {"b", "hello a", marks.c_str()};
    std::string context;
    for (int i = 0; i < 40; ++i) context += "hello a b ";
    size_t consumed = 0;
    eb_span span{};
    const std::string k = kind + ": ";
    runs_that_allocate += fail_each_run_allocation(k + "run_ids", m.m, [&](eb_session* s) {
      return eb_session_run_ids(s, ids, nullptr, nullptr, 5);
    }) > 0;
    runs_that_allocate += fail_each_run_allocation(k + "run_embeddings", m.m, [&](eb_session* s) {
      return eb_session_run_embeddings(s, emb.data(), nullptr, 4);
    }) > 0;
    runs_that_allocate += fail_each_run_allocation(k + "run_ids_batch", m.m, [&](eb_session* s) {
      return eb_session_run_ids_batch(s, ids, nullptr, lengths, 2, &consumed);
    }) > 0;
    runs_that_allocate += fail_each_run_allocation(k + "run_text", m.m, [&](eb_session* s) {
      return eb_session_run_text(s, marks.c_str());
    }) > 0;
    runs_that_allocate += fail_each_run_allocation(k + "run_text_pair", m.m, [&](eb_session* s) {
      return eb_session_run_text_pair(s, "hello", marks.c_str());
    }) > 0;
    runs_that_allocate += fail_each_run_allocation(k + "run_texts", m.m, [&](eb_session* s) {
      return eb_session_run_texts(s, texts, 3, &consumed);
    }) > 0;
    runs_that_allocate += fail_each_run_allocation(k + "run_text_pairs", m.m, [&](eb_session* s) {
      return eb_session_run_text_pairs(s, texts, pairs_b, 3, &consumed);
    }) > 0;
    runs_that_allocate += fail_each_run_allocation(k + "answer", m.m, [&](eb_session* s) {
      return eb_session_answer(s, marks.c_str(), context.c_str(), 5, 8, &span, nullptr);
    }) > 0;
  }
  // the injection reached at least the runs whose tokenizer grows its scratch (else this test
  // proves nothing about the guards)
  CHECK(runs_that_allocate > 0);
  std::filesystem::remove_all(dir);
}
