// SPDX-License-Identifier: Apache-2.0
// test_packed_batch.cpp: packed runs (eb_session_run_texts / run_text_pairs / run_ids_batch).
// Every sequence of a packed run equals a run of that sequence alone (int8: bit-identical; fp32:
// to float rounding) in every output (pooled rows, token outputs, ids, offsets, words), on an
// encoder, classifiers, a sentence-embedding model, QA and token classification, 1 and 2
// threads, lengths 1 to the session maximum; too-long and invalid inputs fail alone; the
// consumed count packs whole sequences in order. And one packed sequence against the numpy
// golden of its case (independent of edgebert's single runs).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "test_support.h"

using namespace edgebert::test;

namespace {

constexpr int kMaxLen = 32;
constexpr int kBatchTokens = 64;

SessionHandle make_session(eb_model* m, int threads, int batch_tokens) {
  eb_session_options o;
  eb_session_options_init(&o);
  o.num_threads = threads;
  o.max_sequence_length = kMaxLen;
  o.max_batch_tokens = batch_tokens;
  SessionHandle s;
  char err[512];
  REQUIRE(eb_session_create(m, &o, &s.s, err, sizeof err) == EB_OK);
  return s;
}

// Sequence outputs as plain vectors, for comparison.
struct Outputs {
  std::vector<std::vector<float>> outputs;  // per eb_output: the sequence's part (empty: none)
  std::vector<int32_t> ids, begin, end, segment, word_ids;
  std::vector<eb_word> words;
};

// The part of the last run that belongs to sequence `q` (first token / word subtracted).
Outputs collect(eb_session* s, const eb_sequence_info& q, size_t row, bool text) {
  Outputs r;
  const size_t t0 = static_cast<size_t>(q.first_token), n = static_cast<size_t>(q.tokens);
  r.outputs = sequence_outputs(s, t0, n, row);
  const int32_t* ids = nullptr;
  size_t len = 0;
  REQUIRE(eb_session_get_input_ids(s, &ids, &len) == EB_OK);
  REQUIRE(t0 + n <= len);
  r.ids.assign(ids + t0, ids + t0 + n);
  if (!text) return r;
  const int32_t *b = nullptr, *e = nullptr, *seg = nullptr, *w = nullptr;
  REQUIRE(eb_session_get_token_offsets(s, &b, &e, &seg, &len) == EB_OK);
  r.begin.assign(b + t0, b + t0 + n);
  r.end.assign(e + t0, e + t0 + n);
  r.segment.assign(seg + t0, seg + t0 + n);
  REQUIRE(eb_session_get_word_ids(s, &w, &len) == EB_OK);
  r.word_ids.assign(w + t0, w + t0 + n);
  const eb_word* words = nullptr;
  REQUIRE(eb_session_get_words(s, &words, &len) == EB_OK);
  REQUIRE(static_cast<size_t>(q.first_word + q.words) <= len);
  for (int32_t i = 0; i < q.words; ++i) {
    eb_word x = words[q.first_word + i];
    x.first_token -= q.first_token;
    x.last_token -= q.first_token;
    r.words.push_back(x);
  }
  return r;
}

void check_equal(const Outputs& packed, const Outputs& alone, bool int8) {
  for (size_t out = 0; out < packed.outputs.size(); ++out) {
    INFO("output " << out);
    const std::vector<float>& a = packed.outputs[out];
    const std::vector<float>& b = alone.outputs[out];
    REQUIRE(a.size() == b.size());
    if (int8) {
      CHECK((a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0));
    } else {
      double worst = 0;
      for (size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::fabs(double(a[i]) - b[i]) / std::max(1.0, std::fabs(double(b[i]))));
      CHECK(worst <= 1e-5);
    }
  }
  CHECK(packed.ids == alone.ids);
  CHECK(packed.begin == alone.begin);
  CHECK(packed.end == alone.end);
  CHECK(packed.segment == alone.segment);
  CHECK(packed.word_ids == alone.word_ids);
  REQUIRE(packed.words.size() == alone.words.size());
  for (size_t i = 0; i < packed.words.size(); ++i) {
    const eb_word &a = packed.words[i], &b = alone.words[i];
    CHECK((a.first_token == b.first_token && a.last_token == b.last_token && a.segment == b.segment &&
           a.begin_byte == b.begin_byte && a.end_byte == b.end_byte && a.label == b.label));
  }
}

// Texts of 2 ("") to 32 tokens (the session maximum) and one far longer, in mixed order.
std::vector<std::string> texts_of_mixed_length(bool* has_max) {
  std::vector<std::string> t = {"the movie was good , not bad !", "", "who", "the staff was rude [SEP] and slow."};
  std::string max_text;  // 30 single-token words: [CLS] + 30 + [SEP] = 32
  for (int i = 0; i < 30; ++i) max_text += "the ";
  t.push_back(max_text);
  std::string too_long;
  for (int i = 0; i < 40; ++i) too_long += "good ";
  t.push_back(too_long);
  t.push_back("a b");
  for (int i = 0; i < 6; ++i) t.push_back("the hotel was clean , but the staff was rude " + std::to_string(i));
  *has_max = true;
  return t;
}

}  // namespace

