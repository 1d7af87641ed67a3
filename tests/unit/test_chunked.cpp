// SPDX-License-Identifier: Apache-2.0
// test_chunked.cpp: eb_session_embed_chunked against chunk_numpy.py's float64 goldens (windows as
// HuggingFace's overflowing tokens with a stride, each window's sentence embedding, their
// token-weighted mean, normalized or not as the model says) on two sentence-transformers models,
// fp32 and int8, 1 and 2 threads: the exact windows (first token, tokens, byte range), the count
// mode, every window's vector (fp32 within 2e-3, int8 cosine >= 0.99) and the pooled one; each
// window's row equals a single run of its bytes (int8 bit-identical); a 64 MB generated document
// runs in the session's planned memory with zero heap allocations; a stretch without a single
// space is refused with a message; bad arguments get a status and a message.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "family_manifest.h"
#include "test_support.h"

using namespace edgebert::test;

namespace {

constexpr int kMaxLen = 32;
constexpr int kBatchTokens = 64;

struct Loaded {
  ModelHandle m;
  SessionHandle s;
  eb_model_info info{};
  Loaded(const std::string& model, const char* kind, int threads, int max_len = kMaxLen, int batch = kBatchTokens) {
    char err[512] = "";
    REQUIRE(eb_model_load_file(ebm_path(model, kind).c_str(), &m.m, err, sizeof err) == EB_OK);
    REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
    eb_session_options o;
    eb_session_options_init(&o);
    o.num_threads = threads;
    o.max_sequence_length = max_len;
    o.max_batch_tokens = batch;
    const eb_status created = eb_session_create(m.m, &o, &s.s, err, sizeof err);
    INFO(err);
    REQUIRE(created == EB_OK);
  }
  size_t hidden() const { return static_cast<size_t>(info.hidden_size); }
};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct GoldenCase {
  std::string model, doc;
  int window = 0, stride = 0;
  size_t windows = 0;
  std::string stem() const {
    return testdata_dir() + "/chunk/" + model + "." + doc + "." + std::to_string(window) + "." + std::to_string(stride);
  }
};

std::vector<GoldenCase> golden_cases() {
  std::ifstream f(testdata_dir() + "/chunk/cases.txt");
  REQUIRE(f.good());
  std::vector<GoldenCase> cases;
  GoldenCase c;
  while (f >> c.model >> c.doc >> c.window >> c.stride >> c.windows) cases.push_back(c);
  REQUIRE(cases.size() >= 12);
  return cases;
}

std::vector<eb_chunk> golden_windows(const GoldenCase& c) {
  std::ifstream f(c.stem() + ".windows.txt");
  REQUIRE(f.good());
  std::vector<eb_chunk> w;
  eb_chunk k{};
  while (f >> k.first_token >> k.tokens >> k.begin_byte >> k.end_byte) w.push_back(k);
  return w;
}

double max_abs_diff(const float* a, const float* b, size_t n) {
  double d = 0;
  for (size_t i = 0; i < n; ++i) d = std::max(d, std::fabs(double(a[i]) - b[i]));
  return d;
}

void check_close(const float* got, const float* want, size_t n, bool int8, const std::string& what) {
  INFO(what);
  if (int8)
    CHECK(cosine(got, want, n) >= 0.99);
  else
    CHECK(max_abs_diff(got, want, n) <= 2e-3);
}

}  // namespace

