// SPDX-License-Identifier: Apache-2.0
// synthetic_model.cpp: deterministic random BERT weights and the closed-form cost model.
#include "converter/synthetic_model.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace edgebert::convert {
namespace {

// xorshift64*: fast and reproducible on every platform.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  float uniform() {  // [-1, 1)
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return static_cast<float>(static_cast<int64_t>((s * 0x2545F4914F6CDD1Dull) >> 11) - (int64_t(1) << 52)) *
           (1.f / static_cast<float>(int64_t(1) << 52));
  }
};

void fill(std::vector<float>& v, size_t n, float stddev, float mean, Rng& rng) {
  v.resize(n);
  const float a = stddev * std::sqrt(3.f);  // uniform [-a, a] has this standard deviation
  for (float& x : v) x = mean + a * rng.uniform();
}

FloatLinear linear(const std::string& name, int out, int in, Rng& rng) {
  FloatLinear l;
  l.name = name;
  l.in = in;
  l.out = out;
  fill(l.weight, static_cast<size_t>(out) * in, 1.f / std::sqrt(static_cast<float>(in)), 0.f, rng);
  fill(l.bias, out, 0.1f, 0.f, rng);
  return l;
}

FloatLayerNorm norm(int h, Rng& rng) {
  FloatLayerNorm n;
  fill(n.gamma, h, 0.1f, 1.f, rng);
  fill(n.beta, h, 0.05f, 0.f, rng);
  return n;
}

}  // namespace

bool parse_synthetic_spec(const std::string& text, SyntheticSpec* spec, std::string* error) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      *error = "'" + item + "' is not key=value";
      return false;
    }
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    char* end = nullptr;
    const long v = std::strtol(val.c_str(), &end, 10);
    if (val.empty() || *end || v < 0 || v > (1 << 20)) {
      *error = "bad value for " + key + ": '" + val + "'";
      return false;
    }
    const int iv = static_cast<int>(v);
    if (key == "hidden") spec->hidden = iv;
    else if (key == "heads") spec->heads = iv;
    else if (key == "layers") spec->layers = iv;
    else if (key == "intermediate") spec->intermediate = iv;
    else if (key == "vocab") spec->vocab = iv;
    else if (key == "max_position") spec->max_position = iv;
    else if (key == "labels") spec->labels = iv;
    else if (key == "seed") spec->seed = static_cast<uint32_t>(iv);
    else if (key == "outliers") spec->outliers = iv;
    else {
      *error = "unknown key '" + key +
               "' (hidden, heads, layers, intermediate, vocab, max_position, labels, seed, outliers)";
      return false;
    }
  }
  if (spec->hidden < 1 || spec->heads < 1 || spec->hidden % spec->heads || spec->layers < 1 || spec->intermediate < 1 ||
      spec->vocab < 4 || spec->max_position < 1 || spec->outliers > 8 ||
      (spec->outliers > 0 && (spec->hidden < 4 * spec->outliers || spec->intermediate < 4 * spec->outliers))) {
    *error = "inconsistent model: hidden must be divisible by heads, every size positive, outliers at most 8 "
             "(and hidden, intermediate >= 4 x outliers)";
    return false;
  }
  return true;
}

