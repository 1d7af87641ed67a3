// float_bert.h: the converter's in-memory float32 copy of a BERT checkpoint (fused QKV), loaded
// from a HuggingFace directory. It is what calibration runs and what gets quantized.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/checkpoint/hf_checkpoint.h"

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

struct FloatBert {
  BertConfig config;
  int num_labels = 0;
  bool has_embeddings = false;
  std::vector<float> word_embeddings;        // [vocab, H]
  std::vector<float> position_embeddings;    // [max_pos, H]
  std::vector<float> token_type_embeddings;  // [type_vocab, H]
  FloatLayerNorm embedding_norm;
  std::vector<FloatLayer> layers;
  bool has_pooler = false;
  FloatLinear pooler;      // [H, H]
  FloatLinear classifier;  // [labels, H]
  int head_dim() const { return config.hidden_size / config.num_attention_heads; }
};

// Loads and validates every tensor against config.json (throws CheckpointError naming the file
// and tensor on any problem).
FloatBert load_float_bert(const HfBertCheckpoint& checkpoint);

}  // namespace edgebert::convert
