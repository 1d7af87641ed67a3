// SPDX-License-Identifier: Apache-2.0
// converter.cpp: orchestration of checkpoint -> calibration -> quantization -> .ebm.
#include "converter/converter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <utility>

#include "converter/activation_params.h"
#include "converter/bge_m3_heads.h"
#include "converter/calibration.h"
#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/checkpoint/mapped_file.h"
#include "converter/checkpoint/safetensors.h"
#include "converter/checkpoint/sentence_transformers.h"
#include "converter/colbert_inputs.h"
#include "converter/float_bert.h"
#include "converter/masked_lm_quant.h"
#include "converter/model_writer.h"
#include "converter/quantization.h"
#include "converter/reference_bert.h"
#include "converter/tokenizer/tokenizer_json.h"
#include "text/tokenizer.h"

namespace edgebert::convert {
namespace {

bool match_from(const char* p, const char* s) {
  for (; *p; ++p) {
    if (p[0] == '*' && p[1] == '*') {
      for (const char* t = s;; ++t) {
        if (match_from(p + 2, t)) return true;
        if (!*t) return false;
      }
    }
    if (*p == '*') {
      for (const char* t = s;; ++t) {
        if (match_from(p + 1, t)) return true;
        if (!*t || *t == '.') return false;
      }
    }
    if (!*s) return false;
    if (*p != '?' && *p != *s) return false;
    ++s;
  }
  return *s == '\0';
}

// Chooses every GEMM's quantization as soon as the float reference has produced that GEMM's
// calibration activations. A stored layer applied more than once (ALBERT's shared groups) has one
// static set of scales and one packed weight set for all its uses: its GEMMs' inputs and outputs
// are kept until the last use, and the parameters are chosen once over the rows of every use (the
// union of their ranges), not from the last use alone. Unshared layers store nothing.
class Calibrator : public GemmObserver {
 public:
  Calibrator(const FloatBert& m, Scheme scheme, std::vector<std::array<ConvertedLinear, kGemmsPerLayer>>& layers,
             std::vector<std::vector<float>>& qk_norm_scales)
      : m_(m), scheme_(scheme), layers_(layers), uses_(layers.size(), 0), pending_(layers.size()),
        qk_absmax_(layers.size()), qk_scales_(qk_norm_scales) {
    qk_scales_.assign(layers.size(), {});
    for (int i = 0; i < m.num_applied_layers(); ++i) ++uses_[static_cast<size_t>(m.stored_layer(i))];
  }
  void observe(int layer, GemmKind kind, const FloatLinear& l, const float* x, const float* y, size_t rows) override {
    const auto t0 = std::chrono::steady_clock::now();
    ConvertedLinear& c = layers_[layer][static_cast<int>(kind)];
    const int uses = uses_[static_cast<size_t>(layer)];
    if (uses <= 1) {
      choose_gemm_params(m_, kind, scheme_, x, y, rows, c);
    } else {
      Pending& p = pending_[static_cast<size_t>(layer)][static_cast<int>(kind)];
      p.x.insert(p.x.end(), x, x + rows * static_cast<size_t>(l.in));
      p.y.insert(p.y.end(), y, y + rows * static_cast<size_t>(l.out));
      p.rows += rows;
      if (++p.seen == uses) {  // the last use: one choice over every use's rows
        choose_gemm_params(m_, kind, scheme_, p.x.data(), p.y.data(), p.rows, c);
        p = Pending{};
      }
    }
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  // q/k norm layers: one symmetric scale per head of Q and K after the norms and the rotary
  // embedding, their calibration absmax (RMS-normalized values: no long tail to clip), the union
  // over every use of a shared layer.
  void observe_attention_input(int layer, const float* qkv, size_t rows) override {
    const int d = m_.head_dim(), width = m_.q_width() + m_.kv_width();
    const size_t stride = static_cast<size_t>(width + m_.kv_width());
    std::vector<float>& absmax = qk_absmax_[static_cast<size_t>(layer)];
    absmax.resize(static_cast<size_t>(width), 0.f);
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < absmax.size(); ++c) absmax[c] = std::max(absmax[c], std::fabs(qkv[r * stride + c]));
    std::vector<float>& scales = qk_scales_[static_cast<size_t>(layer)];
    scales.assign(static_cast<size_t>(width), 0.f);
    for (int h = 0; h < width / d; ++h) {
      float a = 0;
      for (int i = 0; i < d; ++i) a = std::max(a, absmax[static_cast<size_t>(h * d + i)]);
      for (int i = 0; i < d; ++i) scales[static_cast<size_t>(h * d + i)] = symmetric_scale(a);
    }
  }
  double seconds() const { return seconds_; }

