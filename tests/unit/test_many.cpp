// SPDX-License-Identifier: Apache-2.0
// test_many.cpp: the many-texts entry points (eb_session_embed_many, eb_session_classify_many,
// eb_session_get_token_labels). Every row equals a single run of its input (int8: bit-identical;
// fp32: to float rounding) over texts and text pairs that need several packed runs, with a
// too-long input and a NULL text among them (per-input statuses, zero rows, label -1; without
// statuses the first failure's status and a message naming its index); labels are the argmax of
// the single run's logits; token labels the argmax of every token's logits; NULL and too-small
// buffers, unknown outputs and models without the output are refused with a message; and no call
// allocates after a warm-up.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "test_support.h"

using namespace edgebert::test;

namespace {

constexpr int kMaxLen = 32;
constexpr int kBatchTokens = 64;

struct Loaded {
  ModelHandle m;
  SessionHandle packed, alone;
  eb_model_info info{};
  Loaded(const char* model, const char* kind, int threads = 1) {
    char err[512];
    REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
    eb_session_options o;
    eb_session_options_init(&o);
    o.num_threads = threads;
    o.max_sequence_length = kMaxLen;
    o.max_batch_tokens = kBatchTokens;
    REQUIRE(eb_session_create(m.m, &o, &packed.s, err, sizeof err) == EB_OK);
    o.max_batch_tokens = 0;
    REQUIRE(eb_session_create(m.m, &o, &alone.s, err, sizeof err) == EB_OK);
  }
};

// 2 ("") to 32 tokens, one of 42 (too long: index 5), in mixed order, and a NULL last (index 13).
struct Inputs {
  std::vector<std::string> storage;
  std::vector<const char*> texts, pairs;
  Inputs() {
    storage = {"the movie was good , not bad !", "", "who", "the staff was rude and slow ."};
    std::string max_text, too_long;
    for (int i = 0; i < 30; ++i) max_text += "the ";
    for (int i = 0; i < 40; ++i) too_long += "good ";
    storage.push_back(max_text);
    storage.push_back(too_long);
    storage.push_back("a b");
    for (int i = 0; i < 6; ++i) storage.push_back("the hotel was clean , but the staff was rude " + std::to_string(i));
    const char* pair_words[] = {"yes", "no , it was not", "maybe so", ""};
    for (size_t i = 0; i < storage.size(); ++i) {
      texts.push_back(storage[i].c_str());
      pairs.push_back(pair_words[i % 4]);
    }
    texts.push_back(nullptr);
    pairs.push_back("no");
  }
  size_t size() const { return texts.size(); }
};

// Status and pooled row of a single run of input i.
eb_status single_row(eb_session* s, const Inputs& in, size_t i, bool paired, eb_output which, std::vector<float>* row) {
  row->clear();
  const eb_status st = paired ? eb_session_run_text_pair(s, in.texts[i], in.pairs[i]) : eb_session_run_text(s, in.texts[i]);
  if (st != EB_OK) return st;
  const float* p = nullptr;
  int64_t shape[2] = {0, 0};
  int32_t rank = 0;
  REQUIRE(eb_session_get_output(s, which, &p, shape, &rank) == EB_OK);
  REQUIRE(rank == 1);
  row->assign(p, p + shape[0]);
  return EB_OK;
}

void check_row(const float* got, const std::vector<float>& want, bool int8) {
  if (int8) {
    CHECK(std::memcmp(got, want.data(), want.size() * sizeof(float)) == 0);
    return;
  }
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i]))));
  CHECK(worst <= 1e-5);
}

bool all_zero(const float* p, size_t n) {
  return std::all_of(p, p + n, [](float v) { return v == 0.0f; });
}

int32_t argmax(const float* v, size_t n) { return static_cast<int32_t>(std::max_element(v, v + n) - v); }

std::string message(const eb_session* s) { return eb_session_last_error(s); }

}  // namespace

