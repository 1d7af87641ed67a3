// SPDX-License-Identifier: Apache-2.0
// test_rerank.cpp: cross-encoder reranking (eb_session_rerank, eb_session_rerank_top_k) on the
// one-label reference checkpoints (BERT with sentence-transformers' default Sigmoid, BERT whose
// config names Identity, DistilBERT naming Sigmoid by the older key): fp32 scores within 2e-3 of
// the float64 reference (tasks_numpy: CrossEncoder.predict's score of the logit); int8 keeps the
// reference order of every clear decision; every score equals a single run_text_pair of its pair
// (int8 bit-identical) over several packed runs, 1 and 2 threads; top-k is the stable descending
// order of the scores; per-passage statuses (a too-long and a NULL passage: -INFINITY, left out
// of the top k), the first failure's message without them; refusals of other models and bad
// arguments; and no call allocates after a warm-up.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "test_support.h"

using namespace edgebert::test;

namespace {

constexpr int kMaxLen = 48;
constexpr int kBatchTokens = 96;  // a few pairs per packed run: the 15 passages need several

struct Golden {
  std::string query;
  std::vector<std::string> passages;
  std::vector<double> scores, logits;
};

Golden read_golden(const std::string& model) {
  Golden g;
  const std::string dir = testdata_dir() + "/" + model + "/rerank/";
  std::ifstream q(dir + "query.txt");
  std::getline(q, g.query);
  std::ifstream p(dir + "passages.txt");
  for (std::string line; std::getline(p, line);) g.passages.push_back(line);
  std::ifstream s(dir + "scores.txt");
  for (std::string line; std::getline(s, line);) {
    std::istringstream in(line);
    size_t index = 0;
    double score = 0, logit = 0;
    in >> index >> score >> logit;
    REQUIRE(index == g.scores.size());
    g.scores.push_back(score);
    g.logits.push_back(logit);
  }
  REQUIRE(g.scores.size() == g.passages.size());
  REQUIRE(g.passages.size() >= 10);
  return g;
}

struct Loaded {
  ModelHandle m;
  SessionHandle s;
  Loaded(const std::string& model, const char* kind, int threads, int batch_tokens = kBatchTokens) {
    char err[512];
    REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    eb_session_options o;
    eb_session_options_init(&o);
    o.num_threads = threads;
    o.max_sequence_length = kMaxLen;
    o.max_batch_tokens = batch_tokens;
    REQUIRE(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_OK);
  }
};

std::vector<const char*> pointers(const std::vector<std::string>& v) {
  std::vector<const char*> p;
  for (const std::string& s : v) p.push_back(s.c_str());
  return p;
}

// The score of a single run_text_pair: the logit, through sigmoid for the Sigmoid models.
float single_score(eb_session* s, const char* q, const char* p, bool sigmoid) {
  REQUIRE(eb_session_run_text_pair(s, q, p) == EB_OK);
  const float* logit = nullptr;
  REQUIRE(eb_session_get_output(s, EB_OUTPUT_LOGITS, &logit, nullptr, nullptr) == EB_OK);
  return sigmoid ? static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(*logit)))) : *logit;
}

// Passage indices by descending score, equal scores by index (the order the API promises).
std::vector<int32_t> ranked(const std::vector<float>& scores) {
  std::vector<int32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return scores[a] > scores[b]; });
  return order;
}

const char* const kRerankModels[] = {"task_bert_rerank", "task_bert_rerank_logit", "task_distil_rerank"};

}  // namespace

