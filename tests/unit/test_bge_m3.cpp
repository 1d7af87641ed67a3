// SPDX-License-Identifier: Apache-2.0
// test_bge_m3.cpp: bge-m3's three outputs (issue 25, item 3). A bge-m3 folder
// (tests/reference/bge_m3_numpy.py via make_testdata: an XLMRobertaModel in a CLS + Normalize
// sentence-transformers folder with sparse_linear / colbert_linear as .safetensors; converted by
// convert_all.sh into ebm/bge_m3.*.ebm) converts to task BGE_M3, and one run gives the dense
// sentence embedding, the sparse weights per token id and the ColBERT vectors without [CLS], each
// against the float64 FlagEmbedding-semantics reference: fp32 within 2e-3; int8 dense / row cosines,
// the same top-10 sparse ids and MaxSim within 1%. Packed runs equal single runs, 1 and 2 threads
// agree, padding gives zero ColBERT rows, the CLI dumps both vectors, and bad head files are
// one-line errors (a .pt with the torch command).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "converter/converter.h"
#include "family_manifest.h"
#include "conversion_error.h"
#include "test_support.h"

using namespace edgebert::test;
namespace fs = std::filesystem;

namespace {

const char* const kBgeCases[] = {"query", "doc_a", "doc_b", "doc_long", "padded", "cls_only"};
const char* const kUnpadded[] = {"query", "doc_a", "doc_b", "doc_long"};
constexpr size_t kDim = 40, kHidden = 64, kVocab = 512;

std::string case_file(const std::string& c, const std::string& what) { return testdata_dir() + "/bge_m3_cases/" + c + what; }

void open(const std::string& path, int threads, ModelHandle* m, SessionHandle* s) {
  open_model_session(path, threads, 96, 160, m, s);
}

std::vector<float> output(eb_session* s, eb_output which, size_t rows, size_t width) {
  const float* p = nullptr;
  int64_t shape[2] = {0, 0};
  int32_t rank = 0;
  REQUIRE(eb_session_get_output(s, which, &p, shape, &rank) == EB_OK);
  if (rank == 2) {
    REQUIRE(static_cast<size_t>(shape[0]) == rows);
    REQUIRE(static_cast<size_t>(shape[1]) == width);
  } else {
    REQUIRE(rows == 1);
    REQUIRE(static_cast<size_t>(shape[0]) == width);
  }
  return std::vector<float>(p, p + rows * width);
}

struct Outputs {
  std::vector<float> dense, sparse, colbert;
};

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b, size_t offset = 0) {
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::fabs(double(a[i]) - b[offset + i]));
  return e;
}

// Ids of the k largest positive entries, largest first (equal: the lower id first).
std::vector<int32_t> top_ids(const std::vector<float>& v, size_t k) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] > 0) ids.push_back(static_cast<int32_t>(i));
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return v[a] > v[b]; });
  if (ids.size() > k) ids.resize(k);
  return ids;
}

float maxsim(const std::vector<float>& q, const std::vector<float>& d) {
  float score = 0.f;
  REQUIRE(eb_maxsim(q.data(), q.size() / kDim, d.data(), d.size() / kDim, kDim, &score) == EB_OK);
  return score;
}

}  // namespace

