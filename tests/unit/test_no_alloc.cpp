// SPDX-License-Identifier: Apache-2.0
// test_no_alloc.cpp: proves that a run performs zero heap allocations. Every malloc-family call
// of the whole process (our code, libstdc++, XNNPACK, pthreadpool worker threads) is counted:
// normally by interposing malloc/calloc/realloc/memalign/posix_memalign/aligned_alloc in this
// executable; under AddressSanitizer (which owns malloc) through its allocation hooks
// (tools/alloc_counter.cpp, shared with edgebert-bench).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "alloc_counter.h"
#include "test_support.h"

using namespace edgebert::test;

namespace {

struct Counting {
  Counting() { edgebert::tools::alloc_counter_start(); }
  ~Counting() { edgebert::tools::alloc_counter_stop(); }
  long stop() { return edgebert::tools::alloc_counter_stop(); }
};

// Loads MODEL.KIND.ebm and creates a session with `threads` threads (allocation is allowed here),
// max_len positions (0: the model's) and max_batch_tokens batch_tokens.
void open_session(const char* model, const char* kind, int threads, ModelHandle* m, SessionHandle* s, eb_model_info* info,
                  int max_len = 0, int batch_tokens = 0) {
  char err[512];
  REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m->m, err, sizeof err) == EB_OK);
  REQUIRE(eb_model_get_info(m->m, info) == EB_OK);
  eb_session_options o;
  eb_session_options_init(&o);
  o.num_threads = threads;
  o.max_sequence_length = max_len;
  o.max_batch_tokens = batch_tokens;
  REQUIRE(eb_session_create(m->m, &o, &s->s, err, sizeof err) == EB_OK);
}

// Under qemu (scripts/arm/test_arm.sh sets EDGEBERT_EMULATED; CI time) each case runs one thread
// count, fp32 on one model of each list (its GEMMs are the slowest to emulate) and two repeats
// instead of three (the second proves the steady state): the x86-64 stages of both XNNPACK
// generations run the whole matrix.
bool skip_under_emulation(int threads) { return threads == 2 && emulated(); }
bool skip_under_emulation(const char* model, const char* kind, const char* fp32_model) {
  return emulated() && std::string(kind) == "fp32" && std::string(model) != fp32_model;
}
int repeats() { return emulated() ? 2 : 3; }

}  // namespace

TEST_CASE("the allocation counter sees allocations", "[alloc]") {
  Counting c;
  std::vector<int>* v = new std::vector<int>(100);
  const long n = c.stop();
  delete v;
  CHECK(n >= 2);
}

TEST_CASE("runs perform zero heap allocations", "[alloc]") {
  for (const char* model : {"base2_h12", "h128_4x32"}) {
    for (const char* kind : {"int8", "fp32", "int4"}) {  // int4: int8 GEMMs with int4 weights (docs/int4.md)
      for (int threads : {1, 2}) {
        if (skip_under_emulation(threads) || skip_under_emulation(model, kind, "h128_4x32")) continue;
        INFO(model << " " << kind << " threads " << threads);
        ModelHandle m;
        SessionHandle s;
        eb_model_info info;
        open_session(model, kind, threads, &m, &s, &info);
        const Case len7 = read_case(model, "len7");
        const Case lmax = read_case(model, "lenmax");
        const Case pad = read_case(model, "len7_pad");
        std::vector<float> embeds(static_cast<size_t>(info.hidden_size) * 9, 0.25f);
        std::vector<int32_t> bad_ids(len7.ids);
        bad_ids[3] = info.vocab_size;  // out of range
        std::vector<int32_t> too_long(static_cast<size_t>(info.max_position_embeddings) + 1, 101);

        Counting counting;
        int failures = 0;
        for (int rep = 0; rep < repeats(); ++rep) {
          failures += eb_session_run_ids(s.s, len7.ids.data(), len7.types.data(), len7.mask.data(), 7) != EB_OK;
          failures += eb_session_run_ids(s.s, lmax.ids.data(), lmax.types.data(), lmax.mask.data(), lmax.ids.size()) != EB_OK;
          failures += eb_session_run_ids(s.s, pad.ids.data(), nullptr, pad.mask.data(), pad.ids.size()) != EB_OK;
          failures += eb_session_run_ids(s.s, len7.ids.data(), nullptr, nullptr, 1) != EB_OK;
          failures += eb_session_run_text(s.s, "the movie was good , not bad !") != EB_OK;
          failures += eb_session_run_embeddings(s.s, embeds.data(), nullptr, 9) != EB_OK;
          const float* out = nullptr;
          int64_t shape[2];
          int32_t rank;
          failures += eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &out, shape, &rank) != EB_OK;
          // error paths must not allocate either
          failures += eb_session_run_ids(s.s, bad_ids.data(), nullptr, nullptr, bad_ids.size()) != EB_ERROR_INVALID_ARGUMENT;
          failures += eb_session_run_ids(s.s, too_long.data(), nullptr, nullptr, too_long.size()) != EB_ERROR_SEQUENCE_TOO_LONG;
        }
        const long allocations = counting.stop();
        CHECK(failures == 0);
        CHECK(allocations == 0);
      }
    }
  }
}

