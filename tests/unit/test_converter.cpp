// test_converter.cpp: the converter pipeline: quantization round trips, --keep-fp32 patterns,
// a converted model read back through the FlatBuffers verifier with every field checked against
// the checkpoint, mixed-precision models running correctly, and bad input producing a one-line
// error, a non-zero exit and no (or an untouched) output file.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/checkpoint/safetensors.h"
#include "converter/converter.h"
#include "converter/quantization.h"
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
    CHECK(m->schema_version() == 1);
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
    REQUIRE(m->vocab()->tokens()->size() == vocab.tokens.size());
    for (size_t i = 0; i < vocab.tokens.size(); ++i) CHECK(m->vocab()->tokens()->Get(i)->str() == vocab.tokens[i]);
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
      eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &h, nullptr, nullptr);
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
  eb_model_get_info(m.m, &info);
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
