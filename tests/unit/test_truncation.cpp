// SPDX-License-Identifier: Apache-2.0
// test_truncation.cpp: eb_session_set_truncation against HuggingFace tokenizers' truncation as
// tasks_numpy.truncate writes it from truncate_encodings (longest_first and only_second, single
// texts and pairs, odd and even budgets, sessions of 9 to 24 positions): the token ids of every
// cut text (pair) and the count of cut tokens (eb_session_get_truncated_tokens) in single runs and
// in packed runs (each sequence its own count), the refusals where the library raises an error;
// the default stays a refusal; rerank with only_second keeps the query whole; bad values are
// refused; and truncated runs allocate nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "test_support.h"

using namespace edgebert::test;

namespace {

struct TruncationCase {
  std::string strategy;
  int max_len = 0, cut = 0;  // cut -1: refused
  std::string a, b;          // b empty: a single text
  std::vector<int32_t> ids;
};

std::vector<TruncationCase> read_cases() {
  std::vector<TruncationCase> cases;
  std::ifstream f(testdata_dir() + "/task_bert_rerank/rerank/truncation.txt");
  for (std::string line; std::getline(f, line);) {
    std::vector<std::string> parts;
    std::istringstream in(line);
    for (std::string p; std::getline(in, p, '|');) parts.push_back(p);
    while (parts.size() < 4) parts.emplace_back();
    TruncationCase c;
    std::istringstream head(parts[0]);
    head >> c.strategy >> c.max_len >> c.cut;
    c.a = parts[1];
    c.b = parts[2];
    std::istringstream ids(parts[3]);
    for (int32_t id; ids >> id;) c.ids.push_back(id);
    cases.push_back(c);
  }
  REQUIRE(cases.size() >= 100);
  return cases;
}

eb_truncation strategy_of(const std::string& s) {
  return s == "longest_first" ? EB_TRUNCATION_LONGEST_FIRST : EB_TRUNCATION_ONLY_SECOND;
}

// (SessionHandle is not movable: a pointer to one)
std::unique_ptr<SessionHandle> session(eb_model* m, int max_len, int batch_tokens, int threads = 1) {
  eb_session_options o;
  eb_session_options_init(&o);
  o.max_sequence_length = max_len;
  o.max_batch_tokens = batch_tokens;
  o.num_threads = threads;
  auto s = std::make_unique<SessionHandle>();
  char err[256];
  REQUIRE(eb_session_create(m, &o, &s->s, err, sizeof err) == EB_OK);
  return s;
}

std::vector<int32_t> run_ids(eb_session* s, size_t first, size_t n) {
  const int32_t* ids = nullptr;
  size_t len = 0;
  REQUIRE(eb_session_get_input_ids(s, &ids, &len) == EB_OK);
  REQUIRE(first + n <= len);
  return std::vector<int32_t>(ids + first, ids + first + n);
}

}  // namespace