TEST_CASE("task heads, text pairs, offsets, labels and QA spans perform zero heap allocations", "[alloc][heads]") {
  for (const char* model : {"task_bert_qa", "task_distil_qa", "task_bert_token", "task_distil_seqcls_relu",
                            "task_st_mean_norm", "task_st_max"}) {
    for (const char* kind : {"int8", "fp32"}) {
      for (int threads : {1, 2}) {
        if (skip_under_emulation(threads)) continue;
        INFO(model << " " << kind << " threads " << threads);
        ModelHandle m;
        SessionHandle s;
        eb_model_info info;
        open_session(model, kind, threads, &m, &s, &info);
        const bool qa = info.task == EB_TASK_QUESTION_ANSWERING;
        const std::vector<int32_t> ids = {101, 216, 181, 434, 107, 102, 160, 421, 181, 102};
        const std::vector<int32_t> mask = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};

        Counting counting;
        int failures = 0;
        for (int rep = 0; rep < repeats(); ++rep) {
          failures += eb_session_run_text_pair(s.s, "who was rude?", "the staff was rude [SEP] and slow.") != EB_OK;
          const int32_t *b = nullptr, *e = nullptr, *seg = nullptr;
          size_t n = 0;
          failures += eb_session_get_token_offsets(s.s, &b, &e, &seg, &n) != EB_OK;
          eb_span span;
          failures += eb_session_best_span(s.s, 5, &span) != (qa ? EB_OK : EB_ERROR_UNSUPPORTED);
          for (int out = EB_OUTPUT_LAST_HIDDEN_STATE; out < EB_OUTPUT_COUNT; ++out) {
            const float* p = nullptr;
            const eb_status st = eb_session_get_output(s.s, static_cast<eb_output>(out), &p, nullptr, nullptr);
            failures += st != EB_OK && st != EB_ERROR_UNSUPPORTED;
          }
          failures += eb_session_run_text(s.s, "the movie was good") != EB_OK;
          failures += eb_session_run_ids(s.s, ids.data(), nullptr, mask.data(), ids.size()) != EB_OK;
          // error paths
          failures += eb_session_get_token_offsets(s.s, &b, &e, &seg, &n) != EB_ERROR_BAD_STATE;
          failures += eb_session_best_span(s.s, 5, &span) != (qa ? EB_ERROR_BAD_STATE : EB_ERROR_UNSUPPORTED);
          failures += eb_session_run_text_pair(s.s, nullptr, "x") != EB_ERROR_INVALID_ARGUMENT;
          const char* label = nullptr;
          if (info.num_labels > 0) failures += eb_model_get_label(m.m, info.num_labels - 1, &label) != EB_OK;
          failures += eb_model_get_label(m.m, info.num_labels, &label) != EB_ERROR_INVALID_ARGUMENT;
        }
        const long allocations = counting.stop();
        CHECK(failures == 0);
        CHECK(allocations == 0);
      }
    }
  }
}