TEST_CASE("chunked embedding matches the float64 reference: windows, rows and their mean", "[chunked]") {
  const std::vector<GoldenCase> cases = golden_cases();
  size_t checked_windows = 0;
  for (const char* kind : {"fp32", "int8"}) {
    const bool int8 = std::strcmp(kind, "int8") == 0;
    for (int threads : {1, 2}) {
      std::string loaded_model;
      std::unique_ptr<Loaded> l;
      for (const GoldenCase& c : cases) {
        INFO(kind << " threads " << threads << " " << c.model << " " << c.doc << " window " << c.window << " stride "
                  << c.stride);
        if (c.model != loaded_model) {
          l.reset();
          l = std::make_unique<Loaded>(c.model, kind, threads);
          loaded_model = c.model;
        }
        eb_session* s = l->s.s;
        const size_t H = l->hidden();
        const std::string doc = read_file(testdata_dir() + "/chunk/" + c.doc + ".txt");
        const std::vector<eb_chunk> want = golden_windows(c);
        REQUIRE(want.size() == c.windows);
        // count mode
        size_t windows = 12345;
        REQUIRE(eb_session_embed_chunked(s, doc.data(), doc.size(), c.window, c.stride, EB_CHUNK_POOLING_NONE, nullptr, 0,
                                         nullptr, 0, &windows) == EB_OK);
        REQUIRE(windows == c.windows);
        // one row per window, and each window's place
        std::vector<float> rows(windows * H, NAN);
        std::vector<eb_chunk> got(windows);
        const eb_status st = eb_session_embed_chunked(s, doc.data(), doc.size(), c.window, c.stride,
                                                      EB_CHUNK_POOLING_NONE, rows.data(), rows.size(), got.data(),
                                                      got.size(), &windows);
        INFO(eb_session_last_error(s));
        REQUIRE(st == EB_OK);
        REQUIRE(windows == c.windows);
        for (size_t k = 0; k < windows; ++k) {
          INFO("window " << k);
          CHECK(got[k].first_token == want[k].first_token);
          CHECK(got[k].tokens == want[k].tokens);
          CHECK(got[k].begin_byte == want[k].begin_byte);
          CHECK(got[k].end_byte == want[k].end_byte);
        }
        const std::vector<float> golden_rows = read_f32(c.stem() + ".none.f32");
        REQUIRE(golden_rows.size() == windows * H);
        for (size_t k = 0; k < windows; ++k)
          check_close(rows.data() + k * H, golden_rows.data() + k * H, H, int8, "row " + std::to_string(k));
        checked_windows += windows;
        // the pooled vector (windows' count reported too)
        std::vector<float> mean(H, NAN);
        size_t mean_windows = 0;
        REQUIRE(eb_session_embed_chunked(s, doc.data(), doc.size(), c.window, c.stride, EB_CHUNK_POOLING_MEAN,
                                         mean.data(), mean.size(), nullptr, 0, &mean_windows) == EB_OK);
        CHECK(mean_windows == c.windows);
        check_close(mean.data(), read_f32(c.stem() + ".mean.f32").data(), H, int8, "mean");
        // every window's row is a single run of its bytes (a sample of the windows)
        for (size_t k = 0; k < windows; k += std::max<size_t>(1, windows / 7)) {
          const std::string part = doc.substr(got[k].begin_byte, got[k].end_byte - got[k].begin_byte);
          REQUIRE(eb_session_run_text(s, part.c_str()) == EB_OK);
          const float* single = nullptr;
          int64_t shape[2] = {0, 0};
          int32_t rank = 0;
          REQUIRE(eb_session_get_output(s, EB_OUTPUT_SENTENCE_EMBEDDING, &single, shape, &rank) == EB_OK);
          INFO("single run of window " << k);
          if (int8)
            CHECK(std::memcmp(single, rows.data() + k * H, H * sizeof(float)) == 0);
          else
            CHECK(max_abs_diff(single, rows.data() + k * H, H) <= 1e-5);
        }
      }
    }
  }
  CHECK(checked_windows > 4000);
}

