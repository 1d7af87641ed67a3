// SPDX-License-Identifier: Apache-2.0
// test_converter.cpp: the converter pipeline: quantization round trips, --keep-fp32 patterns,
// a converted model read back through the FlatBuffers verifier with every field checked against
// the checkpoint, mixed-precision models running correctly, and bad input producing a one-line
// error, a non-zero exit and no (or an untouched) output file. Task heads: every architecture
// (BERT / DistilBERT heads, sentence-transformers folders) converts and reads back with the right
// task, labels, pooling and activation; the float reference follows the architecture; unknown
// architectures, unused tensors and malformed modules.json / pooling configs are errors, and
// training-only tensors give notes.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/checkpoint/safetensors.h"
#include "converter/converter.h"
#include "converter/gptq.h"
#include "converter/quantization.h"
#include "converter/calibration.h"
#include "content_hash.h"
#include "converter/reference_bert.h"
#include "edgebert_generated.h"
#include "test_support.h"

using namespace edgebert::test;
using namespace edgebert::convert;
namespace fs = std::filesystem;
namespace fb = edgebert::fb;

TEST_CASE("per-channel weight quantization reproduces weights within half a step", "[quant]") {
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.f, 1.f);
  const size_t rows = 37, cols = 53;
  std::vector<float> w(rows * cols);
  for (size_t i = 0; i < w.size(); ++i) w[i] = nd(rng) * (1 + (i / cols) * 3.f);  // very different row ranges
  std::fill(w.begin() + 5 * cols, w.begin() + 6 * cols, 0.f);                       // an all-zero row
  const RowQuantized q = quantize_rows_symmetric(w.data(), rows, cols);
  REQUIRE(q.scales.size() == rows);
  for (size_t r = 0; r < rows; ++r) {
    CHECK(q.scales[r] > 0);
    for (size_t c = 0; c < cols; ++c) {
      const float back = q.q[r * cols + c] * q.scales[r];
      CHECK(std::fabs(back - w[r * cols + c]) <= 0.5f * q.scales[r] * 1.0001f);
      CHECK(q.q[r * cols + c] >= -127);
    }
  }
}

TEST_CASE("activation parameters represent zero exactly and cover the range", "[quant]") {
  for (auto [lo, hi] : {std::pair{-3.f, 5.f}, {0.f, 7.f}, {-2.f, -1.f}, {0.5f, 0.6f}, {0.f, 0.f}}) {
    const ActivationQuant q = affine_from_range(lo, hi);
    CHECK(q.scale > 0);
    CHECK(q.zero_point >= -128);
    CHECK(q.zero_point <= 127);
    float z = 0.f;
    fake_quantize(&z, 1, q);
    CHECK(z == 0.f);
    float a = lo, b = hi;
    fake_quantize(&a, 1, q);
    fake_quantize(&b, 1, q);
    CHECK(std::fabs(a - lo) <= q.scale * 0.51f + 1e-6f);
    CHECK(std::fabs(b - hi) <= q.scale * 0.51f + 1e-6f);
  }
}

TEST_CASE("--keep-fp32 patterns", "[converter]") {
  CHECK(gemm_name_matches("layer.*.output", "layer.3.output"));
  CHECK_FALSE(gemm_name_matches("layer.*.output", "layer.3.attention.output"));
  CHECK(gemm_name_matches("layer.**.output", "layer.3.attention.output"));
  CHECK(gemm_name_matches("**", "layer.11.intermediate"));
  CHECK(gemm_name_matches("layer.1?.intermediate", "layer.11.intermediate"));
  CHECK_FALSE(gemm_name_matches("layer.1?.intermediate", "layer.1.intermediate"));
  CHECK(gemm_name_matches("layer.0.attention.qkv", "layer.0.attention.qkv"));
  CHECK_FALSE(gemm_name_matches("layer.0", "layer.0.attention.qkv"));
}