TEST_CASE("packed texts and text pairs equal single runs, on every task", "[packed]") {
  bool has_max = false;
  const std::vector<std::string> texts = texts_of_mixed_length(&has_max);
  std::vector<const char*> a, b;
  for (const std::string& t : texts) a.push_back(t.c_str());
  for (size_t i = 0; i < texts.size(); ++i) b.push_back(texts[(i + 3) % texts.size()].c_str());
  for (const char* model : {"base2_h12", "task_bert_seqcls_tanh", "task_distil_seqcls_relu", "task_st_mean_norm",
                            "task_bert_qa", "task_bert_token"}) {
    for (const char* kind : {"int8", "fp32"}) {
      ModelHandle m;
      char err[512];
      REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
      for (int threads : {1, 2}) {
        SessionHandle packed = make_session(m.m, threads, kBatchTokens);
        SessionHandle alone = make_session(m.m, threads, 0);
        for (bool pairs : {false, true}) {
          INFO(model << " " << kind << " threads " << threads << (pairs ? " pairs" : " texts"));
          size_t done = 0, runs = 0, seen_max = 0, too_long = 0;
          while (done < texts.size()) {
            size_t consumed = 0;
            const eb_status st = pairs ? eb_session_run_text_pairs(packed.s, a.data() + done, b.data() + done,
                                                                   texts.size() - done, &consumed)
                                       : eb_session_run_texts(packed.s, a.data() + done, texts.size() - done, &consumed);
            REQUIRE(st == EB_OK);
            REQUIRE(consumed >= 1);
            ++runs;
            size_t count = 0, tokens = 0;
            REQUIRE(eb_session_get_sequence_count(packed.s, &count) == EB_OK);
            REQUIRE(count == consumed);
            for (size_t i = 0; i < count; ++i) {
              eb_sequence_info q;
              REQUIRE(eb_session_get_sequence(packed.s, i, &q) == EB_OK);
              const size_t k = done + i;
              INFO("sequence " << k);
              const eb_status single =
                  pairs ? eb_session_run_text_pair(alone.s, a[k], b[k]) : eb_session_run_text(alone.s, a[k]);
              CHECK(q.status == single);  // too long alone: too long in the batch, and only there
              if (single != EB_OK) {
                CHECK(q.tokens == 0);
                too_long += single == EB_ERROR_SEQUENCE_TOO_LONG;
                continue;
              }
              tokens += static_cast<size_t>(q.tokens);
              seen_max += q.tokens == kMaxLen;
              eb_sequence_info one;
              REQUIRE(eb_session_get_sequence(alone.s, 0, &one) == EB_OK);
              REQUIRE(q.tokens == one.tokens);
              check_equal(collect(packed.s, q, i, true), collect(alone.s, one, 0, true), std::string(kind) == "int8");
            }
            CHECK(tokens <= static_cast<size_t>(kBatchTokens));
            // whole sequences in order: the next one would not have fit
            if (done + consumed < texts.size() && count < static_cast<size_t>(kBatchTokens)) {
              const eb_status next =
                  pairs ? eb_session_run_text_pair(alone.s, a[done + consumed], b[done + consumed])
                        : eb_session_run_text(alone.s, a[done + consumed]);
              REQUIRE(next == EB_OK);
              const int32_t* ids = nullptr;
              size_t n = 0;
              REQUIRE(eb_session_get_input_ids(alone.s, &ids, &n) == EB_OK);
              CHECK(tokens + n > static_cast<size_t>(kBatchTokens));
            }
            done += consumed;
          }
          CHECK(runs >= 2);
          CHECK(too_long >= 1);
          if (!pairs) CHECK(seen_max == 1);
        }
      }
    }
  }
}