 private:
  struct Pending {
    std::vector<float> x, y;
    size_t rows = 0;
    int seen = 0;
  };
  double seconds_ = 0;
  const FloatBert& m_;
  Scheme scheme_;
  std::vector<std::array<ConvertedLinear, kGemmsPerLayer>>& layers_;
  std::vector<int> uses_;  // applied uses per stored layer
  std::vector<std::array<Pending, kGemmsPerLayer>> pending_;
  std::vector<std::vector<float>> qk_absmax_;
  std::vector<std::vector<float>>& qk_scales_;
};

struct ErrorAccumulator {
  double in_err = 0, w_err = 0, tot_err = 0, ref = 0;
};

// Re-runs each int8 GEMM with fake-quantized input / weights / output next to the float one.
class ErrorObserver : public GemmObserver {
 public:
  ErrorObserver(std::vector<std::array<ConvertedLinear, kGemmsPerLayer>>& layers, HiddenAct act)
      : layers_(layers), acc_(layers.size()), act_(act) {}
  void observe(int layer, GemmKind kind, const FloatLinear& l, const float* x, const float* y, size_t rows) override {
    const ConvertedLinear& c = layers_[layer][static_cast<int>(kind)];
    if (!c.int8) return;
    ErrorAccumulator& a = acc_[layer][static_cast<int>(kind)];
    const size_t nx = rows * l.in, ny = rows * l.out;
    // With SmoothQuant factors f the int8 GEMM computes quantize(x / f) . quantize(W * f)^T.
    const std::vector<float>& f = c.input_factors;
    xs_.assign(x, x + nx);
    FloatLinear ws = l;  // W * f in float
    if (!f.empty()) {
      for (size_t r = 0; r < rows; ++r)
        for (int i = 0; i < l.in; ++i) xs_[r * l.in + i] /= f[i];
      for (int o = 0; o < l.out; ++o)
        for (int i = 0; i < l.in; ++i) ws.weight[static_cast<size_t>(o) * l.in + i] *= f[i];
    }
    xq_ = xs_;
    fake_quantize(xq_.data(), nx, c.input);
    FloatLinear wq = ws;  // dequantized int8 (or int4) weights
    if (c.int4) {
      int4::dequantize(c.weight4.packed.data(), c.weight4.scales.data(), static_cast<size_t>(l.out), l.in, c.weight4.block,
                       wq.weight.data());
    } else {
      for (int o = 0; o < l.out; ++o)
        for (int i = 0; i < l.in; ++i)
          wq.weight[static_cast<size_t>(o) * l.in + i] = c.weight.q[static_cast<size_t>(o) * l.in + i] * c.weight.scales[o];
    }
    // The intermediate GEMM's output only matters through the activation (whose table may clip
    // the flat negative side freely): its errors are measured after the activation.
    const bool after_act = kind == GemmKind::kIntermediate;
    ref_.assign(y, y + ny);
    if (after_act)
      for (float& v : ref_) v = ffn_activation(act_, v);
    auto sq_err = [&](std::vector<float>& t) {
      double e = 0;
      for (size_t i = 0; i < ny; ++i) {
        const float v = after_act ? ffn_activation(act_, t[i]) : t[i];
        e += (v - ref_[i]) * double(v - ref_[i]);
      }
      return e;
    };
    y1_.resize(ny);
    linear_forward(ws, xq_.data(), rows, y1_.data());  // input quantization only
    a.in_err += sq_err(y1_);
    linear_forward(wq, xs_.data(), rows, y1_.data());  // weight quantization only
    a.w_err += sq_err(y1_);
    linear_forward(wq, xq_.data(), rows, y1_.data());
    if (c.output.channel_scales.empty()) {
      fake_quantize(y1_.data(), ny, c.output);
    } else {
      fake_quantize_channels(y1_.data(), rows, l.out, c.output.channel_scales);
    }
    a.tot_err += sq_err(y1_);
    for (size_t i = 0; i < ny; ++i) a.ref += ref_[i] * double(ref_[i]);
  }
  std::vector<GemmReportRow> rows() const {
    std::vector<GemmReportRow> out;
    for (size_t l = 0; l < layers_.size(); ++l)
      for (int k = 0; k < kGemmsPerLayer; ++k) {
        const ConvertedLinear& c = layers_[l][k];
        const ErrorAccumulator& a = acc_[l][k];
        GemmReportRow r;
        r.name = c.source->name;
        r.int8 = c.int8;
        r.int4 = c.int8 && c.int4;
        if (c.int8 && a.ref > 0) {
          r.input_rel_error = std::sqrt(a.in_err / a.ref);
          r.weight_rel_error = std::sqrt(a.w_err / a.ref);
          r.total_rel_error = std::sqrt(a.tot_err / a.ref);
        }
        out.push_back(r);
      }
    return out;
  }