namespace {

// A written Vocabulary's tokens: schema_version 8 leaves `tokens` empty and carries one text and
// each token's end, with the WordPiece lookup tables.
std::vector<std::string> file_tokens(const fb::Vocabulary* v) {
  CHECK(v->tokens()->size() == 0);
  REQUIRE(v->text());
  REQUIRE(v->ends());
  CHECK(v->tables());
  std::vector<std::string> out;
  uint32_t begin = 0;
  for (uint32_t end : *v->ends()) {
    REQUIRE(end >= begin);
    REQUIRE(end <= v->text()->size());
    out.emplace_back(reinterpret_cast<const char*>(v->text()->data()) + begin, end - begin);
    begin = end;
  }
  return out;
}

void check_f32_tensor(const fb::Tensor* t, const std::vector<float>& expect, std::vector<int64_t> shape) {
  REQUIRE(t);
  CHECK(t->dtype() == fb::DType::F32);
  CHECK(std::vector<int64_t>(t->shape()->begin(), t->shape()->end()) == shape);
  REQUIRE(t->data()->size() == expect.size() * 4);
  CHECK(reinterpret_cast<uintptr_t>(t->data()->data()) % 64 == 0);
  CHECK(std::memcmp(t->data()->data(), expect.data(), expect.size() * 4) == 0);
}

// `factors` (optional, one per column): the SmoothQuant factors folded into the weights, i.e. the
// int8 tensor holds expect[r, c] * factors[c]. Rows may be clipped below their absmax (the
// converter's weight clipping): values beyond +-127 steps must then be saturated.
void check_i8_tensor(const fb::Tensor* t, const float* expect, int64_t rows, int64_t cols,
                     const flatbuffers::Vector<float>* factors = nullptr) {
  REQUIRE(t);
  CHECK(t->dtype() == fb::DType::I8);
  CHECK(std::vector<int64_t>(t->shape()->begin(), t->shape()->end()) == std::vector<int64_t>{rows, cols});
  REQUIRE(t->data()->size() == static_cast<size_t>(rows * cols));
  REQUIRE(t->scales());
  REQUIRE(t->scales()->size() == static_cast<size_t>(rows));
  CHECK(reinterpret_cast<uintptr_t>(t->data()->data()) % 64 == 0);
  const int8_t* q = reinterpret_cast<const int8_t*>(t->data()->data());
  size_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const float s = t->scales()->Get(r);
      const float e = expect[r * cols + c] * (factors ? factors->Get(static_cast<flatbuffers::uoffset_t>(c)) : 1.f);
      if (std::fabs(e) > 127.5f * s) {
        bad += q[r * cols + c] != (e > 0 ? 127 : -127);
      } else {
        bad += std::fabs(q[r * cols + c] * s - e) > 0.5001f * s;
      }
    }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("a converted model reads back through the verifier with every field checked", "[converter]") {
  const std::string dir = testdata_dir() + "/h128_4x32";
  for (bool fp32 : {true, false}) {
    ConvertOptions o;
    o.input_dir = dir;
    o.fp32 = fp32;
    o.quiet = true;
    o.max_seq_len = 64;
    o.calibration_file = testdata_dir() + "/calib.txt";
    ConvertResult r = convert_checkpoint(o);
    AlignedBuffer buf(std::vector<uint8_t>(r.buffer.data(), r.buffer.data() + r.buffer.size()));
    flatbuffers::Verifier v(buf.data, buf.size);
    REQUIRE(fb::VerifyModelBuffer(v));
    CHECK(buf.size % 64 == 0);
    const fb::Model* m = fb::GetModel(buf.data);
    CHECK(m->schema_version() == edgebert::convert::kTokenTablesSchemaVersion);  // the vocabulary's tables
    // content id: 16 bytes, the hash of the buffer with the id bytes zero
    REQUIRE(m->content_id());
    REQUIRE(m->content_id()->size() == 16);
    {
      std::vector<uint8_t> zeroed(buf.data, buf.data + buf.size);
      const size_t at = static_cast<size_t>(m->content_id()->data() - buf.data);
      std::fill(zeroed.begin() + static_cast<long>(at), zeroed.begin() + static_cast<long>(at) + 16, uint8_t(0));
      const edgebert::ContentId expect = edgebert::content_hash128(zeroed.data(), zeroed.size());
      CHECK(std::equal(expect.begin(), expect.end(), m->content_id()->begin()));
      CHECK(std::count(expect.begin(), expect.end(), uint8_t(0)) < 16);
    }
    CHECK(m->task() == fb::Task::SEQUENCE_CLASSIFICATION);
    REQUIRE(m->labels());
    CHECK(m->labels()->size() == 3);
    CHECK(m->labels()->Get(2)->str() == "LABEL_2");
    CHECK(m->config()->model_type()->str() == "bert");
    CHECK(m->config()->hidden_act() == fb::Activation::GELU);
    CHECK(m->embeddings()->token_type());
    CHECK_FALSE(m->pre_classifier());
    CHECK_FALSE(m->sentence_pooling());
    CHECK(std::string(m->producer()->c_str()).rfind("edgebert-convert", 0) == 0);
    CHECK(m->precision() == (fp32 ? fb::Precision::FP32 : fb::Precision::INT8));

    HfBertCheckpoint ck = HfBertCheckpoint::open(dir);
    const BertConfig& c = ck.config();
    const fb::Config* mc = m->config();
    CHECK(mc->hidden_size() == c.hidden_size);
    CHECK(mc->num_attention_heads() == c.num_attention_heads);
    CHECK(mc->num_hidden_layers() == c.num_hidden_layers);
    CHECK(mc->intermediate_size() == c.intermediate_size);
    CHECK(mc->vocab_size() == c.vocab_size);
    CHECK(mc->max_position_embeddings() == 64);
    CHECK(mc->type_vocab_size() == c.type_vocab_size);
    CHECK(mc->layer_norm_eps() == c.layer_norm_eps);
    CHECK(mc->num_labels() == 3);
    const int64_t H = c.hidden_size, I = c.intermediate_size;

    const Vocab vocab = read_vocab(dir);
    REQUIRE(m->vocab());
    CHECK(file_tokens(m->vocab()) == vocab.tokens);
    CHECK(m->vocab()->do_lower_case() == vocab.do_lower_case);
    CHECK(m->vocab()->cls_id() == 101);
    CHECK(m->vocab()->sep_id() == 102);
    CHECK(m->vocab()->unk_id() == 100);
    CHECK(m->vocab()->pad_id() == 0);

    std::vector<float> w, w2;
    ck.load("embeddings.word_embeddings.weight", {c.vocab_size, H}, w);
    if (fp32) {
      check_f32_tensor(m->embeddings()->word(), w, {c.vocab_size, H});
    } else {
      check_i8_tensor(m->embeddings()->word(), w.data(), c.vocab_size, H);
    }
    ck.load("embeddings.position_embeddings.weight", {c.max_position_embeddings, H}, w);
    w.resize(64 * H);
    check_f32_tensor(m->embeddings()->position(), w, {64, H});
    ck.load("embeddings.token_type_embeddings.weight", {c.type_vocab_size, H}, w);
    check_f32_tensor(m->embeddings()->token_type(), w, {c.type_vocab_size, H});
    ck.load("embeddings.LayerNorm.weight", {H}, w);
    check_f32_tensor(m->embeddings()->norm()->gamma(), w, {H});

    REQUIRE(m->layers()->size() == static_cast<size_t>(c.num_hidden_layers));
    for (int l = 0; l < c.num_hidden_layers; ++l) {
      const fb::EncoderLayer* L = m->layers()->Get(l);
      const std::string p = "encoder.layer." + std::to_string(l) + ".";
      // fused QKV: Q rows, then K, then V
      std::vector<float> qkv, qkv_b;
      for (const char* part : {"query", "key", "value"}) {
        ck.load(p + "attention.self." + part + ".weight", {H, H}, w);
        qkv.insert(qkv.end(), w.begin(), w.end());
        ck.load(p + "attention.self." + part + ".bias", {H}, w);
        qkv_b.insert(qkv_b.end(), w.begin(), w.end());
      }
      struct G { const fb::Linear* lin; std::string hf; int64_t out, in; };
      std::vector<float> ao, up, down;
      for (const G& g : {G{L->attention_output(), "attention.output.dense", H, H}, G{L->intermediate(), "intermediate.dense", I, H},
                         G{L->output(), "output.dense", H, I}, G{L->qkv(), "", 3 * H, H}}) {
        std::vector<float> gw, gb;
        if (g.hf.empty()) {
          gw = qkv;
          gb = qkv_b;
        } else {
          ck.load(p + g.hf + ".weight", {g.out, g.in}, gw);
          ck.load(p + g.hf + ".bias", {g.out}, gb);
        }
        CHECK(g.lin->in_features() == g.in);
        CHECK(g.lin->out_features() == g.out);
        check_f32_tensor(g.lin->bias(), gb, {g.out});
        if (fp32) {
          CHECK(g.lin->precision() == fb::Precision::FP32);
          check_f32_tensor(g.lin->weight(), gw, {g.out, g.in});
          CHECK(g.lin->input_quant() == nullptr);
        } else {
          CHECK(g.lin->precision() == fb::Precision::INT8);
          check_i8_tensor(g.lin->weight(), gw.data(), g.out, g.in, g.lin->input_channel_factors());
          REQUIRE(g.lin->input_quant());
          REQUIRE(g.lin->output_quant());
          CHECK(g.lin->input_quant()->scale() > 0);
          CHECK(g.lin->input_quant()->observed_min() <= g.lin->input_quant()->observed_max());
        }
      }
      ck.load(p + "attention.output.LayerNorm.bias", {H}, w);
      check_f32_tensor(L->attention_norm()->beta(), w, {H});
      ck.load(p + "output.LayerNorm.weight", {H}, w);
      check_f32_tensor(L->output_norm()->gamma(), w, {H});
      if (!fp32) {
        // QKV output: symmetric, one scale per head and section
        const auto* s = L->qkv()->output_quant()->scales();
        REQUIRE(s);
        REQUIRE(s->size() == static_cast<size_t>(3 * H));
        CHECK(L->qkv()->output_quant()->zero_point() == 0);
        const int d = static_cast<int>(H) / c.num_attention_heads;
        for (int ch = 0; ch < 3 * H; ++ch) CHECK(s->Get(ch) == s->Get(ch - ch % d));
        CHECK(L->intermediate()->output_quant()->scales() == nullptr);
        CHECK(L->output()->output_quant()->scales()->size() == static_cast<size_t>(H));
      }
    }
    REQUIRE(m->pooler());
    ck.load("pooler.dense.weight", {H, H}, w);
    check_f32_tensor(m->pooler()->weight(), w, {H, H});
    REQUIRE(m->classifier());
    ck.load("classifier.weight", {3, H}, w);
    check_f32_tensor(m->classifier()->weight(), w, {3, H});
    if (!fp32) {
      REQUIRE(m->calibration());
      CHECK(m->calibration()->source()->str() == o.calibration_file);
      CHECK(m->calibration()->num_sequences() == 20 + 8 * 3);  // 20 lines + 1/2/3-token prefixes of 8
      CHECK(m->calibration()->num_tokens() > 100);
      CHECK(m->calibration()->method()->str() == "smoothquant+mse");  // the default scheme
      REQUIRE(r.report.size() == static_cast<size_t>(4 * c.num_hidden_layers));
      for (const GemmReportRow& row : r.report) {
        CHECK(row.int8);
        CHECK(row.total_rel_error > 0);
        CHECK(row.total_rel_error < 0.2);
      }
    } else {
      CHECK(m->calibration() == nullptr);
    }
  }
}

TEST_CASE("mixed precision (--keep-fp32) models run and stay accurate", "[converter][runtime]") {
  const std::vector<std::vector<std::string>> variants = {
      {"layer.*.output"},
      {"layer.0.attention.qkv", "layer.1.intermediate"},
      {"layer.0.attention.output", "layer.1.attention.qkv"},
      {"layer.1.**"}};
  const Case c = read_case("h128_4x32", "len20_types");
  for (const auto& keep : variants) {
    ConvertOptions o;
    o.input_dir = testdata_dir() + "/h128_4x32";
    o.keep_fp32 = keep;
    o.quiet = true;
    ConvertResult r = convert_checkpoint(o);
    int fp32_rows = 0;
    for (const auto& row : r.report) {
      bool match = false;
      for (const auto& p : keep) match |= gemm_name_matches(p, row.name);
      CHECK(row.int8 == !match);
      fp32_rows += !row.int8;
    }
    CHECK(fp32_rows > 0);
    AlignedBuffer buf(std::vector<uint8_t>(r.buffer.data(), r.buffer.data() + r.buffer.size()));
    ModelHandle m;
    char err[512];
    REQUIRE(eb_model_load_memory(buf.data, buf.size, &m.m, err, sizeof err) == EB_OK);
    for (int threads : {1, 2}) {
      SessionHandle s;
      eb_session_options so;
      eb_session_options_init(&so);
      so.num_threads = threads;
      REQUIRE(eb_session_create(m.m, &so, &s.s, err, sizeof err) == EB_OK);
      REQUIRE(eb_session_run_ids(s.s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) == EB_OK);
      const float* h;
      REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &h, nullptr, nullptr) == EB_OK);
      for (size_t t = 0; t < c.ids.size(); ++t) CHECK(cosine(h + t * 128, &c.hidden[t * 128], 128) >= 0.99);
    }
  }
}

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/eb_conv_test_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