TEST_CASE("long-context answers, word ids and words perform zero heap allocations", "[alloc][heads][answer]") {
  std::string context;  // about 100 tokens: several windows of a 24-position session
  for (int i = 0; i < 4; ++i)
    context += "The Hotelxyz was clean, but the staff was RUDEST. The movie was great and the acting was goodish! ";
  for (const char* model : {"task_bert_qa", "task_distil_qa", "task_bert_token"}) {
    for (const char* kind : {"int8", "fp32"}) {
      for (int threads : {1, 2}) {
        if (skip_under_emulation(threads)) continue;
        INFO(model << " " << kind << " threads " << threads);
        char err[512];
        ModelHandle m;
        SessionHandle s;
        eb_model_info info;
        REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
        REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
        eb_session_options o;
        eb_session_options_init(&o);
        o.num_threads = threads;
        o.max_sequence_length = 24;
        REQUIRE(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_OK);
        const bool qa = info.task == EB_TASK_QUESTION_ANSWERING;

        Counting counting;
        int failures = 0;
        for (int rep = 0; rep < repeats(); ++rep) {
          eb_span span;
          int32_t windows = 0;
          for (int stride : {-1, 0, 5})
            failures += eb_session_answer(s.s, "who was rude?", context.c_str(), 30, stride, &span, &windows) !=
                        (qa ? EB_OK : EB_ERROR_UNSUPPORTED);
          if (qa) failures += windows < 2;
          // errors: a stride that cannot advance, a question without room for context
          failures += eb_session_answer(s.s, "who was rude?", context.c_str(), 30, 100, &span, &windows) == EB_OK;
          failures += eb_session_answer(s.s, context.c_str(), "x", 30, -1, &span, &windows) == EB_OK;
          failures += eb_session_run_text_pair(s.s, "who was rude?", "the staff was RUDEST") != EB_OK;
          const int32_t* w = nullptr;
          const eb_word* words = nullptr;
          size_t n = 0;
          failures += eb_session_get_word_ids(s.s, &w, &n) != EB_OK;
          failures += eb_session_get_words(s.s, &words, &n) != EB_OK;
          const int32_t bad_id[] = {-1};
          failures += eb_session_run_ids(s.s, bad_id, nullptr, nullptr, 1) == EB_OK;
          failures += eb_session_get_words(s.s, &words, &n) != EB_ERROR_BAD_STATE;
        }
        const long allocations = counting.stop();
        CHECK(failures == 0);
        CHECK(allocations == 0);
      }
    }
  }
}

