// SPDX-License-Identifier: Apache-2.0
// test_colbert.cpp: ColBERT / PyLate multi-vector models (issue 25, item 4; PyLate token pooling,
// masked packed id runs and a ModernBERT folder at the end). A PyLate folder
// (tests/reference/colbert_numpy.py via make_testdata: a BertModel + pylate Dense 64 -> 24, no
// bias; converted by convert_all.sh into ebm/colbert.*.ebm) converts to task
// TOKEN_VECTORS; EB_OUTPUT_TOKEN_VECTORS matches the float64 reference (fp32 tight; int8 by row
// cosine and MaxSim within 1%), packed runs equal single runs, 1 and 2 threads agree; eb_maxsim
// equals the reference's MaxSim; single and packed runs, the output and MaxSim allocate nothing;
// bad inputs and bad Dense modules are one-line errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "alloc_counter.h"
#include "converter/converter.h"
#include "conversion_error.h"
#include "family_manifest.h"
#include "test_support.h"

using namespace edgebert::test;
namespace fs = std::filesystem;

namespace {

const char* const kColbertCases[] = {"query", "doc_a", "doc_b", "doc_long"};
constexpr size_t kDim = 24;

std::string ref_dir() { return testdata_dir(); }  // colbert/ and colbert_cases/ (make_testdata.py)

// The folder as the convert_testdata fixture converted it (fp32, int8 on the built-in calibration).
std::string colbert_path(const std::string& kind) { return ebm_path("colbert", kind); }

void open(const std::string& path, int threads, ModelHandle* m, SessionHandle* s) {
  open_model_session(path, threads, 64, 128, m, s);
}

std::vector<float> token_vectors(eb_session* s, size_t rows) {
  const float* p = nullptr;
  int64_t shape[2] = {0, 0};
  int32_t rank = 0;
  REQUIRE(eb_session_get_output(s, EB_OUTPUT_TOKEN_VECTORS, &p, shape, &rank) == EB_OK);
  REQUIRE(rank == 2);
  REQUIRE(static_cast<size_t>(shape[0]) == rows);
  REQUIRE(static_cast<size_t>(shape[1]) == kDim);
  return std::vector<float>(p, p + rows * kDim);
}

// The largest absolute difference and the lowest row cosine of `rows` vectors against `ref`;
// every row of `v` is checked to be L2-normalized.
std::pair<double, double> agreement(const std::vector<float>& v, const std::vector<float>& ref, size_t rows) {
  double max_err = 0, min_cos = 1;
  for (size_t t = 0; t < rows; ++t) {
    double dot = 0, nv = 0, nr = 0;
    for (size_t k = 0; k < kDim; ++k) {
      const double a = v[t * kDim + k], b = ref[t * kDim + k];
      max_err = std::max(max_err, std::fabs(a - b));
      dot += a * b, nv += a * a, nr += b * b;
    }
    CHECK(std::fabs(std::sqrt(nv) - 1.0) < 1e-5);
    min_cos = std::min(min_cos, dot / std::sqrt(nv * nr));
  }
  return {max_err, min_cos};
}

// f(session, fp32) on a session of each precision (fp32, int8) and thread count (1, 2).
template <class F>
void on_each_session(F f) {
  for (const char* kind : {"fp32", "int8"})
    for (int threads : {1, 2}) {
      INFO(kind << ", " << threads << " threads");
      ModelHandle m;
      SessionHandle s;
      open(colbert_path(kind), threads, &m, &s);
      f(s.s, std::string(kind) == "fp32");
    }
}

float maxsim(const std::vector<float>& q, const std::vector<float>& d) {
  float score = 0.f;
  REQUIRE(eb_maxsim(q.data(), q.size() / kDim, d.data(), d.size() / kDim, kDim, &score) == EB_OK);
  return score;
}

std::map<std::string, double> reference_maxsim() {
  std::map<std::string, double> r;
  std::ifstream f(ref_dir() + "/colbert_cases/maxsim.txt");
  std::string q, d;
  double v;
  while (f >> q >> d >> v) r[q + " " + d] = v;
  REQUIRE(r.size() == 16);
  return r;
}

}  // namespace

TEST_CASE("ColBERT token vectors match the float64 reference, single and packed, 1 and 2 threads", "[colbert]") {
  const std::map<std::string, double> ref_scores = reference_maxsim();
  for (const char* kind : {"fp32", "int8"}) {
    const bool fp32 = std::string(kind) == "fp32";
    std::map<std::string, std::vector<float>> by_thread[2];
    for (int threads : {1, 2}) {
      INFO(kind << ", " << threads << " threads");
      ModelHandle m;
      SessionHandle s;
      open(colbert_path(kind), threads, &m, &s);
      eb_model_info info;
      REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
      CHECK(info.task == EB_TASK_TOKEN_VECTORS);
      CHECK(info.num_labels == static_cast<int32_t>(kDim));
      std::vector<int32_t> all_ids;
      std::vector<size_t> lengths;
      for (const char* c : kColbertCases) {
        INFO(c);
        const std::vector<int32_t> ids = read_ints(ref_dir() + "/colbert_cases/" + c + ".ids.txt");
        const std::vector<float> ref = read_f32(ref_dir() + "/colbert_cases/" + c + ".f32");
        all_ids.insert(all_ids.end(), ids.begin(), ids.end());
        lengths.push_back(ids.size());
        REQUIRE(eb_session_run_ids(s.s, ids.data(), nullptr, nullptr, ids.size()) == EB_OK);
        const std::vector<float> v = token_vectors(s.s, ids.size());
        const auto [max_err, min_cos] = agreement(v, ref, ids.size());
        if (fp32) {
          CHECK(max_err < 2e-3);
        } else {
          CHECK(min_cos > 0.98);
        }
        by_thread[threads - 1][c] = v;
      }
      // packed: all four in one run equal the single runs
      size_t consumed = 0;
      REQUIRE(eb_session_run_ids_batch(s.s, all_ids.data(), nullptr, lengths.data(), lengths.size(), &consumed) == EB_OK);
      REQUIRE(consumed == lengths.size());
      const std::vector<float> packed = token_vectors(s.s, all_ids.size());
      for (size_t i = 0; i < lengths.size(); ++i) {
        eb_sequence_info si;
        REQUIRE(eb_session_get_sequence(s.s, i, &si) == EB_OK);
        REQUIRE(static_cast<size_t>(si.tokens) == lengths[i]);
        const std::vector<float>& single = by_thread[threads - 1][kColbertCases[i]];
        double err = 0;
        for (size_t j = 0; j < single.size(); ++j)
          err = std::max(err, std::fabs(double(single[j]) - packed[static_cast<size_t>(si.first_token) * kDim + j]));
        CHECK(err < 1e-5);
      }
      // MaxSim of the outputs against the reference's (fp32 tight, int8 within 1%)
      for (const char* q : kColbertCases)
        for (const char* d : kColbertCases) {
          INFO(q << " vs " << d);
          const double want = ref_scores.at(std::string(q) + " " + d);
          const double got = maxsim(by_thread[threads - 1][q], by_thread[threads - 1][d]);
          CHECK(std::fabs(got - want) <= (fp32 ? 1e-3 * std::fabs(want) : 0.01 * std::fabs(want)));
        }
    }
    for (const char* c : kColbertCases) {
      double err = 0;
      for (size_t j = 0; j < by_thread[0][c].size(); ++j)
        err = std::max(err, std::fabs(double(by_thread[0][c][j]) - by_thread[1][c][j]));
      CHECK(err < 1e-5);
    }
  }
}

