// SPDX-License-Identifier: Apache-2.0
// test_composition.cpp: the composition matrix. Every model the converter makes for the tests
// (the BERT / DistilBERT reference checkpoints with every head, and every family model: RoBERTa,
// XLM-R, CamemBERT, ELECTRA, ALBERT, nomic-bert with dynamic NTK, ModernBERT with CLS and mean
// heads, sentence embedding, QA, token and sequence classification, ColBERT token vectors) x fp32 / int8 (/ int4 weights
// for the reference checkpoints convert_all.sh converts so) x weight cache
// off / on x 1 / 2 threads: packed runs of ids (lengths 1 to the session maximum, past the
// trained NTK length, runs longer than the model's max positions) and of texts and text pairs
// give every sequence exactly its single run: int8 bit-identical, fp32 within 1e-5 (relative to
// the value's size). Every output the model has is compared (hidden states, pooled vectors,
// logits, span and token logits, sentence embeddings, token vectors, masked-LM fill-mask scores at
// each sequence's first, middle and last token, and eb_session_get_token_vectors' rows), and the
// token ids of text runs; ColBERT models' texts also as PyLate queries and documents; the 2-thread
// session, switched to 1 thread and back (eb_session_set_num_threads), runs the packed ids again
// and gives the 2-thread single runs' outputs; on
// cross-encoders also the rerank scores of packed (query, passage) pairs; on sentence-embedding
// models and bge-m3 the rows of chunked embedding's windows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <random>
#include <string>
#include <vector>

#include "family_manifest.h"
#include "test_support.h"

using namespace edgebert::test;

namespace {

// The sanitizer builds run the 2-thread half of the matrix (the suite runs there once more), and
// (CI time) of fp32 the packed ids only: the text, pair, rerank and chunked layouts are the same
// code for every precision and run there in int8; int4 files run under the sanitizers in test_int4.
constexpr int kThreads[] = {2, 1};
constexpr size_t kThreadCount = kSanitized ? 1 : 2;
// Under qemu (EDGEBERT_EMULATED, CI's emulated stages: test_composition_llm) one thread count
// per precision, sessions of at most 32 tokens (twice the LLM test models' sliding windows of 16) and packed ids
// only.
size_t thread_count() { return emulated() ? 1 : kThreadCount; }

struct Counts {
  size_t configurations = 0, sequences = 0, outputs = 0;
};
Counts counts;

// The outputs of one sequence: per eb_output its rows (empty: the model has none), and its ids.
struct SequenceOutputs {
  std::vector<std::vector<float>> outputs;
  std::vector<int32_t> ids;
  std::vector<int32_t> fill_ids;  // masked-LM models: eb_session_fill_mask's top 5 at three tokens
  std::vector<float> fill_probs;
  std::vector<float> kept;  // token-vector models: eb_session_get_token_vectors (documents: no skiplist rows)
};

// The rows of the last run that belong to sequence `row` (tokens [t0, t0 + n)).
SequenceOutputs collect(eb_session* s, size_t t0, size_t n, size_t row) {
  SequenceOutputs r;
  r.outputs = sequence_outputs(s, t0, n, row);
  const int32_t* ids = nullptr;
  size_t len = 0;
  if (eb_session_get_input_ids(s, &ids, &len) == EB_OK && t0 + n <= len) r.ids.assign(ids + t0, ids + t0 + n);
  const float* tv = nullptr;
  int64_t shape[2] = {0, 0};
  int32_t rank = 0;
  size_t rows = 0;
  if (eb_session_get_output(s, EB_OUTPUT_TOKEN_VECTORS, &tv, shape, &rank) == EB_OK) {
    REQUIRE(eb_session_get_token_vectors(s, row, nullptr, 0, &rows) == EB_OK);
    r.kept.resize(rows * static_cast<size_t>(shape[1]));
    REQUIRE(eb_session_get_token_vectors(s, row, r.kept.data(), rows, &rows) == EB_OK);
  }
  int32_t top[5];
  float probs[5];
  size_t found = 0;
  // (the sequence's first, middle and last tokens: each call is a whole-vocabulary GEMV, every
  // token of every run tripled the matrix's time)
  const size_t picks[3] = {t0, t0 + n / 2, t0 + n - 1};
  for (size_t p = 0; p < (n >= 3 ? 3u : n); ++p) {
    const size_t t = n >= 3 ? picks[p] : t0 + p;
    const eb_status st = eb_session_fill_mask(s, t, 5, top, probs, &found);
    if (st == EB_ERROR_UNSUPPORTED) break;  // not a masked-LM model
    REQUIRE(st == EB_OK);
    r.fill_ids.insert(r.fill_ids.end(), top, top + found);
    r.fill_probs.insert(r.fill_probs.end(), probs, probs + found);
  }
  return r;
}

void require_same(const SequenceOutputs& single, const SequenceOutputs& packed, bool int8, const std::string& what) {
  INFO(what);
  REQUIRE(single.ids == packed.ids);
  REQUIRE(single.fill_probs.size() == packed.fill_probs.size());
  if (int8) {  // fill-mask: int8 bit-identical; fp32 the probabilities (ids of near ties may swap)
    REQUIRE(single.fill_ids == packed.fill_ids);
    REQUIRE(std::equal(single.fill_probs.begin(), single.fill_probs.end(), packed.fill_probs.begin(),
                       [](float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }));  // (empty: no memcmp of null)
  } else {
    for (size_t i = 0; i < single.fill_probs.size(); ++i) REQUIRE(std::fabs(single.fill_probs[i] - packed.fill_probs[i]) <= 1e-5);
  }
  for (int out = 0; out <= EB_OUTPUT_COUNT; ++out) {  // (EB_OUTPUT_COUNT: the kept token vectors)
    const std::vector<float>& a = out < EB_OUTPUT_COUNT ? single.outputs[static_cast<size_t>(out)] : single.kept;
    const std::vector<float>& b = out < EB_OUTPUT_COUNT ? packed.outputs[static_cast<size_t>(out)] : packed.kept;
    INFO("output " << out);
    REQUIRE(a.size() == b.size());
    if (a.empty()) continue;
    ++counts.outputs;
    if (int8) {
      REQUIRE(std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
        return std::memcmp(&x, &y, sizeof x) == 0;
      }));
      continue;
    }
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i)
      worst = std::max(worst, std::fabs(double(a[i]) - b[i]) / std::max(1.0, std::fabs(double(a[i]))));
    REQUIRE(worst <= 1e-5);
  }
}

