// SPDX-License-Identifier: Apache-2.0
// test_call_order.cpp: C API call orders. Every run entry point (run_ids, run_text,
// run_text_pair, run_embeddings, answer, the packed run_texts / run_text_pairs / run_ids_batch, and a
// failed call of each), after no earlier run and
// after a successful text pair, followed by every getter (get_output of every output,
// get_input_ids, get_token_offsets, get_word_ids, get_words, best_span, get_sequence_count, get_sequence), on an encoder, two QA
// models and two token classifiers: each combination returns the status edgebert.h documents,
// and what it returns belongs to the last run (its length; never an earlier run's offsets).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "test_support.h"

using namespace edgebert::test;

namespace {

enum class Entry { kIds, kText, kTextPair, kEmbeddings, kAnswer, kTexts, kTextPairs, kIdsBatch };
bool packed_entry(Entry e) { return e == Entry::kTexts || e == Entry::kTextPairs || e == Entry::kIdsBatch; }
const char* entry_name(Entry e) {
  switch (e) {
    case Entry::kIds: return "run_ids";
    case Entry::kText: return "run_text";
    case Entry::kTextPair: return "run_text_pair";
    case Entry::kEmbeddings: return "run_embeddings";
    case Entry::kAnswer: return "answer";
    case Entry::kTexts: return "run_texts";
    case Entry::kTextPairs: return "run_text_pairs";
    case Entry::kIdsBatch: return "run_ids_batch";
  }
  return "?";
}

struct Fixture {
  ModelHandle m;
  SessionHandle s;
  eb_model_info info{};
  explicit Fixture(const std::string& model, const char* kind) {
    char err[512];
    REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
    eb_session_options o;
    eb_session_options_init(&o);
    o.max_sequence_length = 32;
    REQUIRE(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_OK);
  }
  bool has_output(int out) const {
    switch (out) {
      case EB_OUTPUT_LAST_HIDDEN_STATE: return true;
      case EB_OUTPUT_POOLER_OUTPUT: return info.has_pooler != 0;
      case EB_OUTPUT_LOGITS: return info.task == EB_TASK_SEQUENCE_CLASSIFICATION;
      case EB_OUTPUT_SENTENCE_EMBEDDING: return info.task == EB_TASK_SENTENCE_EMBEDDING;
      case EB_OUTPUT_START_LOGITS:
      case EB_OUTPUT_END_LOGITS: return info.task == EB_TASK_QUESTION_ANSWERING;
      case EB_OUTPUT_TOKEN_LOGITS: return info.task == EB_TASK_TOKEN_CLASSIFICATION;
    }
    return false;
  }
  bool qa() const { return info.task == EB_TASK_QUESTION_ANSWERING; }
};

// Runs `e` (successfully, or with an argument each entry point refuses); returns the status and
// the length of the run (tokens) it is expected to have.
eb_status run_entry(Fixture& f, Entry e, bool fail, size_t* tokens) {
  static const int32_t ids[] = {101, 216, 181, 434, 107, 102, 160, 421, 102};  // 9 tokens
  static const int32_t types[] = {0, 0, 0, 0, 0, 0, 1, 1, 1};
  const int32_t bad_mask[] = {1, 1, 2, 1, 1, 1, 1, 1, 1};
  std::vector<float> embeds(static_cast<size_t>(f.info.hidden_size) * 5, 0.125f);
  switch (e) {
    case Entry::kIds:
      *tokens = 9;
      return eb_session_run_ids(f.s.s, ids, types, fail ? bad_mask : nullptr, 9);
    case Entry::kText:
      *tokens = 6;  // [CLS] the movie was good [SEP]
      return eb_session_run_text(f.s.s, fail ? nullptr : "the movie was good");
    case Entry::kTextPair:
      *tokens = 10;  // [CLS] who was rude ? [SEP] the staff was [SEP]
      return eb_session_run_text_pair(f.s.s, "who was rude?", fail ? nullptr : "the staff was");
    case Entry::kEmbeddings:
      *tokens = 5;
      if (fail) embeds[3] = std::numeric_limits<float>::infinity();
      return eb_session_run_embeddings(f.s.s, embeds.data(), nullptr, 5);
    case Entry::kAnswer: {
      eb_span span;
      int32_t windows = -1;
      *tokens = 10;  // one window: the pair fits
      // failing: a question that leaves no room for context in 32 positions
      std::string q = "who was rude?";
      if (fail)
        for (int i = 0; i < 10; ++i) q += " who was rude?";
      return eb_session_answer(f.s.s, q.c_str(), "the staff was", 5, -1, &span, &windows);
    }
    case Entry::kTexts: {  // two texts; failing: NULL texts
      const char* texts[] = {"the movie was good", "the movie was good"};
      size_t consumed = 0;
      *tokens = 12;
      const eb_status st = eb_session_run_texts(f.s.s, fail ? nullptr : texts, 2, &consumed);
      if (st == EB_OK) CHECK(consumed == 2);
      return st;
    }
    case Entry::kTextPairs: {  // two pairs; failing: NULL texts_b (refused by the C API itself)
      const char* a[] = {"who was rude?", "who was rude?"};
      const char* b[] = {"the staff was", "the staff was"};
      size_t consumed = 0;
      *tokens = 20;
      const eb_status st = eb_session_run_text_pairs(f.s.s, a, fail ? nullptr : b, 2, &consumed);
      if (st == EB_OK) CHECK(consumed == 2);
      return st;
    }
    case Entry::kIdsBatch: {  // the 9 ids as sequences of 5 and 4; failing: NULL lengths
      const size_t lengths[] = {5, 4};
      size_t consumed = 0;
      *tokens = 9;
      const eb_status st = eb_session_run_ids_batch(f.s.s, ids, types, fail ? nullptr : lengths, 2, &consumed);
      if (st == EB_OK) CHECK(consumed == 2);
      return st;
    }
  }
  return EB_ERROR_BACKEND;
}

void check_getters(Fixture& f, Entry e, bool ok, size_t tokens) {
  const bool text =
      ok && (e == Entry::kText || e == Entry::kTextPair || e == Entry::kAnswer || e == Entry::kTexts || e == Entry::kTextPairs);
  const bool pair = ok && (e == Entry::kTextPair || e == Entry::kAnswer || e == Entry::kTextPairs);
  const bool ids = ok && e != Entry::kEmbeddings;
  const bool packed = packed_entry(e);
  const size_t sequences = packed ? 2 : 1;
  for (int out = 0; out < EB_OUTPUT_COUNT; ++out) {
    INFO("get_output " << out);
    const float* data = nullptr;
    int64_t shape[2] = {-1, -1};
    int32_t rank = 0;
    const eb_status st = eb_session_get_output(f.s.s, static_cast<eb_output>(out), &data, shape, &rank);
    const eb_status want = !ok ? EB_ERROR_BAD_STATE : f.has_output(out) ? EB_OK : EB_ERROR_UNSUPPORTED;
    CHECK(st == want);
    if (st != EB_OK) continue;
    CHECK(data != nullptr);
    const bool per_token = out == EB_OUTPUT_LAST_HIDDEN_STATE || out == EB_OUTPUT_START_LOGITS ||
                           out == EB_OUTPUT_END_LOGITS || out == EB_OUTPUT_TOKEN_LOGITS;
    if (per_token) CHECK(shape[0] == static_cast<int64_t>(tokens));
    if (!per_token) CHECK(rank == (packed ? 2 : 1));  // packed: [sequences, width]
    if (!per_token && packed) CHECK(shape[0] == 2);
  }
  {
    size_t count = 0;
    const eb_status st = eb_session_get_sequence_count(f.s.s, &count);
    CHECK(st == (ok ? EB_OK : EB_ERROR_BAD_STATE));
    if (st == EB_OK) {
      CHECK(count == sequences);
      size_t sum = 0;
      for (size_t i = 0; i < count; ++i) {
        eb_sequence_info q;
        REQUIRE(eb_session_get_sequence(f.s.s, i, &q) == EB_OK);
        CHECK(q.status == EB_OK);
        CHECK(q.first_token == static_cast<int32_t>(sum));
        sum += static_cast<size_t>(q.tokens);
        if (text) CHECK(q.words == (pair ? 7 : 4));
      }
      CHECK(sum == tokens);
      eb_sequence_info q;
      CHECK(eb_session_get_sequence(f.s.s, count, &q) == EB_ERROR_INVALID_ARGUMENT);
    }
  }
  {
    const int32_t* p = nullptr;
    size_t n = 0;
    const eb_status st = eb_session_get_input_ids(f.s.s, &p, &n);
    CHECK(st == (ids ? EB_OK : EB_ERROR_BAD_STATE));
    if (st == EB_OK) {
      CHECK(n == tokens);
      CHECK(p[0] == 101);
    } else {
      CHECK(std::string(eb_session_last_error(f.s.s)).size() > 0);
    }
  }
  {
    const int32_t *b = nullptr, *en = nullptr, *seg = nullptr;
    size_t n = 0;
    const eb_status st = eb_session_get_token_offsets(f.s.s, &b, &en, &seg, &n);
    CHECK(st == (text ? EB_OK : EB_ERROR_BAD_STATE));
    if (st == EB_OK) {
      CHECK(n == tokens);
      CHECK(seg[0] == -1);
      CHECK(seg[n - 1] == -1);
      CHECK(seg[n - 2] == (pair ? 1 : 0));  // the last run's segments, not an earlier run's
    }
  }
  {
    const int32_t* w = nullptr;
    size_t n = 0;
    const eb_status st = eb_session_get_word_ids(f.s.s, &w, &n);
    CHECK(st == (text ? EB_OK : EB_ERROR_BAD_STATE));
    if (st == EB_OK) {
      CHECK(n == tokens);
      CHECK(w[0] == -1);
      CHECK(w[1] == 0);
    }
  }
  {
    const eb_word* w = nullptr;
    size_t n = 0;
    const eb_status st = eb_session_get_words(f.s.s, &w, &n);
    CHECK(st == (text ? EB_OK : EB_ERROR_BAD_STATE));
    if (st == EB_OK) CHECK(n == (pair ? 7u : 4u) * sequences);  // who was rude ? | the staff was ; the movie was good
  }
  {
    eb_span span;
    const eb_status st = eb_session_best_span(f.s.s, 5, &span);
    CHECK(st == (!f.qa() ? EB_ERROR_UNSUPPORTED : pair && !packed ? EB_OK : EB_ERROR_BAD_STATE));  // single runs only
    if (st == EB_OK) {
      CHECK(span.start_token >= 6);  // inside the context
      CHECK(span.end_token <= static_cast<int32_t>(tokens) - 2);
    }
  }
}

}  // namespace

