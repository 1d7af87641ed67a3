// SPDX-License-Identifier: Apache-2.0
// test_sparse.cpp: SPLADE sparse vectors of masked-LM models beyond the golden comparisons
// (test_runtime_heads, test_family_runtime): packed runs equal single runs, 1 and 2 threads agree,
// eb_session_sparse_top_k equals a brute-force ranking of the output, the CLI's --sparse and
// --dump sparse_embedding, and masked-LM checkpoints whose head does not fit are one-line errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "converter/converter.h"
#include "family_manifest.h"

using namespace edgebert::test;
namespace fs = std::filesystem;

namespace {

void open(const char* model, const char* kind, int threads, ModelHandle* m, SessionHandle* s, int batch_tokens = 0) {
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m->m, err, sizeof err) == EB_OK);
  eb_session_options o;
  eb_session_options_init(&o);
  o.num_threads = threads;
  o.max_sequence_length = 64;
  o.max_batch_tokens = batch_tokens;
  REQUIRE(eb_session_create(m->m, &o, &s->s, err, sizeof err) == EB_OK);
}

std::vector<float> sparse(eb_session* s, size_t rows, size_t vocab) {
  const float* p = nullptr;
  int64_t shape[2] = {0, 0};
  int32_t rank = 0;
  REQUIRE(eb_session_get_output(s, EB_OUTPUT_SPARSE_EMBEDDING, &p, shape, &rank) == EB_OK);
  REQUIRE(static_cast<size_t>(shape[0]) * (rank == 2 ? static_cast<size_t>(shape[1]) : 1) == rows * vocab);
  return std::vector<float>(p, p + rows * vocab);
}

const char* const kTexts[] = {"the movie was good", "who was rude?", "the hotel was clean , but the staff was rude",
                              "a b c"};

}  // namespace

TEST_CASE("sparse vectors: packed runs equal single runs, 1 and 2 threads, fp32 and int8", "[sparse]") {
  for (const char* model : {"task_bert_mlm", "task_distil_mlm"})
    for (const char* kind : {"fp32", "int8"}) {
      INFO(model << " " << kind);
      std::vector<float> by_threads[2];
      for (int threads : {1, 2}) {
        ModelHandle m;
        SessionHandle s;
        open(model, kind, threads, &m, &s, 256);
        eb_model_info info;
        REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
        CHECK(info.task == EB_TASK_MASKED_LM);
        const size_t V = static_cast<size_t>(info.vocab_size);
        size_t consumed = 0;
        REQUIRE(eb_session_run_texts(s.s, kTexts, 4, &consumed) == EB_OK);
        REQUIRE(consumed == 4);
        const std::vector<float> packed = sparse(s.s, 4, V);
        for (size_t i = 0; i < 4; ++i) {
          REQUIRE(eb_session_run_text(s.s, kTexts[i]) == EB_OK);
          const std::vector<float> single = sparse(s.s, 1, V);
          double err = 0;
          for (size_t c = 0; c < V; ++c) err = std::max(err, std::fabs(double(single[c]) - packed[i * V + c]));
          CHECK(err <= 1e-5);
          CHECK(*std::max_element(single.begin(), single.end()) > 0.f);
        }
        by_threads[threads - 1] = packed;
      }
      double err = 0;
      for (size_t c = 0; c < by_threads[0].size(); ++c)
        err = std::max(err, std::fabs(double(by_threads[0][c]) - by_threads[1][c]));
      CHECK(err <= 1e-5);
    }
}

