// SPDX-License-Identifier: Apache-2.0
// float_bert.cpp: loads a HuggingFace BERT / DistilBERT checkpoint and its head into FloatBert,
// fusing Q/K/V.
#include "converter/float_bert.h"

#include <cmath>
#include <string>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/family_layout.h"

namespace edgebert::convert {

float ffn_activation(HiddenAct act, float x) {
  switch (act) {
    case HiddenAct::kRelu: return x > 0.f ? x : 0.f;
    case HiddenAct::kGeluTanh: {
      const float k = 0.7978845608028654f;  // sqrt(2 / pi)
      return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    case HiddenAct::kSilu: return x / (1.0f + std::exp(-x));
    case HiddenAct::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case HiddenAct::kTanh: return std::tanh(x);
    case HiddenAct::kGelu: break;
  }
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
}

double RotaryParams::theta_at(int seq_len, bool local) const {
  double t = local ? local_theta : theta;
  if (ntk_factor > 0 && seq_len > ntk_max_trained)
    t *= std::pow(ntk_factor * seq_len / ntk_max_trained - (ntk_factor - 1.0),
                  static_cast<double>(dims) / (dims - 2));
  return t;
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

// Whether a linear / norm has a bias: required (BERT-style families), forbidden or optional.
enum class Bias { kRequired, kNone };

Bias bias_if(bool b) { return b ? Bias::kRequired : Bias::kNone; }

void refuse_bias(const HfBertCheckpoint& ck, const std::string& name) {
  if (const TensorInfo* t = ck.resolve(name + ".bias"))
    throw CheckpointError(t->file + ": tensor '" + t->name + "' is not used: config.json says this layer has no bias");
}

FloatLinear load_linear(const HfBertCheckpoint& ck, const std::string& hf_prefix, std::string name, int out, int in,
                        Bias bias = Bias::kRequired) {
  FloatLinear l;
  l.name = std::move(name);
  l.in = in;
  l.out = out;
  ck.load(hf_prefix + ".weight", {i64(out), i64(in)}, l.weight);
  if (bias == Bias::kRequired) {
    ck.load(hf_prefix + ".bias", {i64(out)}, l.bias);
  } else {
    refuse_bias(ck, hf_prefix);
  }
  return l;
}

FloatLayerNorm load_norm(const HfBertCheckpoint& ck, const std::string& hf_prefix, int hidden,
                         Bias bias = Bias::kRequired) {
  FloatLayerNorm n;
  ck.load(hf_prefix + ".weight", {i64(hidden)}, n.gamma);
  if (bias == Bias::kRequired) {
    ck.load(hf_prefix + ".bias", {i64(hidden)}, n.beta);
  } else {
    refuse_bias(ck, hf_prefix);
  }
  return n;
}

// Gemma's norms compute x_normed * (1 + weight) (in float32): the table stores 1 + weight, times
// `scale` (1 except the Q norm, which carries the attention scale; see load_layer).
void one_plus_weight(FloatLayerNorm& n, float scale = 1.f) {
  for (float& g : n.gamma) g = (1.f + g) * scale;
}

// Rows of several linears stacked into one (same input), biases likewise (all or none).
FloatLinear stack(std::string name, const std::vector<const FloatLinear*>& parts) {
  FloatLinear l;
  l.name = std::move(name);
  l.in = parts.front()->in;
  for (const FloatLinear* p : parts) {
    l.out += p->out;
    l.weight.insert(l.weight.end(), p->weight.begin(), p->weight.end());
    l.bias.insert(l.bias.end(), p->bias.begin(), p->bias.end());
  }
  return l;
}

// Where each family keeps its masked-LM head (transformers' *ForMaskedLM): transform dense,
// its activation, norm, decoder (weight tied to the word embeddings) and the decoder's bias.
struct MaskedLmLayout {
  std::string dense, norm, decoder, bias;  // bias: the tied parameter (the decoder's .bias may repeat it)
  HiddenAct act;
  Bias dense_bias = Bias::kRequired, norm_bias = Bias::kRequired;
};

MaskedLmLayout masked_lm_layout(const FloatBert& m) {
  const FamilyConfig& f = m.config.family;
  switch (m.family()) {
    case Family::kBert: return {"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                                "cls.predictions.decoder", "cls.predictions.bias", m.activation()};
    case Family::kDistilBert:  // DistilBertForMaskedLM: get_activation(config.activation)
      return {"vocab_transform", "vocab_layer_norm", "vocab_projector", "vocab_projector.bias", m.activation()};
    case Family::kRoberta:  // RobertaLMHead: gelu
      return {"lm_head.dense", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias", HiddenAct::kGelu};
    case Family::kElectra:  // ElectraGeneratorPredictions: dense H -> E, gelu, LayerNorm(E)
      return {"generator_predictions.dense", "generator_predictions.LayerNorm", "generator_lm_head",
              "generator_lm_head.bias", HiddenAct::kGelu};
    case Family::kAlbert:  // AlbertMLMHead: dense H -> E, config.hidden_act, LayerNorm(E)
      return {"predictions.dense", "predictions.LayerNorm", "predictions.decoder", "predictions.bias", m.activation()};
    case Family::kModernBert:  // ModernBertPredictionHead (classifier_activation) + decoder
      return {"head.dense", "head.norm", "decoder", "decoder.bias", f.head_activation, bias_if(f.classifier_bias),
              bias_if(f.norm_bias)};
    default: break;
  }
  throw CheckpointError(m.config.model_type + ": no masked-LM head layout for this family");
}

void load_masked_lm_head(const HfBertCheckpoint& ck, FloatBert& m) {
  const int H = m.config.hidden_size, E = m.embedding_size, V = m.config.vocab_size;
  if (!m.has_embeddings)
    throw CheckpointError(ck.weights().source() + ": a masked-LM head needs the word embeddings (its tied decoder)");
  const MaskedLmLayout l = masked_lm_layout(m);
  m.mlm_transform = load_linear(ck, l.dense, "mlm_transform", E, H, l.dense_bias);
  m.mlm_act = l.act;
  m.mlm_norm = load_norm(ck, l.norm, E, l.norm_bias);
  // The decoder is tied: a stored copy of its weight (or of the bias under the decoder's name) must
  // be the tied tensor, else the checkpoint is not what this runtime computes.
  auto must_equal = [&](const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& tied,
                        const char* what) {
    std::vector<float> stored;
    ck.load(name, shape, stored);
    if (stored != tied)
      throw CheckpointError(ck.weights().source() + ": tensor '" + ck.checkpoint_name(name) + "' differs from " + what +
                            " (an untied masked-LM decoder is not supported)");
  };
  if (ck.has(l.decoder + ".weight")) must_equal(l.decoder + ".weight", {V, E}, m.word_embeddings, "the word embeddings");
  const std::string decoder_bias = l.decoder + ".bias";
  if (ck.has(l.bias)) ck.load(l.bias, {V}, m.mlm_bias);
  if (decoder_bias != l.bias && ck.has(decoder_bias)) {
    if (m.mlm_bias.empty())
      ck.load(decoder_bias, {V}, m.mlm_bias);
    else
      must_equal(decoder_bias, {V}, m.mlm_bias, ("'" + l.bias + "'").c_str());
  }
  if (m.mlm_bias.empty() && m.family() != Family::kModernBert)  // ModernBERT: decoder_bias false
    throw CheckpointError(ck.weights().source() + ": missing tensor '" + ck.checkpoint_name(l.bias) +
                          "' (the masked-LM decoder bias)");
}

void load_heads(const HfBertCheckpoint& ck, Task task, FloatBert& m, const FamilyLayout& layout) {
  const BertConfig& c = m.config;
  const FamilyConfig& f = c.family;
  const int H = c.hidden_size;
  const Family fam = m.family();
  // BERT keeps its pooler for sequence classification; RobertaModel / AlbertModel have one when
  // saved as base models; the For* heads of RoBERTa, ELECTRA, ModernBERT use none.
  const bool pooler_for_head = task == Task::kSequenceClassification &&
                               (fam == Family::kBert || fam == Family::kAlbert || fam == Family::kNomicBert);
  m.has_pooler = !layout.pooler.empty() && (ck.has(layout.pooler + ".weight") || pooler_for_head);
  if (m.has_pooler) m.pooler = load_linear(ck, layout.pooler, "pooler", H, H);
  const bool modernbert = fam == Family::kModernBert;
  auto load_modernbert_head = [&] {
    m.has_pre_classifier = true;
    m.pre_classifier = load_linear(ck, "head.dense", "head.dense", H, H, bias_if(f.classifier_bias));
    m.pre_classifier_act = f.head_activation;
    m.has_head_norm = true;
    m.head_norm = load_norm(ck, "head.norm", H, bias_if(f.norm_bias));
    m.head_per_token = task != Task::kSequenceClassification;
    m.head_mean_pooling = task == Task::kSequenceClassification && f.classifier_mean_pooling;
  };
  switch (task) {
    case Task::kEncoder:
    case Task::kSentenceEmbedding:
    case Task::kTokenVectors:  // the classifier is the ColBERT folder's Dense module (converter.cpp)
    case Task::kBgeM3:         // its heads are files beside the encoder (converter.cpp)
      return;
    case Task::kMaskedLm:
      load_masked_lm_head(ck, m);
      return;
    case Task::kQuestionAnswering: {
      const std::string qa = modernbert ? "classifier" : "qa_outputs";
      const TensorInfo* t = ck.resolve(qa + ".weight");
      if (t && (t->shape.size() != 2 || t->shape[0] != 2)) {
        throw CheckpointError(t->file + ": tensor '" + t->name + "' has shape " + shape_to_string(t->shape) +
                              ", expected [2, " + std::to_string(H) + "] (start and end logits)");
      }
      if (modernbert) load_modernbert_head();
      m.num_labels = 2;
      m.classifier = load_linear(ck, qa, "qa_outputs", 2, H);
      return;
    }
    case Task::kSequenceClassification:
    case Task::kTokenClassification:
      break;
  }
  m.num_labels = ck.num_labels();
  const bool two_layer = task == Task::kSequenceClassification && (fam == Family::kRoberta || fam == Family::kElectra);
  const std::string cls = two_layer ? "classifier.out_proj" : "classifier";
  if (m.num_labels <= 0) {
    throw CheckpointError(ck.weights().source() + ": missing tensor '" + cls + ".weight' (the " + task_name(task) +
                          " head of architecture " +
                          (c.architectures.empty() ? std::string("?") : c.architectures.front()) + ")");
  }
  if (task == Task::kSequenceClassification && (m.config.is_distilbert() || two_layer)) {
    m.has_pre_classifier = true;
    const std::string pre = m.config.is_distilbert() ? "pre_classifier" : "classifier.dense";
    m.pre_classifier = load_linear(ck, pre, "pre_classifier", H, H);
    m.pre_classifier_act = fam == Family::kRoberta ? HiddenAct::kTanh
                           : fam == Family::kElectra ? HiddenAct::kGelu  // ElectraClassificationHead: gelu
                                                     : HiddenAct::kRelu;
  }
  if (modernbert) load_modernbert_head();
  m.classifier = load_linear(ck, cls, "classifier", m.num_labels, H);
  if (c.has_id2label) m.labels = c.id2label;
  m.score_sigmoid = task == Task::kSequenceClassification && m.num_labels == 1 && c.score_sigmoid;
}

FloatLayer load_layer(const HfBertCheckpoint& ck, const FloatBert& m, const LayerLayout& n, int index) {
  const BertConfig& c = m.config;
  const FamilyConfig& f = c.family;
  const int H = c.hidden_size, I = c.intermediate_size;
  const std::string ours = "layer." + std::to_string(index) + ".";
  const Bias attn_bias = bias_if(f.attention_bias), in_bias = bias_if(f.mlp_in_bias);
  const Bias out_bias = bias_if(f.mlp_out_bias), norm_bias = bias_if(f.norm_bias);
  const int QW = m.q_width(), KW = m.kv_width();
  FloatLayer L;
  if (!n.qkv.empty()) {
    L.qkv = load_linear(ck, n.qkv, "", 3 * H, H, attn_bias);
  } else {
    const FloatLinear q = load_linear(ck, n.q, "", QW, H, attn_bias);
    const FloatLinear k = load_linear(ck, n.k, "", KW, H, attn_bias);
    const FloatLinear v = load_linear(ck, n.v, "", KW, H, attn_bias);
    L.qkv = stack("", {&q, &k, &v});
  }
  L.qkv.name = ours + gemm_kind_suffix(GemmKind::kQkv);
  L.attention_output = load_linear(ck, n.attention_output, ours + gemm_kind_suffix(GemmKind::kAttentionOutput), H,
                                   QW, attn_bias);
  L.has_qk_norm = !n.q_norm.empty();
  if (L.has_qk_norm) {
    L.q_norm = load_norm(ck, n.q_norm, m.head_dim(), Bias::kNone);
    L.k_norm = load_norm(ck, n.k_norm, m.head_dim(), Bias::kNone);
  }
  L.has_attention_norm = !n.attention_norm.empty();
  if (L.has_attention_norm) L.attention_norm = load_norm(ck, n.attention_norm, H, norm_bias);
  L.has_post_norms = !n.attention_post_norm.empty();
  if (L.has_post_norms) {
    L.attention_post_norm = load_norm(ck, n.attention_post_norm, H, norm_bias);
    L.ffn_post_norm = load_norm(ck, n.ffn_post_norm, H, norm_bias);
  }
  const std::string inter_name = ours + gemm_kind_suffix(GemmKind::kIntermediate);
  if (!n.gate_act.empty()) {  // two gated halves: [act rows; value rows]
    const FloatLinear a = load_linear(ck, n.gate_act, "", I, H, in_bias);
    const FloatLinear v = load_linear(ck, n.gate_value, "", I, H, in_bias);
    L.intermediate = stack(inter_name, {&a, &v});
  } else {
    L.intermediate = load_linear(ck, n.intermediate, inter_name, m.gated_ffn ? 2 * I : I, H, in_bias);
  }
  L.output = load_linear(ck, n.output, ours + gemm_kind_suffix(GemmKind::kOutput), H, I, out_bias);
  L.output_norm = load_norm(ck, n.output_norm, H, norm_bias);
  if (f.one_plus_norm_weight) {
    // Gemma 3: scores q.k * query_pre_attn_scalar^-0.5 where edgebert's attention computes
    // q.k * head_dim^-0.5; Q is RMS-normalized and then rotated (both linear in the Q norm's
    // gamma), so the factor sqrt(head_dim / query_pre_attn_scalar) folds into Q's gamma.
    const double q_scale = f.query_pre_attn_scalar > 0 ? std::sqrt(m.head_dim() / f.query_pre_attn_scalar) : 1.0;
    for (FloatLayerNorm* t : {&L.attention_norm, &L.output_norm, &L.attention_post_norm, &L.ffn_post_norm, &L.k_norm})
      if (!t->gamma.empty()) one_plus_weight(*t);
    if (L.has_qk_norm) one_plus_weight(L.q_norm, static_cast<float>(q_scale));
  }
  return L;
}

}  // namespace

FloatBert load_float_bert(const HfBertCheckpoint& ck) { return load_float_bert(ck, task_from_architecture(ck)); }

FloatBert load_float_bert(const HfBertCheckpoint& ck, Task task) {
  FloatBert m;
  m.config = ck.config();
  m.task = task;
  const BertConfig& c = m.config;
  const FamilyConfig& f = c.family;
  const int H = c.hidden_size;
  const FamilyLayout layout = family_layout(c);
  m.embedding_size = f.embedding_size > 0 ? f.embedding_size : H;
  const int E = m.embedding_size;
  m.positions = f.padding_offset_positions ? PositionScheme::kPaddingOffset
                : f.has_position_embeddings   ? PositionScheme::kAbsolute
                                              : PositionScheme::kNone;
  m.padding_idx = f.pad_token_id;
  m.pre_norm = f.pre_norm;
  m.gated_ffn = f.gated_ffn;
  m.rms_norm = f.rms_norm;
  m.causal = f.causal;
  m.has_embedding_norm = f.embedding_norm;
  m.rotary.dims = f.rotary_dims;
  m.rotary.interleaved = f.rotary_interleaved;
  m.rotary.theta = f.rotary_theta;
  m.rotary.local_theta = f.rotary_local_theta;
  m.rotary.ntk_factor = f.rotary_ntk_factor;
  m.rotary.ntk_max_trained = f.rotary_ntk_max_trained;
  m.has_embeddings = ck.has(layout.word + ".weight");
  if (m.has_embeddings) {
    ck.load(layout.word + ".weight", {i64(c.vocab_size), i64(E)}, m.word_embeddings);
    if (!layout.position.empty())
      ck.load(layout.position + ".weight", {i64(c.max_position_embeddings), i64(E)}, m.position_embeddings);
    if (!layout.token_type.empty())
      ck.load(layout.token_type + ".weight", {i64(c.type_vocab_size), i64(E)}, m.token_type_embeddings);
    if (f.embedding_norm) m.embedding_norm = load_norm(ck, layout.embedding_norm, E, bias_if(f.norm_bias));
  } else if (!c.is_bert_or_distilbert()) {
    throw CheckpointError(ck.weights().source() + ": missing tensor '" + ck.checkpoint_name(layout.word + ".weight") + "'");
  }
  m.has_embedding_projection = !layout.embedding_projection.empty();
  if (m.has_embedding_projection)
    m.embedding_projection = load_linear(ck, layout.embedding_projection, "embedding_projection", H, E);
  m.layers.reserve(layout.layers.size());
  for (size_t i = 0; i < layout.layers.size(); ++i)
    m.layers.push_back(load_layer(ck, m, layout.layers[i], static_cast<int>(i)));
  m.layer_map = layout.layer_map;
  for (int l = 0; l < m.num_applied_layers(); ++l) {
    const bool sliding = l < static_cast<int>(f.sliding_layers.size()) && f.sliding_layers[l];
    m.local_window.push_back(sliding ? f.local_attention : 0);
  }
  m.has_final_norm = !layout.final_norm.empty();
  if (m.has_final_norm) m.final_norm = load_norm(ck, layout.final_norm, H, bias_if(f.norm_bias));
  if (m.has_final_norm && f.one_plus_norm_weight) one_plus_weight(m.final_norm);
  if (f.embedding_scale) {
    // Gemma3TextScaledWordEmbedding: rows * sqrt(hidden) in the weights' dtype (float32 here,
    // as transformers computes with float32 weights; a bfloat16 load would round it to bf16)
    const float scale = static_cast<float>(std::sqrt(static_cast<double>(H)));
    for (float& w : m.word_embeddings) w *= scale;
  }
  load_heads(ck, task, m, layout);
  return m;
}

}  // namespace edgebert::convert