TEST_CASE("rerank scores match the float64 cross-encoder reference", "[rerank]") {
  for (const char* model : kRerankModels) {
    const Golden g = read_golden(model);
    const std::vector<const char*> passages = pointers(g.passages);
    const size_t n = passages.size();
    // the score function is the model's: sigmoid models' scores are in (0, 1) and equal
    // sigmoid(logit), the Identity model's equal its logits
    const bool sigmoid = std::string(model) != "task_bert_rerank_logit";
    for (size_t i = 0; i < n; ++i)
      REQUIRE(std::fabs(g.scores[i] - (sigmoid ? 1 / (1 + std::exp(-g.logits[i])) : g.logits[i])) < 1e-7);
    for (const char* kind : {"fp32", "int8"}) {
      for (int threads : {1, 2}) {
        INFO(model << " " << kind << " threads " << threads);
        Loaded l(model, kind, threads);
        std::vector<float> scores(n, 123.0f);
        std::vector<int32_t> statuses(n, -1);
        REQUIRE(eb_session_rerank(l.s.s, g.query.c_str(), passages.data(), n, scores.data(), statuses.data()) == EB_OK);
        size_t runs = 0;
        REQUIRE(eb_session_get_sequence_count(l.s.s, &runs) == EB_OK);
        CHECK(runs < n);  // the last packed run held only some of the pairs
        for (size_t i = 0; i < n; ++i) CHECK(statuses[i] == EB_OK);
        if (std::string(kind) == "fp32") {
          for (size_t i = 0; i < n; ++i) CHECK(std::fabs(scores[i] - g.scores[i]) <= 2e-3);
        } else {
          // every clear decision of the reference (scores apart by more than a tenth of their
          // spread) keeps its order
          const double spread = *std::max_element(g.scores.begin(), g.scores.end()) -
                                *std::min_element(g.scores.begin(), g.scores.end());
          size_t clear = 0;
          for (size_t i = 0; i < n; ++i)
            for (size_t j = 0; j < n; ++j)
              if (g.scores[i] > g.scores[j] + 0.1 * spread) {
                ++clear;
                CHECK(scores[i] > scores[j]);
              }
          CHECK(clear >= n);
        }
        // packed = single runs (int8 bit-identical; fp32 to rounding)
        for (size_t i = 0; i < n; ++i) {
          const float single = single_score(l.s.s, g.query.c_str(), passages[i], sigmoid);
          if (std::string(kind) == "int8")
            CHECK(scores[i] == single);
          else
            CHECK(std::fabs(scores[i] - single) <= 1e-5 * std::max(1.0f, std::fabs(single)));
        }
        // top k: the stable descending order of the scores
        const std::vector<int32_t> order = ranked(scores);
        for (size_t k : {size_t{0}, size_t{1}, size_t{3}, n, n + 5}) {
          std::vector<int32_t> idx(k + 1, -7);
          std::vector<float> top(k + 1, -7.0f);
          size_t found = 99;
          REQUIRE(eb_session_rerank_top_k(l.s.s, g.query.c_str(), passages.data(), n, k, idx.data(), top.data(), &found,
                                          nullptr) == EB_OK);
          REQUIRE(found == std::min(k, n));
          for (size_t r = 0; r < found; ++r) {
            CHECK(idx[r] == order[r]);
            CHECK(top[r] == scores[static_cast<size_t>(order[r])]);
          }
          CHECK(idx[found] == -7);  // nothing written past the found ones
        }
      }
    }
  }
}