TEST_CASE("eb_session_sparse_top_k: a brute-force ranking, threshold, k, bad calls", "[sparse]") {
  ModelHandle m;
  SessionHandle s;
  open("task_bert_mlm", "fp32", 1, &m, &s);
  eb_model_info info;
  REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
  const size_t V = static_cast<size_t>(info.vocab_size);
  int32_t ids[4096];
  float w[4096];
  size_t found = 7;
  CHECK(eb_session_sparse_top_k(s.s, 0, 5, 0.f, ids, w, &found) == EB_ERROR_BAD_STATE);  // no run yet
  CHECK(found == 0);
  REQUIRE(eb_session_run_text(s.s, "the hotel was clean , but the staff was rude") == EB_OK);
  const std::vector<float> v = sparse(s.s, 1, V);
  std::vector<int32_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return v[a] > v[b]; });
  for (size_t k : {size_t(1), size_t(10), size_t(0)}) {
    REQUIRE(eb_session_sparse_top_k(s.s, 0, k, 0.f, ids, w, &found) == EB_OK);
    const size_t nonzero = static_cast<size_t>(std::count_if(v.begin(), v.end(), [](float x) { return x > 0.f; }));
    CHECK(found == (k == 0 ? nonzero : std::min(k, nonzero)));
    for (size_t i = 0; i < found; ++i) {
      CHECK(ids[i] == order[i]);
      CHECK(w[i] == v[static_cast<size_t>(order[i])]);
    }
  }
  const float threshold = v[static_cast<size_t>(order[5])];  // strictly above: the first 5
  REQUIRE(eb_session_sparse_top_k(s.s, 0, 0, threshold, ids, w, &found) == EB_OK);
  CHECK(found == 5);
  CHECK(eb_session_sparse_top_k(s.s, 1, 5, 0.f, ids, w, &found) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_sparse_top_k(s.s, 0, 5, 0.f, nullptr, w, &found) == EB_ERROR_INVALID_ARGUMENT);
  ModelHandle other;
  SessionHandle other_s;
  open("task_bert_qa", "fp32", 1, &other, &other_s);
  REQUIRE(eb_session_run_text(other_s.s, "the movie was good") == EB_OK);
  CHECK(eb_session_sparse_top_k(other_s.s, 0, 5, 0.f, ids, w, &found) == EB_ERROR_UNSUPPORTED);
  CHECK(eb_session_get_output(other_s.s, EB_OUTPUT_SPARSE_EMBEDDING, nullptr, nullptr, nullptr) == EB_ERROR_UNSUPPORTED);
}

TEST_CASE("edgebert-run --sparse and --dump sparse_embedding", "[sparse][cli]") {
  const char* bin = std::getenv("EDGEBERT_BIN");
  REQUIRE(bin);
  TempDir tmp;
  const std::string dump = tmp.path + "/sparse.f32", out = tmp.path + "/out.txt";
  const std::string run = std::string(bin) + "/edgebert-run --model " + ebm_path("task_bert_mlm", "int8") +
                          " --text 'the movie was good'";
  REQUIRE(std::system((run + " --dump sparse_embedding=" + dump + " > /dev/null").c_str()) == 0);
  REQUIRE(std::system((run + " --sparse --top-k 5 > " + out).c_str()) == 0);
  std::ifstream d(dump, std::ios::binary);
  std::vector<float> v(512);
  REQUIRE(d.read(reinterpret_cast<char*>(v.data()), 512 * sizeof(float)));
  std::vector<int32_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return v[a] > v[b]; });
  std::ifstream f(out);
  std::string line;
  size_t n = 0;
  while (std::getline(f, line)) {  // only "ID WEIGHT" lines, largest first
    std::istringstream is(line);
    int id = -1;
    float weight = 0;
    REQUIRE(bool(is >> id >> weight));
    REQUIRE(n < 5);
    CHECK(id == order[n]);
    CHECK(weight == Approx(v[static_cast<size_t>(id)]).epsilon(1e-6));
    ++n;
  }
  CHECK(n == 5);
}

TEST_CASE("masked-LM heads that do not fit are one-line errors naming the tensor", "[sparse][bad-input]") {
  const std::string script = std::string(EB_SOURCE_ROOT) + "/tests/reference/make_task_checkpoints.py";
  TempDir tmp;
  // a stored decoder weight of another shape (it must be the tied word table)
  REQUIRE(std::system(("python3 " + script + " --out " + tmp.path + " --model task_distil_mlm --extra-tensor "
                       "vocab_projector.weight > /dev/null").c_str()) == 0);
  edgebert::convert::ConvertOptions o;
  o.input_dir = tmp.path;  // (the script writes the checkpoint into --out itself)
  o.fp32 = true;
  o.quiet = true;
  try {
    edgebert::convert::convert_checkpoint(o);
    FAIL("a decoder weight that is not the word table must be refused");
  } catch (const std::exception& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("vocab_projector.weight") != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
}