TEST_CASE("every run entry point followed by every getter returns the documented status", "[c_api][call_order]") {
  const std::pair<const char*, const char*> models[] = {{"task_bert_model_relu", "fp32"},
                                                        {"task_bert_qa", "int8"},
                                                        {"task_distil_qa", "fp32"},
                                                        {"task_bert_token", "int8"},
                                                        {"task_distil_token", "fp32"}};
  for (const auto& [model, kind] : models) {
    Fixture f(model, kind);
    for (Entry e : {Entry::kIds, Entry::kText, Entry::kTextPair, Entry::kEmbeddings, Entry::kAnswer, Entry::kTexts,
                    Entry::kTextPairs, Entry::kIdsBatch}) {
      for (bool fail : {false, true}) {
        for (bool after_pair : {false, true}) {
          INFO(model << " " << kind << ": " << (after_pair ? "run_text_pair, then " : "") << entry_name(e)
                     << (fail ? " (failing)" : ""));
          if (after_pair) {
            REQUIRE(eb_session_run_text_pair(f.s.s, "who was rude?", "the hotel was clean, but the staff was rude.") ==
                    EB_OK);
          }
          size_t tokens = 0;
          const eb_status st = run_entry(f, e, fail, &tokens);
          // answer on a model that is not a QA model is refused like any failed run
          const bool ok = !fail && (e != Entry::kAnswer || f.qa());
          if (ok) {
            REQUIRE(st == EB_OK);
          } else {
            CHECK(st != EB_OK);
            CHECK(std::string(eb_session_last_error(f.s.s)).size() > 0);
            if (e == Entry::kAnswer && !f.qa()) CHECK(st == EB_ERROR_UNSUPPORTED);
          }
          check_getters(f, e, ok, tokens);
        }
      }
    }
  }
}

