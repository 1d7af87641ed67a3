// SPDX-License-Identifier: Apache-2.0
// float_bert.h: the converter's in-memory float32 copy of a BERT-family checkpoint (BERT,
// DistilBERT, RoBERTa / XLM-RoBERTa / CamemBERT, ELECTRA, ALBERT, nomic-bert, ModernBERT; fused
// QKV, fused gated FFN input) with its task head, loaded from a HuggingFace directory through the
// family's layout (checkpoint/family_layout.h). It is what calibration runs and what gets quantized.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/checkpoint/sentence_transformers.h"

namespace edgebert::convert {

// y = x W^T + b, W row-major [out, in] (torch layout); `bias` empty: no bias.
struct FloatLinear {
  std::string name;  // e.g. "layer.3.attention.qkv"
  int in = 0, out = 0;
  std::vector<float> weight;
  std::vector<float> bias;
};

struct FloatLayerNorm {
  std::vector<float> gamma, beta;  // beta empty: LayerNorm without bias (ModernBERT norm_bias false)
};

// The four GEMMs of an encoder layer, in schedule order.
enum class GemmKind { kQkv = 0, kAttentionOutput = 1, kIntermediate = 2, kOutput = 3 };
constexpr int kGemmsPerLayer = 4;
const char* gemm_kind_suffix(GemmKind kind);  // "attention.qkv", "attention.output", ...

// Post-norm (BERT): x = attention_norm(x + attn(x)); x = output_norm(x + ffn(x)).
// Pre-norm (ModernBERT): x += attn(attention_norm(x)) (identity when has_attention_norm is false);
// x += ffn(output_norm(x)).
struct FloatLayer {
  FloatLinear qkv;               // [3H, H]: Q rows, then K, then V (grouped-query: [q_width + 2 kv_width, H])
  FloatLinear attention_output;  // [H, H] ([H, q_width])
  bool has_attention_norm = true;
  FloatLayerNorm attention_norm;
  FloatLinear intermediate;      // [I, H]; gated FFN: [2I, H], act(first I outputs) * last I outputs
  FloatLinear output;            // [H, I]
  FloatLayerNorm output_norm;
  bool has_qk_norm = false;      // per-head RMSNorm of Q and K (gamma [head_dim]) before rotary
  FloatLayerNorm q_norm, k_norm;
  bool has_post_norms = false;   // Gemma 3: x += attention_post_norm(attn(.)), x += ffn_post_norm(ffn(.))
  FloatLayerNorm attention_post_norm, ffn_post_norm;
  FloatLinear& gemm(GemmKind k);
  const FloatLinear& gemm(GemmKind k) const;
};

// The activation `act` applied to x (erf GELU, ReLU, tanh-approximated GELU, SiLU, sigmoid).
float ffn_activation(HiddenAct act, float x);

// Rotary position embedding of q and k (nomic-bert, ModernBERT), positions 0..S-1: the first
// `dims` features of each head rotate by pos * theta^(-2i/dims) (pairs (i, i + dims/2), or (2i,
// 2i+1) when interleaved). ModernBERT's sliding layers use local_theta. Dynamic NTK (nomic):
// when ntk_factor > 0 and S > ntk_max_trained, theta *= (f S / max - (f - 1))^(dims / (dims - 2)).
struct RotaryParams {
  int dims = 0;  // 0: no rotary
  bool interleaved = false;
  double theta = 10000.0, local_theta = 10000.0;
  double ntk_factor = 0.0;
  int ntk_max_trained = 0;
  double theta_at(int seq_len, bool local) const;
};

// How a family turns token ids into positions for its position table.
enum class PositionScheme { kAbsolute = 0, kPaddingOffset = 1, kNone = 2 };

struct FloatBert {
  BertConfig config;  // config.family: the family and its options
  Family family() const { return config.family.family; }
  Task task = Task::kEncoder;
  int num_labels = 0;  // rows of `classifier` (2 for question answering), 0 without one
  std::vector<std::string> labels;  // id2label in id order (classification tasks), or empty
  bool score_sigmoid = false;       // one-label sequence classifier: rerank score sigmoid(logit)
  bool has_embeddings = false;
  int embedding_size = 0;                    // E: hidden size, or ELECTRA / ALBERT embedding_size
  std::vector<float> word_embeddings;        // [vocab, E]
  PositionScheme positions = PositionScheme::kAbsolute;  // kPaddingOffset: padding_idx + 1 + i (RoBERTa)
  int padding_idx = 0;                       // RoBERTa: the pad id (positions of pads)
  std::vector<float> position_embeddings;    // [max_pos, E]; empty with kNone
  std::vector<float> token_type_embeddings;  // [type_vocab, E]; empty without token types
  FloatLayerNorm embedding_norm;             // over E
  bool has_embedding_projection = false;
  FloatLinear embedding_projection;          // [H, E] (ELECTRA embeddings_project, ALBERT mapping_in)
  std::vector<FloatLayer> layers;            // stored layers
  std::vector<int> layer_map;                // applied layer -> layers[] (ALBERT shares); identity otherwise
  bool pre_norm = false;
  bool gated_ffn = false;
  RotaryParams rotary;
  std::vector<int> local_window;             // per applied layer: 0 global, w: keys with |i - j| <= w / 2
  bool has_final_norm = false;
  FloatLayerNorm final_norm;                 // ModernBERT final_norm
  bool has_pooler = false;
  FloatLinear pooler;      // [H, H]
  bool has_pre_classifier = false;
  // [H, H] + pre_classifier_act before the classifier: DistilBERT ReLU, RoBERTa classifier.dense +
  // tanh, ELECTRA classifier.dense + GELU, ModernBERT head.dense + classifier_activation (then
  // head_norm), on token 0 (ModernBERT mean pooling: the masked mean) or, for ModernBERT token
  // classification / QA, on every token.
  FloatLinear pre_classifier;
  HiddenAct pre_classifier_act = HiddenAct::kRelu;
  bool has_head_norm = false;
  FloatLayerNorm head_norm;
  bool head_mean_pooling = false;    // ModernBERT classifier_pooling "mean" (sequence classification)
  bool head_per_token = false;       // ModernBERT token classification / QA: pre_classifier on every token
  FloatLinear classifier;  // [labels, H]; question answering: qa_outputs [2, H]
  // kMaskedLm: logits = word_embeddings (tied decoder) . mlm_norm(mlm_act(mlm_transform(h))) + mlm_bias
  FloatLinear mlm_transform;      // [E, H]
  HiddenAct mlm_act = HiddenAct::kGelu;
  FloatLayerNorm mlm_norm;        // over E
  std::vector<float> mlm_bias;    // [vocab]; empty: none (ModernBERT decoder_bias false)
  PoolingMode pooling = PoolingMode::kCls;  // SENTENCE_EMBEDDING (and BGE_M3: CLS) only
  bool normalize = false;                   // SENTENCE_EMBEDDING (and BGE_M3: true) only
  // kBgeM3: sparse_linear [1, H] + bias (token weights relu(w.h + b)); its colbert_linear is
  // `classifier` [num_labels, H] + bias; the token ids whose sparse weight is always 0 (the
  // tokenizer's cls, eos, pad and unk ids)
  FloatLinear sparse_linear;
  std::vector<int32_t> sparse_unused_ids;
  // SENTENCE_EMBEDDING: sentence-transformers Dense modules after the pooling (H -> ... -> H), fp32
  std::vector<FloatLinear> dense;
  std::vector<bool> dense_tanh;
  // sentence-transformers prompts (name, text) and the default prompt's name ("" none)
  std::vector<std::pair<std::string, std::string>> prompts;
  std::string default_prompt_name;
  // TOKEN_VECTORS from a PyLate folder: its query / document conventions (schema ColbertInputs;
  // present false: none recorded), read as strings and resolved to token ids by the converter with
  // the model's tokenizer (resolve_colbert_inputs)
  struct ColbertInputs {
    bool present = false;
    std::string query_prefix, document_prefix;  // "" : no marker
    std::vector<std::string> skiplist_words;
    bool do_query_expansion = true;
    int32_t query_prefix_id = -1, document_prefix_id = -1, query_length = 0, document_length = 0, expansion_id = -1;
    bool attend_to_expansion = false;
    std::vector<int32_t> skiplist_ids;  // sorted, unique
  } colbert;
  int max_seq_length = 0;  // sentence-transformers' max_seq_length (inputs it would truncate), 0: none
  bool lowercase_input = false;  // sentence-transformers lower-cases the text before tokenizing
  bool rms_norm = false;  // every norm is an RMSNorm (gamma only; Gemma's 1 + w stored as gamma)
  bool causal = false;    // query i attends keys j <= i only
  bool has_embedding_norm = true;  // false: the word rows feed layer 0 as they are (Qwen3)
  int head_dim() const {
    return config.family.head_dim > 0 ? config.family.head_dim : config.hidden_size / config.num_attention_heads;
  }
  int kv_heads() const { return config.family.kv_heads(config.num_attention_heads); }
  int q_width() const { return config.num_attention_heads * head_dim(); }  // Q channels (= the context row)
  int kv_width() const { return kv_heads() * head_dim(); }                 // K (and V) channels
  // layer_map empty (models built in memory): layer i runs layers[i]
  int num_applied_layers() const { return static_cast<int>(layer_map.empty() ? layers.size() : layer_map.size()); }
  int stored_layer(int i) const { return layer_map.empty() ? i : layer_map[i]; }
  const FloatLayer& applied_layer(int i) const { return layers[stored_layer(i)]; }
  HiddenAct activation() const { return config.activation; }
};

// Loads and validates every tensor the task needs against config.json (throws CheckpointError
// naming the file and tensor on any problem): the encoder (the family's layout), plus
//   kEncoder / kSentenceEmbedding: the pooler when present (BERT);
//   kSequenceClassification: BERT / ALBERT / nomic pooler + classifier; DistilBERT pre_classifier +
//     classifier; RoBERTa / ELECTRA classifier.dense (pre_classifier) + classifier.out_proj;
//     ModernBERT head.dense + head.norm + classifier;
//   kQuestionAnswering: qa_outputs [2, H] (+ BERT pooler when present);
//   kTokenClassification: classifier [num_labels, H] (+ BERT pooler when present);
//   kMaskedLm: the family's masked-LM head (transform dense, activation, norm; a decoder tied to
//     the word embeddings: a stored decoder weight must equal them; its bias).
// Labels come from config.json id2label for the classification tasks.
FloatBert load_float_bert(const HfBertCheckpoint& checkpoint, Task task);
// The task from config.json's architectures (task_from_architecture).
FloatBert load_float_bert(const HfBertCheckpoint& checkpoint);

}  // namespace edgebert::convert