TEST_CASE("embed_many and classify_many equal single runs, with per-input statuses", "[many]") {
  const Inputs in;
  const size_t n = in.size();
  struct M {
    const char* name;
    eb_output which;
  };
  for (const M& model : {M{"task_st_mean_norm", EB_OUTPUT_SENTENCE_EMBEDDING}, M{"task_bert_model_relu", EB_OUTPUT_POOLER_OUTPUT},
                         M{"task_bert_seqcls_tanh", EB_OUTPUT_POOLER_OUTPUT}, M{"task_bert_seqcls_tanh", EB_OUTPUT_LOGITS},
                         M{"task_distil_seqcls_relu", EB_OUTPUT_LOGITS}}) {
    for (const char* kind : {"int8", "fp32"}) {
      for (int threads : {1, 2}) {
        Loaded l(model.name, kind, threads);
        const bool classify = model.which == EB_OUTPUT_LOGITS;
        const size_t width = static_cast<size_t>(classify ? l.info.num_labels : l.info.hidden_size);
        for (bool paired : {false, true}) {
          INFO(model.name << " " << kind << " threads " << threads << (paired ? " pairs" : " texts") << " output "
                          << model.which);
          const char* const* pairs = paired ? in.pairs.data() : nullptr;
          std::vector<float> rows(n * width, -7.0f);
          std::vector<int32_t> statuses(n, -1), labels(n, -7);
          const eb_status st =
              classify ? eb_session_classify_many(l.packed.s, in.texts.data(), pairs, n, rows.data(), rows.size(),
                                                  labels.data(), statuses.data())
                       : eb_session_embed_many(l.packed.s, in.texts.data(), pairs, n, model.which, rows.data(),
                                               rows.size(), statuses.data());
          REQUIRE(st == EB_OK);
          CHECK(message(l.packed.s).empty());
          // the session's outputs are the last packed run's
          size_t sequences = 0;
          REQUIRE(eb_session_get_sequence_count(l.packed.s, &sequences) == EB_OK);
          CHECK((sequences >= 1 && sequences < n));
          size_t tokens = 0, failed = 0;
          for (size_t i = 0; i < n; ++i) {
            INFO("input " << i);
            std::vector<float> want;
            const eb_status alone = single_row(l.alone.s, in, i, paired, model.which, &want);
            CHECK(statuses[i] == alone);
            const float* got = rows.data() + i * width;
            if (alone != EB_OK) {
              ++failed;
              CHECK(all_zero(got, width));
              if (classify) CHECK(labels[i] == -1);
              continue;
            }
            const int32_t* ids = nullptr;
            size_t len = 0;
            REQUIRE(eb_session_get_input_ids(l.alone.s, &ids, &len) == EB_OK);
            tokens += len;
            check_row(got, want, kind[0] == 'i');
            if (classify) CHECK(labels[i] == argmax(want.data(), width));
          }
          CHECK(statuses[13] == EB_ERROR_INVALID_ARGUMENT);  // the NULL text
          CHECK(statuses[5] == EB_ERROR_SEQUENCE_TOO_LONG);
          CHECK(failed == (paired ? 3u : 2u));  // paired, the 32-token text is too long as well
          CHECK(tokens > 2 * kBatchTokens);     // several packed runs, not one

          // no statuses: the first failure is the call's status, its message names the input
          const eb_status first =
              classify ? eb_session_classify_many(l.packed.s, in.texts.data(), pairs, n, rows.data(), rows.size(),
                                                  nullptr, nullptr)
                       : eb_session_embed_many(l.packed.s, in.texts.data(), pairs, n, model.which, rows.data(),
                                               rows.size(), nullptr);
          CHECK(first == EB_ERROR_SEQUENCE_TOO_LONG);
          const size_t index = paired ? 4 : 5;
          const std::string name = "texts[" + std::to_string(index) + "]" +
                                   (paired ? ", pairs[" + std::to_string(index) + "]" : std::string()) + ": ";
          CHECK(message(l.packed.s).rfind(name, 0) == 0);
          CHECK(message(l.packed.s).find("the session maximum is 32") != std::string::npos);
          const float* p = nullptr;
          CHECK(eb_session_get_output(l.packed.s, model.which, &p, nullptr, nullptr) == EB_ERROR_BAD_STATE);
        }
      }
    }
  }
}