// Packed runs (run(done, &consumed) runs the inputs from `done` on) until every input ran; each
// sequence equals its single run.
template <class Run>
void check_packed(eb_session* s, const std::vector<SequenceOutputs>& single, bool int8, const std::string& what, Run run) {
  size_t done = 0;
  while (done < single.size()) {
    size_t consumed = 0;
    REQUIRE(run(done, &consumed) == EB_OK);
    REQUIRE(consumed > 0);
    for (size_t k = 0; k < consumed; ++k) {
      eb_sequence_info q;
      REQUIRE(eb_session_get_sequence(s, k, &q) == EB_OK);
      REQUIRE(q.status == EB_OK);
      require_same(single[done + k], collect(s, static_cast<size_t>(q.first_token), static_cast<size_t>(q.tokens), k), int8,
                   what + " sequence " + std::to_string(done + k));
      ++counts.sequences;
    }
    done += consumed;
  }
}

struct Model {
  std::string name, path;
};

// Every test model: the reference checkpoints (testdata/ebm, fp32, int8 and a few int4) and the
// family models (fp32 and int8).
std::vector<Model> models(const std::string& kind) {
  std::vector<Model> r;
  const std::string dir = testdata_dir() + "/ebm";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string f = e->d_name, suffix = "." + kind + ".ebm";
      if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
        r.push_back({f.substr(0, f.size() - suffix.size()), dir + "/" + f});
    }
    closedir(d);
  }
  std::set<std::string> seen;
  const std::set<std::string> only = selected_families();  // EDGEBERT_FAMILIES: those families' models alone
  if (!only.empty()) r.clear();
  for (const ManifestLine& l : family_manifest())
    if (kind != "int4" && (only.empty() || only.count(l.family)) && seen.insert(l.model).second)  // int4: reference checkpoints only
      r.push_back({l.model, converted(l.model, kind)});
  std::sort(r.begin(), r.end(), [](const Model& a, const Model& b) { return a.name < b.name; });
  return r;
}

struct Loaded {
  ModelHandle m;
  eb_model_info info{};
  bool cache_loaded = false;  // the packed weights are mapped from the cache file
};