TEST_CASE("chunked embedding of a 64 MB document: bounded memory, no allocation", "[chunked][alloc]") {
  // Units of a 1100-letter word (one [UNK]: longer than WordPiece's 1024 characters) and a short
  // sentence: few tokens per byte, so that the run stays short (the reference test above checks
  // the windows' contents); the session reads it in pieces of its text workspace.
  const std::string sentence = " the staff was rude. ";
  std::string unit(1100, 'x');
  unit += sentence;
  // 64 MiB and a few bytes; 16 MiB under the sanitizers (CI time: thousands of piece boundaries still)
  const size_t bytes = kSanitized ? (16u << 20) : (64u << 20);
  const size_t units = (bytes + unit.size() - 1) / unit.size();
  std::string doc;
  doc.reserve(units * unit.size());
  for (size_t u = 0; u < units; ++u) doc += unit;
  REQUIRE(doc.size() >= bytes);
  for (const char* kind : {"int8"}) {  // (fp32 runs the same code; it doubles the test's time)
    INFO(kind);
    Loaded l("task_st_mean_norm", kind, 1, 96, 512);
    eb_session* s = l.s.s;
    const size_t H = l.hidden();
    // expected windows: each unit's tokens (a single run of one unit: its tokens + [CLS] [SEP])
    const std::string one_unit = unit.substr(0, unit.size() - 1);
    REQUIRE(eb_session_run_text(s, one_unit.c_str()) == EB_OK);
    size_t unit_tokens = 0;
    const int32_t* ids = nullptr;
    REQUIRE(eb_session_get_input_ids(s, &ids, &unit_tokens) == EB_OK);
    unit_tokens -= 2;
    const size_t total = units * unit_tokens;
    const size_t window = 90, stride = 10, step = window - stride;
    const size_t expected = 1 + (total - window + step - 1) / step;
    std::vector<float> mean(H), rows;
    size_t windows = 0;
    REQUIRE(eb_session_embed_chunked(s, doc.data(), doc.size(), window, stride, EB_CHUNK_POOLING_MEAN, nullptr, 0, nullptr,
                                     0, &windows) == EB_OK);
    CHECK(windows == expected);
    edgebert::tools::alloc_counter_start();
    const eb_status st = eb_session_embed_chunked(s, doc.data(), doc.size(), window, stride, EB_CHUNK_POOLING_MEAN,
                                                  mean.data(), mean.size(), nullptr, 0, &windows);
    const long allocations = edgebert::tools::alloc_counter_stop();
    INFO(eb_session_last_error(s));
    REQUIRE(st == EB_OK);
    CHECK(allocations == 0);
    CHECK(windows == expected);
    double norm = 0;
    for (float v : mean) norm += double(v) * v;
    CHECK(std::fabs(std::sqrt(norm) - 1.0) < 1e-4);  // the model normalizes
    // the periodic document: its mean is close to one unit's window mean (no stray windows)
    std::vector<float> unit_mean(H);
    const std::string few = doc.substr(0, 200 * unit.size() - 1);
    REQUIRE(eb_session_embed_chunked(s, few.data(), few.size(), window, stride, EB_CHUNK_POOLING_MEAN, unit_mean.data(),
                                     unit_mean.size(), nullptr, 0, nullptr) == EB_OK);
    CHECK(cosine(mean.data(), unit_mean.data(), H) > 0.999);
  }
}