TEST_CASE("many: a NULL text alone, labels without logits, logits without labels, count 0", "[many]") {
  Loaded l("task_bert_seqcls_tanh", "int8");
  const size_t labels_n = static_cast<size_t>(l.info.num_labels);
  const char* texts[] = {"the movie was good", nullptr, "bad"};
  CHECK(eb_session_classify_many(l.packed.s, texts, nullptr, 3, nullptr, 0, std::vector<int32_t>(3).data(), nullptr) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(message(l.packed.s) == "texts[1]: text is NULL");
  const char* pairs[] = {"a", "b", nullptr};
  std::vector<int32_t> labels(3, -7), statuses(3, -7);
  REQUIRE(eb_session_classify_many(l.packed.s, texts, pairs, 3, nullptr, 0, labels.data(), statuses.data()) == EB_OK);
  CHECK(statuses == std::vector<int32_t>{EB_OK, EB_ERROR_INVALID_ARGUMENT, EB_ERROR_INVALID_ARGUMENT});
  CHECK(labels[1] == -1);
  CHECK(labels[2] == -1);
  std::vector<float> logits(labels_n, 0.0f);
  REQUIRE(eb_session_classify_many(l.packed.s, texts, pairs, 1, logits.data(), logits.size(), nullptr, nullptr) == EB_OK);
  CHECK(argmax(logits.data(), labels_n) == labels[0]);
  CHECK(eb_session_classify_many(l.packed.s, texts, pairs, 3, nullptr, 0, labels.data(), nullptr) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(message(l.packed.s).rfind("texts[1], pairs[1]: ", 0) == 0);
  // text that is not UTF-8 refuses the call, named by its index in the call (not in one packed run)
  std::vector<const char*> many(20, "the movie was good");
  many[17] = "bad \xff";
  CHECK(eb_session_classify_many(l.packed.s, many.data(), nullptr, many.size(), nullptr, 0,
                                 std::vector<int32_t>(many.size()).data(),
                                 std::vector<int32_t>(many.size()).data()) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(message(l.packed.s).rfind("texts[17] is not valid UTF-8", 0) == 0);
  CHECK(eb_session_get_output(l.packed.s, EB_OUTPUT_LOGITS, nullptr, nullptr, nullptr) == EB_ERROR_BAD_STATE);
  std::vector<const char*> pairs_of_many(20, "yes");
  pairs_of_many[19] = "\xc3";
  many[17] = "fine";
  CHECK(eb_session_classify_many(l.packed.s, many.data(), pairs_of_many.data(), many.size(), nullptr, 0,
                                 std::vector<int32_t>(many.size()).data(), nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(message(l.packed.s).rfind("pairs[19] is not valid UTF-8", 0) == 0);
  // count 0: nothing runs, nothing is read
  CHECK(eb_session_classify_many(l.packed.s, nullptr, nullptr, 0, nullptr, 0, nullptr, nullptr) == EB_OK);
  CHECK(eb_session_embed_many(l.packed.s, nullptr, nullptr, 0, EB_OUTPUT_POOLER_OUTPUT, nullptr, 0, nullptr) == EB_OK);
}

TEST_CASE("many: bad arguments and models without the output are refused with a message", "[many]") {
  Loaded l("task_bert_seqcls_tanh", "int8");
  const char* texts[] = {"the movie was good", "bad"};
  const size_t hidden = static_cast<size_t>(l.info.hidden_size), labels_n = static_cast<size_t>(l.info.num_labels);
  std::vector<float> out(2 * hidden);
  std::vector<int32_t> labels(2), statuses(2);
  eb_session* s = l.packed.s;
  REQUIRE(eb_session_run_text(s, "a run whose outputs the refusals forget") == EB_OK);
  // each refusal's status and message (read right after the call)
  const auto refused = [s](eb_status want, const char* contains, eb_status got) {
    INFO(contains);
    CHECK(got == want);
    CHECK(message(s).find(contains) != std::string::npos);
  };
  refused(EB_ERROR_INVALID_ARGUMENT, "embed_many: texts is NULL",
          eb_session_embed_many(s, nullptr, nullptr, 2, EB_OUTPUT_POOLER_OUTPUT, out.data(), out.size(), nullptr));
  refused(EB_ERROR_INVALID_ARGUMENT, "embed_many: out is NULL",
          eb_session_embed_many(s, texts, nullptr, 2, EB_OUTPUT_POOLER_OUTPUT, nullptr, out.size(), nullptr));
  refused(EB_ERROR_INVALID_ARGUMENT, ("out holds " + std::to_string(out.size() - 1) + " floats").c_str(),
          eb_session_embed_many(s, texts, nullptr, 2, EB_OUTPUT_POOLER_OUTPUT, out.data(), out.size() - 1, nullptr));
  refused(EB_ERROR_INVALID_ARGUMENT, "is not EB_OUTPUT_SENTENCE_EMBEDDING or EB_OUTPUT_POOLER_OUTPUT",
          eb_session_embed_many(s, texts, nullptr, 2, EB_OUTPUT_LOGITS, out.data(), out.size(), nullptr));
  refused(EB_ERROR_INVALID_ARGUMENT, "output 99 is not",
          eb_session_embed_many(s, texts, nullptr, 2, static_cast<eb_output>(99), out.data(), out.size(), nullptr));
  refused(EB_ERROR_UNSUPPORTED, "not a sentence-embedding model",
          eb_session_embed_many(s, texts, nullptr, 2, EB_OUTPUT_SENTENCE_EMBEDDING, out.data(), out.size(), nullptr));
  refused(EB_ERROR_UNSUPPORTED, "not a sentence-embedding model",
          eb_session_embed_many(s, texts, nullptr, 0, EB_OUTPUT_SENTENCE_EMBEDDING, nullptr, 0, nullptr));
  refused(EB_ERROR_INVALID_ARGUMENT, "out_logits and out_labels are both NULL",
          eb_session_classify_many(s, texts, nullptr, 2, nullptr, 0, nullptr, statuses.data()));
  refused(EB_ERROR_INVALID_ARGUMENT, "out_logits holds",
          eb_session_classify_many(s, texts, nullptr, 2, out.data(), 2 * labels_n - 1, labels.data(), nullptr));
  refused(EB_ERROR_INVALID_ARGUMENT, "classify_many: texts is NULL",
          eb_session_classify_many(s, nullptr, nullptr, 2, out.data(), out.size(), nullptr, nullptr));
  refused(EB_ERROR_UNSUPPORTED, "not a token classifier", eb_session_get_token_labels(s, labels.data(), 1, nullptr));
  // the refusals above forget the previous run, as a failed run does
  CHECK(eb_session_get_output(s, EB_OUTPUT_LOGITS, nullptr, nullptr, nullptr) == EB_ERROR_BAD_STATE);
  CHECK(eb_session_embed_many(nullptr, texts, nullptr, 2, EB_OUTPUT_POOLER_OUTPUT, out.data(), out.size(), nullptr) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_classify_many(nullptr, texts, nullptr, 2, out.data(), out.size(), nullptr, nullptr) ==
        EB_ERROR_INVALID_ARGUMENT);
  size_t len = 7;
  CHECK(eb_session_get_token_labels(nullptr, nullptr, 0, &len) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(len == 0);

  Loaded st("task_st_mean_norm", "int8");
  CHECK(eb_session_classify_many(st.packed.s, texts, nullptr, 2, out.data(), out.size(), nullptr, nullptr) ==
        EB_ERROR_UNSUPPORTED);
  CHECK(message(st.packed.s).find("not a sequence classifier") != std::string::npos);
  Loaded distil("task_distil_seqcls_relu", "int8");
  CHECK(eb_session_embed_many(distil.packed.s, texts, nullptr, 2, EB_OUTPUT_POOLER_OUTPUT, out.data(), out.size(),
                              nullptr) == EB_ERROR_UNSUPPORTED);
  CHECK(message(distil.packed.s).find("no pooler") != std::string::npos);
  CHECK(eb_session_get_token_labels(distil.packed.s, nullptr, 0, &len) == EB_ERROR_UNSUPPORTED);
}

TEST_CASE("token labels are each token's argmax, after single and packed runs", "[many]") {
  for (const char* kind : {"int8", "fp32"}) {
    INFO(kind);
    Loaded l("task_bert_token", kind);
    const size_t labels_n = static_cast<size_t>(l.info.num_labels);
    eb_session* s = l.packed.s;
    size_t len = 7;
    CHECK(eb_session_get_token_labels(s, nullptr, 0, &len) == EB_ERROR_BAD_STATE);
    const char* texts[] = {"the staff was rude and slow .", "who", "the hotel was clean"};
    for (bool packed : {false, true}) {
      size_t consumed = 0;
      REQUIRE((packed ? eb_session_run_texts(s, texts, 3, &consumed) : eb_session_run_text(s, texts[0])) == EB_OK);
      const float* logits = nullptr;
      int64_t shape[2] = {0, 0};
      REQUIRE(eb_session_get_output(s, EB_OUTPUT_TOKEN_LOGITS, &logits, shape, nullptr) == EB_OK);
      REQUIRE(eb_session_get_token_labels(s, nullptr, 0, &len) == EB_OK);
      REQUIRE(len == static_cast<size_t>(shape[0]));
      CHECK(len > 3);
      std::vector<int32_t> labels(len, -7);
      REQUIRE(eb_session_get_token_labels(s, labels.data(), labels.size(), nullptr) == EB_OK);
      for (size_t t = 0; t < len; ++t) CHECK(labels[t] == argmax(logits + t * labels_n, labels_n));
      CHECK(eb_session_get_token_labels(s, labels.data(), len - 1, nullptr) == EB_ERROR_INVALID_ARGUMENT);
      CHECK(message(s).find("out_labels holds " + std::to_string(len - 1) + " labels") != std::string::npos);
      // a word's label is its first token's
      const eb_word* words = nullptr;
      size_t count = 0;
      REQUIRE(eb_session_get_words(s, &words, &count) == EB_OK);
      for (size_t w = 0; w < count; ++w) CHECK(words[w].label == labels[static_cast<size_t>(words[w].first_token)]);
    }
  }
}

TEST_CASE("many calls perform zero heap allocations after a warm-up", "[many][alloc]") {
  edgebert::tools::alloc_counter_start();  // the counter sees this executable's allocations
  std::vector<int>* v = new std::vector<int>(100);
  CHECK(edgebert::tools::alloc_counter_stop() >= 2);
  delete v;
  const Inputs in;
  const size_t n = in.size();
  for (const char* kind : {"int8", "fp32"}) {
    for (int threads : {1, 2}) {
      INFO(kind << " threads " << threads);
      Loaded cls("task_bert_seqcls_tanh", kind, threads);
      Loaded emb("task_st_mean_norm", kind, threads);
      Loaded tok("task_bert_token", kind, threads);
      const size_t hidden = static_cast<size_t>(emb.info.hidden_size);
      std::vector<float> rows(n * hidden), logits(n * static_cast<size_t>(cls.info.num_labels));
      std::vector<int32_t> labels(n), statuses(n), token_labels(kBatchTokens);
      const char* short_texts[] = {"the movie was good", "bad", "who was rude"};
      int failures = 0;
      for (int rep = 0; rep < 4; ++rep) {
        if (rep == 1) edgebert::tools::alloc_counter_start();  // rep 0 is the warm-up
        for (bool paired : {false, true}) {
          const char* const* pairs = paired ? in.pairs.data() : nullptr;
          failures += eb_session_embed_many(emb.packed.s, in.texts.data(), pairs, n, EB_OUTPUT_SENTENCE_EMBEDDING,
                                            rows.data(), rows.size(), statuses.data()) != EB_OK;
          failures += eb_session_classify_many(cls.packed.s, in.texts.data(), pairs, n, logits.data(), logits.size(),
                                               labels.data(), statuses.data()) != EB_OK;
          // the failure paths: the first failing input run alone for its message
          failures += eb_session_embed_many(emb.packed.s, in.texts.data(), pairs, n, EB_OUTPUT_SENTENCE_EMBEDDING,
                                            rows.data(), rows.size(), nullptr) != EB_ERROR_SEQUENCE_TOO_LONG;
          failures += eb_session_classify_many(cls.packed.s, in.texts.data(), pairs, n, nullptr, 0, labels.data(),
                                               nullptr) != EB_ERROR_SEQUENCE_TOO_LONG;
          failures += eb_session_embed_many(emb.packed.s, in.texts.data(), pairs, n, EB_OUTPUT_SENTENCE_EMBEDDING,
                                            rows.data(), 1, nullptr) != EB_ERROR_INVALID_ARGUMENT;
        }
        size_t consumed = 0, len = 0;
        failures += eb_session_run_texts(tok.packed.s, short_texts, 3, &consumed) != EB_OK;
        failures += eb_session_get_token_labels(tok.packed.s, token_labels.data(), token_labels.size(), &len) != EB_OK;
        failures += eb_session_run_text(tok.packed.s, short_texts[0]) != EB_OK;
        failures += eb_session_get_token_labels(tok.packed.s, token_labels.data(), token_labels.size(), &len) != EB_OK;
      }
      const long allocations = edgebert::tools::alloc_counter_stop();
      CHECK(failures == 0);
      CHECK(allocations == 0);
    }
  }
}