void write_text(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

std::string convert_error(const std::string& input, const std::string& output) {
  ConvertOptions o;
  o.input_dir = input;
  o.output_path = output;
  o.quiet = true;
  try {
    convert_checkpoint(o);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("bad checkpoints give a one-line error naming the file and leave no output", "[converter][bad-input]") {
  TempDir tmp;
  const fs::path src = testdata_dir() + "/tiny_sharded";
  const fs::path out = tmp.path / "out.ebm";
  auto fresh_copy = [&](const char* name) {
    const fs::path d = tmp.path / name;
    fs::copy(src, d, fs::copy_options::recursive);
    return d;
  };
  struct Bad { std::string name; std::function<void(const fs::path&)> corrupt; std::string expect; };
  const std::vector<Bad> bads = {
      {"no_config", [](const fs::path& d) { fs::remove(d / "config.json"); }, "config.json"},
      {"bad_json", [](const fs::path& d) { write_text(d / "config.json", "{\"hidden_size\": 64,"); }, "config.json"},
      {"not_bert", [](const fs::path& d) {
         write_text(d / "config.json", "{\"model_type\": \"gpt2\", \"hidden_size\": 64}"); }, "model_type"},
      {"heads", [](const fs::path& d) {
         std::ifstream f(d / "config.json");
         std::string s((std::istreambuf_iterator<char>(f)), {});
         const size_t p = s.find("\"num_attention_heads\"");
         const size_t colon = s.find(':', p), end = s.find_first_of(",}", colon);
         s.replace(colon + 1, end - colon - 1, " 3");
         write_text(d / "config.json", s); }, "divisible"},
      {"missing_shard", [](const fs::path& d) { fs::remove(d / "model-00002-of-00003.safetensors"); }, "model-00002-of-00003"},
      {"truncated_shard", [](const fs::path& d) {
         fs::resize_file(d / "model-00003-of-00003.safetensors", fs::file_size(d / "model-00003-of-00003.safetensors") - 100); },
       "model-00003-of-00003.safetensors"},
      {"garbage_header", [](const fs::path& d) {
         std::fstream f(d / "model-00001-of-00003.safetensors", std::ios::in | std::ios::out | std::ios::binary);
         f.seekp(0);
         const uint64_t huge = 1ull << 40;
         f.write(reinterpret_cast<const char*>(&huge), 8); }, "model-00001-of-00003.safetensors"},
      {"vocab_mismatch", [](const fs::path& d) { write_text(d / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n"); }, "vocab"},
  };
  for (const Bad& b : bads) {
    INFO(b.name);
    const fs::path d = fresh_copy(b.name.c_str());
    b.corrupt(d);
    const std::string msg = convert_error(d.string(), out.string());
    CHECK(!msg.empty());
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find(b.expect) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
    for (const auto& e : fs::directory_iterator(tmp.path)) CHECK(e.path().string().find(".tmp.") == std::string::npos);
  }
}

TEST_CASE("a checkpoint without vocab.txt converts to an ids-only model", "[converter]") {
  TempDir tmp;
  const fs::path d = tmp.path / "novocab";
  fs::copy(testdata_dir() + "/tiny_noprefix", d, fs::copy_options::recursive);
  fs::remove(d / "vocab.txt");
  ConvertOptions o;
  o.input_dir = d.string();
  o.quiet = true;
  ConvertResult r = convert_checkpoint(o);
  AlignedBuffer buf(std::vector<uint8_t>(r.buffer.data(), r.buffer.data() + r.buffer.size()));
  ModelHandle m;
  char err[512];
  REQUIRE(eb_model_load_memory(buf.data, buf.size, &m.m, err, sizeof err) == EB_OK);
  eb_model_info info;
  REQUIRE(eb_model_get_info(m.m, &info) == EB_OK);
  CHECK(info.has_vocab == 0);
  SessionHandle s;
  REQUIRE(eb_session_create(m.m, nullptr, &s.s, err, sizeof err) == EB_OK);
  CHECK(eb_session_run_text(s.s, "hello") == EB_ERROR_UNSUPPORTED);
  const int32_t ids[3] = {101, 300, 102};
  CHECK(eb_session_run_ids(s.s, ids, nullptr, nullptr, 3) == EB_OK);
  // text calibration is impossible without a vocabulary
  o.calibration_file = testdata_dir() + "/calib.txt";
  CHECK_THROWS_WITH(convert_checkpoint(o), Catch::Contains("vocab"));
}

TEST_CASE("edgebert-convert CLI: exit codes and an existing output is never clobbered by a failure", "[converter][cli]") {
  const char* bin = std::getenv("EDGEBERT_BIN");
  REQUIRE(bin);
  const std::string convert = std::string(bin) + "/edgebert-convert";
  TempDir tmp;
  const std::string out = (tmp.path / "model.ebm").string();
  const std::string ok_cmd = convert + " --input " + testdata_dir() + "/tiny_noprefix --output " + out + " --quiet > /dev/null 2>&1";
  REQUIRE(std::system(ok_cmd.c_str()) == 0);
  const auto good = read_bytes(out);
  REQUIRE(good.size() > 0);
  // failing conversions onto the same path leave the previous file intact
  for (const std::string& args : std::vector<std::string>{" --input /nonexistent --output " + out, " --input " + testdata_dir() + " --output " + out,
                                 " --input " + testdata_dir() + "/tiny_noprefix --output " + out + " --max-seq-len 100000",
                                 " --input " + testdata_dir() + "/tiny_noprefix --output " + out + " --calibration /nonexistent.txt",
                                 " --bogus-flag", " --input " + testdata_dir() + "/tiny_noprefix"}) {
    INFO(args);
    const std::string err_file = (tmp.path / "err.txt").string();
    const int rc = std::system((convert + args + " > /dev/null 2> " + err_file).c_str());
    CHECK(rc != 0);
    const auto err = read_bytes(err_file);
    const std::string msg(err.begin(), err.end());
    CHECK(msg.find("error") != std::string::npos);
    CHECK(read_bytes(out) == good);
  }
  // the output directory does not exist: error, nothing created
  const std::string bad_out = (tmp.path / "no/such/dir/m.ebm").string();
  CHECK(std::system((convert + " --input " + testdata_dir() + "/tiny_noprefix --output " + bad_out + " --quiet > /dev/null 2>&1").c_str()) != 0);
  CHECK_FALSE(fs::exists(bad_out));
}

// ---- task heads -------------------------------------------------------------------------------
namespace {

struct HeadExpect {
  const char* model;
  fb::Task task;
  const char* model_type;
  fb::Activation act;
  std::vector<std::string> labels;  // expected Model.labels (empty: absent)
  int classifier_rows;              // 0: no classifier
  bool pooler, pre_classifier;
  int pooling;                      // -1: no sentence_pooling, else fb::Pooling value
  bool normalize;
};

const std::vector<HeadExpect>& head_expectations() {
  using T = fb::Task;
  using A = fb::Activation;
  static const std::vector<HeadExpect> v = {
      {"task_bert_model_relu", T::ENCODER, "bert", A::RELU, {}, 0, true, false, -1, false},
      {"task_bert_seqcls_tanh", T::SEQUENCE_CLASSIFICATION, "bert", A::GELU_TANH, {"negative", "neutral", "positive"}, 3,
       true, false, -1, false},
      {"task_bert_qa", T::QUESTION_ANSWERING, "bert", A::GELU, {}, 2, false, false, -1, false},
      {"task_bert_token", T::TOKEN_CLASSIFICATION, "bert", A::RELU, {"O", "B-PER", "I-PER", "B-LOC", "I-LOC"}, 5, false,
       false, -1, false},
      {"task_bert_mlm", T::MASKED_LM, "bert", A::GELU, {}, 0, false, false, -1, false},
      {"task_st_mean_norm", T::SENTENCE_EMBEDDING, "bert", A::GELU, {}, 0, true, false, 1, true},
      {"task_st_cls", T::SENTENCE_EMBEDDING, "bert", A::GELU, {}, 0, true, false, 0, false},
      {"task_st_max", T::SENTENCE_EMBEDDING, "bert", A::GELU, {}, 0, true, false, 2, false},
      {"task_st_mean_sqrt_len", T::SENTENCE_EMBEDDING, "bert", A::GELU, {}, 0, true, false, 3, true},
      {"task_st_distil_mean", T::SENTENCE_EMBEDDING, "distilbert", A::GELU, {}, 0, false, false, 1, false},
      {"task_distil_model", T::ENCODER, "distilbert", A::GELU, {}, 0, false, false, -1, false},
      {"task_distil_seqcls_relu", T::SEQUENCE_CLASSIFICATION, "distilbert", A::RELU, {"NEGATIVE", "POSITIVE"}, 2, false,
       true, -1, false},
      {"task_distil_qa", T::QUESTION_ANSWERING, "distilbert", A::GELU, {}, 2, false, false, -1, false},
      {"task_distil_token", T::TOKEN_CLASSIFICATION, "distilbert", A::GELU, {"O", "B-MISC", "I-MISC"}, 3, false, false,
       -1, false},
      {"task_distil_mlm", T::MASKED_LM, "distilbert", A::GELU, {}, 0, false, false, -1, false},
  };
  return v;
}

ConvertResult convert_quiet(const std::string& dir, bool fp32) {
  ConvertOptions o;
  o.input_dir = dir;
  o.fp32 = fp32;
  o.quiet = true;
  o.error_report = false;
  return convert_checkpoint(o);
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

// Replaces the first occurrence of `from` in file p by `to` (the test fails if absent).
void replace_in_file(const fs::path& p, const std::string& from, const std::string& to) {
  std::string s = read_text(p);
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  s.replace(at, from.size(), to);
  write_text(p, s);
}

// Converting `dir` fails with one line containing every part of `expect`, and writes nothing.
void check_conversion_fails(const fs::path& dir, const fs::path& out, const std::vector<std::string>& expect) {
  const std::string msg = convert_error(dir.string(), out.string());
  INFO(msg);
  CHECK(!msg.empty());
  CHECK(msg.find('\n') == std::string::npos);
  for (const std::string& part : expect) CHECK(msg.find(part) != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

}  // namespace

TEST_CASE("every architecture converts and reads back with its task, labels, pooling and activation", "[converter][heads]") {
  for (const HeadExpect& e : head_expectations()) {
    for (bool fp32 : {true, false}) {
      INFO(e.model << (fp32 ? " fp32" : " int8"));
      ConvertResult r = convert_quiet(testdata_dir() + "/" + e.model, fp32);
      AlignedBuffer buf(std::vector<uint8_t>(r.buffer.data(), r.buffer.data() + r.buffer.size()));
      flatbuffers::Verifier v(buf.data, buf.size);
      REQUIRE(fb::VerifyModelBuffer(v));
      const fb::Model* m = fb::GetModel(buf.data);
      const bool mlm = e.task == fb::Task::MASKED_LM;
      CHECK(m->schema_version() == 8u);  // the vocabulary's tables (the masked-LM head is a version-5 field)
      if (mlm) {  // the tied decoder's weight is the word table itself
        REQUIRE(m->mlm_decoder());
        CHECK(m->mlm_decoder()->weight() == m->embeddings()->word());
        CHECK(m->mlm_decoder()->precision() == (fp32 ? fb::Precision::FP32 : fb::Precision::INT8));
      }
      CHECK(static_cast<int>(r.task) == static_cast<int>(e.task));
      CHECK(m->task() == e.task);
      CHECK(m->precision() == (fp32 ? fb::Precision::FP32 : fb::Precision::INT8));
      REQUIRE(m->config()->model_type());
      CHECK(m->config()->model_type()->str() == e.model_type);
      CHECK(m->config()->hidden_act() == e.act);
      const bool distil = std::string(e.model_type) == "distilbert";
      CHECK(m->config()->type_vocab_size() == (distil ? 0 : 2));
      CHECK((m->embeddings()->token_type() != nullptr) == !distil);
      CHECK(m->config()->num_labels() == e.classifier_rows);
      if (e.labels.empty()) {
        CHECK(m->labels() == nullptr);
      } else {
        REQUIRE(m->labels());
        std::vector<std::string> got;
        for (const auto* l : *m->labels()) got.push_back(l->str());
        CHECK(got == e.labels);
      }
      CHECK((m->classifier() != nullptr) == (e.classifier_rows > 0));
      if (m->classifier()) {
        CHECK(m->classifier()->out_features() == e.classifier_rows);
        CHECK(m->classifier()->in_features() == 64);
        CHECK(m->classifier()->precision() == fb::Precision::FP32);
      }
      CHECK((m->pooler() != nullptr) == e.pooler);
      CHECK((m->pre_classifier() != nullptr) == e.pre_classifier);
      if (m->pre_classifier()) {
        CHECK(m->pre_classifier()->out_features() == 64);
        CHECK(m->pre_classifier()->precision() == fb::Precision::FP32);
      }
      if (e.pooling < 0) {
        CHECK(m->sentence_pooling() == nullptr);
      } else {
        REQUIRE(m->sentence_pooling());
        CHECK(static_cast<int>(m->sentence_pooling()->mode()) == e.pooling);
        CHECK(m->sentence_pooling()->normalize() == e.normalize);
      }
      REQUIRE(m->vocab());
      CHECK(file_tokens(m->vocab()).size() == 512);
      // sentence-transformers' max_seq_length (96) limits the positions kept
      CHECK(m->config()->max_position_embeddings() == (e.pooling >= 0 ? 96 : 128));
      CHECK(m->layers()->size() == 2);
    }
  }
}

TEST_CASE("head weights are the checkpoint's: qa_outputs, pre_classifier and DistilBERT layers", "[converter][heads]") {
  // Read the float model back and compare with the checkpoint tensors by their HF names.
  std::vector<std::string> notes;
  std::string dir;
  const FloatBert qa = load_model_dir(testdata_dir() + "/task_distil_qa", &notes, &dir);
  const HfBertCheckpoint ck = HfBertCheckpoint::open(dir);
  std::vector<float> w;
  ck.load("qa_outputs.weight", {2, 64}, w);
  CHECK(qa.classifier.weight == w);
  ck.load("transformer.layer.1.attention.k_lin.weight", {64, 64}, w);
  CHECK(std::equal(w.begin(), w.end(), qa.layers[1].qkv.weight.begin() + 64 * 64));  // K rows after Q rows
  ck.load("transformer.layer.0.ffn.lin2.bias", {64}, w);
  CHECK(qa.layers[0].output.bias == w);
  ck.load("transformer.layer.1.output_layer_norm.weight", {64}, w);
  CHECK(qa.layers[1].output_norm.gamma == w);
  CHECK(qa.token_type_embeddings.empty());

  const FloatBert sc = load_model_dir(testdata_dir() + "/task_distil_seqcls_relu", &notes, &dir);
  const HfBertCheckpoint ck2 = HfBertCheckpoint::open(dir);
  REQUIRE(sc.has_pre_classifier);
  ck2.load("pre_classifier.weight", {64, 64}, w);
  CHECK(sc.pre_classifier.weight == w);
  CHECK(ck2.resolve("transformer.layer.0.sa_layer_norm.bias")->name == "distilbert.transformer.layer.0.sa_layer_norm.bias");
  CHECK(notes.empty());
}

TEST_CASE("the converter's float reference follows the architecture (DistilBERT, ReLU, tanh GELU)", "[converter][heads]") {
  // Calibration runs reference_encoder; it must match the numpy HF reference for every variant.
  for (const char* model : {"task_distil_model", "task_distil_seqcls_relu", "task_bert_seqcls_tanh", "task_bert_token",
                            "task_st_max", "task_st_distil_mean"}) {
    std::vector<std::string> notes;
    std::string dir;
    const FloatBert m = load_model_dir(testdata_dir() + "/" + model, &notes, &dir);
    for (const char* name : {"len7", "len20_types"}) {
      INFO(model << " " << name);
      const Case c = read_case(model, name);
      TokenBatch b;
      b.ids = c.ids;
      b.token_types = c.types;
      b.starts = {0, c.ids.size()};
      const std::vector<float> h = reference_encoder(m, b, nullptr);
      const std::vector<float> want = read_f32(testdata_dir() + "/" + model + "/cases/" + name + "/last_hidden_state.f32");
      REQUIRE(h.size() == want.size());
      double err = 0;
      for (size_t i = 0; i < h.size(); ++i) err = std::max(err, std::fabs(double(h[i]) - want[i]));
      CHECK(err < 1e-3);
    }
  }
}

TEST_CASE("training-only tensors give one note each; nothing is dropped silently", "[converter][heads]") {
  // the masked-LM heads are converted (task MASKED_LM), not training-only any more
  ConvertResult r = convert_quiet(testdata_dir() + "/task_bert_mlm", true);
  const std::vector<std::string> want = {"note: ignoring training-only tensor 'bert.embeddings.position_ids'"};
  CHECK(r.notes == want);
  r = convert_quiet(testdata_dir() + "/task_distil_mlm", true);
  CHECK(r.notes.empty());
  CHECK(convert_quiet(testdata_dir() + "/task_bert_qa", true).notes.empty());
  CHECK(HfBertCheckpoint::is_training_only("distilbert.embeddings.position_ids"));
  CHECK_FALSE(HfBertCheckpoint::is_training_only("bert.embeddings.position_embeddings.weight"));
  CHECK_FALSE(HfBertCheckpoint::is_training_only("classifier.weight"));
}

TEST_CASE("unknown architectures and unused tensors are one-line errors naming them, with no output", "[converter][heads][bad-input]") {
  TempDir tmp;
  const fs::path out = tmp.path / "out.ebm";
  auto copy_of = [&](const char* model, const char* name) {
    const fs::path d = tmp.path / name;
    fs::copy(testdata_dir() + "/" + model, d, fs::copy_options::recursive);
    fs::remove_all(d / "cases");
    return d;
  };
  struct Bad {
    const char* model;
    const char* name;
    std::function<void(const fs::path&)> corrupt;
    std::vector<std::string> expect;
  };
  auto arch = [](const char* from, const char* to) {
    return [from, to](const fs::path& d) { replace_in_file(d / "config.json", from, to); };
  };
  const std::vector<Bad> bads = {
      {"task_bert_qa", "unknown_arch", arch("BertForQuestionAnswering", "BertForNextSentencePrediction"),
       {"config.json: unsupported architecture 'BertForNextSentencePrediction' for model_type bert",
        "BertForQuestionAnswering"}},
      {"task_bert_qa", "other_family", arch("BertForQuestionAnswering", "RobertaForQuestionAnswering"),
       {"unsupported architecture 'RobertaForQuestionAnswering'"}},
      {"task_distil_qa", "bert_arch_on_distilbert", arch("DistilBertForQuestionAnswering", "BertForQuestionAnswering"),
       {"unsupported architecture 'BertForQuestionAnswering' for model_type distilbert", "DistilBertModel"}},
      {"task_bert_qa", "qa_as_encoder", arch("BertForQuestionAnswering", "BertModel"),
       {"model.safetensors: tensor 'qa_outputs.bias' is not used by a bert encoder model (architecture BertModel)",
        "(and 1 more unused tensors)"}},
      {"task_bert_seqcls_tanh", "classifier_as_encoder", arch("BertForSequenceClassification", "BertModel"),
       {"tensor 'classifier.bias' is not used"}},
      {"task_distil_seqcls_relu", "pre_classifier_on_token_model",
       arch("DistilBertForSequenceClassification", "DistilBertForTokenClassification"),
       {"tensor 'pre_classifier.bias' is not used by a distilbert token-classification model"}},
      {"task_bert_model_relu", "classification_without_classifier", arch("BertModel", "BertForSequenceClassification"),
       {"missing tensor 'classifier.weight'"}},
      {"task_bert_token", "id2label_rows", [](const fs::path& d) { replace_in_file(d / "config.json", "\"4\": \"I-LOC\"", "\"4\": \"I-LOC\", \"5\": \"X\""); },
       {"has 5 rows but", "id2label has 6 labels"}},
      {"task_bert_token", "id2label_gap", [](const fs::path& d) { replace_in_file(d / "config.json", "\"4\": \"I-LOC\"", "\"7\": \"I-LOC\""); },
       {"config.json: 'id2label' key '7' is not a label id in 0..4"}},
      {"task_bert_qa", "bad_activation", [](const fs::path& d) { replace_in_file(d / "config.json", "\"hidden_act\": \"gelu\"", "\"hidden_act\": \"tanh\""); },
       {"unsupported hidden_act 'tanh'"}},
      {"task_bert_rerank_logit", "cross_encoder_tanh",
       [](const fs::path& d) { replace_in_file(d / "config.json", "torch.nn.modules.linear.Identity", "torch.nn.modules.activation.Tanh"); },
       {"config.json: 'sentence_transformers.activation_fn' 'torch.nn.modules.activation.Tanh' is not supported"}},
      {"task_distil_rerank", "cross_encoder_legacy_number",
       [](const fs::path& d) {
         replace_in_file(d / "config.json", "\"torch.nn.modules.activation.Sigmoid\"", "3");
       },
       {"config.json: 'sbert_ce_default_activation_function' must be a string"}},
  };
  for (const Bad& b : bads) {
    INFO(b.name);
    const fs::path d = copy_of(b.model, b.name);
    b.corrupt(d);
    check_conversion_fails(d, out, b.expect);
  }

  // A stray tensor in the encoder's namespace (written by the generator's --extra-tensor).
  const fs::path extra = tmp.path / "extra";
  const fs::path script = fs::path(EB_SOURCE_ROOT) / "tests" / "reference" / "make_task_checkpoints.py";
  const std::string gen = "python3 " + script.string() + " --out " +
                          extra.string() + " --model task_distil_token --extra-tensor distilbert.transformer.layer.0.attention.dropout.weight";
  REQUIRE(std::system(gen.c_str()) == 0);
  const std::string msg = convert_error(extra.string(), out.string());
  CHECK(msg.find("tensor 'distilbert.transformer.layer.0.attention.dropout.weight' is not used") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("malformed sentence-transformers folders are clear errors", "[converter][heads][bad-input]") {
  TempDir tmp;
  const fs::path out = tmp.path / "out.ebm";
  const std::string st = "sentence_transformers.models.";
  auto modules = [&](const std::string& body) {
    return [body](const fs::path& d) { write_text(d / "modules.json", body); };
  };
  const std::string tr = "{\"idx\":0,\"name\":\"0\",\"path\":\"\",\"type\":\"" + st + "Transformer\"}";
  const std::string po = "{\"idx\":1,\"name\":\"1\",\"path\":\"1_Pooling\",\"type\":\"" + st + "Pooling\"}";
  const std::string no = "{\"idx\":2,\"name\":\"2\",\"path\":\"2_Normalize\",\"type\":\"" + st + "Normalize\"}";
  auto pooling = [](const std::string& body) {
    return [body](const fs::path& d) { write_text(d / "1_Pooling" / "config.json", body); };
  };
  struct Bad {
    const char* name;
    std::function<void(const fs::path&)> corrupt;
    std::vector<std::string> expect;
  };
  const std::vector<Bad> bads = {
      {"not_array", modules("{}"), {"modules.json: top-level JSON value must be an array"}},
      {"bad_json", modules("[" + tr + ","), {"modules.json: malformed JSON"}},
      {"unknown_module", modules("[" + tr + "," + po + ",{\"idx\":2,\"path\":\"2_LN\",\"type\":\"" + st + "LayerNorm\"}]"),
       {"modules.json: module 2: unsupported sentence-transformers module 'sentence_transformers.models.LayerNorm'"}},
      // Dense modules (EmbeddingGemma's): their config and weights, checked by name
      {"dense_no_config", modules("[" + tr + "," + po + ",{\"idx\":2,\"path\":\"2_Dense\",\"type\":\"" + st + "Dense\"}]"),
       {"2_Dense/config.json: cannot open"}},
      {"dense_activation", [&](const fs::path& d) {
         modules("[" + tr + "," + po + ",{\"idx\":2,\"path\":\"2_Dense\",\"type\":\"" + st + "Dense\"}]")(d);
         fs::create_directories(d / "2_Dense");
         write_text(d / "2_Dense" / "config.json", "{\"in_features\":64,\"out_features\":64,\"bias\":false,"
                                                  "\"activation_function\":\"torch.nn.modules.activation.ReLU\"}");
       }, {"unsupported Dense activation_function 'torch.nn.modules.activation.ReLU' (Identity or Tanh)"}},
      {"dense_in_features", [&](const fs::path& d) {
         modules("[" + tr + "," + po + ",{\"idx\":2,\"path\":\"2_Dense\",\"type\":\"" + st + "Dense\"}]")(d);
         fs::create_directories(d / "2_Dense");
         write_text(d / "2_Dense" / "config.json", "{\"in_features\":32,\"out_features\":64}");
       }, {"2_Dense/config.json: in_features 32 != 64"}},
      {"dense_no_weights", [&](const fs::path& d) {
         modules("[" + tr + "," + po + ",{\"idx\":2,\"path\":\"2_Dense\",\"type\":\"" + st + "Dense\"}]")(d);
         fs::create_directories(d / "2_Dense");
         write_text(d / "2_Dense" / "config.json", "{\"in_features\":64,\"out_features\":64}");
       }, {"2_Dense: no model.safetensors"}},
      {"dense_after_normalize", modules("[" + tr + "," + po + "," + no + ",{\"idx\":3,\"path\":\"3_Dense\",\"type\":\"" + st + "Dense\"}]"),
       {"module 3", "out of order"}},
      {"prompts_not_strings", [](const fs::path& d) {
         write_text(d / "config_sentence_transformers.json", "{\"prompts\":{\"query\":7}}");
       }, {"config_sentence_transformers.json: prompt 'query' must be a string"}},
      {"default_prompt_unknown", [](const fs::path& d) {
         write_text(d / "config_sentence_transformers.json",
                    "{\"prompts\":{\"query\":\"q: \"},\"default_prompt_name\":\"document\"}");
       }, {"default_prompt_name 'document' is not one of 'prompts'"}},
      {"no_pooling", modules("[" + tr + "]"), {"needs a Transformer and a Pooling module"}},
      {"order", modules("[" + po + "," + tr + "]"), {"module 0: module 'sentence_transformers.models.Pooling' out of order"}},
      {"twice_normalize", modules("[" + tr + "," + po + "," + no + "," + no + "]"), {"module 3", "out of order"}},
      {"no_type", modules("[{\"path\":\"\"}]"), {"module 0: missing string 'type'"}},
      {"escape", modules("[{\"path\":\"../x\",\"type\":\"" + st + "Transformer\"}]"), {"must stay inside the model folder"}},
      {"missing_transformer_dir", modules("[{\"path\":\"0_Transformer\",\"type\":\"" + st + "Transformer\"}," + po + "]"),
       {"0_Transformer/config.json: cannot open"}},
      {"no_pooling_config", [](const fs::path& d) { fs::remove(d / "1_Pooling" / "config.json"); },
       {"1_Pooling/config.json: cannot open"}},
      {"no_mode", pooling("{\"word_embedding_dimension\":64,\"pooling_mode_mean_tokens\":false}"), {"no pooling mode is true"}},
      {"two_modes", pooling("{\"pooling_mode_mean_tokens\":true,\"pooling_mode_max_tokens\":true}"),
       {"combined pooling modes (2 are true) are not supported"}},
      {"weighted", pooling("{\"pooling_mode_mean_tokens\":true,\"pooling_mode_weightedmean_tokens\":true}"),
       {"unsupported pooling mode 'pooling_mode_weightedmean_tokens'"}},
      {"not_bool", pooling("{\"pooling_mode_mean_tokens\":1}"), {"'pooling_mode_mean_tokens' must be true or false"}},
      // sentence-transformers pools without the prompt's tokens then: refused where that differs
      {"include_prompt_false", [&](const fs::path& d) {
         pooling("{\"pooling_mode_mean_tokens\":true,\"include_prompt\":false}")(d);
         write_text(d / "config_sentence_transformers.json", "{\"prompts\":{\"query\":\"q: \"}}");
       }, {"1_Pooling/config.json: unsupported 'include_prompt' false with prompts"}},
      {"include_prompt_not_bool", pooling("{\"pooling_mode_cls_token\":true,\"include_prompt\":0}"),
       {"'include_prompt' must be true or false"}},
      {"max_seq_length", [](const fs::path& d) { write_text(d / "sentence_bert_config.json", "{\"max_seq_length\":0}"); },
       {"sentence_bert_config.json: 'max_seq_length' must be a positive integer"}},
      {"lowercase_cased", [](const fs::path& d) {
         write_text(d / "sentence_bert_config.json", "{\"do_lower_case\":true}");
         write_text(d / "tokenizer_config.json", "{\"do_lower_case\":false}"); },
       {"sentence_bert_config.json: do_lower_case true with a cased tokenizer"}},
      {"dimension", pooling("{\"word_embedding_dimension\":32,\"pooling_mode_cls_token\":true}"),
       {"word_embedding_dimension 32 differs from the model's hidden size 64"}},
      {"head_model", [](const fs::path& d) { replace_in_file(d / "config.json", "\"BertModel\"", "\"BertForTokenClassification\""); },
       {"config.json: architecture 'BertForTokenClassification' has a token-classification head",
        "modules.json makes it a sentence-transformers encoder"}},
  };
  for (const Bad& b : bads) {
    INFO(b.name);
    const fs::path d = tmp.path / b.name;
    fs::copy(testdata_dir() + "/task_st_cls", d, fs::copy_options::recursive);
    b.corrupt(d);
    check_conversion_fails(d, out, b.expect);
  }
}

TEST_CASE("edgebert-convert CLI: notes and the unknown-architecture error", "[converter][heads][cli]") {
  const char* bin = std::getenv("EDGEBERT_BIN");
  REQUIRE(bin);
  const std::string convert = std::string(bin) + "/edgebert-convert";
  TempDir tmp;
  const std::string out = (tmp.path / "m.ebm").string(), err = (tmp.path / "err.txt").string();
  CHECK(std::system((convert + " --fp32 --input " + testdata_dir() + "/task_distil_mlm --output " + out + " 2> " + err +
                     " > /dev/null").c_str()) == 0);
  CHECK(read_text(err).find("note: ignoring training-only tensor") == std::string::npos);  // its head is converted
  fs::copy(testdata_dir() + "/task_bert_token", tmp.path / "ck", fs::copy_options::recursive);
  replace_in_file(tmp.path / "ck" / "config.json", "BertForTokenClassification", "BertForMultipleChoice");
  const std::string out2 = (tmp.path / "m2.ebm").string();
  CHECK(std::system((convert + " --input " + (tmp.path / "ck").string() + " --output " + out2 + " 2> " + err).c_str()) != 0);
  const std::string msg = read_text(err);
  CHECK(msg.find("edgebert-convert: error: ") == 0);
  CHECK(msg.find("unsupported architecture 'BertForMultipleChoice'") != std::string::npos);
  CHECK(std::count(msg.begin(), msg.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(out2));
}

TEST_CASE("calibration sees text pairs: QA models and TAB-separated calibration lines", "[converter][heads]") {
  auto load = [](const char* model, Vocab* vocab) {
    std::vector<std::string> notes;
    std::string dir;
    FloatBert m = load_model_dir(testdata_dir() + "/" + model, &notes, &dir);
    *vocab = read_vocab(dir);
    return m;
  };
  auto type1_tokens = [](const TokenBatch& b) { return std::count(b.token_types.begin(), b.token_types.end(), 1); };
  Vocab vocab;
  const FloatBert qa = load("task_bert_qa", &vocab);
  CHECK(type1_tokens(make_calibration_inputs(qa, &vocab.tokens, true, "", 128).batch) > 50);
  const FloatBert cls = load("task_bert_seqcls_tanh", &vocab);
  const TokenBatch single = make_calibration_inputs(cls, &vocab.tokens, true, "", 128).batch;
  CHECK(type1_tokens(single) == 0);
  const FloatBert distil = load("task_distil_qa", &vocab);  // no token types: pairs stay type 0
  CHECK(type1_tokens(make_calibration_inputs(distil, &vocab.tokens, true, "", 128).batch) == 0);

  TempDir tmp;
  const fs::path f = tmp.path / "calib.txt";
  write_text(f, "Who was rude?\tThe staff was rude.\nthe movie\n");
  const TokenBatch b = make_calibration_inputs(cls, &vocab.tokens, true, f.string(), 128).batch;
  REQUIRE(b.num_sequences() >= 2);
  // [CLS] who was rude ? [SEP] the staff was rude . [SEP]
  const std::vector<int32_t> types(b.token_types.begin(), b.token_types.begin() + static_cast<long>(b.starts[1]));
  CHECK(types == std::vector<int32_t>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1});
  CHECK(b.ids[0] == 101);
  CHECK(b.ids[5] == 102);
  CHECK(b.ids[11] == 102);
  CHECK(b.starts[2] - b.starts[1] == 4);  // [CLS] the movie [SEP]
  // a pair cut at max_len still ends with [SEP]
  const TokenBatch cut = make_calibration_inputs(cls, &vocab.tokens, true, f.string(), 8).batch;
  REQUIRE(cut.starts[1] == 8);
  CHECK(cut.ids[7] == 102);
  // QA models pair consecutive lines of a calibration file too
  write_text(f, "Who was rude?\nThe staff was rude.\n");
  const TokenBatch qb = make_calibration_inputs(qa, &vocab.tokens, true, f.string(), 128).batch;
  CHECK(type1_tokens(qb) == 6);  // the staff was rude . [SEP]
}

TEST_CASE("sentence-transformers max_seq_length is the default position limit; --max-seq-len overrides it", "[converter][heads]") {
  for (int requested : {0, 120, 50}) {
    INFO(requested);
    ConvertOptions o;
    o.input_dir = testdata_dir() + "/task_st_mean_norm";
    o.fp32 = true;
    o.quiet = true;
    o.max_seq_len = requested;
    const ConvertResult r = convert_checkpoint(o);
    AlignedBuffer buf(std::vector<uint8_t>(r.buffer.data(), r.buffer.data() + r.buffer.size()));
    const fb::Model* m = fb::GetModel(buf.data);
    CHECK(m->config()->max_position_embeddings() == (requested ? requested : 96));
    CHECK(m->embeddings()->position()->shape()->Get(0) == (requested ? requested : 96));
  }
}

namespace {

// sum over rows of ||X (W - Q)^T||^2 / ||X W^T||^2, computed directly from the inputs.
double output_error(const std::vector<float>& x, size_t n, const std::vector<float>& w, const edgebert::int4::Quantized& q,
                    size_t rows, int cols) {
  std::vector<float> dq(w.size());
  edgebert::int4::dequantize(q.packed.data(), q.scales.data(), rows, cols, q.block, dq.data());
  double num = 0, den = 0;
  for (size_t t = 0; t < n; ++t)
    for (size_t r = 0; r < rows; ++r) {
      double e = 0, y = 0;
      for (int c = 0; c < cols; ++c) {
        e += x[t * cols + c] * (static_cast<double>(w[r * cols + c]) - dq[r * cols + c]);
        y += x[t * cols + c] * static_cast<double>(w[r * cols + c]);
      }
      num += e * e;
      den += y * y;
    }
  return num / den;
}

}  // namespace

TEST_CASE("GPTQ int4 rounding: round to nearest for uncorrelated inputs, a smaller output error for correlated ones",
          "[int4][gptq]") {
  namespace int4 = edgebert::int4;
  const size_t rows = 48;
  const int cols = 128, block = 32;
  std::mt19937 rng(7);
  std::normal_distribution<float> g(0.f, 1.f);
  std::vector<float> w(rows * cols);
  for (float& v : w) v = 0.02f * g(rng);
  const int4::Quantized rtn = int4::quantize(w.data(), rows, cols, block);
  // A diagonal Hessian leaves no error to feed back: exactly round-to-nearest (scales and nibbles).
  std::vector<double> diag(static_cast<size_t>(cols) * cols, 0.0);
  for (int i = 0; i < cols; ++i) diag[static_cast<size_t>(i) * cols + i] = 1.0 + i % 5;
  const int4::Quantized same = gptq_quantize(w.data(), rows, cols, block, diag);
  CHECK(same.packed == rtn.packed);
  CHECK(same.scales == rtn.scales);
  // Correlated inputs (a shared mean and 8 latent factors, like GELU outputs or LayerNorm
  // outputs of real text): GPTQ's output error is well below round-to-nearest's.
  const size_t n = 512;
  std::vector<float> mix(8 * cols), mean(cols), x(n * cols);
  for (float& v : mix) v = g(rng);
  for (float& v : mean) v = 0.5f + 0.2f * g(rng);
  for (size_t t = 0; t < n; ++t) {
    float z[8];
    for (float& v : z) v = g(rng);
    for (int c = 0; c < cols; ++c) {
      float v = mean[c] + 0.3f * g(rng);
      for (int k = 0; k < 8; ++k) v += z[k] * mix[k * cols + c];
      x[t * cols + c] = v;
    }
  }
  std::vector<double> h(static_cast<size_t>(cols) * cols, 0.0);
  for (size_t t = 0; t < n; ++t)
    for (int i = 0; i < cols; ++i)
      for (int j = 0; j < cols; ++j) h[static_cast<size_t>(i) * cols + j] += double(x[t * cols + i]) * x[t * cols + j];
  const int4::Quantized gq = gptq_quantize(w.data(), rows, cols, block, h);
  REQUIRE(gq.packed.size() == rtn.packed.size());
  REQUIRE(gq.scales.size() == rtn.scales.size());
  const double e_rtn = output_error(x, n, w, rtn, rows, cols), e_gptq = output_error(x, n, w, gq, rows, cols);
  INFO("relative output error: round to nearest " << e_rtn << ", GPTQ " << e_gptq);
  CHECK(e_gptq < 0.6 * e_rtn);
  // A Hessian that is not positive definite even after damping (NaN) falls back to round to nearest.
  std::vector<double> bad(h.size(), std::nan(""));
  const int4::Quantized fallback = gptq_quantize(w.data(), rows, cols, block, bad);
  CHECK(fallback.packed == rtn.packed);
}

TEST_CASE("the int4 policy keeps its floor, and best rounding keeps the cheaper of round-to-nearest and GPTQ per GEMM",
          "[int4][policy]") {
  // Four conversions (two with GPTQ on 2048 tokens): a few seconds here, minutes under qemu
  // (scripts/arm/test_arm.sh sets EDGEBERT_EMULATED; CI time). The policy is platform-independent
  // converter code, so the x86 run covers it.
  if (std::getenv("EDGEBERT_EMULATED")) {
    WARN("EDGEBERT_EMULATED: the converter-only int4 policy test runs natively only");
    return;
  }
  ConvertOptions o;
  o.input_dir = testdata_dir() + "/h128_4x32";
  o.quiet = true;
  o.error_report = false;
  o.int4 = true;
  o.int4_options.budget = 1;
  o.int4_options.min_cosine = 0;
  o.int4_options.rounding = Int4Rounding::kNearest;
  const ConvertResult all = convert_checkpoint(o);
  const Int4Policy& pa = all.int4_policy;
  int n_all = 0;
  for (const auto& r : pa.rows) {
    n_all += r.int4 ? 1 : 0;
    CHECK(std::string(r.rounding) == "rtn");
  }
  CHECK(n_all == static_cast<int>(pa.rows.size()));
  CHECK(pa.backed_off == 0);
  CHECK(pa.hessian_tokens == 0);  // round to nearest only
  REQUIRE(pa.combined_min_cosine < 0.9999);

  // A floor above what every tensor int4 keeps: fewer tensors are int4 and the measured
  // combination keeps the floor.
  o.int4_options.min_cosine = 0.5 * (1 + pa.combined_min_cosine);
  const ConvertResult floored = convert_checkpoint(o);
  const Int4Policy& pf = floored.int4_policy;
  int n_floored = 0;
  for (const auto& r : pf.rows) n_floored += r.int4 ? 1 : 0;
  CHECK(n_floored < n_all);
  CHECK(pf.combined_min_cosine >= o.int4_options.min_cosine);
  CHECK(floored.buffer.size() > all.buffer.size());

  // GPTQ: its Hessians come from 2048 tokens or more (calibration sequences the probe does not use
  // and seeded extra ones).
  o.int4_options.min_cosine = 0;
  o.int4_options.rounding = Int4Rounding::kGptq;
  const ConvertResult g = convert_checkpoint(o);
  CHECK(g.int4_policy.hessian_tokens >= 2048);
  CHECK(g.int4_policy.probe_tokens > 0);

  // best: each GEMM measured both ways on the same probe keeps the cheaper, so its cost is the
  // smaller of the two single-rounding conversions' costs for that GEMM, exactly.
  o.int4_options.rounding = Int4Rounding::kBest;
  const ConvertResult b = convert_checkpoint(o);
  REQUIRE(b.int4_policy.rows.size() == pa.rows.size());
  REQUIRE(g.int4_policy.rows.size() == pa.rows.size());
  int gptq_kept = 0;
  for (size_t i = 0; i < pa.rows.size(); ++i) {
    INFO(pa.rows[i].name);
    const Int4PolicyRow& r = b.int4_policy.rows[i];
    CHECK(r.cost == std::min(pa.rows[i].cost, g.int4_policy.rows[i].cost));
    CHECK(std::string(r.rounding) == (r.cost == pa.rows[i].cost ? "rtn" : "gptq"));
    gptq_kept += std::string(r.rounding) == "gptq" ? 1 : 0;
  }
  CHECK(gptq_kept > 0);
}