TEST_CASE("packed ids of lengths 1 to the maximum equal single runs; bad sequences fail alone", "[packed]") {
  for (const char* model : {"base2_h12", "task_bert_seqcls_tanh", "task_st_mean_norm", "task_bert_qa"}) {
    for (const char* kind : {"int8", "fp32"}) {
      ModelHandle m;
      char err[512];
      REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
      eb_model_info info;
      REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
      for (int threads : {1, 2}) {
        INFO(model << " " << kind << " threads " << threads);
        SessionHandle packed = make_session(m.m, threads, kBatchTokens);
        SessionHandle alone = make_session(m.m, threads, 0);
        const std::vector<size_t> lengths = {1, kMaxLen, 7, kMaxLen + 1, 0, 3, 5, 2};
        std::vector<int32_t> ids, types;
        for (size_t k = 0; k < lengths.size(); ++k)
          for (size_t i = 0; i < lengths[k]; ++i) {
            ids.push_back(static_cast<int32_t>(101 + (k * 37 + i * 11) % 400));
            types.push_back(i >= lengths[k] / 2 ? 1 : 0);
          }
        ids[1 + kMaxLen + 2] = info.vocab_size;  // sequence 2 (7 tokens) has an id out of range
        const std::vector<eb_status> want = {EB_OK, EB_OK, EB_ERROR_INVALID_ARGUMENT, EB_ERROR_SEQUENCE_TOO_LONG,
                                             EB_ERROR_INVALID_ARGUMENT, EB_OK, EB_OK, EB_OK};
        size_t done = 0, src = 0;
        while (done < lengths.size()) {
          size_t consumed = 0;
          REQUIRE(eb_session_run_ids_batch(packed.s, ids.data() + src, types.data() + src, lengths.data() + done,
                                           lengths.size() - done, &consumed) == EB_OK);
          REQUIRE(consumed >= 1);
          size_t s = src;
          for (size_t i = 0; i < consumed; ++i) {
            const size_t k = done + i;
            INFO("sequence " << k);
            eb_sequence_info q;
            REQUIRE(eb_session_get_sequence(packed.s, i, &q) == EB_OK);
            CHECK(q.status == want[k]);
            if (want[k] == EB_OK) {
              REQUIRE(eb_session_run_ids(alone.s, ids.data() + s, types.data() + s, nullptr, lengths[k]) == EB_OK);
              eb_sequence_info one;
              REQUIRE(eb_session_get_sequence(alone.s, 0, &one) == EB_OK);
              REQUIRE(q.tokens == one.tokens);
              check_equal(collect(packed.s, q, i, false), collect(alone.s, one, 0, false), std::string(kind) == "int8");
            } else {
              CHECK(q.tokens == 0);
              const float* p = nullptr;  // its pooled rows are zero
              int64_t shape[2];
              int32_t rank = 0;
              for (eb_output out : {EB_OUTPUT_POOLER_OUTPUT, EB_OUTPUT_LOGITS, EB_OUTPUT_SENTENCE_EMBEDDING})
                if (eb_session_get_output(packed.s, out, &p, shape, &rank) == EB_OK) {
                  REQUIRE(rank == 2);
                  for (int64_t j = 0; j < shape[1]; ++j) CHECK(p[static_cast<int64_t>(i) * shape[1] + j] == 0.f);
                }
            }
            s += lengths[k];
          }
          src = s;
          done += consumed;
        }
      }
    }
  }
}