// PyLate's default query expansion (attend_to_expansion_tokens false) on ids: the [MASK] tokens
// with attention mask 0 are attended by no token and keep their computed rows, as PyLate scores
// every query row; with mask 1 (attend_to_expansion_tokens true) the rows differ.
TEST_CASE("ColBERT query expansion with unattended mask tokens matches the float64 reference", "[colbert]") {
  const std::string base = ref_dir() + "/colbert_cases/query_unattended";
  const std::vector<int32_t> ids = read_ints(base + ".ids.txt");
  const std::vector<int32_t> mask = read_ints(base + ".mask.txt");
  const std::vector<float> ref = read_f32(base + ".f32");
  REQUIRE(mask.size() == ids.size());
  REQUIRE(ref.size() == ids.size() * kDim);
  on_each_session([&](eb_session* s, bool fp32) {
    REQUIRE(eb_session_run_ids(s, ids.data(), nullptr, mask.data(), ids.size()) == EB_OK);
    const std::vector<float> v = token_vectors(s, ids.size());
    const auto [max_err, min_cos] = agreement(v, ref, ids.size());
    if (fp32) {
      CHECK(max_err < 2e-3);
    } else {
      CHECK(min_cos > 0.98);
    }
    // attending to the expansion tokens changes the rows (the mask is not ignored)
    REQUIRE(eb_session_run_ids(s, ids.data(), nullptr, nullptr, ids.size()) == EB_OK);
    const std::vector<float> attended = token_vectors(s, ids.size());
    double diff = 0;
    for (size_t j = 0; j < v.size(); ++j) diff = std::max(diff, std::fabs(double(v[j]) - attended[j]));
    CHECK(diff > 1e-2);
  });
}

