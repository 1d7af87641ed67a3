// SPDX-License-Identifier: Apache-2.0
// test_family_converter.cpp: the converter's side of the other families (issue 18). Every model in
// testdata/families (RoBERTa / XLM-R / CamemBERT, ELECTRA, ALBERT, nomic-bert, ModernBERT and
// their heads, written by tests/reference/make_family_checkpoints.py) loads through its family's
// checkpoint mapping with no unused tensor, and the converter's fp32 reference (reference_encoder,
// what calibration runs) plus the heads computed from the loaded tensors match the float64 numpy
// goldens (families_numpy.py) within 2e-3 on every case (padded cases: their real tokens run
// unpadded). Config errors and unused tensors are one-line errors; training-only heads are notes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/converter.h"
#include "converter/model_writer.h"
#include "edgebert_generated.h"
#include "converter/reference_bert.h"
#include "family_manifest.h"
#include "test_support.h"

using namespace edgebert::convert;
using namespace edgebert::test;
namespace fb = edgebert::fb;

namespace {

std::vector<ManifestLine> manifest() { return family_manifest(); }

std::vector<float> linear(const FloatLinear& l, const std::vector<float>& x, size_t rows) {
  std::vector<float> y(rows * l.out);
  for (size_t r = 0; r < rows; ++r)
    for (int o = 0; o < l.out; ++o) {
      double acc = l.bias.empty() ? 0.0 : l.bias[o];
      for (int i = 0; i < l.in; ++i) acc += double(x[r * l.in + i]) * l.weight[size_t(o) * l.in + i];
      y[r * l.out + o] = static_cast<float>(acc);
    }
  return y;
}

void layer_norm(std::vector<float>& x, size_t rows, const FloatLayerNorm& n, float eps) {
  const size_t H = n.gamma.size();
  for (size_t r = 0; r < rows; ++r) {
    float* v = x.data() + r * H;
    double mean = 0, var = 0;
    for (size_t c = 0; c < H; ++c) mean += v[c];
    mean /= H;
    for (size_t c = 0; c < H; ++c) var += (v[c] - mean) * (v[c] - mean);
    var /= H;
    for (size_t c = 0; c < H; ++c)
      v[c] = float((v[c] - mean) / std::sqrt(var + eps) * n.gamma[c] + (n.beta.empty() ? 0.0 : n.beta[c]));
  }
}

// The heads from the loaded tensors (FloatBert documents their semantics), on the real tokens.
std::map<std::string, std::vector<float>> heads(const FloatBert& m, const std::vector<float>& h, size_t n) {
  const int H = m.config.hidden_size;
  std::map<std::string, std::vector<float>> out;
  const std::vector<float> first(h.begin(), h.begin() + H);
  if (m.has_pooler) {
    out["pooler_output"] = linear(m.pooler, first, 1);
    for (float& v : out["pooler_output"]) v = std::tanh(v);
  }
  auto transform = [&](std::vector<float> x, size_t rows) {
    if (!m.has_pre_classifier) return x;
    x = linear(m.pre_classifier, x, rows);
    for (float& v : x) v = ffn_activation(m.pre_classifier_act, v);
    if (m.has_head_norm) layer_norm(x, rows, m.head_norm, m.config.layer_norm_eps);
    return x;
  };
  switch (m.task) {
    case Task::kSequenceClassification: {
      std::vector<float> pooled = first;
      if (m.head_mean_pooling) {
        std::fill(pooled.begin(), pooled.end(), 0.f);
        for (size_t t = 0; t < n; ++t)
          for (int c = 0; c < H; ++c) pooled[c] += h[t * H + c] / n;
      }
      if (m.has_pooler && !m.has_pre_classifier) pooled = out["pooler_output"];
      out["logits"] = linear(m.classifier, transform(pooled, 1), 1);
      break;
    }
    case Task::kTokenClassification:
      out["token_logits"] = linear(m.classifier, m.head_per_token ? transform(h, n) : h, n);
      break;
    case Task::kQuestionAnswering: {
      const std::vector<float> qa = linear(m.classifier, m.head_per_token ? transform(h, n) : h, n);
      for (size_t t = 0; t < n; ++t) {
        out["start_logits"].push_back(qa[2 * t]);
        out["end_logits"].push_back(qa[2 * t + 1]);
      }
      break;
    }
    case Task::kEncoder:
    case Task::kSentenceEmbedding:
    case Task::kMaskedLm:  // its sparse vector: test_family_runtime against the numpy goldens
    case Task::kTokenVectors:  // no family test model has them: test_colbert, test_bge_m3
    case Task::kBgeM3:
      break;
  }
  return out;
}

// Max abs difference over the first `count` values of the golden file.
double max_err(const std::vector<float>& got, const std::string& golden, size_t count) {
  const std::vector<float> want = read_f32(golden);
  REQUIRE(want.size() >= count);
  REQUIRE(got.size() >= count);
  double e = 0;
  for (size_t i = 0; i < count; ++i) e = std::max(e, std::fabs(double(got[i]) - want[i]));
  return e;
}

}  // namespace