TEST_CASE("chunked embedding refuses what it cannot cut, and bad arguments, with a message", "[chunked]") {
  Loaded l("task_st_mean_norm", "int8", 1);
  eb_session* s = l.s.s;
  const size_t H = l.hidden();
  const std::string doc = read_file(testdata_dir() + "/chunk/long.txt");
  std::vector<float> out(4096 * H);
  std::vector<eb_chunk> chunks(4096);
  size_t windows = 0;
  auto call = [&](const char* text, size_t size, int w, int st, int pooling, float* o, size_t osize, eb_chunk* c,
                  size_t csize, size_t* n) {
    return eb_session_embed_chunked(s, text, size, w, st, static_cast<eb_chunk_pooling>(pooling), o, osize, c, csize, n);
  };
  auto message = [&]() { return std::string(eb_session_last_error(s)); };
  // a successful run first: refusals drop its outputs
  REQUIRE(call(doc.data(), doc.size(), 24, 8, EB_CHUNK_POOLING_MEAN, out.data(), H, nullptr, 0, &windows) == EB_OK);
  const float* p = nullptr;
  int64_t shape[2];
  int32_t rank = 0;
  CHECK(eb_session_get_output(s, EB_OUTPUT_SENTENCE_EMBEDDING, &p, shape, &rank) == EB_OK);
  struct Bad {
    int window, stride;
    eb_status status;
    const char* says;
  };
  for (const Bad& b : {Bad{8, 8, EB_ERROR_INVALID_ARGUMENT, "stride"}, Bad{8, 9, EB_ERROR_INVALID_ARGUMENT, "stride"},
                       Bad{0, 0, EB_ERROR_INVALID_ARGUMENT, "window"}, Bad{8, -1, EB_ERROR_INVALID_ARGUMENT, "stride"},
                       Bad{31, 2, EB_ERROR_SEQUENCE_TOO_LONG, "special tokens"}}) {
    INFO(b.window << " " << b.stride);
    CHECK(call(doc.data(), doc.size(), b.window, b.stride, EB_CHUNK_POOLING_NONE, out.data(), out.size(), nullptr, 0,
               &windows) == b.status);
    CHECK(message().find(b.says) != std::string::npos);
    CHECK(windows == 0);
  }
  CHECK(eb_session_get_output(s, EB_OUTPUT_SENTENCE_EMBEDDING, &p, shape, &rank) == EB_ERROR_BAD_STATE);
  // window 30 + [CLS] [SEP] = 32 is the session's maximum: accepted
  CHECK(call(doc.data(), doc.size(), 30, 2, EB_CHUNK_POOLING_MEAN, out.data(), H, nullptr, 0, &windows) == EB_OK);
  CHECK(call(nullptr, 0, 8, 2, EB_CHUNK_POOLING_NONE, out.data(), out.size(), nullptr, 0, &windows) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("text is NULL") != std::string::npos);
  CHECK(call(doc.data(), doc.size(), 8, 2, EB_CHUNK_POOLING_NONE, nullptr, 0, nullptr, 0, nullptr) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(call(doc.data(), doc.size(), 8, 2, 7, out.data(), out.size(), nullptr, 0, &windows) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("pooling 7") != std::string::npos);
  // out and chunks too small: refused before anything runs, the sizes named
  CHECK(call(doc.data(), doc.size(), 24, 8, EB_CHUNK_POOLING_NONE, out.data(), 166 * H, nullptr, 0, &windows) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("167 windows") != std::string::npos);
  CHECK(call(doc.data(), doc.size(), 24, 8, EB_CHUNK_POOLING_MEAN, out.data(), H - 1, nullptr, 0, &windows) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(call(doc.data(), doc.size(), 24, 8, EB_CHUNK_POOLING_NONE, out.data(), out.size(), chunks.data(), 166, &windows) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("chunks holds 166") != std::string::npos);
  CHECK(eb_session_embed_chunked(nullptr, doc.data(), doc.size(), 8, 2, EB_CHUNK_POOLING_NONE, out.data(), out.size(),
                                 nullptr, 0, &windows) == EB_ERROR_INVALID_ARGUMENT);
  // not UTF-8: the byte and its offset
  std::string bad = doc;
  bad[5000] = '\xff';
  CHECK(call(bad.data(), bad.size(), 24, 8, EB_CHUNK_POOLING_MEAN, out.data(), H, nullptr, 0, &windows) ==
        EB_ERROR_INVALID_ARGUMENT);
  CHECK(message().find("0xFF at offset 5000") != std::string::npos);
  // a stretch longer than a piece without a single space (runs of two spaces do not count)
  std::string stretch = doc.substr(0, 3000);
  for (int i = 0; i < 20000; ++i) stretch += i % 4 == 0 ? "  " : "ab";
  stretch += " " + doc.substr(0, 3000);
  // (the mean alone tokenizes once: windows before the stretch have run when it is found, and
  // out is still untouched, the count 0)
  std::fill(out.begin(), out.end(), 7.0f);
  CHECK(call(stretch.data(), stretch.size(), 24, 8, EB_CHUNK_POOLING_MEAN, out.data(), H, nullptr, 0, &windows) ==
        EB_ERROR_SEQUENCE_TOO_LONG);
  CHECK(message().find("no single ASCII space") != std::string::npos);
  CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v == 7.0f; }));
  CHECK(windows == 0);
  // a model without sentence embeddings
  Loaded qa("task_bert_qa", "int8", 1);
  CHECK(eb_session_embed_chunked(qa.s.s, doc.data(), doc.size(), 8, 2, EB_CHUNK_POOLING_MEAN, out.data(), out.size(),
                                 nullptr, 0, &windows) == EB_ERROR_UNSUPPORTED);
  CHECK(std::string(eb_session_last_error(qa.s.s)).find("sentence-embedding") != std::string::npos);
}

TEST_CASE("chunked embedding performs zero heap allocations after a warm-up", "[chunked][alloc]") {
  const std::string doc = read_file(testdata_dir() + "/chunk/long.txt");
  for (const char* kind : {"int8", "fp32"})
    for (int threads : {1, 2}) {
      INFO(kind << " threads " << threads);
      Loaded l("task_st_cls", kind, threads);
      const size_t H = l.hidden();
      std::vector<float> out(200 * H);
      std::vector<eb_chunk> chunks(200);
      size_t windows = 0;
      int failures = 0;
      for (int rep = 0; rep < 3; ++rep) {
        if (rep == 1) edgebert::tools::alloc_counter_start();
        for (int pooling : {EB_CHUNK_POOLING_NONE, EB_CHUNK_POOLING_MEAN})
          failures += eb_session_embed_chunked(l.s.s, doc.data(), doc.size(), 24, 8,
                                               static_cast<eb_chunk_pooling>(pooling), out.data(), out.size(),
                                               chunks.data(), chunks.size(), &windows) != EB_OK;
        failures += eb_session_embed_chunked(l.s.s, doc.data(), doc.size(), 24, 8, EB_CHUNK_POOLING_NONE, out.data(),
                                             H, nullptr, 0, &windows) != EB_ERROR_INVALID_ARGUMENT;
      }
      CHECK(edgebert::tools::alloc_counter_stop() == 0);
      CHECK(failures == 0);
    }
}