// Loads `path`, with a weight cache file in `cache_dir` (written by a first load, mapped by this one).
bool load(const std::string& path, const std::string& cache_dir, Loaded* l) {
  char err[512];
  eb_load_options o;
  eb_load_options_init(&o);
  const std::string cache = cache_dir.empty() ? "" : cache_dir + "/" + std::to_string(std::hash<std::string>()(path)) + ".cache";
  o.weight_cache_path = cache.empty() ? nullptr : cache.c_str();
  if (!cache.empty()) {  // the first load writes the cache file (where the XNNPACK can)
    ModelHandle first;
    REQUIRE(eb_model_load_file_with_options(path.c_str(), &o, &first.m, err, sizeof err) == EB_OK);
  }
  REQUIRE(eb_model_load_file_with_options(path.c_str(), &o, &l->m.m, err, sizeof err) == EB_OK);
  REQUIRE(eb_model_get_info(l->m.m, &l->info) == EB_OK);
  eb_weight_cache_state state = EB_WEIGHT_CACHE_NONE;
  REQUIRE(eb_model_get_weight_cache(l->m.m, &state, nullptr) == EB_OK);
  l->cache_loaded = state == EB_WEIGHT_CACHE_LOADED;
  return l->info.has_embeddings != 0;
}

SessionHandle session(eb_model* m, int threads, int max_len, int batch_tokens) {
  eb_session_options o;
  eb_session_options_init(&o);
  o.num_threads = threads;
  o.max_sequence_length = max_len;
  o.max_batch_tokens = batch_tokens;
  SessionHandle s;
  char err[512];
  REQUIRE(eb_session_create(m, &o, &s.s, err, sizeof err) == EB_OK);
  return s;
}

// Packed ids: lengths 1 .. the maximum (49: past nomic's 48 trained positions), three runs'
// worth of tokens, runs longer than the model's max positions. Returns the single runs' outputs.
std::vector<SequenceOutputs> packed_ids(eb_session* s, const eb_model_info& info, int max_len, bool int8, const std::string& what) {
  const std::vector<size_t> lengths = {static_cast<size_t>(max_len), 3, 49, 17, 1, static_cast<size_t>(max_len - 1), 64, 2, 33};
  std::mt19937 rng(7);
  std::vector<int32_t> ids, types;
  std::vector<size_t> lens;
  for (size_t len : lengths) {
    len = std::min<size_t>(len, static_cast<size_t>(max_len));
    lens.push_back(len);
    for (size_t i = 0; i < len; ++i) {
      ids.push_back(static_cast<int32_t>(5 + rng() % static_cast<uint32_t>(info.vocab_size - 5)));
      types.push_back(info.type_vocab_size > 1 && i >= len / 2 ? 1 : 0);
    }
  }
  // single runs
  std::vector<SequenceOutputs> single;
  size_t at = 0;
  for (size_t len : lens) {
    REQUIRE(eb_session_run_ids(s, ids.data() + at, types.data() + at, nullptr, len) == EB_OK);
    single.push_back(collect(s, 0, len, 0));
    at += len;
  }
  // packed runs until every sequence ran
  std::vector<size_t> firsts;  // each sequence's first id
  for (size_t k = 0, f = 0; k < lens.size(); f += lens[k++]) firsts.push_back(f);
  check_packed(s, single, int8, what + ", ids", [&](size_t done, size_t* consumed) {
    return eb_session_run_ids_batch(s, ids.data() + firsts[done], types.data() + firsts[done], lens.data() + done,
                                    lens.size() - done, consumed);
  });
  return single;
}

// eb_session_set_num_threads on a live 2-thread session: switched to its calling thread alone,
// the packed and single runs of ids agree with each other and with the 2-thread session's single
// runs (int8 bit-identical, fp32 within 1e-5), fill-mask included; switched back, the same again.
void switched_threads(eb_session* s, const eb_model_info& info, int max_len, bool int8, const std::string& what,
                      const std::vector<SequenceOutputs>& on_two) {
  for (int threads : {1, 2}) {
    REQUIRE(eb_session_set_num_threads(s, threads) == EB_OK);
    const std::string now = what + " switched to " + std::to_string(threads);
    const std::vector<SequenceOutputs> single = packed_ids(s, info, max_len, int8, now);
    REQUIRE(single.size() == on_two.size());
    for (size_t k = 0; k < single.size(); ++k) require_same(on_two[k], single[k], int8, now + " sequence " + std::to_string(k));
  }
}