TEST_CASE("every family checkpoint loads and its fp32 reference matches the numpy goldens", "[families]") {
  const std::vector<ManifestLine> lines = manifest();
  if (lines.empty()) {
    WARN("no " << families_dir() << "/families_manifest.txt (run the make_testdata fixture)");
    return;
  }
  REQUIRE(lines.size() >= 28 * 6);
  std::map<std::string, FloatBert> models;
  std::map<std::string, int> per_family;
  for (const ManifestLine& l : lines) {
    INFO(l.model << " " << l.name);
    auto it = models.find(l.model);
    if (it == models.end()) {
      std::vector<std::string> notes;
      std::string dir;
      it = models.emplace(l.model, load_model_dir(families_dir() + "/" + l.model, &notes, &dir)).first;
      ++per_family[l.family];
    }
    const FloatBert& m = it->second;
    CHECK(std::string(family_name(m.family())) == l.family);
    const std::string cdir = families_dir() + "/" + l.model + "/cases/" + l.name + "/";
    const std::vector<int32_t> ids = read_ints(cdir + "ids.txt"), mask = read_ints(cdir + "mask.txt"),
                               types = read_ints(cdir + "types.txt");
    REQUIRE(ids.size() == size_t(l.seq));
    const size_t n = size_t(std::count(mask.begin(), mask.end(), 1));  // real tokens come first
    TokenBatch b;
    b.ids.assign(ids.begin(), ids.begin() + n);
    b.token_types.assign(types.begin(), types.begin() + n);
    b.starts = {0, n};
    const std::vector<float> h = reference_encoder(m, b, nullptr);
    const size_t H = size_t(m.config.hidden_size);
    CHECK(max_err(h, cdir + "last_hidden_state.f32", n * H) < 2e-3);
    for (const auto& [key, val] : heads(m, h, n)) {
      INFO(key);
      CHECK(max_err(val, cdir + key + ".f32", val.size()) < 2e-3);
    }
  }
  CHECK(per_family.size() == 7);
}

TEST_CASE("prenorm nomic-bert: pre-norm layers, the encoder ends with the last MLP's output", "[families]") {
  // contrastors' prenorm path returns the last block's MLP output without its residual (and no
  // final norm); the goldens above check the values, this the mapping.
  if (manifest().empty()) return;
  std::vector<std::string> notes;
  std::string dir;
  const FloatBert m = load_model_dir(families_dir() + "/nomic_prenorm_ntk", &notes, &dir);
  CHECK(m.family() == Family::kNomicBert);
  CHECK(m.pre_norm);
  CHECK_FALSE(m.has_final_norm);
  for (int l = 0; l < m.num_applied_layers(); ++l) CHECK(m.applied_layer(l).has_attention_norm);
}