namespace {

// The ids and byte offsets of the whole text's tokens (special tokens left out) as
// edgebert-tokenize gives them for the model's tokenizer, tokenizing the text in one piece.
void whole_tokens(const std::string& model, const std::string& doc, std::vector<int32_t>* ids,
                  std::vector<std::pair<size_t, size_t>>* offsets) {
  TempDir tmp;
  std::string json = "{\"text\": \"";
  for (char c : doc) json += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : std::string(1, c);
  json += "\"}\n";
  const std::string in = tmp.path + "/doc.jsonl", out = tmp.path + "/doc.json";
  std::ofstream(in, std::ios::binary) << json;
  const std::string cmd = bin_dir() + "/edgebert-tokenize --model " + model + " --jsonl " + in + " > " + out;
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string r = read_file(out);
  auto list = [&](const char* key) {
    const size_t b = r.find(key);
    REQUIRE(b != std::string::npos);
    return r.substr(b, r.find("]]", b) == std::string::npos ? std::string::npos : r.find("]]", b) - b + 2);
  };
  const std::string ids_part = r.substr(r.find("\"ids\": [") + 8, r.find(']', r.find("\"ids\": [")) - r.find("\"ids\": [") - 8);
  const std::string seq_key = "\"sequence_ids\": [";
  const std::string seq_part = r.substr(r.find(seq_key) + seq_key.size(), r.find(']', r.find(seq_key)) - r.find(seq_key) - seq_key.size());
  std::string offs = list("\"offsets\": [");
  std::vector<int32_t> all;
  std::stringstream si(ids_part);
  for (std::string v; std::getline(si, v, ',');) all.push_back(std::stoi(v));
  std::vector<bool> content;
  std::stringstream ss(seq_part);
  for (std::string v; std::getline(ss, v, ',');) content.push_back(v.find("null") == std::string::npos);
  REQUIRE(content.size() == all.size());
  std::vector<std::pair<size_t, size_t>> all_offsets;
  for (size_t p = offs.find("[[") + 1; p != std::string::npos; p = offs.find('[', p + 1)) {
    size_t b = 0, e = 0;
    REQUIRE(std::sscanf(offs.c_str() + p, "[%zu, %zu]", &b, &e) == 2);
    all_offsets.emplace_back(b, e);
  }
  REQUIRE(all_offsets.size() == all.size());
  for (size_t i = 0; i < all.size(); ++i)
    if (content[i]) ids->push_back(all[i]), offsets->push_back(all_offsets[i]);
}

// The text of prompt `name` in the checkpoint folder of test model `model`
// (config_sentence_transformers.json, as make_family_checkpoints.py writes it: one line per prompt).
std::string prompt_text(const std::string& model, const std::string& name) {
  const std::string json = read_file(testdata_dir() + "/families/" + model + "/config_sentence_transformers.json");
  const std::string key = "\"" + name + "\": \"";
  const size_t b = json.find(key);
  REQUIRE(b != std::string::npos);
  std::string text;
  for (size_t i = b + key.size(); i < json.size() && json[i] != '"'; ++i)
    text += json[i] == '\\' && json[i + 1] == 'n' ? (++i, '\n') : json[i];
  return text;
}

// The windows (24 tokens, stride 4) of `doc` on model `name` (fp32) with the session's prompt
// `prompt` (NULL: none): each window's place among the whole text's tokens (edgebert-tokenize, one
// piece; with a prompt, the tokens of prompt + text as one string without the prompt's own, so
// that the text's first word is tokenized as a prompt run does), and a sample of rows equal to the
// single run of the window's ids between the template's special tokens, the prompt's tokens first
// (those a prompt run gives offsets {0, 0}).
void check_windows(const char* name, const std::string& doc, const char* prompt) {
  INFO(name << " prompt " << (prompt ? prompt : "none"));
  std::vector<int32_t> ids;
  std::vector<std::pair<size_t, size_t>> offsets;
  const std::string before = prompt ? prompt_text(name, prompt) : std::string();
  whole_tokens(converted(name, "fp32"), before + doc, &ids, &offsets);
  ModelHandle m;
  char err[512] = "";
  REQUIRE(eb_model_load_file(converted(name, "fp32").c_str(), &m.m, err, sizeof err) == EB_OK);
  eb_session_options o;
  eb_session_options_init(&o);
  // room for a window of 24 after Qwen3's 68-token query prompt (its test model has 96 positions)
  o.max_sequence_length = prompt ? 94 : 64;
  o.max_batch_tokens = 2 * o.max_sequence_length;
  SessionHandle s;
  REQUIRE(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_OK);
  REQUIRE(eb_session_set_prompt(s.s, prompt) == EB_OK);
  // the template's special tokens and the prompt's tokens, from a run of one word
  REQUIRE(eb_session_run_text(s.s, "the") == EB_OK);
  const int32_t* run = nullptr;
  const int32_t* segment = nullptr;
  const int32_t* end = nullptr;
  size_t n = 0;
  REQUIRE(eb_session_get_input_ids(s.s, &run, &n) == EB_OK);
  REQUIRE(eb_session_get_token_offsets(s.s, nullptr, &end, &segment, &n) == EB_OK);
  std::vector<int32_t> prefix, prompt_ids, suffix;
  bool seen = false;
  for (size_t i = 0; i < n; ++i)
    if (segment[i] < 0)
      (seen ? suffix : prefix).push_back(run[i]);
    else if (end[i] == 0)
      prompt_ids.push_back(run[i]);
    else
      seen = true;
  CHECK((prompt != nullptr) == !prompt_ids.empty());
  if (prompt) {  // the prompt's tokens out, the offsets into doc
    REQUIRE(ids.size() > prompt_ids.size());
    REQUIRE(std::equal(prompt_ids.begin(), prompt_ids.end(), ids.begin()));
    const auto p = static_cast<std::ptrdiff_t>(prompt_ids.size());
    ids.erase(ids.begin(), ids.begin() + p);
    offsets.erase(offsets.begin(), offsets.begin() + p);
    for (auto& [b, e] : offsets) b = b > before.size() ? b - before.size() : 0, e -= before.size();
  }
  size_t windows = 0;
  REQUIRE(eb_session_embed_chunked(s.s, doc.data(), doc.size(), 24, 4, EB_CHUNK_POOLING_NONE, nullptr, 0, nullptr, 0,
                                   &windows) == EB_OK);
  REQUIRE(windows == 1 + (ids.size() - 24 + 19) / 20);
  std::vector<eb_chunk> chunks(windows);
  std::vector<float> rows(windows * 4096);
  const eb_status st = eb_session_embed_chunked(s.s, doc.data(), doc.size(), 24, 4, EB_CHUNK_POOLING_NONE, rows.data(),
                                                rows.size(), chunks.data(), chunks.size(), &windows);
  INFO(eb_session_last_error(s.s));
  REQUIRE(st == EB_OK);
  for (size_t k = 0; k < windows; ++k) {
    INFO("window " << k);
    REQUIRE(chunks[k].first_token == 20 * k);
    REQUIRE(chunks[k].tokens == std::min<size_t>(24, ids.size() - 20 * k));
    CHECK(chunks[k].begin_byte == offsets[chunks[k].first_token].first);
    CHECK(chunks[k].end_byte == offsets[chunks[k].first_token + chunks[k].tokens - 1].second);
  }
  const float* one = nullptr;
  int64_t shape[2] = {0, 0};
  int32_t rank = 0;
  REQUIRE(eb_session_run_text(s.s, "the") == EB_OK);
  REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_SENTENCE_EMBEDDING, &one, shape, &rank) == EB_OK);
  const size_t width = static_cast<size_t>(shape[0]);
  for (size_t k = 0; k < windows; k += 37) {
    std::vector<int32_t> w = prefix;
    w.insert(w.end(), prompt_ids.begin(), prompt_ids.end());
    w.insert(w.end(), ids.begin() + static_cast<std::ptrdiff_t>(chunks[k].first_token),
             ids.begin() + static_cast<std::ptrdiff_t>(chunks[k].first_token + chunks[k].tokens));
    w.insert(w.end(), suffix.begin(), suffix.end());
    REQUIRE(eb_session_run_ids(s.s, w.data(), nullptr, nullptr, w.size()) == EB_OK);
    REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_SENTENCE_EMBEDDING, &one, shape, &rank) == EB_OK);
    INFO("row of window " << k);
    CHECK(max_abs_diff(one, rows.data() + k * width, width) <= 1e-5);
  }
}