TEST_CASE("a packed sequence matches the numpy golden of its case", "[packed][golden]") {
  // base2_h12 fp32 len7 between two other sequences; tolerance as test_runtime_reference (1e-3)
  const Case c = read_case("base2_h12", "len7");
  ModelHandle m;
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path("base2_h12", "fp32").c_str(), &m.m, err, sizeof err) == EB_OK);
  for (int threads : {1, 2}) {
    SessionHandle s = make_session(m.m, threads, kBatchTokens);
    std::vector<int32_t> ids = {101, 300, 102}, types = {0, 0, 0};
    ids.insert(ids.end(), c.ids.begin(), c.ids.end());
    types.insert(types.end(), c.types.begin(), c.types.end());
    for (int i = 0; i < 5; ++i) ids.push_back(101 + i), types.push_back(0);
    const size_t lengths[] = {3, c.ids.size(), 5};
    size_t consumed = 0;
    REQUIRE(eb_session_run_ids_batch(s.s, ids.data(), types.data(), lengths, 3, &consumed) == EB_OK);
    REQUIRE(consumed == 3);
    eb_sequence_info q;
    REQUIRE(eb_session_get_sequence(s.s, 1, &q) == EB_OK);
    REQUIRE(q.first_token == 3);
    const float* p = nullptr;
    int64_t shape[2];
    int32_t rank = 0;
    REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &p, shape, &rank) == EB_OK);
    const size_t H = static_cast<size_t>(shape[1]);
    double worst = 0;
    for (size_t i = 0; i < c.ids.size() * H; ++i) worst = std::max(worst, std::fabs(double(p[3 * H + i]) - c.hidden[i]));
    CHECK(worst <= 1e-3);
    REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_POOLER_OUTPUT, &p, shape, &rank) == EB_OK);
    REQUIRE((rank == 2 && shape[0] == 3));
    worst = 0;
    for (size_t i = 0; i < H; ++i) worst = std::max(worst, std::fabs(double(p[H + i]) - c.pooled[i]));
    CHECK(worst <= 1e-3);
  }
}

