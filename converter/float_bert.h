// float_bert.h: the converter's in-memory float32 copy of a BERT or DistilBERT checkpoint (fused
// QKV) with its task head, loaded from a HuggingFace directory. It is what calibration runs and
// what gets quantized.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/checkpoint/architecture.h"
#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/checkpoint/sentence_transformers.h"

namespace edgebert::convert {

// y = x W^T + b, W row-major [out, in] (torch layout).
struct FloatLinear {
  std::string name;  // e.g. "layer.3.attention.qkv"
  int in = 0, out = 0;
  std::vector<float> weight;
  std::vector<float> bias;
};

struct FloatLayerNorm {
  std::vector<float> gamma, beta;
};

// The four GEMMs of an encoder layer, in schedule order.
enum class GemmKind { kQkv = 0, kAttentionOutput = 1, kIntermediate = 2, kOutput = 3 };
constexpr int kGemmsPerLayer = 4;
const char* gemm_kind_suffix(GemmKind kind);  // "attention.qkv", "attention.output", ...

struct FloatLayer {
  FloatLinear qkv;               // [3H, H]: Q rows, then K, then V
  FloatLinear attention_output;  // [H, H]
  FloatLayerNorm attention_norm;
  FloatLinear intermediate;      // [I, H]
  FloatLinear output;            // [H, I]
  FloatLayerNorm output_norm;
  FloatLinear& gemm(GemmKind k);
  const FloatLinear& gemm(GemmKind k) const;
};

// The FFN activation of `act` applied to x (erf GELU, ReLU, or tanh-approximated GELU).
float ffn_activation(HiddenAct act, float x);

struct FloatBert {
  BertConfig config;
  Task task = Task::kEncoder;
  int num_labels = 0;  // rows of `classifier` (2 for question answering), 0 without one
  std::vector<std::string> labels;  // id2label in id order (classification tasks), or empty
  bool has_embeddings = false;
  std::vector<float> word_embeddings;        // [vocab, H]
  std::vector<float> position_embeddings;    // [max_pos, H]
  std::vector<float> token_type_embeddings;  // [type_vocab, H]; empty without token types
  FloatLayerNorm embedding_norm;
  std::vector<FloatLayer> layers;
  bool has_pooler = false;
  FloatLinear pooler;      // [H, H]
  bool has_pre_classifier = false;
  FloatLinear pre_classifier;  // [H, H] + ReLU before the classifier (DistilBERT)
  FloatLinear classifier;  // [labels, H]; question answering: qa_outputs [2, H]
  PoolingMode pooling = PoolingMode::kCls;  // SENTENCE_EMBEDDING only
  bool normalize = false;                   // SENTENCE_EMBEDDING only
  int max_seq_length = 0;  // sentence-transformers' max_seq_length (inputs it would truncate), 0: none
  bool lowercase_input = false;  // sentence-transformers lower-cases the text before tokenizing
  int head_dim() const { return config.hidden_size / config.num_attention_heads; }
  HiddenAct activation() const { return config.activation; }
};

// Loads and validates every tensor the task needs against config.json (throws CheckpointError
// naming the file and tensor on any problem): the encoder (BERT or DistilBERT names), plus
//   kEncoder / kSentenceEmbedding: the pooler when present (BERT);
//   kSequenceClassification: BERT pooler + classifier; DistilBERT pre_classifier + classifier;
//   kQuestionAnswering: qa_outputs [2, H] (+ BERT pooler when present);
//   kTokenClassification: classifier [num_labels, H] (+ BERT pooler when present).
// Labels come from config.json id2label for the classification tasks.
FloatBert load_float_bert(const HfBertCheckpoint& checkpoint, Task task);
// The task from config.json's architectures (task_from_architecture).
FloatBert load_float_bert(const HfBertCheckpoint& checkpoint);

}  // namespace edgebert::convert