std::string mixed_document(size_t bytes) {
  std::string doc;
  const char* parts[] = {"The movie was not good", " at all,", "  but I liked", " its music 123", "\nvery much.",
                         " \tThe hotel", " was clean!", "   Rude staff?", " 42", "\n\nand the end"};
  for (size_t i = 0; doc.size() < bytes; ++i) doc += parts[i % 10];
  return doc;
}

}  // namespace

TEST_CASE("chunked embedding streams every tokenizer kind as one whole tokenization", "[chunked][families]") {
  // byte-level BPE (ModernBERT, Qwen3's regex), Unigram + Metaspace (XLM-R), SentencePiece-style
  // BPE with byte fallback (EmbeddingGemma): a 40 KB text read in several pieces gives the
  // windows of the whole text's tokens, each row the single run of its ids
  const std::string doc = mixed_document(40000);
  for (const char* name : {"modernbert_st_mean_norm", "xlmr_st_mean_norm", "qwen3_st_lasttoken", "gemma3_st_dense"})
    check_windows(name, doc, nullptr);
}

TEST_CASE("chunked embedding puts the session's prompt before every window", "[chunked][families][prompts]") {
  // EmbeddingGemma's "task: search result | query: " (a trailing space: SentencePiece-style BPE)
  // and Qwen3-Embedding's instruction (no trailing space; byte-level BPE): the same windows, each
  // row the single run of [specials] prompt tokens + window tokens [specials]
  const std::string doc = mixed_document(6000);
  for (const char* name : {"qwen3_st_lasttoken", "gemma3_st_dense"}) check_windows(name, doc, "query");
  // a text of one window: the prompt run's embedding, bit for bit (the text's first word joins the
  // prompt's trailing space as in the run: "▁The", and spaces that stay tokens of their own)
  for (const char* name : {"qwen3_st_lasttoken", "gemma3_st_dense"}) {
    ModelHandle m;
    char err[512] = "";
    REQUIRE(eb_model_load_file(converted(name, "int8").c_str(), &m.m, err, sizeof err) == EB_OK);
    eb_session_options o;
    eb_session_options_init(&o);
    o.max_sequence_length = 94;
    SessionHandle s;
    REQUIRE(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_OK);
    for (const char* prompt : {"query", "document"}) {
      if (eb_session_set_prompt(s.s, prompt) != EB_OK) {  // (the Qwen3 test model has a query prompt only)
        CHECK(std::string(prompt) == "document");
        continue;
      }
      for (const char* text : {"The quick brown fox", "  two leading spaces", "caf\xc3\xa9 na\xc3\xafve 123"}) {
        INFO(name << " " << prompt << " '" << text << "'");
        REQUIRE(eb_session_run_text(s.s, text) == EB_OK);
        const float* run = nullptr;
        int64_t shape[2] = {0, 0};
        int32_t rank = 0;
        REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_SENTENCE_EMBEDDING, &run, shape, &rank) == EB_OK);
        const std::vector<float> want(run, run + shape[0]);
        std::vector<float> got(want.size());
        size_t windows = 0;
        REQUIRE(eb_session_embed_chunked(s.s, text, std::strlen(text), 20, 0, EB_CHUNK_POOLING_NONE, got.data(),
                                         got.size(), nullptr, 0, &windows) == EB_OK);
        CHECK(windows == 1);
        CHECK(got == want);
      }
    }
  }
}