// Packed texts (and pairs): short and long sentences, run after run.
void packed_texts(eb_session* s, bool pairs, bool int8, const std::string& what) {
  std::vector<std::string> a, b;
  const char* words[] = {"the", "movie", "was", "not", "good", "at", "all", "but", "i", "liked", "its", "music", "very", "much"};
  std::mt19937 rng(11);
  for (int k = 0; k < 8; ++k) {
    std::string t, u;
    const int n = 1 + static_cast<int>(rng() % 24), m = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) t += std::string(i ? " " : "") + words[rng() % 14];
    for (int i = 0; i < m; ++i) u += std::string(i ? " " : "") + words[rng() % 14];
    a.push_back(t);
    b.push_back(u);
  }
  std::vector<const char*> pa, pb;
  for (size_t k = 0; k < a.size(); ++k) pa.push_back(a[k].c_str()), pb.push_back(b[k].c_str());
  std::vector<SequenceOutputs> single;
  for (size_t k = 0; k < a.size(); ++k) {
    REQUIRE((pairs ? eb_session_run_text_pair(s, pa[k], pb[k]) : eb_session_run_text(s, pa[k])) == EB_OK);
    const int32_t* ids = nullptr;
    size_t len = 0;
    REQUIRE(eb_session_get_input_ids(s, &ids, &len) == EB_OK);
    single.push_back(collect(s, 0, len, 0));
  }
  check_packed(s, single, int8, what + (pairs ? ", pairs" : ", texts"), [&](size_t done, size_t* consumed) {
    return pairs ? eb_session_run_text_pairs(s, pa.data() + done, pb.data() + done, a.size() - done, consumed)
                 : eb_session_run_texts(s, pa.data() + done, a.size() - done, consumed);
  });
}

// Cross-encoders (one-label sequence classifiers): eb_session_rerank over packed pairs gives every
// passage the score of a rerank of it alone (int8 bit-identical).
void packed_rerank(eb_session* s, bool int8, const std::string& what) {
  INFO(what << ", rerank");
  const char* query = "was the movie good";
  const char* passages[] = {"the movie was not good at all", "i liked its music very much", "good", "the movie",
                            "but i liked the movie very much", "not at all", "its music was good but the movie was not"};
  const size_t n = sizeof passages / sizeof passages[0];
  std::vector<float> packed(n), alone(1);
  std::vector<int32_t> statuses(n);
  REQUIRE(eb_session_rerank(s, query, passages, n, packed.data(), statuses.data()) == EB_OK);
  for (size_t i = 0; i < n; ++i) {
    REQUIRE(statuses[i] == EB_OK);
    REQUIRE(eb_session_rerank(s, query, passages + i, 1, alone.data(), nullptr) == EB_OK);
    if (int8)
      CHECK(packed[i] == alone[0]);
    else
      CHECK(std::fabs(packed[i] - alone[0]) <= 1e-5f * std::max(1.0f, std::fabs(alone[0])));
    ++counts.outputs;
  }
  counts.sequences += n;
}