TEST_CASE("bge-m3's dense, sparse and ColBERT outputs match the float64 reference, single and packed", "[bge_m3]") {
  std::map<std::string, double> ref_scores;
  {
    std::ifstream f(testdata_dir() + "/bge_m3_cases/maxsim.txt");
    std::string q, d;
    double v;
    while (f >> q >> d >> v) ref_scores[q + " " + d] = v;
    REQUIRE(ref_scores.size() == 16);
  }
  for (const char* kind : {"fp32", "int8"}) {
    const bool fp32 = std::string(kind) == "fp32";
    std::map<std::string, Outputs> by_thread[2];
    for (int threads : {1, 2}) {
      INFO(kind << ", " << threads << " threads");
      ModelHandle m;
      SessionHandle s;
      open(ebm_path("bge_m3", kind), threads, &m, &s);
      eb_model_info info;
      REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
      CHECK(info.task == EB_TASK_BGE_M3);
      CHECK(info.num_labels == static_cast<int32_t>(kDim));
      for (const char* c : kBgeCases) {
        INFO(c);
        const std::vector<int32_t> ids = read_ints(case_file(c, ".ids.txt")), mask = read_ints(case_file(c, ".mask.txt"));
        const size_t n = ids.size();
        const std::vector<float> ref_dense = read_f32(case_file(c, ".dense.f32"));
        const std::vector<float> ref_sparse = read_f32(case_file(c, ".sparse.f32"));
        const std::vector<float> ref_colbert = read_f32(case_file(c, ".colbert.f32"));
        REQUIRE(ref_colbert.size() == (n - 1) * kDim);
        REQUIRE(eb_session_run_ids(s.s, ids.data(), nullptr, mask.data(), n) == EB_OK);  // the one run
        Outputs o{output(s.s, EB_OUTPUT_SENTENCE_EMBEDDING, 1, kHidden), output(s.s, EB_OUTPUT_SPARSE_EMBEDDING, 1, kVocab),
                  output(s.s, EB_OUTPUT_TOKEN_VECTORS, n - 1, kDim)};
        for (size_t t = 0; t + 1 < n; ++t) {  // padding: zero rows; the others normalized
          double norm = 0;
          for (size_t k = 0; k < kDim; ++k) norm += double(o.colbert[t * kDim + k]) * o.colbert[t * kDim + k];
          CHECK(std::sqrt(norm) == Approx(mask[t + 1] ? 1.0 : 0.0).margin(1e-5));
        }
        for (size_t i : {0u, 1u, 2u, 3u}) CHECK(o.sparse[i] == 0.f);  // cls, pad, eos, unk
        if (fp32) {
          CHECK(max_abs_diff(o.dense, ref_dense) < 2e-3);
          CHECK(max_abs_diff(o.sparse, ref_sparse) < 2e-3);
          CHECK(max_abs_diff(o.colbert, ref_colbert) < 2e-3);
        } else {
          CHECK(cosine(o.dense.data(), ref_dense.data(), kHidden) > 0.99);
          for (size_t t = 0; t + 1 < n; ++t)
            CHECK(cosine(&o.colbert[t * kDim], &ref_colbert[t * kDim], kDim) > 0.98);
          std::vector<int32_t> got = top_ids(o.sparse, 10), want = top_ids(ref_sparse, 10);  // the same ids (near
          std::sort(got.begin(), got.end());                                               // ties may swap order)
          std::sort(want.begin(), want.end());
          CHECK(got == want);
          // (beyond the issue's bar, the same top-10 ids above) the weights themselves: measured at
          // most 7.5% of the largest weight on Debian 12's XNNPACK (the padded case), 13% on Debian
          // 13's (the query case, whose largest weight is 0.22: 0.029 absolute)
          double biggest = 0;
          for (float w : ref_sparse) biggest = std::max(biggest, double(w));
          CHECK(max_abs_diff(o.sparse, ref_sparse) <= 0.2 * std::max(biggest, 1e-3));
        }
        // eb_session_sparse_top_k lists the same entries, largest first
        int32_t top[10];
        float w[10];
        size_t found = 0;
        REQUIRE(eb_session_sparse_top_k(s.s, 0, 10, 0.f, top, w, &found) == EB_OK);
        CHECK(std::vector<int32_t>(top, top + found) == top_ids(o.sparse, 10));
        by_thread[threads - 1][c] = o;
      }
      // packed: the unpadded cases in one run equal their single runs
      std::vector<int32_t> all_ids;
      std::vector<size_t> lengths;
      for (const char* c : kUnpadded) {
        const std::vector<int32_t> ids = read_ints(case_file(c, ".ids.txt"));
        all_ids.insert(all_ids.end(), ids.begin(), ids.end());
        lengths.push_back(ids.size());
      }
      size_t consumed = 0;
      REQUIRE(eb_session_run_ids_batch(s.s, all_ids.data(), nullptr, lengths.data(), lengths.size(), &consumed) == EB_OK);
      REQUIRE(consumed == lengths.size());
      const size_t count = lengths.size();
      const std::vector<float> dense = output(s.s, EB_OUTPUT_SENTENCE_EMBEDDING, count, kHidden);
      const std::vector<float> sparse = output(s.s, EB_OUTPUT_SPARSE_EMBEDDING, count, kVocab);
      const std::vector<float> colbert = output(s.s, EB_OUTPUT_TOKEN_VECTORS, all_ids.size() - count, kDim);
      size_t row = 0;
      for (size_t i = 0; i < count; ++i) {
        INFO("packed sequence " << i);
        eb_sequence_info si;
        REQUIRE(eb_session_get_sequence(s.s, i, &si) == EB_OK);
        REQUIRE(static_cast<size_t>(si.tokens) == lengths[i]);
        const Outputs& single = by_thread[threads - 1][kUnpadded[i]];
        CHECK(max_abs_diff(single.dense, dense, i * kHidden) < 1e-5);
        CHECK(max_abs_diff(single.sparse, sparse, i * kVocab) < 1e-5);
        CHECK(max_abs_diff(single.colbert, colbert, row * kDim) < 1e-5);
        row += lengths[i] - 1;
      }
      // MaxSim of the ColBERT outputs against the reference's (fp32 tight, int8 within 1%)
      for (const char* q : kUnpadded)
        for (const char* d : kUnpadded) {
          INFO(q << " vs " << d);
          const double want = ref_scores.at(std::string(q) + " " + d);
          const double got = maxsim(by_thread[threads - 1][q].colbert, by_thread[threads - 1][d].colbert);
          CHECK(std::fabs(got - want) <= (fp32 ? 1e-3 : 0.01) * std::fabs(want));
        }
    }
    for (const char* c : kBgeCases) {
      INFO("1 vs 2 threads: " << c);
      CHECK(max_abs_diff(by_thread[0][c].dense, by_thread[1][c].dense) < 1e-5);
      CHECK(max_abs_diff(by_thread[0][c].sparse, by_thread[1][c].sparse) < 1e-5);
      CHECK(max_abs_diff(by_thread[0][c].colbert, by_thread[1][c].colbert) < 1e-5);
    }
  }
}