TEST_CASE("getters before any run and with null sessions", "[c_api][call_order]") {
  Fixture f("task_bert_qa", "fp32");
  check_getters(f, Entry::kIds, false, 0);
  const int32_t* p = nullptr;
  const eb_word* w = nullptr;
  size_t n = 0;
  eb_span span;
  CHECK(eb_session_get_word_ids(nullptr, &p, &n) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_get_words(nullptr, &w, &n) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_answer(nullptr, "q", "c", 5, -1, &span, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_answer(f.s.s, nullptr, "c", 5, -1, &span, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_answer(f.s.s, "q", nullptr, 5, -1, &span, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_answer(f.s.s, "q", "c", 5, -1, nullptr, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  // an empty context has no span: bad input (not a call out of order), and nothing of that run is readable
  for (const char* context : {"", "  \t\n"}) {
    CHECK(eb_session_answer(f.s.s, "q", context, 5, -1, &span, nullptr) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(eb_session_last_error(f.s.s)).find("the context has no tokens") != std::string::npos);
    CHECK(eb_session_get_token_offsets(f.s.s, nullptr, nullptr, nullptr, &n) == EB_ERROR_BAD_STATE);
    // the pair runs; its span is refused the same way
    REQUIRE(eb_session_run_text_pair(f.s.s, "q", context) == EB_OK);
    CHECK(eb_session_best_span(f.s.s, 5, &span) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(eb_session_sequence_best_span(f.s.s, 0, 5, &span) == EB_ERROR_INVALID_ARGUMENT);
  }
}

TEST_CASE("packed ids whose lengths add up past any array refuse the call", "[c_api][call_order]") {
  Fixture f("task_bert_qa", "fp32");
  const int32_t ids[] = {1, 5, 2, 7, 3};
  size_t consumed = 7;
  // a wrapped `n - 1` in the middle: the sequences after it would start before input_ids
  for (size_t huge : {SIZE_MAX, SIZE_MAX / 4, SIZE_MAX / 4 - 1}) {
    const size_t lengths[] = {2, huge, 3};
    INFO("length " << huge);
    CHECK(eb_session_run_ids_batch(f.s.s, ids, nullptr, lengths, 3, &consumed) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(consumed == 0);
    CHECK(std::string(eb_session_last_error(f.s.s)).find("lengths[1]") != std::string::npos);
  }
  // a length past the session but within an array is that input's own status, as documented
  std::vector<int32_t> long_ids(100005, 5);
  const size_t lengths[] = {2, 100000, 3};
  REQUIRE(eb_session_run_ids_batch(f.s.s, long_ids.data(), nullptr, lengths, 3, &consumed) == EB_OK);
  CHECK(consumed >= 2);
  eb_sequence_info q;
  REQUIRE(eb_session_get_sequence(f.s.s, 1, &q) == EB_OK);
  CHECK(q.status == EB_ERROR_SEQUENCE_TOO_LONG);
}
