// SPDX-License-Identifier: Apache-2.0
// test_external_payloads.cpp: model files whose tensor payloads follow the FlatBuffer
// (schema_version 7, written when the payloads would pass FlatBuffers' 2 GiB, e.g.
// Qwen3-Embedding-0.6B in fp32). The converter's inline limit is lowered so that small test models
// are written that way: every family kind (BERT, Qwen3 last-token, Gemma 3 with Dense modules) in
// fp32, int8 and int4 gives the same bytes of every output as its inline file, from memory and from
// a mapped file with and without a weight cache, 1 and 2 threads, single and packed runs; the file
// layout is as documented (payloads 64-byte aligned after the FlatBuffer, the content id the hash
// of the whole file); and crafted external offsets, sizes and starts, a cut file and an old
// schema_version claiming external payloads are one-line load errors, never a read outside the file.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "content_hash.h"
#include "converter/converter.h"
#include "edgebert/edgebert.h"
#include "edgebert_generated.h"
#include "test_support.h"

using namespace edgebert::test;
using namespace edgebert::convert;
namespace fb = edgebert::fb;
namespace fs = std::filesystem;

namespace {

struct Kind {
  const char* dir;  // under testdata
  const char* precision;  // fp32, int8, int4
};

const Kind kKinds[] = {{"h128_4x32", "fp32"},
                       {"h128_4x32", "int8"},
                       {"families/qwen3_st_lasttoken", "fp32"},
                       {"families/qwen3_st_lasttoken", "int8"},
                       {"families/qwen3_st_lasttoken", "int4"},
                       {"families/gemma3_st_dense", "fp32"},
                       {"families/gemma3_st_dense", "int8"}};

ConvertResult convert_kind(const Kind& k, uint64_t inline_limit) {
  ConvertOptions o;
  o.input_dir = testdata_dir() + "/" + k.dir;
  o.fp32 = std::string(k.precision) == "fp32";
  o.int4 = std::string(k.precision) == "int4";
  o.quiet = true;
  o.max_seq_len = 64;
  o.inline_payload_limit = inline_limit;
  return convert_checkpoint(o);
}

std::vector<uint8_t> bytes_of(const ConvertResult& r) { return {r.buffer.data(), r.buffer.data() + r.buffer.size()}; }

std::string write_temp(const std::vector<uint8_t>& bytes, const std::string& name) {
  const std::string path = (fs::temp_directory_path() / ("eb_external_" + std::to_string(getpid()) + "_" + name)).string();
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
  return path;
}

// Every output a run leaves, as bytes: a single run of one sequence and a packed run of three.
std::vector<std::vector<float>> run_all(eb_model* m, int threads) {
  SessionHandle s;
  open_session(m, threads, s);
  eb_model_info info{};
  REQUIRE(eb_model_get_info(m, &info) == EB_OK);
  std::vector<std::vector<float>> outs;
  auto grab = [&]() {
    for (eb_output which : {EB_OUTPUT_LAST_HIDDEN_STATE, EB_OUTPUT_POOLER_OUTPUT, EB_OUTPUT_SENTENCE_EMBEDDING,
                            EB_OUTPUT_LOGITS}) {
      const float* data = nullptr;
      int64_t shape[2] = {0, 0};
      int32_t rank = 0;
      if (eb_session_get_output(s.s, which, &data, shape, &rank) != EB_OK) continue;
      size_t n = 1;
      for (int32_t i = 0; i < rank; ++i) n *= static_cast<size_t>(shape[i]);
      outs.emplace_back(data, data + n);
    }
  };
  std::vector<int32_t> ids;
  for (int i = 0; i < 11; ++i) ids.push_back((3 + 7 * i) % info.vocab_size);
  REQUIRE(eb_session_run_ids(s.s, ids.data(), nullptr, nullptr, ids.size()) == EB_OK);
  grab();
  const size_t lens[3] = {11, 1, 6};
  std::vector<int32_t> batch;
  for (size_t b = 0; b < 3; ++b)
    for (size_t t = 0; t < lens[b]; ++t) batch.push_back(ids[(t + b) % ids.size()]);
  size_t consumed = 0;
  REQUIRE(eb_session_run_ids_batch(s.s, batch.data(), nullptr, lens, 3, &consumed) == EB_OK);
  REQUIRE(consumed == 3);
  grab();
  REQUIRE(!outs.empty());
  return outs;
}

std::string load_error(const std::vector<uint8_t>& bytes) {
  AlignedBuffer buf(bytes);
  eb_model* m = nullptr;
  char err[512] = "";
  const eb_status st = eb_model_load_memory(buf.data, buf.size, &m, err, sizeof err);
  eb_model_free(m);
  return st == EB_OK ? std::string() : std::string(err);
}

// The first external tensor's table in `bytes` (a mutable view for crafting).
fb::Tensor* first_external(std::vector<uint8_t>& bytes) {
  fb::Model* m = fb::GetMutableModel(bytes.data());
  for (flatbuffers::uoffset_t i = 0; i < m->layers()->size(); ++i) {
    auto* w = m->mutable_layers()->GetMutableObject(i)->mutable_intermediate()->mutable_weight();
    if (w->external_size() != 0) return w;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("files with payloads after the FlatBuffer give the same bytes as inline ones, every kind and run mode",
          "[external]") {
  for (const Kind& k : kKinds) {
    DYNAMIC_SECTION(k.dir << " " << k.precision) {
      const ConvertResult inline_file = convert_kind(k, 0);
      const ConvertResult external_file = convert_kind(k, 1);  // every payload of 4 KiB or more outside
      const std::vector<uint8_t> in_bytes = bytes_of(inline_file), ex_bytes = bytes_of(external_file);

      // The layout: version 7 (8 with a tokenizer or a vocabulary: their tables), the FlatBuffer
      // then 64-byte aligned payloads, inside the file.
      const fb::Model* im = fb::GetModel(in_bytes.data());
      const fb::Model* em = fb::GetModel(ex_bytes.data());
      const uint32_t tables = kTokenTablesSchemaVersion;
      const bool has_tables = im->tokenizer() || im->vocab();
      CHECK(im->schema_version() < (has_tables ? tables + 1 : 7));
      CHECK(im->external_data_start() == 0);
      CHECK(em->schema_version() == (has_tables ? tables : 7));
      const uint64_t start = em->external_data_start();
      REQUIRE(start > 0);
      CHECK(start % 64 == 0);
      CHECK(ex_bytes.size() % 64 == 0);
      flatbuffers::Verifier v(ex_bytes.data(), start, 64, 1000000);
      CHECK(fb::VerifyModelBuffer(v));
      size_t external = 0;
      uint64_t payload_bytes = 0;
      for (const auto* layer : *em->layers()) {
        const auto* w = layer->intermediate()->weight();
        if (w->external_size() == 0) continue;
        ++external;
        CHECK(w->data()->size() == 0);
        CHECK(w->external_offset() % 64 == 0);
        CHECK(start + w->external_offset() + w->external_size() <= ex_bytes.size());
        payload_bytes += w->external_size();
      }
      CHECK(external == em->layers()->size());
      CHECK(ex_bytes.size() >= start + payload_bytes);
      // The content id is the hash of the whole file with the id bytes zero.
      {
        std::vector<uint8_t> zeroed = ex_bytes;
        const size_t at = static_cast<size_t>(em->content_id()->data() - ex_bytes.data());
        std::fill(zeroed.begin() + static_cast<long>(at), zeroed.begin() + static_cast<long>(at) + 16, uint8_t(0));
        const edgebert::ContentId expect = edgebert::content_hash128(zeroed.data(), zeroed.size());
        CHECK(std::memcmp(expect.data(), em->content_id()->data(), 16) == 0);
      }

      // The same outputs, bit for bit: from memory, from a mapped file, with a weight cache.
      AlignedBuffer in_buf(in_bytes), ex_buf(ex_bytes);
      ModelHandle in_model, ex_model;
      char err[512] = "";
      REQUIRE(eb_model_load_memory(in_buf.data, in_buf.size, &in_model.m, err, sizeof err) == EB_OK);
      INFO(err);
      REQUIRE(eb_model_load_memory(ex_buf.data, ex_buf.size, &ex_model.m, err, sizeof err) == EB_OK);
      for (int threads : {1, 2}) CHECK(run_all(ex_model.m, threads) == run_all(in_model.m, threads));

      const std::string path = write_temp(ex_bytes, std::string(k.precision) + ".ebm");
      const std::string cache = path + ".cache";
      for (bool with_cache : {false, true, true}) {  // no cache, then created, then loaded
        eb_load_options lo;
        eb_load_options_init(&lo);
        lo.weight_cache_path = with_cache ? cache.c_str() : nullptr;
        ModelHandle mapped;
        REQUIRE(eb_model_load_file_with_options(path.c_str(), &lo, &mapped.m, err, sizeof err) == EB_OK);
        CHECK(run_all(mapped.m, 1) == run_all(in_model.m, 1));
      }
      std::remove(path.c_str());
      std::remove(cache.c_str());
    }
  }
}

TEST_CASE("crafted external payloads are one-line load errors, never a read outside the file", "[external]") {
  const ConvertResult r = convert_kind(kKinds[1], 1);
  const std::vector<uint8_t> good = bytes_of(r);
  REQUIRE(load_error(good).empty());
  const uint64_t start = fb::GetModel(good.data())->external_data_start();
  const uint64_t region = good.size() - start;

  struct Craft {
    const char* what;
    uint64_t offset;      // ~0: unchanged
    uint64_t size;        // ~0: unchanged
    const char* message;  // part of the error
  };
  const uint64_t keep = ~uint64_t(0);
  const Craft crafts[] = {
      {"offset that overflows offset + size", (uint64_t(1) << 63) - 64, keep, "beyond the end of the file"},
      {"offset just past the end", (region + 64) / 64 * 64, keep, "beyond the end of the file"},
      {"size past the end", keep, region + 1, "beyond the end of the file"},
      {"size of 2^64 - 1", keep, ~uint64_t(0) - 1, "beyond the end of the file"},
      {"misaligned offset", 32, keep, "not 64-byte aligned"},
      {"size that disagrees with the shape", keep, 64, "payload has 64 bytes"},
  };
  for (const Craft& c : crafts) {
    DYNAMIC_SECTION(c.what) {
      std::vector<uint8_t> bad = good;
      fb::Tensor* t = first_external(bad);
      REQUIRE(t);
      if (c.offset != keep) REQUIRE(t->mutate_external_offset(c.offset));
      if (c.size != keep) REQUIRE(t->mutate_external_size(c.size));
      const std::string e = load_error(bad);
      INFO(e);
      CHECK(e.find(c.message) != std::string::npos);
    }
  }
  SECTION("external_data_start past the end, misaligned, or zero with external tensors") {
    for (uint64_t s : {uint64_t(good.size()) + 64, start + 8, uint64_t(0)}) {
      std::vector<uint8_t> bad = good;
      REQUIRE(fb::GetMutableModel(bad.data())->mutate_external_data_start(s));
      const std::string e = load_error(bad);
      INFO(s << ": " << e);
      CHECK(!e.empty());
    }
  }
  SECTION("an older schema_version claiming external payloads") {
    std::vector<uint8_t> bad = good;
    REQUIRE(fb::GetMutableModel(bad.data())->mutate_schema_version(6));
    CHECK(load_error(bad).find("has external payloads (schema_version 7)") != std::string::npos);
  }
  SECTION("a file cut inside its payloads") {
    for (uint64_t cut : {uint64_t(64), region / 2 / 64 * 64, region}) {
      std::vector<uint8_t> bad(good.begin(), good.end() - static_cast<long>(cut));
      const std::string e = load_error(bad);
      INFO(cut << ": " << e);
      CHECK(!e.empty());
    }
  }
}