// Sentence-embedding models (and bge-m3's dense vector): eb_session_embed_chunked's windows (7
// tokens, stride 2) of a text the session also runs whole; each window's row equals the single run
// of its ids (the whole run's content tokens [first_token, first_token + tokens) between the
// template's special tokens), without a prompt and, on models with a "query" prompt, with it (its
// tokens, those a prompt run gives offsets {0, 0}, before each window's; the content tokens those of
// the prompt run of the whole text after them). The prompt is NULL after.
void chunked_windows(eb_session* s, bool int8, const std::string& what) {
  INFO(what << ", chunked");
  const std::string doc = "the movie was not good at all , but i liked its music very much and the movie was good";
  // the content tokens of the text alone
  REQUIRE(eb_session_set_prompt(s, nullptr) == EB_OK);
  REQUIRE(eb_session_run_text(s, doc.c_str()) == EB_OK);
  const int32_t* run_ids = nullptr;
  const int32_t* segment = nullptr;
  const int32_t* end = nullptr;
  size_t n = 0;
  REQUIRE(eb_session_get_input_ids(s, &run_ids, &n) == EB_OK);
  REQUIRE(eb_session_get_token_offsets(s, nullptr, nullptr, &segment, &n) == EB_OK);
  std::vector<int32_t> prefix, content, suffix;
  for (size_t i = 0; i < n; ++i) (segment[i] >= 0 ? content : content.empty() ? prefix : suffix).push_back(run_ids[i]);
  for (const char* prompt : {static_cast<const char*>(nullptr), "query"}) {
    if (eb_session_set_prompt(s, prompt) != EB_OK) continue;  // models without a "query" prompt
    INFO("prompt " << (prompt ? prompt : "none"));
    std::vector<int32_t> prompt_ids;
    size_t windows = 0;
    // the prompt's tokens from a run of one word; a prompt longer than the session's maximum
    // (Qwen3's 68 tokens under emulation's 32) is refused by both
    const eb_status word = eb_session_run_text(s, "the");
    if (word == EB_ERROR_SEQUENCE_TOO_LONG) {
      REQUIRE(prompt != nullptr);
      REQUIRE(eb_session_embed_chunked(s, doc.data(), doc.size(), 7, 2, EB_CHUNK_POOLING_NONE, nullptr, 0, nullptr, 0,
                                       &windows) == EB_ERROR_SEQUENCE_TOO_LONG);
      continue;
    }
    REQUIRE(word == EB_OK);
    REQUIRE(eb_session_get_input_ids(s, &run_ids, &n) == EB_OK);
    REQUIRE(eb_session_get_token_offsets(s, nullptr, &end, &segment, &n) == EB_OK);
    for (size_t i = 0; i < n; ++i)
      if (segment[i] >= 0 && end[i] == 0) prompt_ids.push_back(run_ids[i]);
    REQUIRE((prompt != nullptr) == !prompt_ids.empty());
    if (prompt) {  // the windows cut the prompt run's tokens of the text, after the prompt's
      // (a prompt run of the whole text longer than the session: test_chunked checks that model)
      const eb_status whole = eb_session_run_text(s, doc.c_str());
      if (whole == EB_ERROR_SEQUENCE_TOO_LONG) continue;
      REQUIRE(whole == EB_OK);
      REQUIRE(eb_session_get_input_ids(s, &run_ids, &n) == EB_OK);
      REQUIRE(n > prefix.size() + prompt_ids.size() + suffix.size());
      REQUIRE(std::equal(prompt_ids.begin(), prompt_ids.end(), run_ids + prefix.size()));
      content.assign(run_ids + prefix.size() + prompt_ids.size(), run_ids + n - suffix.size());
      REQUIRE(eb_session_run_text(s, "the") == EB_OK);
    }
    const float* one = nullptr;
    int64_t shape[2] = {0, 0};
    int32_t rank = 0;
    REQUIRE(eb_session_get_output(s, EB_OUTPUT_SENTENCE_EMBEDDING, &one, shape, &rank) == EB_OK);
    REQUIRE(eb_session_embed_chunked(s, doc.data(), doc.size(), 7, 2, EB_CHUNK_POOLING_NONE, nullptr, 0, nullptr, 0,
                                     &windows) == EB_OK);
    REQUIRE(eb_session_get_output(s, EB_OUTPUT_SENTENCE_EMBEDDING, &one, shape, &rank) == EB_ERROR_BAD_STATE);
    const size_t width = static_cast<size_t>(shape[0]);
    std::vector<float> rows(windows * width);
    std::vector<eb_chunk> chunks(windows);
    REQUIRE(eb_session_embed_chunked(s, doc.data(), doc.size(), 7, 2, EB_CHUNK_POOLING_NONE, rows.data(), rows.size(),
                                     chunks.data(), chunks.size(), &windows) == EB_OK);
    REQUIRE(windows == (content.size() <= 7 ? 1 : 1 + (content.size() - 7 + 4) / 5));
    for (size_t k = 0; k < windows; ++k) {
      INFO("window " << k);
      REQUIRE(chunks[k].first_token == 5 * k);
      REQUIRE(chunks[k].tokens == std::min<size_t>(7, content.size() - 5 * k));
      std::vector<int32_t> ids = prefix;
      ids.insert(ids.end(), prompt_ids.begin(), prompt_ids.end());
      ids.insert(ids.end(), content.begin() + static_cast<std::ptrdiff_t>(chunks[k].first_token),
                 content.begin() + static_cast<std::ptrdiff_t>(chunks[k].first_token + chunks[k].tokens));
      ids.insert(ids.end(), suffix.begin(), suffix.end());
      REQUIRE(eb_session_run_ids(s, ids.data(), nullptr, nullptr, ids.size()) == EB_OK);
      REQUIRE(eb_session_get_output(s, EB_OUTPUT_SENTENCE_EMBEDDING, &one, shape, &rank) == EB_OK);
      for (size_t d = 0; d < width; ++d) {
        const float a = one[d], b = rows[k * width + d];
        if (int8)
          REQUIRE(std::memcmp(&a, &b, sizeof a) == 0);
        else
          REQUIRE(std::fabs(double(a) - b) <= 1e-5 * std::max(1.0, std::fabs(double(a))));
      }
      ++counts.outputs;
    }
    counts.sequences += windows;
  }
  REQUIRE(eb_session_set_prompt(s, nullptr) == EB_OK);
}