// A prompt that leaves a window no room is refused with its token count, never cut: Qwen3's
// 68-token query prompt in sessions of 64 (the prompt alone is too long) and of 94 positions (a
// window of 24 fits with its 2 special tokens, one of 30 does not); without the prompt they run.
TEST_CASE("chunked embedding refuses a prompt that leaves a window no room", "[chunked][prompts]") {
  const std::string doc = mixed_document(2000);
  ModelHandle m;
  char err[512] = "";
  REQUIRE(eb_model_load_file(converted("qwen3_st_lasttoken", "fp32").c_str(), &m.m, err, sizeof err) == EB_OK);
  for (int max_len : {64, 94}) {
    INFO("max_sequence_length " << max_len);
    eb_session_options o;
    eb_session_options_init(&o);
    o.max_sequence_length = max_len;
    o.max_batch_tokens = 2 * max_len;
    SessionHandle s;
    REQUIRE(eb_session_create(m.m, &o, &s.s, err, sizeof err) == EB_OK);
    REQUIRE(eb_session_set_prompt(s.s, "query") == EB_OK);
    size_t windows = 7;
    const int too_wide = max_len == 64 ? 24 : 30;
    REQUIRE(eb_session_embed_chunked(s.s, doc.data(), doc.size(), too_wide, 4, EB_CHUNK_POOLING_NONE, nullptr, 0,
                                     nullptr, 0, &windows) == EB_ERROR_SEQUENCE_TOO_LONG);
    const std::string msg = eb_session_last_error(s.s);
    INFO(msg);
    CHECK(msg.find("prompt") != std::string::npos);
    CHECK(windows == 0);
    if (max_len == 94) {
      CHECK(msg.find("prompt's 68") != std::string::npos);
      CHECK(eb_session_embed_chunked(s.s, doc.data(), doc.size(), 24, 4, EB_CHUNK_POOLING_NONE, nullptr, 0, nullptr, 0,
                                     &windows) == EB_OK);
      CHECK(windows > 1);
    }
    REQUIRE(eb_session_set_prompt(s.s, nullptr) == EB_OK);
    CHECK(eb_session_embed_chunked(s.s, doc.data(), doc.size(), too_wide, 4, EB_CHUNK_POOLING_NONE, nullptr, 0, nullptr,
                                   0, &windows) == EB_OK);
  }
}