TEST_CASE("family mappings: shared ALBERT layers, gated FFNs, bias-free norms, windows", "[families]") {
  if (manifest().empty()) return;
  std::vector<std::string> notes;
  std::string dir;
  const FloatBert albert = load_model_dir(families_dir() + "/albert_qa", &notes, &dir);
  CHECK(albert.layers.size() == 3);  // three groups packed once
  CHECK(albert.layer_map == std::vector<int>({0, 0, 1, 1, 2, 2}));
  CHECK(albert.has_embedding_projection);
  CHECK(albert.embedding_size == 16);
  const FloatBert seq = load_model_dir(families_dir() + "/albert_seqcls", &notes, &dir);
  CHECK(seq.layer_map == std::vector<int>({0, 1, 0, 1, 0, 1}));  // 3 uses of one group of 2 layers

  const FloatBert mb = load_model_dir(families_dir() + "/modernbert_model", &notes, &dir);
  CHECK(mb.pre_norm);
  CHECK(mb.gated_ffn);
  CHECK_FALSE(mb.layers[0].has_attention_norm);
  CHECK(mb.layers[1].has_attention_norm);
  CHECK(mb.layers[1].attention_norm.beta.empty());
  CHECK(mb.layers[0].qkv.bias.empty());
  CHECK(mb.layers[0].intermediate.out == 2 * mb.config.intermediate_size);
  CHECK(mb.local_window == std::vector<int>({0, 8, 8, 0}));
  CHECK(mb.rotary.dims == 16);
  CHECK(mb.rotary.theta == 160000.0);
  CHECK(mb.rotary.local_theta == 10000.0);
  const FloatBert mb_new = load_model_dir(families_dir() + "/modernbert_seqcls_mean", &notes, &dir);
  CHECK(mb_new.local_window == std::vector<int>({0, 16, 0, 16}));
  CHECK(mb_new.head_mean_pooling);
  CHECK(mb_new.layers[1].attention_norm.beta.size() == 64);

  const FloatBert nomic = load_model_dir(families_dir() + "/nomic_st_mean_norm", &notes, &dir);
  CHECK(nomic.config.intermediate_size == 256);  // n_inner 200 rounded up as NomciBertGatedMLP does
  CHECK(nomic.positions == PositionScheme::kNone);
  CHECK(nomic.task == Task::kSentenceEmbedding);
  const FloatBert roberta = load_model_dir(families_dir() + "/roberta_seqcls", &notes, &dir);
  CHECK(roberta.positions == PositionScheme::kPaddingOffset);
  CHECK(roberta.padding_idx == 1);
  CHECK(roberta.has_pre_classifier);
  CHECK(roberta.pre_classifier_act == HiddenAct::kTanh);
  CHECK_FALSE(roberta.has_pooler);
}

