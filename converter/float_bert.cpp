// float_bert.cpp: loads a HuggingFace BERT checkpoint into FloatBert, fusing Q/K/V.
#include "converter/float_bert.h"

#include <string>

namespace edgebert::convert {

const char* gemm_kind_suffix(GemmKind kind) {
  switch (kind) {
    case GemmKind::kQkv: return "attention.qkv";
    case GemmKind::kAttentionOutput: return "attention.output";
    case GemmKind::kIntermediate: return "intermediate";
    case GemmKind::kOutput: return "output";
  }
  return "?";
}

FloatLinear& FloatLayer::gemm(GemmKind k) {
  switch (k) {
    case GemmKind::kQkv: return qkv;
    case GemmKind::kAttentionOutput: return attention_output;
    case GemmKind::kIntermediate: return intermediate;
    case GemmKind::kOutput: break;
  }
  return output;
}
const FloatLinear& FloatLayer::gemm(GemmKind k) const { return const_cast<FloatLayer*>(this)->gemm(k); }

namespace {

int64_t i64(int v) { return static_cast<int64_t>(v); }

FloatLinear load_linear(const HfBertCheckpoint& ck, const std::string& hf_prefix, std::string name, int out, int in) {
  FloatLinear l;
  l.name = std::move(name);
  l.in = in;
  l.out = out;
  ck.load(hf_prefix + ".weight", {i64(out), i64(in)}, l.weight);
  ck.load(hf_prefix + ".bias", {i64(out)}, l.bias);
  return l;
}

FloatLayerNorm load_norm(const HfBertCheckpoint& ck, const std::string& hf_prefix, int hidden) {
  FloatLayerNorm n;
  ck.load(hf_prefix + ".weight", {i64(hidden)}, n.gamma);
  ck.load(hf_prefix + ".bias", {i64(hidden)}, n.beta);
  return n;
}

}  // namespace

FloatBert load_float_bert(const HfBertCheckpoint& ck) {
  FloatBert m;
  m.config = ck.config();
  const BertConfig& c = m.config;
  const int H = c.hidden_size, I = c.intermediate_size;
  m.has_embeddings = ck.has_embeddings();
  if (m.has_embeddings) {
    ck.load("embeddings.word_embeddings.weight", {i64(c.vocab_size), i64(H)}, m.word_embeddings);
    ck.load("embeddings.position_embeddings.weight", {i64(c.max_position_embeddings), i64(H)},
            m.position_embeddings);
    ck.load("embeddings.token_type_embeddings.weight", {i64(c.type_vocab_size), i64(H)}, m.token_type_embeddings);
    m.embedding_norm = load_norm(ck, "embeddings.LayerNorm", H);
  }
  m.layers.resize(c.num_hidden_layers);
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string hf = "encoder.layer." + std::to_string(i) + ".";
    const std::string ours = "layer." + std::to_string(i) + ".";
    FloatLayer& L = m.layers[i];
    FloatLinear q = load_linear(ck, hf + "attention.self.query", "", H, H);
    FloatLinear k = load_linear(ck, hf + "attention.self.key", "", H, H);
    FloatLinear v = load_linear(ck, hf + "attention.self.value", "", H, H);
    L.qkv.name = ours + gemm_kind_suffix(GemmKind::kQkv);
    L.qkv.in = H;
    L.qkv.out = 3 * H;
    L.qkv.weight.reserve(static_cast<size_t>(3) * H * H);
    L.qkv.bias.reserve(static_cast<size_t>(3) * H);
    for (const FloatLinear* p : {&q, &k, &v}) {
      L.qkv.weight.insert(L.qkv.weight.end(), p->weight.begin(), p->weight.end());
      L.qkv.bias.insert(L.qkv.bias.end(), p->bias.begin(), p->bias.end());
    }
    L.attention_output = load_linear(ck, hf + "attention.output.dense", ours + gemm_kind_suffix(GemmKind::kAttentionOutput), H, H);
    L.attention_norm = load_norm(ck, hf + "attention.output.LayerNorm", H);
    L.intermediate = load_linear(ck, hf + "intermediate.dense", ours + gemm_kind_suffix(GemmKind::kIntermediate), I, H);
    L.output = load_linear(ck, hf + "output.dense", ours + gemm_kind_suffix(GemmKind::kOutput), H, I);
    L.output_norm = load_norm(ck, hf + "output.LayerNorm", H);
  }
  m.has_pooler = ck.has_pooler();
  if (m.has_pooler) m.pooler = load_linear(ck, "pooler.dense", "pooler", H, H);
  m.num_labels = ck.num_labels();
  if (m.num_labels > 0) m.classifier = load_linear(ck, "classifier", "classifier", m.num_labels, H);
  return m;
}

}  // namespace edgebert::convert