TEST_CASE("packed runs perform zero heap allocations", "[alloc][packed]") {
  for (const char* model : {"base2_h12", "task_bert_qa", "task_bert_token", "task_distil_seqcls_relu", "task_st_mean_norm",
                            "task_bert_mlm", "task_distil_mlm", "bge_m3"}) {  // *_mlm: the streamed SPLADE decoder;
                                                                           // bge_m3: its three outputs
    for (const char* kind : {"int8", "fp32", "int4"}) {
      if (std::string(kind) == "int4" &&
          (std::string(model).rfind("task_bert", 0) == 0 || std::string(model).find("_mlm") != std::string::npos ||
           std::string(model) == "bge_m3"))
        continue;  // no int4 file
      for (int threads : {1, 2}) {
        if (skip_under_emulation(threads) || skip_under_emulation(model, kind, "task_bert_qa")) continue;
        INFO(model << " " << kind << " threads " << threads);
        ModelHandle m;
        SessionHandle s;
        eb_model_info info;
        open_session(model, kind, threads, &m, &s, &info, 24, 48);
        std::string too_long;
        for (int i = 0; i < 30; ++i) too_long += "good ";
        const char* texts[] = {"the movie was good", "", too_long.c_str(), "who was rude?", "the staff was rude",
                               "the hotel was clean , but the staff was rude", nullptr, "a b c"};
        const char* second[] = {"x", "y", "z", "the staff", "w", "the hotel", "v", too_long.c_str()};
        const size_t lengths[] = {1, 4, 0, 25, 4};  // the 25-token sequence is too long for this session
        int32_t ids[1 + 4 + 0 + 25 + 4];               // run_ids_batch reads sum(lengths) ids, end to end
        for (size_t i = 0; i < sizeof ids / sizeof ids[0]; ++i) ids[i] = static_cast<int32_t>(101 + (i * 37) % 300);

        Counting counting;
        int failures = 0;
        for (int rep = 0; rep < repeats(); ++rep) {
          for (size_t done = 0, n = 0; done < 8; done += n)
            failures += eb_session_run_texts(s.s, texts + done, 8 - done, &n) != EB_OK || n == 0;
          for (size_t done = 0, n = 0; done < 8; done += n)
            failures += eb_session_run_text_pairs(s.s, texts + done, second + done, 8 - done, &n) != EB_OK || n == 0;
          {
            eb_span span;  // the last run's first pair: its answer span (QA), or the documented refusals
            const eb_status st = eb_session_sequence_best_span(s.s, 0, 5, &span);  // (not QA / it did not run)
            failures += st != EB_OK && st != EB_ERROR_UNSUPPORTED && st != EB_ERROR_INVALID_ARGUMENT;
          }
          size_t n = 0;
          failures += eb_session_run_ids_batch(s.s, ids, nullptr, lengths, 5, &n) != EB_OK || n != 5;
          for (int out = EB_OUTPUT_LAST_HIDDEN_STATE; out < EB_OUTPUT_COUNT; ++out) {
            const float* p = nullptr;
            const eb_status st = eb_session_get_output(s.s, static_cast<eb_output>(out), &p, nullptr, nullptr);
            failures += st != EB_OK && st != EB_ERROR_UNSUPPORTED;
          }
          {
            int32_t top_ids[8];
            float top_w[8];
            size_t found = 0;  // masked-LM models: the top entries of sequence 4's sparse vector
            const eb_status st = eb_session_sparse_top_k(s.s, 4, 8, 0.f, top_ids, top_w, &found);
            failures += st != EB_OK && st != EB_ERROR_UNSUPPORTED;
          }
          eb_sequence_info q;
          failures += eb_session_get_sequence(s.s, 4, &q) != EB_OK;
          failures += eb_session_run_texts(s.s, nullptr, 1, &n) != EB_ERROR_INVALID_ARGUMENT;
          failures += eb_session_run_text(s.s, "the movie was good") != EB_OK;  // single runs after packed ones
        }
        const long allocations = counting.stop();
        CHECK(failures == 0);
        CHECK(allocations == 0);
      }
    }
  }
}

namespace {

// The last run's rows of `out` (all of them: packed runs' sequences end to end), or empty.
std::vector<float> output_rows(eb_session* s, eb_output out) {
  const float* p = nullptr;
  int64_t shape[2] = {0, 0};
  int32_t rank = 0;
  if (eb_session_get_output(s, out, &p, shape, &rank) != EB_OK) return {};
  const size_t count = static_cast<size_t>(shape[0]) * static_cast<size_t>(rank == 2 ? shape[1] : 1);
  return std::vector<float>(p, p + count);
}

}  // namespace