TEST_CASE("eb_maxsim equals a float64 MaxSim and refuses bad arguments", "[colbert]") {
  // reference vectors straight from the numpy files: eb_maxsim must reproduce the numpy scores
  const std::map<std::string, double> ref_scores = reference_maxsim();
  for (const char* q : kColbertCases)
    for (const char* d : kColbertCases) {
      const std::vector<float> qv = read_f32(ref_dir() + "/colbert_cases/" + q + ".f32");
      const std::vector<float> dv = read_f32(ref_dir() + "/colbert_cases/" + d + ".f32");
      CHECK(maxsim(qv, dv) == Approx(ref_scores.at(std::string(q) + " " + d)).epsilon(1e-6));
    }
  const float a[4] = {1, 0, 0, 1}, b[2] = {0.6f, 0.8f};
  float score = -1;
  REQUIRE(eb_maxsim(a, 2, b, 1, 2, &score) == EB_OK);
  CHECK(score == Approx(1.4f));
  CHECK(eb_maxsim(nullptr, 2, b, 1, 2, &score) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_maxsim(a, 2, nullptr, 1, 2, &score) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_maxsim(a, 2, b, 1, 2, nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_maxsim(a, 0, b, 1, 2, &score) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_maxsim(a, 2, b, 0, 2, &score) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_maxsim(a, 2, b, 1, 0, &score) == EB_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("token vectors: models without them say so; bad Dense modules are one-line errors", "[colbert]") {
  {
    ModelHandle m;
    SessionHandle s;
    open(ebm_path("task_bert_token", "fp32"), 1, &m, &s);
    const int32_t ids[3] = {2, 50, 3};
    REQUIRE(eb_session_run_ids(s.s, ids, nullptr, nullptr, 3) == EB_OK);
    const float* p = nullptr;
    CHECK(eb_session_get_output(s.s, EB_OUTPUT_TOKEN_VECTORS, &p, nullptr, nullptr) == EB_ERROR_UNSUPPORTED);
    CHECK(std::string(eb_session_last_error(s.s)).find("token vectors") != std::string::npos);
  }
  const fs::path src = ref_dir() + "/colbert";
  const fs::path bad = fs::temp_directory_path() / "eb_colbert_bad";
  auto expect_error = [&](const std::string& config, const std::string& needle, void (*change)(const fs::path&) = nullptr) {
    fs::remove_all(bad);
    fs::copy(src, bad, fs::copy_options::recursive);
    if (!config.empty()) std::ofstream(bad / "1_Dense" / "config.json") << config;
    if (change) change(bad);
    const std::string msg = conversion_error(bad.string());
    INFO(msg);
    CHECK(msg.find(needle) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  };
  expect_error(R"({"in_features": 64, "out_features": 24, "bias": false, "activation_function": "torch.nn.modules.activation.Tanh"})",
               "activation_function");
  expect_error(R"({"in_features": 32, "out_features": 24, "bias": false})", "in_features 32");
  expect_error(R"({"in_features": 64, "out_features": 16, "bias": false})", "linear.weight");
  expect_error(R"({"in_features": 64, "out_features": 24, "bias": true})", "linear.bias");
  expect_error(R"({"in_features": 64, "out_features": 24, "bias": false, "use_residual": true})", "use_residual");
  expect_error("", "pytorch_model.bin but no model.safetensors", [](const fs::path& d) {
    fs::rename(d / "1_Dense" / "model.safetensors", d / "1_Dense" / "pytorch_model.bin");
  });
  // bge-m3's extra heads: a .pt (pickle) is refused with the torch one-liner, never skipped
  expect_error("", "torch.load(", [](const fs::path& d) { std::ofstream(d / "sparse_linear.pt") << "PK"; });
  expect_error("", "has only one of sparse_linear.safetensors and colbert_linear.safetensors",
               [](const fs::path& d) { std::ofstream(d / "colbert_linear.safetensors") << "x"; });
  expect_error("", "after a ColBERT Dense module", [](const fs::path& d) {
    std::ofstream(d / "modules.json")
        << R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},)"
        << R"({"idx":1,"name":"1","path":"1_Dense","type":"pylate.models.Dense.Dense"},)"
        << R"({"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])";
  });
  // PyLate's conventions: malformed fields, a prefix the tokenizer lacks, lengths beyond the file's
  auto pylate = [&](const std::string& json, const std::string& needle) {
    INFO(json);
    fs::remove_all(bad);
    fs::copy(src, bad, fs::copy_options::recursive);
    std::ofstream(bad / "config_sentence_transformers.json") << json;
    const std::string msg = conversion_error(bad.string());
    INFO(msg);
    CHECK(msg.find("config_sentence_transformers.json") != std::string::npos);
    CHECK(msg.find(needle) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  };
  pylate(R"({"query_length": "32"})", "'query_length' must be an integer");
  pylate(R"({"document_length": 1})", "'document_length' must be an integer of 2..");
  pylate(R"({"query_prefix": 7})", "'query_prefix' must be a string");
  pylate(R"({"attend_to_expansion_tokens": "no"})", "'attend_to_expansion_tokens' must be true or false");
  pylate(R"({"skiplist_words": [",", 3]})", "'skiplist_words' must be an array of strings");
  pylate(R"({"query_prefix": "[Q] ", "document_prefix": "[unused1]"})", "query_prefix '[Q] ' is not a token");
  pylate(R"({"query_prefix": "[unused0]", "document_prefix": "[unused1]", "document_length": 4000})",
         "document_length 4000 is beyond the 128 positions");
  fs::remove_all(bad);
}

// A ColBERT folder without PyLate's fields converts with no conventions (a note says so): its text
// runs use the plain template and the query / document inputs are refused.
TEST_CASE("a ColBERT folder without PyLate conventions runs the plain template only", "[colbert]") {
  const fs::path src = ref_dir() + "/colbert";
  const fs::path dir = fs::temp_directory_path() / "eb_colbert_plain";
  fs::remove_all(dir);
  fs::copy(src, dir, fs::copy_options::recursive);
  fs::remove(dir / "config_sentence_transformers.json");
  edgebert::convert::ConvertOptions o;
  o.input_dir = dir.string();
  o.output_path = (dir / "plain.ebm").string();
  o.fp32 = true;
  o.quiet = true;
  const edgebert::convert::ConvertResult r = edgebert::convert::convert_checkpoint(o);
  bool noted = false;
  for (const std::string& n : r.notes) noted = noted || n.find("no PyLate input conventions") != std::string::npos;
  CHECK(noted);
  ModelHandle m;
  SessionHandle s;
  open(o.output_path, 1, &m, &s);
  CHECK(eb_session_set_colbert_input(s.s, EB_COLBERT_INPUT_QUERY) == EB_ERROR_UNSUPPORTED);
  CHECK(eb_session_set_colbert_input(s.s, EB_COLBERT_INPUT_PLAIN) == EB_OK);
  REQUIRE(eb_session_run_text(s.s, "the movie was good") == EB_OK);
  size_t rows = 0;
  CHECK(eb_session_get_token_vectors(s.s, 0, nullptr, 0, &rows) == EB_OK);
  CHECK(rows == 6);
  fs::remove_all(dir);
}

TEST_CASE("ColBERT runs, packed and masked packed runs, token vectors and MaxSim perform zero heap allocations", "[colbert][alloc]") {
  on_each_session([](eb_session* s, bool) {
    const std::vector<int32_t> q = read_ints(ref_dir() + "/colbert_cases/query.ids.txt");
    const std::vector<int32_t> d = read_ints(ref_dir() + "/colbert_cases/doc_long.ids.txt");
    std::vector<int32_t> both(q);
    both.insert(both.end(), d.begin(), d.end());
    const size_t lengths[2] = {q.size(), d.size()};
    std::vector<int32_t> mask(both.size(), 1);
    std::fill(mask.begin() + 6, mask.begin() + static_cast<std::ptrdiff_t>(q.size()), 0);  // [MASK] expansion
    std::vector<float> qv(q.size() * kDim);
    REQUIRE(eb_session_run_ids(s, q.data(), nullptr, nullptr, q.size()) == EB_OK);  // warm: first run
    edgebert::tools::alloc_counter_start();
    int failures = 0;
    for (int rep = 0; rep < 3; ++rep) {
      const float* p = nullptr;
      failures += eb_session_run_ids(s, q.data(), nullptr, nullptr, q.size()) != EB_OK;
      failures += eb_session_get_output(s, EB_OUTPUT_TOKEN_VECTORS, &p, nullptr, nullptr) != EB_OK;
      if (p) std::copy(p, p + qv.size(), qv.begin());
      size_t consumed = 0;
      failures += eb_session_run_ids_batch_masked(s, both.data(), nullptr, mask.data(), lengths, 2, &consumed) != EB_OK ||
                  consumed != 2;
      failures += eb_session_run_ids_batch(s, both.data(), nullptr, lengths, 2, &consumed) != EB_OK || consumed != 2;
      failures += eb_session_get_output(s, EB_OUTPUT_TOKEN_VECTORS, &p, nullptr, nullptr) != EB_OK;
      float score = 0.f;
      failures += !p || eb_maxsim(qv.data(), q.size(), p + q.size() * kDim, d.size(), kDim, &score) != EB_OK;
      failures += eb_maxsim(nullptr, 1, p, 1, kDim, &score) != EB_ERROR_INVALID_ARGUMENT;
    }
    const long allocations = edgebert::tools::alloc_counter_stop();
    CHECK(failures == 0);
    CHECK(allocations == 0);
  });
}

namespace {

struct TextCase {
  std::string name, kind, text;
};

std::vector<TextCase> text_cases() {
  std::vector<TextCase> r;
  std::ifstream f(ref_dir() + "/colbert_cases/text_cases.txt");
  std::string line;
  while (std::getline(f, line)) {
    const size_t a = line.find(' '), b = line.find(' ', a + 1);
    r.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  REQUIRE(r.size() >= 5);
  return r;
}

eb_colbert_input input_of(const std::string& kind) {
  return kind == "query" ? EB_COLBERT_INPUT_QUERY : EB_COLBERT_INPUT_DOCUMENT;
}

// eb_session_get_token_vectors of sequence `index` (its count asked first).
std::vector<float> kept_vectors(eb_session* s, size_t index) {
  size_t rows = 0;
  REQUIRE(eb_session_get_token_vectors(s, index, nullptr, 0, &rows) == EB_OK);
  std::vector<float> v(rows * kDim);
  size_t again = 0;
  REQUIRE(eb_session_get_token_vectors(s, index, v.data(), rows, &again) == EB_OK);
  REQUIRE(again == rows);
  return v;
}

// The last text run's ids equal `ids` and its kept rows the float64 reference's (fp32 within
// 2e-3, int8 row cosine > 0.98); returns the rows, *tokens the run's token count.
std::vector<float> check_text_run(eb_session* s, const std::vector<int32_t>& ids, const std::vector<float>& ref, bool fp32,
                                  size_t* tokens) {
  const int32_t* got = nullptr;
  size_t n = 0;
  REQUIRE(eb_session_get_input_ids(s, &got, &n) == EB_OK);
  CHECK(std::vector<int32_t>(got, got + n) == ids);
  *tokens = n;
  const std::vector<float> v = kept_vectors(s, 0);
  REQUIRE(v.size() == ref.size());
  const auto [max_err, min_cos] = agreement(v, ref, v.size() / kDim);
  if (fp32)
    CHECK(max_err < 2e-3);
  else
    CHECK(min_cos > 0.98);
  return v;
}

}  // namespace

// PyLate's conventions on text (eb_session_set_colbert_input): queries [CLS] [unused0] text [SEP]
// [MASK]... (unattended) of query_length tokens, documents [CLS] [unused1] text [SEP] whose
// skiplist rows (punctuation, and [UNK], which stands for the punctuation the vocabulary lacks)
// eb_session_get_token_vectors leaves out; texts longer than the lengths are refused, or cut as
// PyLate cuts them with EB_TRUNCATION_LONGEST_FIRST. Every case's ids equal PyLate's, its vectors
// the float64 reference's; packed runs of the same texts give each text its single run's rows.
TEST_CASE("ColBERT queries and documents as text follow PyLate: markers, expansion, skiplist, lengths", "[colbert]") {
  const std::vector<TextCase> cases = text_cases();
  on_each_session([&](eb_session* s, bool fp32) {
    for (eb_truncation truncation : {EB_TRUNCATION_NONE, EB_TRUNCATION_LONGEST_FIRST}) {
      REQUIRE(eb_session_set_truncation(s, truncation) == EB_OK);
      for (const TextCase& c : cases) {
        INFO(c.name << " (" << c.kind << ": " << c.text << "), truncation " << truncation);
        const std::string base = ref_dir() + "/colbert_cases/" + c.name;
        const std::vector<int32_t> ids = read_ints(base + ".ids.txt");
        const std::vector<float> ref = read_f32(base + ".f32");
        REQUIRE(eb_session_set_colbert_input(s, input_of(c.kind)) == EB_OK);
        const eb_status st = eb_session_run_text(s, c.text.c_str());
        const bool cut = c.name.find("_long") != std::string::npos;
        if (cut && truncation == EB_TRUNCATION_NONE) {  // longer than query_length / document_length
          CHECK(st == EB_ERROR_SEQUENCE_TOO_LONG);
          CHECK(std::string(eb_session_last_error(s)).find(c.kind + "_length") != std::string::npos);
          continue;
        }
        REQUIRE(st == EB_OK);
        size_t n = 0;
        const std::vector<float> v = check_text_run(s, ids, ref, fp32, &n);
        // a query keeps every row: the output's; a document fewer when it has skiplist tokens
        const std::vector<float> all = token_vectors(s, n);
        if (c.kind == "query") CHECK(v == all);
        if (c.kind == "document") CHECK(v.size() < all.size());
      }
    }
    // packed: the documents, then the queries, in one run each; every text its single run's rows
    REQUIRE(eb_session_set_truncation(s, EB_TRUNCATION_LONGEST_FIRST) == EB_OK);
    for (const char* kind : {"document", "query"}) {
      INFO("packed " << kind);
      std::vector<const char*> texts;
      std::vector<std::vector<float>> single;
      REQUIRE(eb_session_set_colbert_input(s, input_of(kind)) == EB_OK);
      for (const TextCase& c : cases)
        if (c.kind == kind) {
          texts.push_back(c.text.c_str());
          REQUIRE(eb_session_run_text(s, c.text.c_str()) == EB_OK);
          single.push_back(kept_vectors(s, 0));
        }
      size_t consumed = 0;
      REQUIRE(eb_session_run_texts(s, texts.data(), texts.size(), &consumed) == EB_OK);
      REQUIRE(consumed == texts.size());
      for (size_t k = 0; k < texts.size(); ++k) {
        const std::vector<float> v = kept_vectors(s, k);
        REQUIRE(v.size() == single[k].size());
        double err = 0;
        for (size_t j = 0; j < v.size(); ++j) err = std::max(err, std::fabs(double(v[j]) - single[k][j]));
        if (fp32)
          CHECK(err < 1e-5);
        else
          CHECK(err == 0);
      }
    }
    // plain again: the template alone, every row
    REQUIRE(eb_session_set_colbert_input(s, EB_COLBERT_INPUT_PLAIN) == EB_OK);
    REQUIRE(eb_session_run_text(s, "the movie , was good") == EB_OK);
    const int32_t* got = nullptr;
    size_t n = 0;
    REQUIRE(eb_session_get_input_ids(s, &got, &n) == EB_OK);
    CHECK(std::vector<int32_t>(got, got + n) == std::vector<int32_t>{101, 160, 278, 105, 181, 251, 102});
    CHECK(kept_vectors(s, 0).size() == n * kDim);
  });
}

TEST_CASE("ColBERT inputs: refusals name the reason, allocation-free runs", "[colbert][alloc]") {
  on_each_session([](eb_session* s, bool) {
    size_t rows = 7;
    CHECK(eb_session_get_token_vectors(s, 0, nullptr, 0, &rows) == EB_ERROR_BAD_STATE);
    CHECK(rows == 0);
    CHECK(eb_session_set_colbert_input(s, static_cast<eb_colbert_input>(3)) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(eb_session_set_colbert_input(s, static_cast<eb_colbert_input>(-1)) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(eb_session_set_colbert_input(nullptr, EB_COLBERT_INPUT_QUERY) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(eb_session_get_token_vectors(nullptr, 0, nullptr, 0, &rows) == EB_ERROR_INVALID_ARGUMENT);
    REQUIRE(eb_session_set_colbert_input(s, EB_COLBERT_INPUT_QUERY) == EB_OK);
    // pairs are refused in the query / document inputs
    CHECK(eb_session_run_text_pair(s, "the movie", "was good") == EB_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(eb_session_last_error(s)).find("pairs") != std::string::npos);
    const char* a[] = {"the movie"};
    const char* b[] = {"was good"};
    size_t consumed = 0;
    CHECK(eb_session_run_text_pairs(s, a, b, 1, &consumed) == EB_ERROR_INVALID_ARGUMENT);
    REQUIRE(eb_session_run_text(s, "the movie was good") == EB_OK);
    CHECK(eb_session_get_token_vectors(s, 1, nullptr, 0, &rows) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(eb_session_get_token_vectors(s, 0, nullptr, 0, nullptr) == EB_ERROR_INVALID_ARGUMENT);
    std::vector<float> small(5 * kDim);
    CHECK(eb_session_get_token_vectors(s, 0, small.data(), 5, &rows) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(rows == 12);
    CHECK(std::string(eb_session_last_error(s)).find("12 token vectors") != std::string::npos);
    // the mode keeps the last run's outputs
    REQUIRE(eb_session_set_colbert_input(s, EB_COLBERT_INPUT_DOCUMENT) == EB_OK);
    CHECK(eb_session_get_token_vectors(s, 0, nullptr, 0, &rows) == EB_OK);
    CHECK(rows == 12);
    // no allocation: runs in both inputs, single and packed, and the copies
    const char* docs[] = {"the movie , was not good !", "the plot was good", "a film ."};
    std::vector<float> out(16 * kDim);
    edgebert::tools::alloc_counter_start();
    int failures = 0;
    for (int rep = 0; rep < 3; ++rep)
      for (eb_colbert_input in : {EB_COLBERT_INPUT_QUERY, EB_COLBERT_INPUT_DOCUMENT}) {
        failures += eb_session_set_colbert_input(s, in) != EB_OK;
        failures += eb_session_run_text(s, docs[0]) != EB_OK;
        failures += eb_session_get_token_vectors(s, 0, out.data(), 16, &rows) != EB_OK;
        failures += eb_session_run_texts(s, docs, 3, &consumed) != EB_OK || consumed != 3;
        for (size_t k = 0; k < 3; ++k) failures += eb_session_get_token_vectors(s, k, out.data(), 16, &rows) != EB_OK;
      }
    const long allocations = edgebert::tools::alloc_counter_stop();
    CHECK(failures == 0);
    CHECK(allocations == 0);
  });
  // models without PyLate conventions: PLAIN only
  ModelHandle m;
  SessionHandle s;
  open_model_session(ebm_path("task_st_mean_norm", "int8"), 1, 64, 128, &m, &s);
  CHECK(eb_session_set_colbert_input(s.s, EB_COLBERT_INPUT_PLAIN) == EB_OK);
  CHECK(eb_session_set_colbert_input(s.s, EB_COLBERT_INPUT_QUERY) == EB_ERROR_UNSUPPORTED);
  CHECK(std::string(eb_session_last_error(s.s)).find("PyLate") != std::string::npos);
  REQUIRE(eb_session_run_text(s.s, "the movie") == EB_OK);
  size_t rows = 0;
  CHECK(eb_session_get_token_vectors(s.s, 0, nullptr, 0, &rows) == EB_ERROR_UNSUPPORTED);
}

// edgebert-run --colbert document --dump token_vectors= writes the reference's kept rows (the same
// bytes as eb_session_get_token_vectors), also for --texts; --colbert on another model is refused.
TEST_CASE("edgebert-run --colbert query|document dumps PyLate's rows, pooled with --pool-factor", "[colbert][cli]") {
  const char* bin = std::getenv("EDGEBERT_BIN");
  REQUIRE(bin);
  TempDir tmp;
  const std::string model = colbert_path("int8");
  ModelHandle m;
  SessionHandle s;
  open(model, 1, &m, &s);
  for (const TextCase& c : text_cases()) {
    if (c.name.find("_long") != std::string::npos) continue;
    INFO(c.name);
    const std::string dump = tmp.path + "/" + c.name + ".f32";
    REQUIRE(std::system((std::string(bin) + "/edgebert-run --model " + model + " --colbert " + c.kind + " --text '" + c.text +
                         "' --dump token_vectors=" + dump + " > /dev/null")
                            .c_str()) == 0);
    REQUIRE(eb_session_set_colbert_input(s.s, input_of(c.kind)) == EB_OK);
    REQUIRE(eb_session_run_text(s.s, c.text.c_str()) == EB_OK);
    CHECK(read_f32(dump) == kept_vectors(s.s, 0));
    CHECK(read_f32(dump).size() == read_f32(ref_dir() + "/colbert_cases/" + c.name + ".f32").size());
  }
  // --texts: every document's kept rows, in file order
  const std::string texts = tmp.path + "/docs.txt", dump = tmp.path + "/docs.f32";
  std::ofstream(texts) << "the movie , was good !\nthe plot .\n";
  REQUIRE(std::system((std::string(bin) + "/edgebert-run --model " + model + " --colbert document --texts " + texts +
                       " --dump token_vectors=" + dump + " > /dev/null").c_str()) == 0);
  std::vector<float> want;
  REQUIRE(eb_session_set_colbert_input(s.s, EB_COLBERT_INPUT_DOCUMENT) == EB_OK);
  for (const char* t : {"the movie , was good !", "the plot ."}) {
    REQUIRE(eb_session_run_text(s.s, t) == EB_OK);
    const std::vector<float> v = kept_vectors(s.s, 0);
    want.insert(want.end(), v.begin(), v.end());
  }
  CHECK(read_f32(dump) == want);
  // --pool-factor 2: each document's rows as eb_pool_token_vectors pools them; documents only
  REQUIRE(std::system((std::string(bin) + "/edgebert-run --model " + model + " --colbert document --pool-factor 2 --texts " +
                       texts + " --dump token_vectors=" + dump + " > /dev/null").c_str()) == 0);
  std::vector<float> pooled_want;
  for (const char* t : {"the movie , was good !", "the plot ."}) {
    REQUIRE(eb_session_run_text(s.s, t) == EB_OK);
    const std::vector<float> v = kept_vectors(s.s, 0);
    std::vector<float> p(v.size());
    size_t rows = 0;
    REQUIRE(eb_pool_token_vectors(v.data(), v.size() / kDim, kDim, 2, 1, p.data(), &rows) == EB_OK);
    pooled_want.insert(pooled_want.end(), p.begin(), p.begin() + static_cast<std::ptrdiff_t>(rows * kDim));
  }
  CHECK(read_f32(dump) == pooled_want);
  CHECK(pooled_want.size() < want.size());
  CHECK(std::system((std::string(bin) + "/edgebert-run --model " + model +
                     " --colbert query --pool-factor 2 --text 'the movie' > /dev/null 2>&1").c_str()) != 0);
  CHECK(std::system((std::string(bin) + "/edgebert-run --model " + ebm_path("task_st_mean_norm", "int8") +
                     " --colbert query --text 'the movie' > /dev/null 2>&1").c_str()) != 0);
  CHECK(std::system((std::string(bin) + "/edgebert-run --model " + model + " --colbert queries --text 'x' > /dev/null 2>&1")
                        .c_str()) != 0);
}

// The other PyLate settings, on copies of the folder: attend_to_expansion_tokens true (the [MASK]
// tokens are attended: the run equals run_ids with every mask 1), do_query_expansion false (no
// [MASK] appended), an empty document prefix (no marker), a skiplist of one word.
TEST_CASE("ColBERT inputs: attended expansion, no expansion, no marker, own skiplist", "[colbert]") {
  const fs::path src = ref_dir() + "/colbert";
  const fs::path dir = fs::temp_directory_path() / "eb_colbert_settings";
  auto convert = [&](const std::string& json) {
    fs::remove_all(dir);
    fs::copy(src, dir, fs::copy_options::recursive);
    std::ofstream(dir / "config_sentence_transformers.json") << json;
    edgebert::convert::ConvertOptions o;
    o.input_dir = dir.string();
    o.output_path = (dir / "m.ebm").string();
    o.fp32 = true;
    o.quiet = true;
    edgebert::convert::convert_checkpoint(o);
    return o.output_path;
  };
  auto ids_of_run = [](eb_session* s) {
    const int32_t* p = nullptr;
    size_t n = 0;
    REQUIRE(eb_session_get_input_ids(s, &p, &n) == EB_OK);
    return std::vector<int32_t>(p, p + n);
  };
  {
    ModelHandle m;
    SessionHandle s;
    open(convert(R"({"query_prefix": "[unused0]", "document_prefix": "", "query_length": 10, "document_length": 16,
                     "attend_to_expansion_tokens": true, "skiplist_words": ["good"]})"),
         1, &m, &s);
    REQUIRE(eb_session_set_colbert_input(s.s, EB_COLBERT_INPUT_QUERY) == EB_OK);
    REQUIRE(eb_session_run_text(s.s, "the movie was good") == EB_OK);
    const std::vector<int32_t> ids = ids_of_run(s.s);
    CHECK(ids == std::vector<int32_t>{101, 1, 160, 278, 181, 251, 102, 103, 103, 103});
    const std::vector<float> text = kept_vectors(s.s, 0);
    REQUIRE(eb_session_run_ids(s.s, ids.data(), nullptr, nullptr, ids.size()) == EB_OK);  // mask all 1
    CHECK(token_vectors(s.s, ids.size()) == text);
    REQUIRE(eb_session_set_colbert_input(s.s, EB_COLBERT_INPUT_DOCUMENT) == EB_OK);
    REQUIRE(eb_session_run_text(s.s, "the movie , was good") == EB_OK);
    CHECK(ids_of_run(s.s) == std::vector<int32_t>{101, 160, 278, 105, 181, 251, 102});  // no marker
    CHECK(kept_vectors(s.s, 0).size() == 6 * kDim);  // "good" left out, "," kept
  }
  {
    ModelHandle m;
    SessionHandle s;
    open(convert(R"({"query_prefix": "[unused0]", "document_prefix": "[unused1]", "query_length": 10,
                     "document_length": 16, "do_query_expansion": false, "attend_to_expansion_tokens": true})"),
         1, &m, &s);
    REQUIRE(eb_session_set_colbert_input(s.s, EB_COLBERT_INPUT_QUERY) == EB_OK);
    REQUIRE(eb_session_run_text(s.s, "the movie was good") == EB_OK);
    CHECK(ids_of_run(s.s) == std::vector<int32_t>{101, 1, 160, 278, 181, 251, 102});
    CHECK(kept_vectors(s.s, 0).size() == 7 * kDim);
  }
  fs::remove_all(dir);
}

namespace {

struct PoolCase {
  std::string name;
  size_t rows = 0, dim = 0, factor = 0, protected_rows = 0;
};

std::vector<PoolCase> pool_cases() {
  std::vector<PoolCase> r;
  std::ifstream f(ref_dir() + "/colbert_cases/pool_cases.txt");
  PoolCase c;
  while (f >> c.name >> c.rows >> c.dim >> c.factor >> c.protected_rows) r.push_back(c);
  REQUIRE(r.size() >= 10);
  return r;
}

std::vector<float> pooled(const std::vector<float>& v, size_t dim, size_t factor, size_t protected_rows = 1) {
  std::vector<float> out(v.size());
  size_t rows = 0;
  REQUIRE(eb_pool_token_vectors(v.data(), v.size() / dim, dim, factor, protected_rows, out.data(), &rows) == EB_OK);
  out.resize(rows * dim);
  return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::fabs(double(a[i]) - b[i]));
  return e;
}

}  // namespace

// eb_pool_token_vectors against PyLate's hierarchical_pooling run with scipy itself
// (colbert_numpy.pylate_pool): random unit rows, rows around a few centres, exact duplicates
// (distance ties), 4..131 rows, factors 2..4: the same clusters in the same order, means within
// float rounding. Then on a converted model's document rows: fp32 pooled equals the pooled float64
// reference within 2e-3; int8 pooled scores a query within 1% of the reference's MaxSim.
TEST_CASE("eb_pool_token_vectors equals PyLate's hierarchical pooling with scipy's Ward linkage", "[colbert]") {
  for (const PoolCase& c : pool_cases()) {
    INFO(c.name);
    const std::string base = ref_dir() + "/colbert_cases/" + c.name;
    const std::vector<float> in = read_f32(base + ".pool_in.f32"), want = read_f32(base + ".pool_out.f32");
    REQUIRE(in.size() == c.rows * c.dim);
    const std::vector<float> got = pooled(in, c.dim, c.factor, c.protected_rows);
    REQUIRE(got.size() == want.size());
    CHECK(max_abs_diff(got, want) < 1e-6);
    // the protected row comes last, unchanged
    CHECK(std::vector<float>(got.end() - static_cast<std::ptrdiff_t>(c.dim), got.end()) ==
          std::vector<float>(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(c.dim)));
  }
  // a converted model's document rows
  const std::vector<TextCase> cases = text_cases();
  const std::vector<float> query_ref = read_f32(ref_dir() + "/colbert_cases/text_query.f32");
  const std::vector<float> want = read_f32(ref_dir() + "/colbert_cases/text_doc_long_f2.pool_out.f32");
  on_each_session([&](eb_session* s, bool fp32) {
    REQUIRE(eb_session_set_truncation(s, EB_TRUNCATION_LONGEST_FIRST) == EB_OK);
    REQUIRE(eb_session_set_colbert_input(s, EB_COLBERT_INPUT_DOCUMENT) == EB_OK);
    for (const TextCase& c : cases)
      if (c.name == "text_doc_long") REQUIRE(eb_session_run_text(s, c.text.c_str()) == EB_OK);
    const std::vector<float> got = pooled(kept_vectors(s, 0), kDim, 2);
    REQUIRE(got.size() == want.size());
    if (fp32) CHECK(max_abs_diff(got, want) < 2e-3);
    const double ref_score = maxsim(query_ref, want), score = maxsim(query_ref, got);
    CHECK(std::fabs(score - ref_score) < 0.01 * std::fabs(ref_score));
  });
}

TEST_CASE("eb_pool_token_vectors: factor 1, few rows, protected rows, refusals", "[colbert]") {
  const std::vector<float> in = read_f32(ref_dir() + "/colbert_cases/random_17_f2.pool_in.f32");
  REQUIRE(in.size() == 17 * kDim);
  CHECK(pooled(in, kDim, 1) == in);  // PyLate does not pool at factor 1: the rows as they are
  // 0 protected rows: every row is clustered (17 / 2 = 8 clusters); protected beyond the rows: all kept
  CHECK(pooled(in, kDim, 2, 0).size() == 8 * kDim);
  CHECK(pooled(in, kDim, 2, 99) == in);
  // two rows to pool: one cluster, their mean, then the protected row
  const std::vector<float> three(in.begin(), in.begin() + 3 * kDim);
  const std::vector<float> two = pooled(three, kDim, 2);
  REQUIRE(two.size() == 2 * kDim);
  for (size_t k = 0; k < kDim; ++k) {
    CHECK(two[k] == Approx((three[kDim + k] + three[2 * kDim + k]) / 2.0).margin(1e-7));
    CHECK(two[kDim + k] == three[k]);
  }
  // one row to pool: it, then the protected row
  const std::vector<float> one = pooled(std::vector<float>(in.begin(), in.begin() + 2 * kDim), kDim, 3);
  CHECK(std::vector<float>(one.begin(), one.begin() + kDim) == std::vector<float>(in.begin() + kDim, in.begin() + 2 * kDim));
  std::vector<float> out(in.size());
  size_t rows = 5;
  CHECK(eb_pool_token_vectors(nullptr, 17, kDim, 2, 1, out.data(), &rows) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(rows == 0);
  CHECK(eb_pool_token_vectors(in.data(), 17, kDim, 2, 1, nullptr, &rows) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_pool_token_vectors(in.data(), 17, kDim, 2, 1, out.data(), nullptr) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_pool_token_vectors(in.data(), 0, kDim, 2, 1, out.data(), &rows) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_pool_token_vectors(in.data(), 17, 0, 2, 1, out.data(), &rows) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_pool_token_vectors(in.data(), 17, kDim, 0, 1, out.data(), &rows) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_pool_token_vectors(in.data(), SIZE_MAX / 2, kDim, 2, 1, out.data(), &rows) == EB_ERROR_INVALID_ARGUMENT);
  std::vector<float> bad = in;
  bad[5 * kDim + 3] = std::nanf("");
  CHECK(eb_pool_token_vectors(bad.data(), 17, kDim, 2, 1, out.data(), &rows) == EB_ERROR_INVALID_ARGUMENT);
}

// eb_session_run_ids_batch_masked: PyLate queries with unattended [MASK] expansion as ids, packed
// with documents: every sequence equals run_ids of its ids and mask (int8 bit-identical); a bad
// mask value fails that sequence alone; NULL masks equal eb_session_run_ids_batch.
TEST_CASE("eb_session_run_ids_batch_masked equals run_ids with each sequence's mask", "[colbert]") {
  const std::string base = ref_dir() + "/colbert_cases/";
  const std::vector<int32_t> q = read_ints(base + "query_unattended.ids.txt");
  const std::vector<int32_t> qmask = read_ints(base + "query_unattended.mask.txt");
  const std::vector<int32_t> d = read_ints(base + "doc_a.ids.txt");
  on_each_session([&](eb_session* s, bool fp32) {
    std::vector<int32_t> ids, mask;
    std::vector<size_t> lengths;
    auto add = [&](const std::vector<int32_t>& i, const std::vector<int32_t>& m) {
      ids.insert(ids.end(), i.begin(), i.end());
      mask.insert(mask.end(), m.begin(), m.end());
      lengths.push_back(i.size());
    };
    std::vector<int32_t> bad = qmask;
    bad[1] = 2;
    add(q, qmask), add(d, std::vector<int32_t>(d.size(), 1)), add(q, bad), add(q, std::vector<int32_t>(q.size(), 1));
    size_t consumed = 0;
    REQUIRE(eb_session_run_ids_batch_masked(s, ids.data(), nullptr, mask.data(), lengths.data(), lengths.size(),
                                            &consumed) == EB_OK);
    REQUIRE(consumed == lengths.size());
    std::vector<std::vector<float>> packed;
    for (size_t k = 0; k < lengths.size(); ++k) {
      eb_sequence_info info{};
      REQUIRE(eb_session_get_sequence(s, k, &info) == EB_OK);
      CHECK(info.status == (k == 2 ? EB_ERROR_INVALID_ARGUMENT : EB_OK));
      packed.push_back(info.status == EB_OK ? kept_vectors(s, k) : std::vector<float>{});
    }
    size_t at = 0;
    for (size_t k = 0; k < lengths.size(); at += lengths[k], ++k) {
      if (k == 2) continue;
      INFO("sequence " << k);
      REQUIRE(eb_session_run_ids(s, ids.data() + at, nullptr, mask.data() + at, lengths[k]) == EB_OK);
      const std::vector<float> single = kept_vectors(s, 0);
      if (fp32)
        CHECK(max_abs_diff(packed[k], single) < 1e-5);
      else
        CHECK(packed[k] == single);
    }
    CHECK(max_abs_diff(packed[0], packed[3]) > 1e-2);  // the mask is not ignored
    // a NULL mask: eb_session_run_ids_batch
    REQUIRE(eb_session_run_ids_batch_masked(s, ids.data(), nullptr, nullptr, lengths.data(), 2, &consumed) == EB_OK);
    const std::vector<float> a = kept_vectors(s, 1);
    REQUIRE(eb_session_run_ids_batch(s, ids.data(), nullptr, lengths.data(), 2, &consumed) == EB_OK);
    CHECK(kept_vectors(s, 1) == a);
    CHECK(eb_session_run_ids_batch_masked(s, nullptr, nullptr, mask.data(), lengths.data(), 2, &consumed) ==
          EB_ERROR_INVALID_ARGUMENT);
    CHECK(eb_session_run_ids_batch_masked(nullptr, ids.data(), nullptr, mask.data(), lengths.data(), 2, &consumed) ==
          EB_ERROR_INVALID_ARGUMENT);
  });
}

// A ModernBERT ColBERT folder (colbert_numpy.make_modernbert: families/modernbert_model, byte-level
// BPE, rotary, sliding windows of 8 under 20-token queries, + PyLate Dense and conventions): its
// queries' and documents' ids as PyLate lays out HF's tokens, their rows against the float64
// reference (fp32 2e-3, int8 row cosine > 0.98), the documents pooled as PyLate pools them, and
// packed runs of the texts equal to their single runs; 1 and 2 threads, fp32 and int8.
TEST_CASE("a ModernBERT PyLate folder: queries, documents, pooling and packed runs match PyLate", "[colbert]") {
  const std::string cases_dir = ref_dir() + "/colbert_modernbert_cases/";
  std::vector<TextCase> cases;
  {
    std::ifstream f(cases_dir + "text_cases.txt");
    std::string line;
    while (std::getline(f, line)) {
      const size_t a = line.find(' '), b = line.find(' ', a + 1);
      cases.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
    }
  }
  REQUIRE(cases.size() == 3);
  for (const char* kind : {"fp32", "int8"})
    for (int threads : {1, 2}) {
      INFO(kind << ", " << threads << " threads");
      const bool fp32 = std::string(kind) == "fp32";
      ModelHandle m;
      SessionHandle s;
      open(ebm_path("colbert_modernbert", kind), threads, &m, &s);
      std::map<std::string, std::vector<float>> single;
      for (const TextCase& c : cases) {
        INFO(c.name << ": " << c.text);
        REQUIRE(eb_session_set_colbert_input(s.s, input_of(c.kind)) == EB_OK);
        REQUIRE(eb_session_run_text(s.s, c.text.c_str()) == EB_OK);
        size_t n = 0;
        const std::vector<float> ref = read_f32(cases_dir + c.name + ".f32");
        const std::vector<float> v = check_text_run(s.s, read_ints(cases_dir + c.name + ".ids.txt"), ref, fp32, &n);
        single[c.name] = v;
        if (c.kind != "document") continue;
        const std::vector<float> want = read_f32(cases_dir + c.name + "_f2.pool_out.f32");
        const std::vector<float> p = pooled(v, kDim, 2);
        REQUIRE(p.size() == want.size());
        if (fp32) CHECK(max_abs_diff(p, want) < 2e-3);
        // int8 moves rows by ~0.5% of MaxSim, and a cut between two close merges (here 1.067 vs
        // 1.118) can move one row to another cluster: pooled int8 within 3% (unpooled: 1%)
        const std::vector<float> q = read_f32(cases_dir + "query.f32");
        CHECK(std::fabs(maxsim(q, v) - maxsim(q, ref)) < 0.01 * std::fabs(maxsim(q, ref)));
        CHECK(std::fabs(maxsim(q, p) - maxsim(q, want)) < (fp32 ? 0.01 : 0.03) * std::fabs(maxsim(q, want)));
      }
      // packed: both documents in one run, then the query with a document's text as a query
      for (const char* mode : {"document", "query"}) {
        std::vector<const char*> texts;
        std::vector<std::string> names;
        for (const TextCase& c : cases)
          if (c.kind == "document") texts.push_back(c.text.c_str()), names.push_back(c.name);
        REQUIRE(eb_session_set_colbert_input(s.s, input_of(mode)) == EB_OK);
        std::vector<std::vector<float>> want;
        for (const char* t : texts) {
          REQUIRE(eb_session_run_text(s.s, t) == EB_OK);
          want.push_back(kept_vectors(s.s, 0));
        }
        size_t consumed = 0;
        REQUIRE(eb_session_run_texts(s.s, texts.data(), texts.size(), &consumed) == EB_OK);
        REQUIRE(consumed == texts.size());
        for (size_t k = 0; k < texts.size(); ++k) {
          INFO("packed " << mode << " " << names[k]);
          if (fp32)
            CHECK(max_abs_diff(kept_vectors(s.s, k), want[k]) < 1e-5);
          else
            CHECK(kept_vectors(s.s, k) == want[k]);
        }
        if (std::string(mode) == "document") CHECK(want[0] == single[names[0]]);
      }
    }
}