FloatBert make_synthetic_bert(const SyntheticSpec& s, std::vector<int>* outlier_dims) {
  Rng rng(s.seed);
  FloatBert m;
  BertConfig& c = m.config;
  c.hidden_size = s.hidden;
  c.num_attention_heads = s.heads;
  c.num_hidden_layers = s.layers;
  c.intermediate_size = s.intermediate;
  c.vocab_size = s.vocab;
  c.max_position_embeddings = s.max_position;
  c.type_vocab_size = s.type_vocab;
  c.layer_norm_eps = 1e-12f;
  c.hidden_act = "gelu";
  c.num_labels = s.labels;
  m.has_embeddings = true;
  fill(m.word_embeddings, static_cast<size_t>(s.vocab) * s.hidden, 1.f, 0.f, rng);
  fill(m.position_embeddings, static_cast<size_t>(s.max_position) * s.hidden, 0.5f, 0.f, rng);
  fill(m.token_type_embeddings, static_cast<size_t>(s.type_vocab) * s.hidden, 0.5f, 0.f, rng);
  m.embedding_norm = norm(s.hidden, rng);
  m.layers.resize(s.layers);
  for (int i = 0; i < s.layers; ++i) {
    const std::string p = "layer." + std::to_string(i) + ".";
    FloatLayer& L = m.layers[i];
    L.qkv = linear(p + gemm_kind_suffix(GemmKind::kQkv), 3 * s.hidden, s.hidden, rng);
    L.attention_output = linear(p + gemm_kind_suffix(GemmKind::kAttentionOutput), s.hidden, s.hidden, rng);
    L.attention_norm = norm(s.hidden, rng);
    L.intermediate = linear(p + gemm_kind_suffix(GemmKind::kIntermediate), s.intermediate, s.hidden, rng);
    L.output = linear(p + gemm_kind_suffix(GemmKind::kOutput), s.hidden, s.intermediate, rng);
    L.output_norm = norm(s.hidden, rng);
  }
  if (s.outliers > 0) {
    const int K = s.outliers, H = s.hidden;
    std::vector<int> dims(K);
    for (int k = 0; k < K; ++k) {
      dims[k] = (k * H / K + H / (2 * K) + 7) % H;
      const float G = K == 1 ? 35.f : 20.f + 30.f * k / (K - 1);
      const int d = dims[k];
      const float sign = (k / 2) % 2 ? -1.f : 1.f;
      auto set = [&](FloatLayerNorm& n, float gamma, float beta) {
        n.gamma[d] = gamma;
        n.beta[d] = beta;
      };
      // The GEMM writing the residual before the amplifying LayerNorm: row x2 and a bias of
      // +-2, so the outlier keeps one sign and magnitude across tokens, as in trained BERTs.
      auto big_row = [&](FloatLinear& l) {
        for (int i = 0; i < l.in; ++i) l.weight[static_cast<size_t>(d) * l.in + i] *= 2.f;
        l.bias[d] = 2.f * sign;
      };
      const bool residual_side = k % 2 == 0;  // even: qkv inputs; odd: FFN inputs
      if (residual_side) set(m.embedding_norm, G, 1.5f * G * sign);
      else set(m.embedding_norm, 2.f / G, 0.f);
      for (FloatLayer& L : m.layers) {
        set(L.output_norm, residual_side ? G : 2.f / G, 0.f);
        set(L.attention_norm, residual_side ? 2.f / G : G, 0.f);
        big_row(residual_side ? L.output : L.attention_output);
        // Queries and keys read the outlier like an ordinary dimension (weights / G); values
        // read it in full. Full-scale Q/K weights on a 50x dimension would make every attention
        // row an argmax, which trained models avoid.
        if (residual_side)
          for (int o = 0; o < 2 * H; ++o) L.qkv.weight[static_cast<size_t>(o) * H + d] /= G;
      }
    }
    if (outlier_dims) *outlier_dims = dims;
  }
  m.has_pooler = s.pooler;
  if (s.pooler) m.pooler = linear("pooler", s.hidden, s.hidden, rng);
  m.num_labels = s.labels;
  m.task = s.labels > 0 ? Task::kSequenceClassification : Task::kEncoder;
  if (s.labels > 0) m.classifier = linear("classifier", s.labels, s.hidden, rng);
  return m;
}

int64_t bert_parameter_count(const SyntheticSpec& s) {
  const int64_t H = s.hidden, I = s.intermediate;
  const int64_t per_layer = 4 * H * H + 4 * H  // Q, K, V, output projections with biases
                            + 2 * H * I + I + H  // FFN
                            + 4 * H;             // two LayerNorms
  int64_t p = per_layer * s.layers;
  p += (static_cast<int64_t>(s.vocab) + s.max_position + s.type_vocab) * H + 2 * H;  // embeddings + LN
  if (s.pooler) p += H * H + H;
  if (s.labels > 0) p += static_cast<int64_t>(s.labels) * H + s.labels;
  return p;
}

int64_t encoder_projection_macs(const SyntheticSpec& s, int64_t n) {
  return static_cast<int64_t>(s.layers) * 4 * n * s.hidden * s.hidden;
}

int64_t encoder_attention_core_macs(const SyntheticSpec& s, int64_t n) {
  // QK^T: heads x n x n x head_dim = n^2 x hidden; PV the same, for any head count.
  return static_cast<int64_t>(s.layers) * 2 * n * n * s.hidden;
}

int64_t encoder_ffn_macs(const SyntheticSpec& s, int64_t n) {
  return static_cast<int64_t>(s.layers) * 2 * n * s.hidden * s.intermediate;
}

}  // namespace edgebert::convert