TEST_CASE("edgebert-run dumps bge-m3's sparse_embedding and token_vectors", "[bge_m3][cli]") {
  const char* bin = std::getenv("EDGEBERT_BIN");
  REQUIRE(bin);
  TempDir tmp;
  const std::string sparse = tmp.path + "/sparse.f32", vectors = tmp.path + "/vectors.f32", out = tmp.path + "/out.txt";
  std::string ids;
  for (int32_t id : read_ints(case_file("doc_a", ".ids.txt"))) ids += (ids.empty() ? "" : " ") + std::to_string(id);
  const std::string run = std::string(bin) + "/edgebert-run --model " + ebm_path("bge_m3", "fp32") + " --ids '" + ids + "'";
  REQUIRE(std::system((run + " --dump sparse_embedding=" + sparse + " --dump token_vectors=" + vectors + " > " + out).c_str()) == 0);
  CHECK(max_abs_diff(read_f32(sparse), read_f32(case_file("doc_a", ".sparse.f32"))) < 2e-3);
  CHECK(read_f32(sparse).size() == kVocab);
  CHECK(read_f32(vectors).size() == read_f32(case_file("doc_a", ".colbert.f32")).size());
  CHECK(max_abs_diff(read_f32(vectors), read_f32(case_file("doc_a", ".colbert.f32"))) < 2e-3);
  std::ifstream summary(out);
  const std::string text((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
  CHECK(text.find("bge-m3") != std::string::npos);
  CHECK(text.find("sentence_embedding: [64]") != std::string::npos);
  CHECK(text.find("token_vectors: [8, 40]") != std::string::npos);
  REQUIRE(std::system((run + " --sparse --top-k 3 > " + out).c_str()) == 0);
  std::ifstream f(out);
  const std::vector<int32_t> want = top_ids(read_f32(sparse), 3);
  std::string line;
  size_t n = 0;
  while (std::getline(f, line)) {
    std::istringstream is(line);
    int id = -1;
    float w = 0;
    REQUIRE(bool(is >> id >> w));
    REQUIRE(n < want.size());
    CHECK(id == want[n++]);
  }
  CHECK(n == want.size());
}

TEST_CASE("bge-m3 folders: bad or missing head files are one-line errors", "[bge_m3]") {
  const fs::path src = testdata_dir() + "/bge_m3";
  const fs::path bad = fs::temp_directory_path() / "eb_bge_m3_bad";
  auto expect_error = [&](const std::string& needle, void (*change)(const fs::path&)) {
    fs::remove_all(bad);
    fs::copy(src, bad, fs::copy_options::recursive);
    change(bad);
    const std::string msg = conversion_error(bad.string());
    INFO(msg);
    CHECK(msg.find(needle) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  };
  // a .pt only: never unpickled, the one-line torch conversion instead
  expect_error("weights_only=True), '", [](const fs::path& d) {
    fs::remove(d / "sparse_linear.safetensors");
    std::ofstream(d / "sparse_linear.pt") << "PK";
  });
  expect_error("has only one of", [](const fs::path& d) { fs::remove(d / "colbert_linear.safetensors"); });
  expect_error("tensor 'weight' has shape [40, 64], expected [1, 64]", [](const fs::path& d) {
    fs::copy_file(d / "colbert_linear.safetensors", d / "sparse_linear.safetensors", fs::copy_options::overwrite_existing);
  });
  expect_error("names no unk_token", [](const fs::path& d) {
    std::ofstream(d / "tokenizer_config.json") << R"({"cls_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>"})";
    fs::remove(d / "special_tokens_map.json");
  });
  expect_error("unk_token '<nope>' is not in", [](const fs::path& d) {
    std::ofstream(d / "tokenizer_config.json")
        << R"({"cls_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<nope>"})";
  });
  expect_error("must be CLS pooling and Normalize", [](const fs::path& d) {
    std::ofstream(d / "modules.json")
        << R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},)"
        << R"({"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}])";
  });
  fs::remove_all(bad);
}