TEST_CASE("truncation cuts texts and pairs as HuggingFace tokenizers", "[truncation]") {
  const std::vector<TruncationCase> cases = read_cases();
  for (const char* kind : {"fp32", "int8"}) {
    ModelHandle m;
    char err[256];
    REQUIRE(eb_model_load_file(ebm_path("task_bert_rerank", kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    std::map<int, std::unique_ptr<SessionHandle>> sessions;
    size_t cut_cases = 0, refused = 0;
    for (const TruncationCase& c : cases) {
      INFO(kind << " " << c.strategy << " max " << c.max_len << " a '" << c.a << "' b '" << c.b << "'");
      if (!sessions.count(c.max_len)) sessions.emplace(c.max_len, session(m.m, c.max_len, 0));
      eb_session* s = sessions[c.max_len]->s;
      REQUIRE(eb_session_set_truncation(s, EB_TRUNCATION_NONE) == EB_OK);
      const auto run = [&] {
        return c.b.empty() ? eb_session_run_text(s, c.a.c_str()) : eb_session_run_text_pair(s, c.a.c_str(), c.b.c_str());
      };
      // the default refuses what does not fit
      CHECK(run() == (c.cut == 0 ? EB_OK : EB_ERROR_SEQUENCE_TOO_LONG));
      REQUIRE(eb_session_set_truncation(s, strategy_of(c.strategy)) == EB_OK);
      const eb_status st = run();
      if (c.cut < 0) {
        CHECK(st == EB_ERROR_SEQUENCE_TOO_LONG);
        ++refused;
        continue;
      }
      REQUIRE(st == EB_OK);
      CHECK(run_ids(s, 0, c.ids.size()) == c.ids);
      int32_t cut = -5;
      REQUIRE(eb_session_get_truncated_tokens(s, 0, &cut) == EB_OK);
      CHECK(cut == c.cut);
      cut_cases += c.cut > 0;
    }
    CHECK(cut_cases >= 50);
    CHECK(refused >= 10);
  }
}

TEST_CASE("truncation in packed runs: every sequence as its single run, with its own count", "[truncation][packed]") {
  const std::vector<TruncationCase> cases = read_cases();
  for (const char* kind : {"fp32", "int8"}) {
    for (int threads : {1, 2}) {
      ModelHandle m;
      char err[256];
      REQUIRE(eb_model_load_file(ebm_path("task_bert_rerank", kind).c_str(), &m.m, err, sizeof err) == EB_OK);
      for (const char* strategy : {"longest_first", "only_second"}) {
        for (int max_len : {9, 17, 24}) {
          INFO(kind << " threads " << threads << " " << strategy << " max " << max_len);
          std::vector<const TruncationCase*> group;
          for (const TruncationCase& c : cases)
            if (c.strategy == strategy && c.max_len == max_len && !c.b.empty()) group.push_back(&c);
          REQUIRE(group.size() >= 20);
          std::vector<const char*> a, b;
          for (const TruncationCase* c : group) a.push_back(c->a.c_str()), b.push_back(c->b.c_str());
          const auto s = session(m.m, max_len, 3 * max_len, threads);
          REQUIRE(eb_session_set_truncation(s->s, strategy_of(strategy)) == EB_OK);
          std::vector<float> logits(group.size());
          for (size_t done = 0, n = 0; done < group.size(); done += n) {
            REQUIRE(eb_session_run_text_pairs(s->s, a.data() + done, b.data() + done, group.size() - done, &n) == EB_OK);
            REQUIRE(n >= 1);
            for (size_t i = 0; i < n; ++i) {
              const TruncationCase& c = *group[done + i];
              eb_sequence_info q;
              REQUIRE(eb_session_get_sequence(s->s, i, &q) == EB_OK);
              int32_t cut = -5;
              REQUIRE(eb_session_get_truncated_tokens(s->s, i, &cut) == EB_OK);
              if (c.cut < 0) {
                CHECK(q.status == EB_ERROR_SEQUENCE_TOO_LONG);
                CHECK(cut == 0);
                continue;
              }
              REQUIRE(q.status == EB_OK);
              CHECK(run_ids(s->s, static_cast<size_t>(q.first_token), static_cast<size_t>(q.tokens)) == c.ids);
              CHECK(cut == c.cut);
              const float* l = nullptr;
              REQUIRE(eb_session_get_output(s->s, EB_OUTPUT_LOGITS, &l, nullptr, nullptr) == EB_OK);
              logits[done + i] = l[i];
            }
          }
          // each pair's logit equals its single (truncated) run's
          for (size_t k = 0; k < group.size(); ++k) {
            if (group[k]->cut < 0) continue;
            REQUIRE(eb_session_run_text_pair(s->s, a[k], b[k]) == EB_OK);
            const float* l = nullptr;
            REQUIRE(eb_session_get_output(s->s, EB_OUTPUT_LOGITS, &l, nullptr, nullptr) == EB_OK);
            if (std::string(kind) == "int8")
              CHECK(l[0] == logits[k]);
            else
              CHECK(std::fabs(l[0] - logits[k]) <= 1e-5f * std::max(1.0f, std::fabs(l[0])));
          }
        }
      }
    }
  }
}

TEST_CASE("rerank with only_second keeps the query and scores long passages", "[truncation][rerank]") {
  ModelHandle m;
  char err[256];
  REQUIRE(eb_model_load_file(ebm_path("task_bert_rerank", "int8").c_str(), &m.m, err, sizeof err) == EB_OK);
  const auto s = session(m.m, 16, 64);
  std::string long_passage;
  for (int i = 0; i < 30; ++i) long_passage += "the staff was rude ";
  const char* passages[] = {"rude staff", long_passage.c_str()};
  std::vector<float> scores(2);
  std::vector<int32_t> statuses(2);
  REQUIRE(eb_session_rerank(s->s, "was the staff rude", passages, 2, scores.data(), statuses.data()) == EB_OK);
  CHECK(statuses[1] == EB_ERROR_SEQUENCE_TOO_LONG);
  REQUIRE(eb_session_set_truncation(s->s, EB_TRUNCATION_ONLY_SECOND) == EB_OK);
  REQUIRE(eb_session_rerank(s->s, "was the staff rude", passages, 2, scores.data(), statuses.data()) == EB_OK);
  CHECK(statuses[0] == EB_OK);
  CHECK(statuses[1] == EB_OK);
  // the same as a single run of the query with the passage's first 16 - 3 - 4 tokens
  REQUIRE(eb_session_run_text_pair(s->s, "was the staff rude", "the staff was rude the staff was rude the") == EB_OK);
  const float* l = nullptr;
  REQUIRE(eb_session_get_output(s->s, EB_OUTPUT_LOGITS, &l, nullptr, nullptr) == EB_OK);
  CHECK(scores[1] == static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(l[0])))));
  // bad values, no run yet, index out of range
  CHECK(eb_session_set_truncation(s->s, static_cast<eb_truncation>(3)) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_set_truncation(s->s, static_cast<eb_truncation>(-1)) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_set_truncation(nullptr, EB_TRUNCATION_NONE) == EB_ERROR_INVALID_ARGUMENT);
  int32_t cut = 0;
  CHECK(eb_session_get_truncated_tokens(s->s, 1, &cut) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_get_truncated_tokens(s->s, 0, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  const auto fresh = session(m.m, 16, 0);
  CHECK(eb_session_get_truncated_tokens(fresh->s, 0, &cut) == EB_ERROR_BAD_STATE);
}

TEST_CASE("truncated runs perform zero heap allocations", "[truncation][alloc]") {
  ModelHandle m;
  char err[256];
  REQUIRE(eb_model_load_file(ebm_path("task_bert_rerank", "int8").c_str(), &m.m, err, sizeof err) == EB_OK);
  for (int threads : {1, 2}) {
    const auto s = session(m.m, 12, 48, threads);
    std::string long_text;
    for (int i = 0; i < 40; ++i) long_text += "the hotel was clean ";
    const char* a[] = {"was the staff rude", long_text.c_str(), "yes"};
    const char* b[] = {long_text.c_str(), "rude", long_text.c_str()};
    int failures = 0;
    for (int rep = 0; rep < 3; ++rep) {
      if (rep == 1) edgebert::tools::alloc_counter_start();
      for (eb_truncation t : {EB_TRUNCATION_LONGEST_FIRST, EB_TRUNCATION_ONLY_SECOND}) {
        failures += eb_session_set_truncation(s->s, t) != EB_OK;
        failures += eb_session_run_text_pair(s->s, a[0], b[0]) != EB_OK;
        size_t n = 0;
        failures += eb_session_run_text_pairs(s->s, a, b, 3, &n) != EB_OK;
        int32_t cut = 0;
        failures += eb_session_get_truncated_tokens(s->s, 0, &cut) != EB_OK;
      }
      failures += eb_session_run_text(s->s, long_text.c_str()) != EB_ERROR_SEQUENCE_TOO_LONG;  // only_second
    }
    CHECK(edgebert::tools::alloc_counter_stop() == 0);
    CHECK(failures == 0);
  }
}