TEST_CASE("rerank: per-passage statuses, first failure, refusals", "[rerank]") {
  const Golden g = read_golden("task_bert_rerank");
  Loaded l("task_bert_rerank", "int8", 1);
  std::string too_long;
  for (int i = 0; i < 60; ++i) too_long += "good ";
  std::vector<const char*> passages = pointers(g.passages);
  passages.insert(passages.begin() + 2, too_long.c_str());
  passages.push_back(nullptr);
  const size_t n = passages.size();
  std::vector<float> scores(n);
  std::vector<int32_t> statuses(n);
  REQUIRE(eb_session_rerank(l.s.s, g.query.c_str(), passages.data(), n, scores.data(), statuses.data()) == EB_OK);
  for (size_t i = 0; i < n; ++i) {
    INFO("passage " << i);
    if (i == 2) {
      CHECK(statuses[i] == EB_ERROR_SEQUENCE_TOO_LONG);
      CHECK(scores[i] == -INFINITY);
    } else if (i == n - 1) {
      CHECK(statuses[i] == EB_ERROR_INVALID_ARGUMENT);
      CHECK(scores[i] == -INFINITY);
    } else {
      CHECK(statuses[i] == EB_OK);
      CHECK(scores[i] == single_score(l.s.s, g.query.c_str(), passages[i], true));
    }
  }
  // the failed ones are never in the top k
  std::vector<int32_t> idx(n);
  std::vector<float> top(n);
  size_t found = 0;
  REQUIRE(eb_session_rerank_top_k(l.s.s, g.query.c_str(), passages.data(), n, n, idx.data(), top.data(), &found,
                                  statuses.data()) == EB_OK);
  CHECK(found == n - 2);
  for (size_t r = 0; r < found; ++r) CHECK((idx[r] != 2 && idx[r] != static_cast<int32_t>(n - 1)));
  // without statuses: the first failure's status, named by its index
  CHECK(eb_session_rerank(l.s.s, g.query.c_str(), passages.data(), n, scores.data(), nullptr) ==
        EB_ERROR_SEQUENCE_TOO_LONG);
  CHECK(std::string(eb_session_last_error(l.s.s)).rfind("passages[2]: ", 0) == 0);
  CHECK(eb_session_rerank_top_k(l.s.s, g.query.c_str(), passages.data(), n, 3, idx.data(), top.data(), &found,
                                nullptr) == EB_ERROR_SEQUENCE_TOO_LONG);
  CHECK(found == 0);
  // a query too long for any passage: every pair fails
  std::string long_query = too_long + too_long;
  REQUIRE(eb_session_rerank(l.s.s, long_query.c_str(), passages.data(), 3, scores.data(), statuses.data()) == EB_OK);
  for (size_t i = 0; i < 3; ++i) CHECK(statuses[i] == EB_ERROR_SEQUENCE_TOO_LONG);
  // bad arguments
  CHECK(eb_session_rerank(l.s.s, nullptr, passages.data(), 2, scores.data(), nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(eb_session_last_error(l.s.s)).find("query is NULL") != std::string::npos);
  CHECK(eb_session_rerank(l.s.s, "q", nullptr, 2, scores.data(), nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_rerank(l.s.s, "q", passages.data(), 2, nullptr, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_rerank_top_k(l.s.s, "q", passages.data(), 2, 2, nullptr, top.data(), nullptr, nullptr) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_rerank(nullptr, "q", passages.data(), 2, scores.data(), nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_rerank(l.s.s, "q", nullptr, 0, nullptr, nullptr) == EB_OK);
  const char* bad_utf8[] = {"fine", "\xff\xfe"};
  CHECK(eb_session_rerank(l.s.s, "q", bad_utf8, 2, scores.data(), statuses.data()) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(eb_session_last_error(l.s.s)).find("passages[1]") != std::string::npos);
  CHECK(eb_session_rerank(l.s.s, "\xff", bad_utf8, 1, scores.data(), statuses.data()) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(eb_session_last_error(l.s.s)).find("query") != std::string::npos);
  // models that are not cross-encoders
  for (const char* other : {"task_bert_seqcls_tanh", "task_st_mean_norm", "task_bert_qa"}) {
    Loaded o(other, "fp32", 1);
    CHECK(eb_session_rerank(o.s.s, "q", passages.data(), 0, nullptr, nullptr) == EB_ERROR_UNSUPPORTED);
    CHECK(std::string(eb_session_last_error(o.s.s)).find("cross-encoder") != std::string::npos);
  }
}

TEST_CASE("rerank performs zero heap allocations after a warm-up", "[rerank][alloc]") {
  const Golden g = read_golden("task_bert_rerank");
  std::string too_long;
  for (int i = 0; i < 60; ++i) too_long += "good ";
  std::vector<const char*> passages = pointers(g.passages);
  passages.push_back(too_long.c_str());
  const size_t n = passages.size();
  for (const char* kind : {"int8", "fp32"}) {
    for (int threads : {1, 2}) {
      INFO(kind << " threads " << threads);
      Loaded l("task_bert_rerank", kind, threads);
      std::vector<float> scores(n);
      std::vector<int32_t> statuses(n), idx(n);
      size_t found = 0;
      int failures = 0;
      for (int rep = 0; rep < 3; ++rep) {
        if (rep == 1) edgebert::tools::alloc_counter_start();  // rep 0 is the warm-up
        failures += eb_session_rerank(l.s.s, g.query.c_str(), passages.data(), n, scores.data(), statuses.data()) != EB_OK;
        failures += eb_session_rerank_top_k(l.s.s, g.query.c_str(), passages.data(), n, 5, idx.data(), scores.data(),
                                            &found, statuses.data()) != EB_OK;
        failures += eb_session_rerank(l.s.s, g.query.c_str(), passages.data(), n, scores.data(), nullptr) !=
                    EB_ERROR_SEQUENCE_TOO_LONG;
      }
      CHECK(edgebert::tools::alloc_counter_stop() == 0);
      CHECK(failures == 0);
    }
  }
}
