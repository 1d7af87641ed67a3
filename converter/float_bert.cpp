// float_bert.cpp: loads a HuggingFace BERT / DistilBERT checkpoint and its head into FloatBert,
// fusing Q/K/V.
#include "converter/float_bert.h"

#include <cmath>
#include <string>

#include "converter/checkpoint/checkpoint_error.h"

namespace edgebert::convert {

float ffn_activation(HiddenAct act, float x) {
  switch (act) {
    case HiddenAct::kRelu: return x > 0.f ? x : 0.f;
    case HiddenAct::kGeluTanh: {
      const float k = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    case HiddenAct::kGelu: break;
  }
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}

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

namespace {

// HF tensor names (without the model prefix) of one encoder layer's parts.
struct LayerNames {
  const char *q, *k, *v, *attention_output, *attention_norm, *intermediate, *output, *output_norm;
};
constexpr LayerNames kBertLayer = {"attention.self.query", "attention.self.key", "attention.self.value",
                                   "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
                                   "output.dense", "output.LayerNorm"};
constexpr LayerNames kDistilBertLayer = {"attention.q_lin", "attention.k_lin", "attention.v_lin",
                                         "attention.out_lin", "sa_layer_norm", "ffn.lin1",
                                         "ffn.lin2", "output_layer_norm"};

void load_heads(const HfBertCheckpoint& ck, Task task, FloatBert& m) {
  const BertConfig& c = m.config;
  const int H = c.hidden_size;
  const bool distil = c.is_distilbert();
  m.has_pooler = !distil && (ck.has_pooler() || (task == Task::kSequenceClassification));
  if (m.has_pooler) m.pooler = load_linear(ck, "pooler.dense", "pooler", H, H);
  switch (task) {
    case Task::kEncoder:
    case Task::kSentenceEmbedding:
      return;
    case Task::kQuestionAnswering: {
      const TensorInfo* t = ck.resolve("qa_outputs.weight");
      if (t && (t->shape.size() != 2 || t->shape[0] != 2)) {
        throw CheckpointError(t->file + ": tensor '" + t->name + "' has shape " + shape_to_string(t->shape) +
                              ", expected [2, " + std::to_string(H) + "] (start and end logits)");
      }
      m.num_labels = 2;
      m.classifier = load_linear(ck, "qa_outputs", "qa_outputs", 2, H);
      return;
    }
    case Task::kSequenceClassification:
    case Task::kTokenClassification:
      break;
  }
  m.num_labels = ck.num_labels();
  if (m.num_labels <= 0) {
    throw CheckpointError(ck.weights().source() + ": missing tensor 'classifier.weight' (the " + task_name(task) +
                          " head of architecture " +
                          (c.architectures.empty() ? std::string("?") : c.architectures.front()) + ")");
  }
  if (distil && task == Task::kSequenceClassification) {
    m.has_pre_classifier = true;
    m.pre_classifier = load_linear(ck, "pre_classifier", "pre_classifier", H, H);
  }
  m.classifier = load_linear(ck, "classifier", "classifier", m.num_labels, H);
  if (c.has_id2label) m.labels = c.id2label;
}

}  // namespace

FloatBert load_float_bert(const HfBertCheckpoint& ck) { return load_float_bert(ck, task_from_architecture(ck)); }

FloatBert load_float_bert(const HfBertCheckpoint& ck, Task task) {
  FloatBert m;
  m.config = ck.config();
  m.task = task;
  const BertConfig& c = m.config;
  const int H = c.hidden_size, I = c.intermediate_size;
  const bool distil = c.is_distilbert();
  m.has_embeddings = ck.has_embeddings();
  if (m.has_embeddings) {
    ck.load("embeddings.word_embeddings.weight", {i64(c.vocab_size), i64(H)}, m.word_embeddings);
    ck.load("embeddings.position_embeddings.weight", {i64(c.max_position_embeddings), i64(H)},
            m.position_embeddings);
    if (c.has_token_types())
      ck.load("embeddings.token_type_embeddings.weight", {i64(c.type_vocab_size), i64(H)}, m.token_type_embeddings);
    m.embedding_norm = load_norm(ck, "embeddings.LayerNorm", H);
  }
  const LayerNames& names = distil ? kDistilBertLayer : kBertLayer;
  const std::string layer_prefix = distil ? "transformer.layer." : "encoder.layer.";
  m.layers.resize(c.num_hidden_layers);
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string hf = layer_prefix + std::to_string(i) + ".";
    const std::string ours = "layer." + std::to_string(i) + ".";
    FloatLayer& L = m.layers[i];
    FloatLinear q = load_linear(ck, hf + names.q, "", H, H);
    FloatLinear k = load_linear(ck, hf + names.k, "", H, H);
    FloatLinear v = load_linear(ck, hf + names.v, "", H, H);
    L.qkv.name = ours + gemm_kind_suffix(GemmKind::kQkv);
    L.qkv.in = H;
    L.qkv.out = 3 * H;
    L.qkv.weight.reserve(static_cast<size_t>(3) * H * H);
    L.qkv.bias.reserve(static_cast<size_t>(3) * H);
    for (const FloatLinear* p : {&q, &k, &v}) {
      L.qkv.weight.insert(L.qkv.weight.end(), p->weight.begin(), p->weight.end());
      L.qkv.bias.insert(L.qkv.bias.end(), p->bias.begin(), p->bias.end());
    }
    L.attention_output =
        load_linear(ck, hf + names.attention_output, ours + gemm_kind_suffix(GemmKind::kAttentionOutput), H, H);
    L.attention_norm = load_norm(ck, hf + names.attention_norm, H);
    L.intermediate = load_linear(ck, hf + names.intermediate, ours + gemm_kind_suffix(GemmKind::kIntermediate), I, H);
    L.output = load_linear(ck, hf + names.output, ours + gemm_kind_suffix(GemmKind::kOutput), H, I);
    L.output_norm = load_norm(ck, hf + names.output_norm, H);
  }
  load_heads(ck, task, m);
  return m;
}

}  // namespace edgebert::convert