TEST_CASE("packed runs refuse bad arguments and a too small max_batch_tokens", "[packed]") {
  ModelHandle m;
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path("base2_h12", "int8").c_str(), &m.m, err, sizeof err) == EB_OK);
  eb_session_options o;
  eb_session_options_init(&o);
  o.max_sequence_length = kMaxLen;
  o.max_batch_tokens = kMaxLen - 1;
  eb_session* bad = nullptr;
  CHECK(eb_session_create(m.m, &o, &bad, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(bad == nullptr);
  SessionHandle s = make_session(m.m, 1, kBatchTokens);
  const char* texts[] = {"a"};
  size_t consumed = 7;
  CHECK(eb_session_run_texts(s.s, texts, 1, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_texts(s.s, nullptr, 1, &consumed) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(consumed == 0);
  CHECK(eb_session_run_texts(s.s, texts, 0, &consumed) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_text_pairs(s.s, texts, nullptr, 1, &consumed) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_ids_batch(s.s, nullptr, nullptr, nullptr, 1, &consumed) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_run_texts(nullptr, texts, 1, &consumed) == EB_ERROR_INVALID_ARGUMENT);
  size_t count = 0;
  CHECK(eb_session_get_sequence_count(s.s, &count) == EB_ERROR_BAD_STATE);
  // a NULL text inside the batch fails alone
  const char* with_null[] = {"good", nullptr, "bad"};
  REQUIRE(eb_session_run_texts(s.s, with_null, 3, &consumed) == EB_OK);
  REQUIRE(consumed == 3);
  eb_sequence_info q;
  REQUIRE(eb_session_get_sequence(s.s, 1, &q) == EB_OK);
  CHECK(q.status == EB_ERROR_INVALID_ARGUMENT);
  REQUIRE(eb_session_get_sequence(s.s, 2, &q) == EB_OK);
  CHECK((q.status == EB_OK && q.first_token == 3 && q.tokens == 3));
}

TEST_CASE("each pair of a packed QA run has the best span of its single run", "[packed][qa]") {
  const std::string long_context(400, 'x');  // far longer than the session maximum of 32 tokens
  const char* questions[] = {"who was rude?", "what was clean?", "who?", "was it good?", "where?"};
  const char* contexts[] = {"the hotel was clean , but the staff was rude", "the hotel was clean",
                            long_context.c_str(), "the movie was good , not bad !", "in the hotel by the sea"};
  constexpr size_t kPairs = 5;
  for (const char* kind : {"int8", "fp32"}) {
    for (int threads : {1, 2}) {
      INFO(kind << " threads " << threads);
      ModelHandle m;
      char err[512];
      REQUIRE(eb_model_load_file(ebm_path("task_bert_qa", kind).c_str(), &m.m, err, sizeof err) == EB_OK);
      SessionHandle single = make_session(m.m, threads, 0);
      SessionHandle packed = make_session(m.m, threads, kMaxLen);  // runs of 32 tokens: several runs
      eb_span span;
      CHECK(eb_session_sequence_best_span(packed.s, 0, 5, &span) == EB_ERROR_BAD_STATE);  // no run yet
      size_t runs = 0;
      for (size_t done = 0, n = 0; done < kPairs; done += n, ++runs) {
        REQUIRE(eb_session_run_text_pairs(packed.s, questions + done, contexts + done, kPairs - done, &n) == EB_OK);
        REQUIRE(n >= 1);
        // the spans of this run's pairs, read before the single runs below change nothing here
        std::vector<eb_span> spans(n);
        std::vector<eb_sequence_info> infos(n);
        std::vector<eb_status> statuses(n);
        for (size_t i = 0; i < n; ++i) {
          REQUIRE(eb_session_get_sequence(packed.s, i, &infos[i]) == EB_OK);
          statuses[i] = eb_session_sequence_best_span(packed.s, i, 5, &spans[i]);
        }
        CHECK(eb_session_sequence_best_span(packed.s, n, 5, &span) == EB_ERROR_INVALID_ARGUMENT);
        CHECK(eb_session_sequence_best_span(packed.s, 0, 5, nullptr) == EB_ERROR_INVALID_ARGUMENT);
        for (size_t i = 0; i < n; ++i) {
          INFO("pair " << done + i);
          const eb_status alone = eb_session_run_text_pair(single.s, questions[done + i], contexts[done + i]);
          CHECK(infos[i].status == alone);
          if (alone != EB_OK) {
            CHECK(statuses[i] == EB_ERROR_INVALID_ARGUMENT);  // the sequence did not run
            continue;
          }
          REQUIRE(statuses[i] == EB_OK);
          eb_span want;
          REQUIRE(eb_session_best_span(single.s, 5, &want) == EB_OK);
          CHECK(spans[i].start_token - infos[i].first_token == want.start_token);
          CHECK(spans[i].end_token - infos[i].first_token == want.end_token);
          CHECK(spans[i].begin_byte == want.begin_byte);
          CHECK(spans[i].end_byte == want.end_byte);
          if (std::strcmp(kind, "int8") == 0) CHECK(spans[i].score == want.score);
          else CHECK(std::fabs(spans[i].score - want.score) <= 1e-4f * (1.f + std::fabs(want.score)));
          // and index 0 of a single run is best_span
          eb_span first;
          REQUIRE(eb_session_sequence_best_span(single.s, 0, 5, &first) == EB_OK);
          CHECK((first.start_token == want.start_token && first.end_token == want.end_token));
          CHECK(eb_session_sequence_best_span(single.s, 1, 5, &first) == EB_ERROR_INVALID_ARGUMENT);
        }
      }
      CHECK(runs >= 2);  // the five pairs need more than one packed run of 32 tokens
      // texts (not pairs), and a model that is not QA
      size_t n = 0;
      REQUIRE(eb_session_run_texts(packed.s, questions, 2, &n) == EB_OK);
      CHECK(eb_session_sequence_best_span(packed.s, 0, 5, &span) == EB_ERROR_BAD_STATE);
    }
  }
  ModelHandle enc;
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path("base2_h12", "int8").c_str(), &enc.m, err, sizeof err) == EB_OK);
  SessionHandle s = make_session(enc.m, 1, kBatchTokens);
  eb_span span;
  CHECK(eb_session_sequence_best_span(s.s, 0, 5, &span) == EB_ERROR_UNSUPPORTED);
  CHECK(eb_session_sequence_best_span(nullptr, 0, 5, &span) == EB_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("a packed run whose inputs all failed: EB_OK, every getter gives zero tokens and words", "[packed]") {
  ModelHandle m;
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path("task_bert_token", "int8").c_str(), &m.m, err, sizeof err) == EB_OK);
  SessionHandle s = make_session(m.m, 1, kBatchTokens);
  std::string long_text;
  for (int i = 0; i < 3 * kMaxLen; ++i) long_text += "good ";
  const char* texts[] = {long_text.c_str(), nullptr};
  size_t consumed = 0;
  REQUIRE(eb_session_run_texts(s.s, texts, 2, &consumed) == EB_OK);
  REQUIRE(consumed == 2);
  eb_sequence_info q;
  REQUIRE(eb_session_get_sequence(s.s, 0, &q) == EB_OK);
  CHECK(q.status == EB_ERROR_SEQUENCE_TOO_LONG);
  REQUIRE(eb_session_get_sequence(s.s, 1, &q) == EB_OK);
  CHECK(q.status == EB_ERROR_INVALID_ARGUMENT);
  const int32_t* ids = nullptr;
  size_t len = 99;
  CHECK(eb_session_get_input_ids(s.s, &ids, &len) == EB_OK);
  CHECK(len == 0);
  const int32_t *b = nullptr, *e = nullptr, *seg = nullptr, *w = nullptr;
  len = 99;
  CHECK(eb_session_get_token_offsets(s.s, &b, &e, &seg, &len) == EB_OK);
  CHECK(len == 0);
  len = 99;
  CHECK(eb_session_get_word_ids(s.s, &w, &len) == EB_OK);
  CHECK(len == 0);
  const eb_word* words = nullptr;
  len = 99;
  CHECK(eb_session_get_words(s.s, &words, &len) == EB_OK);
  CHECK(len == 0);
  const float* p = nullptr;
  int64_t shape[2] = {-1, -1};
  int32_t rank = 0;
  REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_TOKEN_LOGITS, &p, shape, &rank) == EB_OK);
  CHECK(shape[0] == 0);
}

