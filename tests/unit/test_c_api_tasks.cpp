// SPDX-License-Identifier: Apache-2.0
// test_c_api_tasks.cpp: the task parts of the C API on the task test models: model info (task,
// DistilBERT), label names, which outputs each task has (shapes; EB_ERROR_UNSUPPORTED for the
// others), text pairs (tokens, segments, token types through the reference), split_special_tokens,
// max_memory_bytes refusal, and bad input (unknown outputs, best_span misuse, null pointers,
// max_batch_tokens options) giving statuses and messages.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include "test_support.h"

using namespace edgebert::test;

namespace {

struct Loaded {
  ModelHandle m;
  SessionHandle s;
  eb_model_info info{};
  Loaded(const std::string& model, const char* kind = "fp32", const eb_session_options* o = nullptr) {
    char err[512];
    REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
    REQUIRE(eb_session_create(m.m, o, &s.s, err, sizeof err) == EB_OK);
  }
};

std::string label(const eb_model* m, int i) {
  const char* name = nullptr;
  REQUIRE(eb_model_get_label(m, i, &name) == EB_OK);
  REQUIRE(name != nullptr);
  return name;
}

}  // namespace

TEST_CASE("model info, labels and the outputs of each task", "[c_api][heads]") {
  struct Expect {
    const char* model;
    eb_task task;
    int distil;
    std::vector<std::string> labels;
    std::vector<eb_output> outputs;
  };
  const std::vector<Expect> expect = {
      {"task_bert_model_relu", EB_TASK_ENCODER, 0, {}, {EB_OUTPUT_LAST_HIDDEN_STATE, EB_OUTPUT_POOLER_OUTPUT}},
      {"task_bert_seqcls_tanh", EB_TASK_SEQUENCE_CLASSIFICATION, 0, {"negative", "neutral", "positive"},
       {EB_OUTPUT_LAST_HIDDEN_STATE, EB_OUTPUT_POOLER_OUTPUT, EB_OUTPUT_LOGITS}},
      {"task_bert_qa", EB_TASK_QUESTION_ANSWERING, 0, {"LABEL_0", "LABEL_1"},
       {EB_OUTPUT_LAST_HIDDEN_STATE, EB_OUTPUT_START_LOGITS, EB_OUTPUT_END_LOGITS}},
      {"task_bert_token", EB_TASK_TOKEN_CLASSIFICATION, 0, {"O", "B-PER", "I-PER", "B-LOC", "I-LOC"},
       {EB_OUTPUT_LAST_HIDDEN_STATE, EB_OUTPUT_TOKEN_LOGITS}},
      {"task_st_cls", EB_TASK_SENTENCE_EMBEDDING, 0, {},
       {EB_OUTPUT_LAST_HIDDEN_STATE, EB_OUTPUT_POOLER_OUTPUT, EB_OUTPUT_SENTENCE_EMBEDDING}},
      {"task_distil_seqcls_relu", EB_TASK_SEQUENCE_CLASSIFICATION, 1, {"NEGATIVE", "POSITIVE"},
       {EB_OUTPUT_LAST_HIDDEN_STATE, EB_OUTPUT_LOGITS}},
      {"task_distil_token", EB_TASK_TOKEN_CLASSIFICATION, 1, {"O", "B-MISC", "I-MISC"},
       {EB_OUTPUT_LAST_HIDDEN_STATE, EB_OUTPUT_TOKEN_LOGITS}},
  };
  for (const Expect& e : expect) {
    INFO(e.model);
    Loaded l(e.model);
    CHECK(l.info.task == e.task);
    CHECK(l.info.is_distilbert == e.distil);
    CHECK(l.info.num_labels == static_cast<int>(e.labels.size()));
    for (size_t i = 0; i < e.labels.size(); ++i) CHECK(label(l.m.m, static_cast<int>(i)) == e.labels[i]);
    const char* name = "unchanged";
    CHECK(eb_model_get_label(l.m.m, static_cast<int>(e.labels.size()), &name) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(name == nullptr);
    CHECK(eb_model_get_label(l.m.m, -1, &name) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(eb_model_get_label(nullptr, 0, &name) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(eb_model_get_label(l.m.m, 0, nullptr) == EB_ERROR_INVALID_ARGUMENT);

    REQUIRE(eb_session_run_text(l.s.s, "the movie was good") == EB_OK);
    const size_t n = 6;  // [CLS] the movie was good [SEP]
    for (int out = 0; out < EB_OUTPUT_COUNT; ++out) {
      INFO("output " << out);
      const bool has = std::find(e.outputs.begin(), e.outputs.end(), out) != e.outputs.end();
      const float* p = nullptr;
      int64_t shape[2] = {-1, -1};
      int32_t rank = 0;
      const eb_status st = eb_session_get_output(l.s.s, static_cast<eb_output>(out), &p, shape, &rank);
      CHECK(st == (has ? EB_OK : EB_ERROR_UNSUPPORTED));
      if (!has) {
        CHECK(std::strlen(eb_session_last_error(l.s.s)) > 0);
        continue;
      }
      REQUIRE(p != nullptr);
      const int64_t H = l.info.hidden_size, L = l.info.num_labels;
      switch (out) {
        case EB_OUTPUT_LAST_HIDDEN_STATE: CHECK((rank == 2 && shape[0] == int64_t(n) && shape[1] == H)); break;
        case EB_OUTPUT_POOLER_OUTPUT:
        case EB_OUTPUT_SENTENCE_EMBEDDING: CHECK((rank == 1 && shape[0] == H)); break;
        case EB_OUTPUT_LOGITS: CHECK((rank == 1 && shape[0] == L)); break;
        case EB_OUTPUT_START_LOGITS:
        case EB_OUTPUT_END_LOGITS: CHECK((rank == 1 && shape[0] == int64_t(n))); break;
        case EB_OUTPUT_TOKEN_LOGITS: CHECK((rank == 2 && shape[0] == int64_t(n) && shape[1] == L)); break;
      }
    }
  }
}

TEST_CASE("text pairs: [CLS] a [SEP] b [SEP], segments, offsets, too long", "[c_api][heads]") {
  eb_session_options o;
  eb_session_options_init(&o);
  o.max_sequence_length = 12;
  Loaded l("task_bert_qa", "fp32", &o);
  const std::string a = "who was rude?", b = "the staff was rude.";
  REQUIRE(eb_session_run_text_pair(l.s.s, a.c_str(), b.c_str()) == EB_OK);
  const int32_t* ids = nullptr;
  size_t n = 0;
  REQUIRE(eb_session_get_input_ids(l.s.s, &ids, &n) == EB_OK);
  // who was rude ? | the staff was rude .
  REQUIRE(n == 4 + 5 + 3);
  CHECK(ids[0] == 101);
  CHECK(ids[5] == 102);
  CHECK(ids[11] == 102);
  const int32_t *begin = nullptr, *end = nullptr, *seg = nullptr;
  size_t len = 0;
  REQUIRE(eb_session_get_token_offsets(l.s.s, &begin, &end, &seg, &len) == EB_OK);
  REQUIRE(len == n);
  const int32_t want_seg[] = {-1, 0, 0, 0, 0, -1, 1, 1, 1, 1, 1, -1};
  for (size_t i = 0; i < n; ++i) {
    INFO("token " << i);
    CHECK(seg[i] == want_seg[i]);
    if (seg[i] < 0) {
      CHECK((begin[i] == 0 && end[i] == 0));
      continue;
    }
    const std::string& text = seg[i] == 0 ? a : b;
    REQUIRE(begin[i] < end[i]);
    REQUIRE(static_cast<size_t>(end[i]) <= text.size());
  }
  CHECK(b.substr(begin[7], end[7] - begin[7]) == "staff");
  CHECK(a.substr(begin[4], end[4] - begin[4]) == "?");
  // one token more than the session maximum: refused with a message, never truncated
  CHECK(eb_session_run_text_pair(l.s.s, a.c_str(), "the staff was rude !.") == EB_ERROR_SEQUENCE_TOO_LONG);
  CHECK(std::string(eb_session_last_error(l.s.s)).find("12") != std::string::npos);
  CHECK(eb_session_get_token_offsets(l.s.s, &begin, &end, &seg, &len) == EB_ERROR_BAD_STATE);
  CHECK(eb_session_run_text_pair(l.s.s, "a a a a a a a a a a a", "b") == EB_ERROR_SEQUENCE_TOO_LONG);
}

TEST_CASE("split_special_tokens: [SEP] in the text is one token by default, word pieces when set", "[c_api]") {
  for (int split : {0, 1}) {
    eb_session_options o;
    eb_session_options_init(&o);
    o.split_special_tokens = split;
    Loaded l("task_bert_seqcls_tanh", "fp32", &o);
    REQUIRE(eb_session_run_text(l.s.s, "good [SEP] bad") == EB_OK);
    const int32_t* ids = nullptr;
    size_t n = 0;
    REQUIRE(eb_session_get_input_ids(l.s.s, &ids, &n) == EB_OK);
    int seps = 0;
    for (size_t i = 0; i < n; ++i) seps += ids[i] == 102;
    CHECK(seps == (split ? 1 : 2));
    // [CLS] good [SEP] bad [SEP], or "[", "sep" (in word pieces), "]" in place of the middle [SEP]
    if (split) CHECK(n >= 8u);
    else CHECK(n == 5u);
    // the literal [SEP] keeps its bytes in the text and belongs to the text's segment
    const int32_t *begin = nullptr, *end = nullptr, *seg = nullptr;
    REQUIRE(eb_session_get_token_offsets(l.s.s, &begin, &end, &seg, nullptr) == EB_OK);
    if (!split) CHECK((begin[2] == 5 && end[2] == 10 && seg[2] == 0));
    CHECK((seg[0] == -1 && seg[n - 1] == -1 && begin[n - 1] == 0 && end[n - 1] == 0));
  }
  eb_session_options o;
  eb_session_options_init(&o);
  o.split_special_tokens = 2;
  ModelHandle m;
  char err[256];
  REQUIRE(eb_model_load_file(ebm_path("task_bert_qa", "fp32").c_str(), &m.m, err, sizeof err) == EB_OK);
  eb_session* s = nullptr;
  CHECK(eb_session_create(m.m, &o, &s, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(s == nullptr);
  o.split_special_tokens = 0;
  o.max_batch_tokens = 7;  // fewer than max_sequence_length
  CHECK(eb_session_create(m.m, &o, &s, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(err).find("max_batch_tokens") != std::string::npos);
}

TEST_CASE("max_memory_bytes: refused before allocating, with the numbers; enough is accepted", "[c_api]") {
  // `first`: a model whose first session packs its weights; `m`: one with a session already (on
  // the 2024 XNNPACK the model's packed weights are shared and packed by then)
  ModelHandle m, first;
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path("base2_h12", "int8").c_str(), &m.m, err, sizeof err) == EB_OK);
  REQUIRE(eb_model_load_file(ebm_path("base2_h12", "int8").c_str(), &first.m, err, sizeof err) == EB_OK);
  eb_session_options o;
  eb_session_options_init(&o);
  o.max_sequence_length = 128;
  SessionHandle unlimited;
  REQUIRE(eb_session_create(m.m, &o, &unlimited.s, err, sizeof err) == EB_OK);
  size_t arena = 0, packed = 0;
  REQUIRE(eb_session_memory(unlimited.s, &arena, nullptr, &packed) == EB_OK);
  size_t shared = 0;  // the model's shared packed weights (0 on the 2022 XNNPACK: sessions pack their own)
  REQUIRE(eb_model_get_memory(m.m, &shared, nullptr) == EB_OK);
  // the arena alone exceeds this limit
  o.max_memory_bytes = arena / 2;
  eb_session* s = nullptr;
  CHECK(eb_session_create(first.m, &o, &s, err, sizeof err) == EB_ERROR_OUT_OF_MEMORY);
  CHECK(s == nullptr);
  const std::string msg = err;
  CHECK(msg.find("max_memory_bytes " + std::to_string(arena / 2)) != std::string::npos);
  CHECK(msg.find("arena " + std::to_string(arena)) != std::string::npos);
  // the packed-weight estimate in the message is close to what XNNPACK really packs
  const size_t at = msg.find("packed weights ");
  REQUIRE(at != std::string::npos);
  const double estimate = std::stod(msg.substr(at + 15));
  if (shared == 0) {  // 2022 XNNPACK: every session packs its own copy, which the limit counts
    CHECK(estimate >= 0.9 * static_cast<double>(packed));
    CHECK(estimate <= 1.25 * static_cast<double>(packed));
    WARN("packed weights: estimate " << estimate << " bytes, XNNPACK " << packed << " bytes");
    // arena + packed weights (the estimate is within a few % of what XNNPACK packs)
    o.max_memory_bytes = arena + packed / 2;
    CHECK(eb_session_create(first.m, &o, &s, err, sizeof err) == EB_ERROR_OUT_OF_MEMORY);
  } else {  // the weights were packed with the model, at load: no session packs (or is charged) any
    CHECK(estimate == 0);
    o.max_memory_bytes = arena + shared / 2;
    CHECK(eb_session_create(m.m, &o, &s, err, sizeof err) == EB_OK);
    eb_session_destroy(s);
    s = nullptr;
  }
  o.max_memory_bytes = (arena + packed) * 2;
  SessionHandle ok;
  CHECK(eb_session_create(first.m, &o, &ok.s, err, sizeof err) == EB_OK);
}

TEST_CASE("bad input on the task calls gives statuses and messages", "[c_api][bad_input]") {
  Loaded qa("task_bert_qa");
  Loaded enc("task_bert_model_relu");
  eb_span span;
  // before any run
  CHECK(eb_session_best_span(qa.s.s, 5, &span) == EB_ERROR_BAD_STATE);
  CHECK(eb_session_get_token_offsets(qa.s.s, nullptr, nullptr, nullptr, nullptr) == EB_ERROR_BAD_STATE);
  REQUIRE(eb_session_run_text_pair(qa.s.s, "who?", "the staff.") == EB_OK);
  CHECK(eb_session_best_span(qa.s.s, 5, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_best_span(nullptr, 5, &span) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_best_span(qa.s.s, 0, &span) == EB_OK);  // <= 0: the default 30
  CHECK(eb_session_best_span(qa.s.s, -3, &span) == EB_OK);
  CHECK(eb_session_get_token_offsets(nullptr, nullptr, nullptr, nullptr, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  // a QA span needs a pair: after run_text or run_ids it is a state error
  REQUIRE(eb_session_run_text(qa.s.s, "the staff.") == EB_OK);
  CHECK(eb_session_best_span(qa.s.s, 5, &span) == EB_ERROR_BAD_STATE);
  CHECK(std::string(eb_session_last_error(qa.s.s)).find("run_text_pair") != std::string::npos);
  const int32_t ids[] = {101, 160, 102};
  REQUIRE(eb_session_run_ids(qa.s.s, ids, nullptr, nullptr, 3) == EB_OK);
  CHECK(eb_session_best_span(qa.s.s, 5, &span) == EB_ERROR_BAD_STATE);
  CHECK(eb_session_get_token_offsets(qa.s.s, nullptr, nullptr, nullptr, nullptr) == EB_ERROR_BAD_STATE);
  // a failed run leaves no span either
  CHECK(eb_session_run_text_pair(qa.s.s, "who?", nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_best_span(qa.s.s, 5, &span) == EB_ERROR_BAD_STATE);
  // an empty context has no span: bad input, not a call out of order
  REQUIRE(eb_session_run_text_pair(qa.s.s, "who?", "") == EB_OK);
  CHECK(eb_session_best_span(qa.s.s, 5, &span) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(eb_session_last_error(qa.s.s)).find("no tokens") != std::string::npos);
  // a model without a QA head
  REQUIRE(eb_session_run_text_pair(enc.s.s, "who?", "the staff.") == EB_OK);
  CHECK(eb_session_best_span(enc.s.s, 5, &span) == EB_ERROR_UNSUPPORTED);
  CHECK(std::string(eb_session_last_error(enc.s.s)).find("question-answering") != std::string::npos);
  // unknown outputs
  const float* p = nullptr;
  CHECK(eb_session_get_output(enc.s.s, static_cast<eb_output>(EB_OUTPUT_COUNT), &p, nullptr, nullptr) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_get_output(enc.s.s, static_cast<eb_output>(-1), &p, nullptr, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_text_pair(nullptr, "a", "b") == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_text_pair(enc.s.s, nullptr, nullptr) == EB_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("DistilBERT ignores token types; BERT text pairs use them", "[c_api][heads]") {
  const int32_t ids[] = {101, 216, 181, 102, 160, 421, 102};
  const int32_t zeros[] = {0, 0, 0, 0, 0, 0, 0};
  const int32_t ones[] = {0, 0, 0, 0, 1, 1, 1};
  for (const char* model : {"task_distil_model", "task_bert_model_relu"}) {
    INFO(model);
    Loaded l(model);
    std::vector<float> a, b;
    for (const int32_t* types : {zeros, ones}) {
      REQUIRE(eb_session_run_ids(l.s.s, ids, types, nullptr, 7) == EB_OK);
      const float* p = nullptr;
      REQUIRE(eb_session_get_output(l.s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) == EB_OK);
      (a.empty() ? a : b).assign(p, p + 7 * l.info.hidden_size);
    }
    CHECK((a == b) == (l.info.is_distilbert == 1));
    // and a text pair gives the same hidden states as the same ids with types 0 0 0 0 1 1 1
    if (!l.info.is_distilbert) {
      REQUIRE(eb_session_run_text_pair(l.s.s, "the movie", "was") == EB_OK);
      const int32_t* got = nullptr;
      size_t n = 0;
      REQUIRE(eb_session_get_input_ids(l.s.s, &got, &n) == EB_OK);
      REQUIRE(n == 6);  // [CLS] the movie [SEP] was [SEP]
      const int32_t pair_ids[] = {got[0], got[1], got[2], got[3], got[4], got[5]};
      const int32_t pair_types[] = {0, 0, 0, 0, 1, 1};
      const float* p = nullptr;
      REQUIRE(eb_session_get_output(l.s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) == EB_OK);
      const std::vector<float> from_pair(p, p + 6 * l.info.hidden_size);
      REQUIRE(eb_session_run_ids(l.s.s, pair_ids, pair_types, nullptr, 6) == EB_OK);
      REQUIRE(eb_session_get_output(l.s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, nullptr, nullptr) == EB_OK);
      CHECK(from_pair == std::vector<float>(p, p + 6 * l.info.hidden_size));
    }
  }
}