 private:
  std::vector<std::array<ConvertedLinear, kGemmsPerLayer>>& layers_;
  std::vector<std::array<ErrorAccumulator, kGemmsPerLayer>> acc_;
  std::vector<float> xs_, xq_, y1_, ref_;
  HiddenAct act_;
};

}  // namespace

// int4 with GPTQ: the tokens its Hessians are taken on (the largest, [tokens, 3072] float, is
// 25 MB for BERT-base at 2048).
constexpr size_t kGptqTokens = 2048;

// Appends sequence s of `from` to `to`.
static void append_sequence(TokenBatch& to, const TokenBatch& from, size_t s) {
  const size_t H = from.embeddings.empty() ? 0 : from.embeddings.size() / std::max<size_t>(1, from.total_tokens());
  const size_t len = from.starts[s + 1] - from.starts[s];
  if (!from.ids.empty()) {
    to.ids.insert(to.ids.end(), from.ids.begin() + from.starts[s], from.ids.begin() + from.starts[s + 1]);
    to.token_types.insert(to.token_types.end(), from.token_types.begin() + from.starts[s],
                          from.token_types.begin() + from.starts[s + 1]);
  } else {
    to.embeddings.insert(to.embeddings.end(), from.embeddings.begin() + from.starts[s] * H,
                         from.embeddings.begin() + from.starts[s + 1] * H);
  }
  to.starts.push_back(to.total_tokens() + len);
}

// The sequences of `b` no longer than max_len, while the total stays within max_total tokens
// (sequences of 1-3 tokens are always kept). With `rest`, the other sequences no longer than
// max_len are appended to it (disjoint from the selection).
static TokenBatch select_sequences(const TokenBatch& b, size_t max_len, size_t max_total, TokenBatch* rest = nullptr) {
  TokenBatch q;
  q.starts.push_back(0);
  for (size_t s = 0; s < b.num_sequences(); ++s) {
    const size_t len = b.starts[s + 1] - b.starts[s];
    if (len > max_len) continue;
    if (q.total_tokens() + len > max_total && len > 3) {
      if (rest) append_sequence(*rest, b, s);
      continue;
    }
    append_sequence(q, b, s);
  }
  return q;
}

bool gemm_name_matches(const std::string& pattern, const std::string& name) {
  return match_from(pattern.c_str(), name.c_str());
}

std::string format_report(const std::vector<GemmReportRow>& rows) {
  std::string s = "GEMM                               precision  rel.err(input)  rel.err(weights)  rel.err(total)\n";
  char line[256];
  for (const auto& r : rows) {
    if (r.int8) {
      std::snprintf(line, sizeof line, "%-34s %-9s  %14.5f  %16.5f  %14.5f\n", r.name.c_str(), r.int4 ? "int8/int4w" : "int8", r.input_rel_error,
                    r.weight_rel_error, r.total_rel_error);
    } else {
      std::snprintf(line, sizeof line, "%-34s %-9s  %14s  %16s  %14s\n", r.name.c_str(), "fp32", "-", "-", "-");
    }
    s += line;
  }
  return s;
}

// One Dense module's weights: linear.weight [out, in] (+ linear.bias when `bias`) from its
// model.safetensors, every tensor of the file used; a folder with only pytorch_model.bin gets the
// one-line torch conversion.
FloatLinear load_dense_linear(const DenseModule& d, const std::string& name) {
  const std::string path = d.dir + "/model.safetensors";
  if (!is_regular_file(path)) {
    if (is_regular_file(d.dir + "/pytorch_model.bin"))
      throw std::runtime_error(d.dir + ": has pytorch_model.bin but no model.safetensors; convert it once with torch: "
                               "python3 -c \"import torch,safetensors.torch as s; s.save_file(torch.load('" + d.dir +
                               "/pytorch_model.bin'), '" + path + "')\"");
    throw std::runtime_error(d.dir + ": no model.safetensors (the Dense module's weights)");
  }
  const SafetensorsCheckpoint ck = SafetensorsCheckpoint::open_file(path);
  FloatLinear l;
  l.name = name;
  l.in = d.in_features;
  l.out = d.out_features;
  const std::vector<int64_t> w_shape = {l.out, l.in}, b_shape = {l.out};
  const TensorInfo& w = ck.get("linear.weight");
  if (w.shape != w_shape)
    throw std::runtime_error(path + ": tensor 'linear.weight' has shape " + shape_to_string(w.shape) +
                             ", config.json says " + shape_to_string(w_shape));
  ck.read_f32("linear.weight", l.weight);
  if (d.bias) {
    const TensorInfo& b = ck.get("linear.bias");
    if (b.shape != b_shape)
      throw std::runtime_error(path + ": tensor 'linear.bias' has shape " + shape_to_string(b.shape) + ", expected " +
                               shape_to_string(b_shape));
    ck.read_f32("linear.bias", l.bias);
  }
  for (const std::string& n : ck.names())
    if (n != "linear.weight" && !(d.bias && n == "linear.bias"))
      throw std::runtime_error(path + ": tensor '" + n + "' is not used by a Dense module" +
                               (n == "linear.bias" ? " (config.json says bias false)" : ""));
  return l;
}

// The sentence-transformers Dense modules, a chain from hidden_size back to hidden_size (the
// sentence embedding's width).
void load_dense_modules(const SentenceTransformersLayout& st, FloatBert& m) {
  int width = m.config.hidden_size;
  for (size_t i = 0; i < st.dense.size(); ++i) {
    const DenseModule& d = st.dense[i];
    if (d.in_features != width)
      throw std::runtime_error(d.dir + "/config.json: in_features " + std::to_string(d.in_features) + " != " +
                               std::to_string(width) + " (the features before this Dense module)");
    m.dense.push_back(load_dense_linear(d, "sentence_dense." + std::to_string(i)));
    m.dense_tanh.push_back(d.tanh);
    width = d.out_features;
  }
  if (width != m.config.hidden_size)
    throw std::runtime_error(st.dense.back().dir + "/config.json: the last Dense module writes " + std::to_string(width) +
                             " features; edgebert's sentence embedding has hidden_size " +
                             std::to_string(m.config.hidden_size) + " features");
}

// A ColBERT folder's Dense module (SentenceTransformersLayout::token_dense), as the classifier of a
// TOKEN_VECTORS model.
FloatLinear load_token_dense(const SentenceTransformersLayout& st, int hidden) {
  if (st.token_dense.in_features != hidden)
    throw std::runtime_error(st.token_dense.dir + "/config.json: in_features " +
                             std::to_string(st.token_dense.in_features) + " differs from the model's hidden size " +
                             std::to_string(hidden));
  return load_dense_linear(st.token_dense, "token_vectors");
}

FloatBert load_model_dir(const std::string& dir, std::vector<std::string>* notes, std::string* weights_dir) {
  // bge-m3: sparse_linear / colbert_linear beside the encoder (a .pt only: refused with the torch command)
  const bool bge_m3 = has_bge_m3_heads(dir);
  SentenceTransformersLayout st;
  const bool is_st = read_sentence_transformers(dir, &st);
  *weights_dir = is_st ? st.transformer_dir : dir;
  const HfBertCheckpoint ck = HfBertCheckpoint::open(*weights_dir);
  Task task = task_from_architecture(ck);
  if (is_st) {
    if (task != Task::kEncoder)
      throw std::runtime_error(*weights_dir + "/config.json: architecture '" + ck.config().architectures.front() +
                               "' has a " + task_name(task) + " head, but " + dir +
                               "/modules.json makes it a sentence-transformers encoder");
    if (st.embedding_dimension != 0 && st.embedding_dimension != ck.config().hidden_size)
      throw std::runtime_error(dir + ": 1_Pooling word_embedding_dimension " + std::to_string(st.embedding_dimension) +
                               " differs from the model's hidden size " + std::to_string(ck.config().hidden_size));
    task = st.token_dense.dir.empty() ? Task::kSentenceEmbedding : Task::kTokenVectors;
  }
  if (bge_m3) {
    if (task != Task::kEncoder && task != Task::kSentenceEmbedding)
      throw std::runtime_error(dir + ": bge-m3 heads beside a " + std::string(task_name(task)) +
                               " model (FlagEmbedding's BGEM3 is an encoder with sparse_linear and colbert_linear)");
    if (is_st && (st.pooling != PoolingMode::kCls || !st.normalize || !st.dense.empty()))
      throw std::runtime_error(dir + "/modules.json: a bge-m3 folder's sentence-transformers modules must be CLS "
                               "pooling and Normalize (BGEM3FlagModel's dense output), got " +
                               pooling_mode_name(st.pooling) + (st.normalize ? " + Normalize" : " without Normalize"));
    task = Task::kBgeM3;
  }
  FloatBert m = load_float_bert(ck, task);
  if (bge_m3) {
    load_bge_m3_heads(dir, m);
    notes->push_back("note: bge-m3: dense (CLS, normalized), sparse (sparse_linear) and ColBERT (colbert_linear, dim " +
                     std::to_string(m.num_labels) + ") outputs");
  }
  if (task == Task::kTokenVectors) {
    m.classifier = load_token_dense(st, ck.config().hidden_size);
    m.num_labels = m.classifier.out;
    if (st.pylate.present) {
      FloatBert::ColbertInputs& c = m.colbert;
      c.present = true;
      c.query_prefix = st.pylate.query_prefix;
      c.document_prefix = st.pylate.document_prefix;
      c.query_length = st.pylate.query_length;
      c.document_length = st.pylate.document_length;
      c.do_query_expansion = st.pylate.do_query_expansion;
      c.attend_to_expansion = st.pylate.attend_to_expansion_tokens;
      c.skiplist_words = st.pylate.skiplist_words;
      notes->push_back("note: ColBERT token vectors (dim " + std::to_string(m.num_labels) + ") with PyLate's inputs: "
                       "query_prefix '" + c.query_prefix + "', document_prefix '" + c.document_prefix +
                       "', query_length " + std::to_string(c.query_length) + ", document_length " +
                       std::to_string(c.document_length) + (c.do_query_expansion ? ", query expansion" : "") + ", " +
                       std::to_string(c.skiplist_words.size()) +
                       " skiplist words (text runs: eb_session_set_colbert_input QUERY / DOCUMENT; PLAIN by default)");
    } else {
      notes->push_back("note: ColBERT token vectors (dim " + std::to_string(m.num_labels) +
                       "): config_sentence_transformers.json has no PyLate input conventions (query_prefix, "
                       "query_length, ...): text runs lay out the plain template; pass markers and expansion as ids");
    }
  }
  if (!bge_m3) {
    m.pooling = st.pooling;
    m.normalize = is_st && st.normalize;
  }
  m.max_seq_length = st.max_seq_length;
  m.lowercase_input = st.lowercase_input;
  load_dense_modules(st, m);
  m.prompts = st.prompts;
  m.default_prompt_name = st.default_prompt_name;
  // Nothing is dropped silently: every tensor is used, or training-only and noted.
  const std::vector<std::string> unused = ck.unused_tensors();
  std::vector<std::string> errors;
  for (const std::string& n : unused) {
    if (ck.is_training_only_here(n)) {
      notes->push_back("note: ignoring training-only tensor '" + n + "'");
    } else {
      errors.push_back(n);
    }
  }
  if (!errors.empty()) {
    std::string msg = ck.weights().source() + ": tensor '" + errors.front() + "' is not used by a " +
                      ck.config().model_type + " " + task_name(task) + " model";
    if (!ck.config().architectures.empty()) msg += " (architecture " + ck.config().architectures.front() + ")";
    if (errors.size() > 1) msg += " (and " + std::to_string(errors.size() - 1) + " more unused tensors)";
    throw std::runtime_error(msg);
  }
  return m;
}

ConvertResult convert_checkpoint(const ConvertOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  // The checkpoint's mappings are released as soon as the float copy exists, so peak memory is
  // about one float copy plus the output (not two copies of the checkpoint).
  std::vector<std::string> notes;
  std::string dir;
  FloatBert m = load_model_dir(o.input_dir, &notes, &dir);
  const BertConfig& cfg = m.config;
  if (!o.quiet) {
    for (const std::string& n : notes) std::fprintf(stderr, "[edgebert-convert] %s\n", n.c_str());
    std::fprintf(stderr, "[edgebert-convert] loaded %s: %s %s, %d layers, hidden %d, %d heads, intermediate %d\n",
                 o.input_dir.c_str(), cfg.model_type.c_str(), task_name(m.task), cfg.num_hidden_layers,
                 cfg.hidden_size, cfg.num_attention_heads, cfg.intermediate_size);
  }
  Vocab vocab;
  bool have_vocab = false;
  std::unique_ptr<TokenizerJson> tokenizer;
  if (m.has_embeddings && std::ifstream(dir + "/tokenizer.json")) {
    // The whole pipeline; vocab.txt (if any) is still written for readers of older files.
    tokenizer = std::make_unique<TokenizerJson>(read_tokenizer_json(dir + "/tokenizer.json"));
    for (const std::string& w : tokenizer->warnings) {
      if (!o.quiet) std::fprintf(stderr, "[edgebert-convert] warning: %s\n", w.c_str());
      notes.push_back("warning: " + w);
    }
    if (tokenizer->vocab_size > static_cast<size_t>(cfg.vocab_size))
      throw std::runtime_error(dir + "/tokenizer.json: has " + std::to_string(tokenizer->vocab_size) +
                               " token ids, config.json vocab_size is " + std::to_string(cfg.vocab_size));
  }
  if (m.has_embeddings && !tokenizer && !std::ifstream(dir + "/vocab.txt")) {
    for (const char* spm : {"spiece.model", "sentencepiece.bpe.model", "sentencepiece.model", "tokenizer.model"})
      if (std::ifstream(dir + "/" + spm))
        throw std::runtime_error(dir + ": has the SentencePiece model " + spm +
                                 " but no tokenizer.json; edgebert reads SentencePiece tokenizers from tokenizer.json"
                                 " (write one with transformers: AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR))");
    // GPT-2 style byte-level BPE files (RoBERTa's vocab.json + merges.txt): the pipeline's
    // pre-tokenizer, post-processor and added tokens live in tokenizer.json only
    if (std::ifstream(dir + "/vocab.json") || std::ifstream(dir + "/merges.txt"))
      throw std::runtime_error(dir + ": has vocab.json / merges.txt but no tokenizer.json; edgebert reads BPE tokenizers "
                               "from tokenizer.json (write one with transformers: "
                               "AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR))");
  }
  if (m.has_embeddings && !tokenizer && !std::ifstream(dir + "/vocab.txt")) {
    // Checkpoints without a vocabulary still convert: the model then runs on token ids only.
    if (!o.quiet)
      std::fprintf(stderr, "[edgebert-convert] warning: %s/vocab.txt not found: the model will accept token ids only\n",
                   dir.c_str());
  } else if (m.has_embeddings && std::ifstream(dir + "/vocab.txt")) {
    vocab = read_vocab(dir);
    have_vocab = true;
    if (m.lowercase_input && !vocab.do_lower_case)
      throw std::runtime_error(o.input_dir + "/sentence_bert_config.json: do_lower_case true with a cased tokenizer (" +
                               dir + ") is not supported (the runtime would not lower-case the text)");
    if (static_cast<int>(vocab.tokens.size()) != cfg.vocab_size)
      throw std::runtime_error(dir + "/vocab.txt: has " + std::to_string(vocab.tokens.size()) +
                               " tokens, config.json vocab_size is " + std::to_string(cfg.vocab_size));
  }
  if (m.task == Task::kBgeM3) {
    if (!tokenizer)
      throw std::runtime_error(dir + ": bge-m3 needs its tokenizer.json (the ids its sparse weights leave out)");
    m.sparse_unused_ids = bge_m3_unused_ids(dir, *tokenizer);
  }
  resolve_colbert_inputs(m.colbert, have_vocab ? &vocab : nullptr, tokenizer.get(),
                         o.input_dir + "/config_sentence_transformers.json");
  ConvertResult r = convert_model(m, have_vocab ? &vocab : nullptr, o, tokenizer.get());
  r.notes = std::move(notes);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

ConvertResult convert_model(const FloatBert& m, const Vocab* vocab_in, const ConvertOptions& o,
                            const TokenizerJson* tokenizer_json) {
  const auto t0 = std::chrono::steady_clock::now();
  auto log = [&](const std::string& msg) {
    if (!o.quiet) std::fprintf(stderr, "[edgebert-convert] %s\n", msg.c_str());
  };
  const BertConfig& cfg = m.config;
  static const Vocab kNoVocab{};
  const Vocab& vocab = vocab_in ? *vocab_in : kNoVocab;
  const bool have_vocab = vocab_in != nullptr;

  // int8 of the families where the runtime runs it: RoBERTa / XLM-R / CamemBERT (BERT's blocks
  // with other position ids and an fp32 head), ELECTRA and ALBERT (their projection GEMM stays
  // fp32; ALBERT's shared layers calibrated over every use), nomic-bert with SwiGLU / GeGLU and
  // ModernBERT (pre-norm: the residual stream stays float, each LayerNorm quantizes for its GEMM).
  // nomic-bert: every activation it has (SwiGLU, GeGLU, GLU: the gate table of the gated op; plain
  // GELU).
  const bool int8_family = m.family() == Family::kRoberta || m.family() == Family::kElectra ||
                           m.family() == Family::kAlbert || m.family() == Family::kModernBert ||
                           m.family() == Family::kQwen3 || m.family() == Family::kGemma3 ||
                           (m.family() == Family::kNomicBert &&
                            (cfg.activation == HiddenAct::kGelu || cfg.activation == HiddenAct::kSilu ||
                             cfg.activation == HiddenAct::kSigmoid));
  if (o.fp32 && o.int4) throw std::runtime_error("--weights int4 and --fp32 exclude each other");
  if (!o.fp32 && !cfg.is_bert_or_distilbert() && !int8_family)
    throw std::runtime_error(std::string("int8 conversion of ") + family_name(m.family()) +
                             " models is not supported yet (convert with --fp32)");
  // RoBERTa's positions start at padding_idx + 1: its table holds that many fewer sequence positions.
  const int seq_limit = m.positions == PositionScheme::kPaddingOffset
                            ? cfg.max_position_embeddings - m.padding_idx - 1
                            : cfg.max_position_embeddings;
  int max_pos = seq_limit;
  if (o.max_seq_len < 0 || o.max_seq_len > seq_limit)
    throw std::runtime_error("--max-seq-len " + std::to_string(o.max_seq_len) + " is outside 1.." +
                             std::to_string(seq_limit) + " (max_position_embeddings" +
                             (seq_limit != cfg.max_position_embeddings ? " - padding_idx - 1)" : ")"));
  if (o.max_seq_len > 0) {
    max_pos = o.max_seq_len;
  } else if (m.max_seq_length > 0 && m.max_seq_length < max_pos) {
    // sentence-transformers truncates longer inputs: the model refuses them instead of embedding
    // more text than the original would. (PyLate: its query / document lengths, marker included,
    // are the limits; its max_seq_length is one less.)
    max_pos = m.colbert.present ? std::min(max_pos, std::max({m.max_seq_length, m.colbert.query_length,
                                                              m.colbert.document_length}))
                                : m.max_seq_length;
  }
  if (m.colbert.present)
    for (const auto& [key, len] : {std::pair<const char*, int>{"query_length", m.colbert.query_length},
                                   {"document_length", m.colbert.document_length}})
      if (len > max_pos)
        throw std::runtime_error(o.input_dir + "/config_sentence_transformers.json: PyLate's " + key + " " +
                                 std::to_string(len) + " is beyond the " + std::to_string(max_pos) +
                                 " positions the model file would keep (--max-seq-len, max_position_embeddings)");

  ConvertedModel cm;
  cm.model = &m;
  cm.vocab = have_vocab ? &vocab.tokens : nullptr;
  cm.tokenizer = tokenizer_json;
  cm.do_lower_case = vocab.do_lower_case;
  cm.tokenize_chinese_chars = vocab.tokenize_chinese_chars;
  cm.int8 = !o.fp32;
  cm.max_position = max_pos;

  ConvertResult result;
  result.task = m.task;
  if (cm.int8) {
    CalibrationInputs calib;
    if (tokenizer_json) {  // the model's own tokenizer
      text::Tokenizer tok;
      const Status st = tok.init_from_buffer(tokenizer_spec_buffer(*tokenizer_json));
      if (!st.is_ok()) throw std::runtime_error(tokenizer_json->source + ": " + st.message());
      calib = make_calibration_inputs(m, &tok, o.calibration_file, std::min(max_pos, 512));
    } else {
      calib = make_calibration_inputs(m, cm.vocab, vocab.do_lower_case, o.calibration_file, std::min(max_pos, 512));
    }
    if (o.quick_calibration) calib.batch = select_sequences(calib.batch, SIZE_MAX, 96);
    result.calibration_source = calib.source;
    result.calibration_tokens = calib.batch.total_tokens();
    log("calibrating on " + calib.source + ": " + std::to_string(calib.batch.num_sequences()) + " sequences, " +
        std::to_string(calib.batch.total_tokens()) + " tokens");
    cm.layers.resize(m.layers.size());
    for (size_t l = 0; l < m.layers.size(); ++l)
      for (int k = 0; k < kGemmsPerLayer; ++k) {
        ConvertedLinear& c = cm.layers[l][k];
        c.source = &m.layers[l].gemm(static_cast<GemmKind>(k));
        c.int8 = true;
        for (const std::string& p : o.keep_fp32)
          if (gemm_name_matches(p, c.source->name)) c.int8 = false;
      }
    // nomic-bert prenorm: the encoder's output is the last layer's MLP output itself (no residual
    // to dilute its error), and int8 up GEMMs there cost the most: kept fp32, the lowest per-token
    // cosine on the test model goes from 0.972 to 0.9965 (docs/families.md; the whole last layer
    // fp32 gives 0.9967, its down GEMM alone 0.9728).
    if (m.family() == Family::kNomicBert && m.pre_norm && m.num_applied_layers() > 0) {
      const size_t last = static_cast<size_t>(m.stored_layer(m.num_applied_layers() - 1));
      cm.layers[last][static_cast<int>(GemmKind::kIntermediate)].int8 = false;
      log("nomic-bert prenorm: the last layer's up GEMM stays fp32 (it feeds the encoder output directly)");
    }
    // Qwen3: the last layer's down GEMM feeds the encoder output through the final RMSNorm only,
    // and its input (the SwiGLU product silu(gate) * up, heavy-tailed) has one static scale: kept
    // fp32, the lowest per-token cosine of the test models goes from 0.9875 to 0.996 (its other
    // GEMMs, or the same GEMM of the earlier layers, kept fp32 change it by < 0.001).
    if (m.family() == Family::kQwen3 && m.num_applied_layers() > 0) {
      const size_t last = static_cast<size_t>(m.stored_layer(m.num_applied_layers() - 1));
      cm.layers[last][static_cast<int>(GemmKind::kOutput)].int8 = false;
      log("qwen3: the last layer's down GEMM stays fp32 (it feeds the encoder output through the final norm only)");
    }
    Calibrator calibrator(m, o.scheme, cm.layers, cm.qk_norm_scales);
    auto secs_since = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    auto t_cal = std::chrono::steady_clock::now();
    const std::vector<float> calib_hidden = reference_encoder(m, calib.batch, &calibrator);
    char msg[160];
    std::snprintf(msg, sizeof msg, "calibration and %s parameter choice: %.2f s (of which choosing parameters %.2f s)",
                  scheme_name(o.scheme), secs_since(t_cal), calibrator.seconds());
    if (m.has_embeddings)
      cm.word_embeddings = quantize_rows_symmetric(m.word_embeddings.data(), cfg.vocab_size,
                                                   m.embedding_size > 0 ? m.embedding_size : cfg.hidden_size);
    if (m.task == Task::kMaskedLm)  // the tied decoder's int8 input and output scales
      cm.mlm_decoder = choose_masked_lm_decoder_params(m, calib_hidden, calib.batch.total_tokens(), cm.word_embeddings);
    cm.calibration_source = calib.source;
    cm.calibration_method = scheme_method_name(o.scheme);
    cm.calibration_sequences = static_cast<int>(calib.batch.num_sequences());
    cm.calibration_tokens = static_cast<int>(calib.batch.total_tokens());
    log(msg);

    if (o.int4) {
      // The probe: calibration sequences of up to 128 tokens, at most 256 tokens in all, and two
      // seeded extra sequences of up to 32 tokens (random ids, one a pair where the model has token
      // types: inputs unlike the calibration text, so a rounding fitted to that text shows what it
      // does elsewhere). GPTQ's Hessians come from disjoint inputs: the other calibration
      // sequences of up to 128 tokens and seeded extra sequences of 128 tokens (another seed),
      // kGptqTokens in all, so the policy measures GPTQ's rounding on inputs it was not fitted to.
      log("int4: measuring each GEMM's int4 cost on the calibration outputs");
      auto t_int4 = std::chrono::steady_clock::now();
      TokenBatch hessian_inputs;
      hessian_inputs.starts.push_back(0);
      TokenBatch probe = select_sequences(calib.batch, 128, 256, &hessian_inputs);
      {
        const TokenBatch unlike = make_extra_sequences(m, 20261203, 2, std::min(32, std::max(1, max_pos)));
        for (size_t s = 0; s < unlike.num_sequences(); ++s) append_sequence(probe, unlike, s);
      }
      if (effective_rounding(o.int4_options, probe) != Int4Rounding::kNearest && hessian_inputs.total_tokens() < kGptqTokens) {
        const int len = std::min(128, std::max(1, max_pos));
        const int count = static_cast<int>((kGptqTokens - hessian_inputs.total_tokens() + len - 1) / len);
        const TokenBatch extra = make_extra_sequences(m, 20261202, count, len);
        for (size_t s = 0; s < extra.num_sequences(); ++s) append_sequence(hessian_inputs, extra, s);
      }
      result.int4_policy = choose_int4(m, probe, hessian_inputs, o.int4_options, cm);
      result.int4 = true;
      if (m.task == Task::kMaskedLm && m.has_embeddings)  // choose_int4 leaves the table out
        log("int4: the word table stays int8 (it is also the masked-LM decoder's weights)");
      std::snprintf(msg, sizeof msg, "int4 policy: %.2f s", secs_since(t_int4));
      log(msg);
    }
    if (o.error_report) {
      log("measuring per-GEMM int8 error on the calibration inputs");
      // The report runs on the calibration sequences of up to 128 tokens, at most 256 tokens in
      // all (an estimate), which keeps conversion of large models within seconds.
      auto t_err = std::chrono::steady_clock::now();
      ErrorObserver err(cm.layers, m.activation());
      reference_encoder(m, select_sequences(calib.batch, 128, 256), &err);
      result.report = err.rows();
      std::snprintf(msg, sizeof msg, "error report: %.2f s", secs_since(t_err));
      log(msg);
    }
  }

  result.buffer = build_model_buffer(cm, o.inline_payload_limit);
  if (!o.output_path.empty()) write_file_atomically(o.output_path, result.buffer.data(), result.buffer.size());
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace edgebert::convert