TEST_CASE("edgebert-run --chunk prints the windows and dumps their vectors", "[chunked][cli]") {
  TempDir tmp;
  const std::string stem = testdata_dir() + "/chunk/task_st_mean_norm.long.24.8";
  const std::string run = bin_dir() + "/edgebert-run --model " + ebm_path("task_st_mean_norm", "fp32") +
                          " --max-seq-len 32 --batch-tokens 64 --document " + testdata_dir() + "/chunk/long.txt";
  for (const char* mode : {"24:8", "24:8:mean"}) {
    INFO(mode);
    const std::string out = tmp.path + "/out.txt", dump = tmp.path + "/v.f32";
    REQUIRE(std::system((run + " --chunk " + mode + " --dump sentence_embedding=" + dump + " > " + out).c_str()) == 0);
    const std::vector<eb_chunk> want = golden_windows(GoldenCase{"task_st_mean_norm", "long", 24, 8, 0});
    std::ifstream f(out);
    size_t lines = 0;
    for (std::string line; std::getline(f, line);) {
      size_t k = 0, first = 0, tokens = 0, b = 0, e = 0;
      if (std::sscanf(line.c_str(), "chunk %zu %zu %zu %zu %zu", &k, &first, &tokens, &b, &e) != 5) continue;
      REQUIRE(k == lines);
      CHECK((first == want[k].first_token && tokens == want[k].tokens && b == want[k].begin_byte && e == want[k].end_byte));
      ++lines;
    }
    CHECK(lines == want.size());
    const std::vector<float> got = read_f32(dump);
    const std::vector<float> golden = read_f32(stem + (std::strchr(mode + 3, ':') ? ".mean.f32" : ".none.f32"));
    REQUIRE(got.size() == golden.size());
    CHECK(max_abs_diff(got.data(), golden.data(), got.size()) <= 2e-3);
  }
  CHECK(std::system((run + " --chunk 24 > /dev/null 2>&1").c_str()) != 0);
  CHECK(std::system((run + " --chunk 24:8:max > /dev/null 2>&1").c_str()) != 0);
  CHECK(std::system((run + " --chunk 8:8 > /dev/null 2>&1").c_str()) != 0);
}

// A padding mask of an earlier run (eb_session_run_ids with mask 0) must not reach the windows of
// a later chunked run, nor a later text run: both attend to every token of their own layout.
TEST_CASE("chunked and text runs after a masked run of ids attend to every token", "[chunked]") {
  ModelHandle m;
  SessionHandle s;
  open_model_session(ebm_path("task_st_mean_norm", "int8"), 1, 64, 256, &m, &s);
  const std::string doc = "the movie was not good at all , but i liked its music very much and the movie was good";
  auto chunked = [&] {
    size_t windows = 0;
    std::vector<float> rows(64 * 64);
    REQUIRE(eb_session_embed_chunked(s.s, doc.data(), doc.size(), 8, 2, EB_CHUNK_POOLING_NONE, rows.data(), rows.size(),
                                     nullptr, 0, &windows) == EB_OK);
    return rows;
  };
  auto text = [&] {
    REQUIRE(eb_session_run_text(s.s, doc.c_str()) == EB_OK);
    const float* p = nullptr;
    int64_t shape[2] = {0, 0};
    REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_SENTENCE_EMBEDDING, &p, shape, nullptr) == EB_OK);
    return std::vector<float>(p, p + shape[0]);
  };
  const std::vector<float> windows = chunked(), whole = text();
  std::vector<int32_t> ids(40, 200), mask(40, 0);
  ids[0] = 101, mask[0] = 1;
  REQUIRE(eb_session_run_ids(s.s, ids.data(), nullptr, mask.data(), ids.size()) == EB_OK);
  CHECK(chunked() == windows);
  REQUIRE(eb_session_run_ids(s.s, ids.data(), nullptr, mask.data(), ids.size()) == EB_OK);
  CHECK(text() == whole);
}