TEST_CASE("family training-only heads are notes; a stray tensor is a one-line error", "[families]") {
  if (manifest().empty()) return;
  std::vector<std::string> notes;
  std::string dir;
  load_model_dir(families_dir() + "/electra_pretraining", &notes, &dir);
  std::ostringstream all;
  for (const std::string& s : notes) all << s << "\n";
  CHECK(all.str().find("'discriminator_predictions.dense.weight'") != std::string::npos);
  notes.clear();
  load_model_dir(families_dir() + "/modernbert_mlm", &notes, &dir);  // its masked-LM head is converted
  all.str("");
  for (const std::string& s : notes) all << s << "\n";
  CHECK(all.str().find("'head.dense.weight'") == std::string::npos);
  CHECK(all.str().find("'decoder.bias'") == std::string::npos);
  // layer 0 of ModernBERT has no attn_norm: such a tensor is reported, not dropped
  const std::string tmp = (std::filesystem::temp_directory_path() / "eb_family_extra").string();
  std::filesystem::remove_all(tmp);
  const std::string script =
      (std::filesystem::path(EB_SOURCE_ROOT) / "tests" / "reference" / "make_family_checkpoints.py").string();
  const std::string cmd = "python3 " + script + " --out " + tmp + " --model modernbert_qa --extra-tensor model.layers.0.attn_norm.weight";
  REQUIRE(std::system(cmd.c_str()) == 0);
  try {
    load_model_dir(tmp + "/modernbert_qa", &notes, &dir);
    FAIL("an unused tensor must be an error");
  } catch (const std::exception& e) {
    const std::string msg = e.what();
    CHECK(msg.find("'model.layers.0.attn_norm.weight' is not used") != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
  std::filesystem::remove_all(tmp);
}

TEST_CASE("family models convert (fp32) and read back with their schema-4 fields", "[families]") {
  if (manifest().empty()) return;
  auto convert = [](const std::string& model) {
    ConvertOptions o;
    o.input_dir = families_dir() + "/" + model;
    o.fp32 = true;
    o.quiet = true;
    ConvertResult r = convert_checkpoint(o);
    flatbuffers::Verifier v(r.buffer.data(), r.buffer.size(), 64, 1000000);
    REQUIRE(fb::VerifyModelBuffer(v));
    return r;
  };
  {
    ConvertResult r = convert("modernbert_seqcls_cls");
    const fb::Model* m = fb::GetModel(r.buffer.data());
    // (a file with a tokenizer is version 8: its vocabulary as one text and its lookup tables)
    CHECK(m->schema_version() == (m->tokenizer() ? kTokenTablesSchemaVersion : kFamilySchemaVersion));
    const fb::Config* c = m->config();
    CHECK(c->family() == fb::Family::MODERNBERT);
    CHECK(c->position_ids() == fb::PositionIds::NONE);
    CHECK(c->pre_norm());
    CHECK(c->ffn() == fb::FfnKind::GATED);
    REQUIRE(c->rotary());
    CHECK(c->rotary()->dims() == 16);
    CHECK(c->rotary()->theta() == 50000.0);
    CHECK(c->rotary()->local_theta() == 2000.0);
    REQUIRE(c->local_window());
    CHECK(std::vector<int>(c->local_window()->begin(), c->local_window()->end()) == std::vector<int>({0, 6, 6}));
    CHECK_FALSE(c->layer_map());
    CHECK_FALSE(m->embeddings()->position());
    CHECK_FALSE(m->embeddings()->norm()->beta());
    CHECK_FALSE(m->layers()->Get(0)->attention_norm());
    CHECK(m->layers()->Get(1)->attention_norm());
    CHECK_FALSE(m->layers()->Get(0)->qkv()->bias());
    CHECK(m->layers()->Get(0)->intermediate()->out_features() == 256);
    CHECK(m->final_norm());
    CHECK(m->head_norm());
    CHECK(m->pre_classifier());
    CHECK(m->head_input() == fb::HeadInput::CLS);
    CHECK(m->classifier()->bias());  // ModernBERT's classifier always has a bias
  }
  {
    ConvertResult r = convert("albert_seqcls");
    const fb::Model* m = fb::GetModel(r.buffer.data());
    const fb::Config* c = m->config();
    CHECK(c->family() == fb::Family::ALBERT);
    CHECK(m->layers()->size() == 2);  // one group of two layers, stored once
    CHECK(c->num_hidden_layers() == 6);
    REQUIRE(c->layer_map());
    CHECK(std::vector<int>(c->layer_map()->begin(), c->layer_map()->end()) == std::vector<int>({0, 1, 0, 1, 0, 1}));
    CHECK(c->embedding_size() == 48);
    REQUIRE(m->embedding_projection());
    CHECK(m->embedding_projection()->in_features() == 48);
    CHECK(m->embeddings()->word()->shape()->Get(1) == 48);
    CHECK(m->pooler());
  }
  {
    ConvertResult r = convert("roberta_seqcls");
    const fb::Model* m = fb::GetModel(r.buffer.data());
    const fb::Config* c = m->config();
    CHECK(c->family() == fb::Family::ROBERTA);
    CHECK(c->position_ids() == fb::PositionIds::PADDING_OFFSET);
    CHECK(c->padding_idx() == 1);
    CHECK(c->max_position_embeddings() == 128);
    CHECK(m->embeddings()->position()->shape()->Get(0) == 130);
    CHECK(m->pre_classifier_act() == fb::Activation::TANH);
    CHECK_FALSE(m->pooler());
  }
  {
    ConvertResult r = convert("nomic_seqcls");
    const fb::Model* m = fb::GetModel(r.buffer.data());
    const fb::Config* c = m->config();
    CHECK(c->family() == fb::Family::NOMIC_BERT);
    CHECK(c->hidden_act() == fb::Activation::GELU);  // geglu
    REQUIRE(c->rotary());
    CHECK(c->rotary()->interleaved());
    CHECK(c->rotary()->dims() == 16);
    CHECK(c->rotary()->ntk_factor() == 2.0);
    CHECK(c->rotary()->ntk_max_trained_positions() == 48);
    CHECK_FALSE(c->pre_norm());
  }
  {
    ConvertResult r = convert("electra_model");
    const fb::Model* m = fb::GetModel(r.buffer.data());
    CHECK(m->config()->family() == fb::Family::ELECTRA);
    CHECK(m->embedding_projection());
    CHECK(m->vocab());  // WordPiece vocab.txt
  }
  // A BERT file with its vocabulary is version 8 (the vocabulary's tables) and so carries the
  // family fields (readers of 4 and later take the family from them); without a vocabulary it
  // carries none (version 3: 2 plus the content id)
  ConvertOptions o;
  o.input_dir = testdata_dir() + "/task_bert_qa";
  o.fp32 = true;
  o.quiet = true;
  ConvertResult r = convert_checkpoint(o);
  const fb::Model* m = fb::GetModel(r.buffer.data());
  CHECK(m->schema_version() == kTokenTablesSchemaVersion);
  CHECK_FALSE(m->config()->rotary());
  CHECK(m->config()->family() == fb::Family::BERT);
  CHECK(m->config()->model_type()->str() == "bert");
  std::vector<std::string> notes;
  std::string weights_dir;
  const ConvertResult bare = convert_model(load_model_dir(o.input_dir, &notes, &weights_dir), nullptr, o);
  const fb::Model* b = fb::GetModel(bare.buffer.data());
  CHECK(b->schema_version() == 3);
  CHECK_FALSE(b->vocab());
  CHECK(b->config()->family() == fb::Family::BERT);  // (the field's default: absent)
}

TEST_CASE("opt-in: the converter's reference on the ModernBERT-base peer model matches torch", "[families][.base]") {
  // EDGEBERT_MODERNBERT_BASE = a folder written by bench/peers/make_modernbert_onnx.py (22 layers,
  // 768, window 128): its torch fp32 output on inputs/seq512.json is reference/seq512.f32.
  const char* dir = std::getenv("EDGEBERT_MODERNBERT_BASE");
  if (!dir) return;
  std::vector<std::string> notes;
  std::string wdir;
  const FloatBert m = load_model_dir(dir, &notes, &wdir);
  std::ifstream f(std::string(dir) + "/inputs/seq512.json");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string js = ss.str();
  auto array_of = [&](const std::string& key) {
    std::vector<int32_t> v;
    size_t p = js.find('[', js.find("\"" + key + "\""));
    const size_t e = js.find(']', p);
    for (++p; p < e;) {
      v.push_back(std::stoi(js.substr(p)));
      p = js.find_first_of(",]", p) + 1;
    }
    return v;
  };
  const std::vector<int32_t> ids = array_of("input_ids"), mask = array_of("attention_mask");
  REQUIRE(ids.size() == 512);
  const size_t n = size_t(std::count(mask.begin(), mask.end(), 1));
  TokenBatch b;
  b.ids.assign(ids.begin(), ids.begin() + n);
  b.token_types.assign(n, 0);
  b.starts = {0, n};
  const std::vector<float> h = reference_encoder(m, b, nullptr);
  const double err = max_err(h, std::string(dir) + "/reference/seq512.f32", n * 768);
  WARN("ModernBERT-base, 512 tokens (" << n << " real): converter fp32 reference vs torch fp32 max abs " << err);
  CHECK(err < 2e-3);
}