TEST_CASE("eb_model_free with live sessions: the sessions keep the model alive (single and packed runs)", "[packed][lifetime]") {
  for (const char* kind : {"int8", "fp32"}) {
    INFO(kind);
    eb_model* m = nullptr;
    char err[512];
    REQUIRE(eb_model_load_file(ebm_path("task_bert_token", kind).c_str(), &m, err, sizeof err) == EB_OK);
    SessionHandle s = make_session(m, 2, kBatchTokens), before = make_session(m, 1, kBatchTokens);
    REQUIRE(eb_session_run_text(before.s, "the movie was good") == EB_OK);
    const std::vector<std::vector<float>> want = sequence_outputs(before.s, 0, 6, 0);
    eb_model_free(m);  // the sessions still run, on the model they keep alive
    REQUIRE(eb_session_run_text(s.s, "the movie was good") == EB_OK);
    CHECK(sequence_outputs(s.s, 0, 6, 0) == want);
    const char* texts[] = {"the movie was good", "bad"};
    size_t consumed = 0;
    REQUIRE(eb_session_run_texts(s.s, texts, 2, &consumed) == EB_OK);
    CHECK(consumed == 2);
    const eb_word* words = nullptr;
    size_t n = 0;
    CHECK(eb_session_get_words(s.s, &words, &n) == EB_OK);
    CHECK(n == 5);
  }
}