// eb_session_set_num_threads: a 2-thread session switched to 1 thread and back gives the same
// bytes (packed and single runs, last_hidden_state and the task's output), keeps the last run's
// outputs, allocates nothing, and refuses every other thread count with a message.
TEST_CASE("switching a session between 1 and all its threads: same bytes, no allocation", "[alloc][threads]") {
  const char* texts[] = {"the movie was good", "a b c", "the hotel was clean , but the staff was rude", "x"};
  const std::pair<const char*, eb_output> models[] = {{"base2_h12", EB_OUTPUT_LAST_HIDDEN_STATE},
                                                      {"task_distil_seqcls_relu", EB_OUTPUT_LOGITS},
                                                      {"task_st_mean_norm", EB_OUTPUT_SENTENCE_EMBEDDING},
                                                      {"task_bert_qa", EB_OUTPUT_START_LOGITS},
                                                      {"bge_m3", EB_OUTPUT_TOKEN_VECTORS}};
  for (const auto& [model, task_out] : models) {
    for (const char* kind : {"int8", "fp32"}) {
      if (skip_under_emulation(model, kind, "task_st_mean_norm")) continue;
      INFO(model << " " << kind);
      ModelHandle m;
      SessionHandle s;
      eb_model_info info;
      open_session(model, kind, 2, &m, &s, &info, 24, 64);
      // per thread count: the packed run's and a single run's outputs
      std::vector<float> packed[2], task[2], single[2];
      for (int threads : {2, 1, 2}) {
        INFO("threads " << threads);
        REQUIRE(eb_session_set_num_threads(s.s, threads) == EB_OK);
        size_t n = 0;
        REQUIRE(eb_session_run_texts(s.s, texts, 4, &n) == EB_OK);
        REQUIRE(n == 4);
        const std::vector<float> p = output_rows(s.s, EB_OUTPUT_LAST_HIDDEN_STATE);
        const std::vector<float> t = output_rows(s.s, task_out);
        REQUIRE(eb_session_run_text(s.s, texts[2]) == EB_OK);
        const std::vector<float> one = output_rows(s.s, EB_OUTPUT_LAST_HIDDEN_STATE);
        REQUIRE_FALSE(p.empty());
        REQUIRE_FALSE(t.empty());
        if (packed[threads - 1].empty()) {
          packed[threads - 1] = p, task[threads - 1] = t, single[threads - 1] = one;
        } else {  // back on 2 threads: what it gave before
          CHECK(p == packed[1]);
          CHECK(t == task[1]);
          CHECK(one == single[1]);
        }
      }
      CHECK(packed[0] == packed[1]);  // (bytes: float ==, and no NaN in a real run)
      CHECK(task[0] == task[1]);
      CHECK(single[0] == single[1]);
      // the last run's outputs survive the switch
      REQUIRE(eb_session_set_num_threads(s.s, 1) == EB_OK);
      CHECK(output_rows(s.s, EB_OUTPUT_LAST_HIDDEN_STATE) == single[0]);
      // no allocation: switching and running on both
      Counting counting;
      int failures = 0;
      for (int rep = 0; rep < repeats(); ++rep)
        for (int threads : {1, 2}) {
          size_t n = 0;
          failures += eb_session_set_num_threads(s.s, threads) != EB_OK;
          failures += eb_session_run_texts(s.s, texts, 4, &n) != EB_OK || n != 4;
          failures += eb_session_run_text(s.s, texts[0]) != EB_OK;
          failures += eb_session_set_num_threads(s.s, 3) != EB_ERROR_INVALID_ARGUMENT;
        }
      const long allocations = counting.stop();
      CHECK(failures == 0);
      CHECK(allocations == 0);
      // every other count is refused, naming the two it takes
      for (int bad : {0, -1, 3, 64}) {
        INFO("num_threads " << bad);
        CHECK(eb_session_set_num_threads(s.s, bad) == EB_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(eb_session_last_error(s.s)).find("runs on 1 or 2") != std::string::npos);
      }
    }
  }
  // a one-thread session takes 1 only; a NULL session is refused
  ModelHandle m;
  SessionHandle s;
  eb_model_info info;
  open_session("base2_h12", "int8", 1, &m, &s, &info, 24, 64);
  CHECK(eb_session_set_num_threads(s.s, 1) == EB_OK);
  CHECK(eb_session_set_num_threads(s.s, 2) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_session_set_num_threads(nullptr, 1) == EB_ERROR_INVALID_ARGUMENT);
}