// ColBERT models with PyLate's conventions: packed texts as queries (expansion tokens) and as
// documents (kept rows without the skiplist), cut as PyLate cuts them, equal their single runs.
void colbert_inputs(eb_session* s, bool int8, const std::string& what) {
  for (eb_colbert_input in : {EB_COLBERT_INPUT_QUERY, EB_COLBERT_INPUT_DOCUMENT}) {
    if (eb_session_set_colbert_input(s, in) == EB_ERROR_UNSUPPORTED) return;  // no conventions
    REQUIRE(eb_session_set_truncation(s, EB_TRUNCATION_LONGEST_FIRST) == EB_OK);
    packed_texts(s, false, int8, what + (in == EB_COLBERT_INPUT_QUERY ? ", colbert query" : ", colbert document"));
  }
  REQUIRE(eb_session_set_colbert_input(s, EB_COLBERT_INPUT_PLAIN) == EB_OK);
  REQUIRE(eb_session_set_truncation(s, EB_TRUNCATION_NONE) == EB_OK);
}

}  // namespace

TEST_CASE("composition: every model x precision x cache x threads x thread switch, packed runs equal single runs", "[composition]") {
  TempDir caches;
  for (const char* kind : {"fp32", "int8", "int4"}) {
    const bool int8 = std::string(kind) != "fp32";  // int4 weights: int8 GEMMs, bit-identical too
    if (kSanitized && std::string(kind) == "int4") continue;
    // texts, pairs, rerank, chunked windows (under qemu: packed ids alone, the attention kernels'
    // per-sequence bounds on NEON; the layouts are the same code as on x86-64)
    const bool layouts = (!kSanitized || int8) && !emulated();
    for (const Model& model : models(kind)) {
      for (bool cache : {false, true}) {
        Loaded l;
        if (!load(model.path, cache ? caches.path : "", &l)) continue;  // an encoder without embeddings
        // where this XNNPACK has no weight cache (2022 API: UNAVAILABLE) the run is the one without
        if (cache && !l.cache_loaded) continue;
        // the session maximum is the model's; a packed run holds about three of them
        const int max_len = std::min(l.info.max_position_embeddings - 2, emulated() ? 32 : 128);
        for (size_t t = 0; t < thread_count(); ++t) {
          // (under qemu: 2 threads for int8, 1 for fp32 and int4; emulated 2-thread sessions spin)
          const int threads = emulated() ? (std::string(kind) == "int8" ? 2 : 1) : kThreads[t];
          const std::string what = model.name + " " + kind + (cache ? " cache" : "") + " threads " + std::to_string(threads);
          SessionHandle s = session(l.m.m, threads, max_len, 3 * max_len);
          ++counts.configurations;
          const std::vector<SequenceOutputs> single = packed_ids(s.s, l.info, max_len, int8, what);
          if (threads == 2 && !emulated()) switched_threads(s.s, l.info, max_len, int8, what, single);
          if (!layouts) continue;
          if (l.info.has_vocab) {
            packed_texts(s.s, false, int8, what);
            packed_texts(s.s, true, int8, what);
          }
          if (l.info.has_vocab && l.info.task == EB_TASK_TOKEN_VECTORS) colbert_inputs(s.s, int8, what);
          if (l.info.has_vocab && l.info.task == EB_TASK_SEQUENCE_CLASSIFICATION && l.info.num_labels == 1)
            packed_rerank(s.s, int8, what);
          if (l.info.has_vocab && (l.info.task == EB_TASK_SENTENCE_EMBEDDING || l.info.task == EB_TASK_BGE_M3))
            chunked_windows(s.s, int8, what);  // (bge-m3: its dense vector)
        }
      }
    }
  }
  std::printf("composition matrix: %zu configurations, %zu packed sequences, %zu outputs compared with their single runs\n",
              counts.configurations, counts.sequences, counts.outputs);
  REQUIRE(counts.configurations >= (!selected_families().empty() ? 4u : kSanitized ? 25u : 50u));
}
