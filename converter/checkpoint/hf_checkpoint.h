// SPDX-License-Identifier: Apache-2.0
// A HuggingFace BERT-family model directory (BERT, DistilBERT, RoBERTa / XLM-RoBERTa / CamemBERT,
// ELECTRA, ALBERT, nomic-bert, ModernBERT): config.json (BertConfig), safetensors weights
// (single file or sharded), vocab.txt + tokenizer_config.json (Vocab). Tensors are addressed by
// canonical names, the HF names without the family's base-model prefix ("bert.", "distilbert.",
// "roberta.", "electra.", "albert.", nomic-bert's "bert.", ModernBERT's "model."; e.g.
// "encoder.layer.0.attention.self.query.weight", "transformer.layer.0.ffn.lin1.weight"); head
// tensors ("classifier.*", "qa_outputs.*", "pre_classifier.*", ModernBERT's "head.*") are never
// prefixed. load()
// resolves prefixed/unprefixed and legacy LayerNorm gamma/beta names, checks the shape, converts
// to float and records the tensor as used, so that unused_tensors() can report the rest.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "converter/checkpoint/safetensors.h"

namespace edgebert {
namespace convert {

// The FFN activation: hidden_act "gelu" (exact erf form), "relu", or the tanh approximation
// ("gelu_new", "gelu_pytorch_tanh", "gelu_fast").
// kSilu (x * sigmoid(x)) and kSigmoid only appear as the gate activation of gated FFNs (nomic-bert
// swiglu / glu) and in heads; kTanh only in heads (RoBERTa classifier.dense).
enum class HiddenAct { kGelu = 0, kRelu = 1, kGeluTanh = 2, kSilu = 3, kSigmoid = 4, kTanh = 5 };

// The model families; values equal schemas/edgebert.fbs Family.
enum class Family { kBert = 0, kDistilBert = 1, kRoberta = 2, kElectra = 3, kAlbert = 4, kNomicBert = 5,
                    kModernBert = 6, kQwen3 = 7, kGemma3 = 8 };
const char* family_name(Family family);  // "bert", "distilbert", "roberta", ...

// What the families beyond BERT add to the config (read by read_family_config, family_config.cpp).
struct FamilyConfig {
  Family family = Family::kBert;
  int pad_token_id = 0;
  // RoBERTa: position ids padding_idx + 1 + i over non-pad tokens (padding_idx = pad_token_id).
  bool padding_offset_positions = false;
  bool has_position_embeddings = true;  // false: rotary (nomic-bert, ModernBERT)
  int embedding_size = 0;               // ELECTRA / ALBERT factorized embeddings (0: hidden_size)
  int num_hidden_groups = 1;            // ALBERT
  int inner_group_num = 1;              // ALBERT
  bool pre_norm = false;                // ModernBERT
  bool gated_ffn = false;               // nomic swiglu/geglu/glu, ModernBERT GeGLU
  bool attention_bias = true, mlp_in_bias = true, mlp_out_bias = true, norm_bias = true;
  int rotary_dims = 0;                  // per head; 0: no rotary
  bool rotary_interleaved = false;
  double rotary_theta = 10000.0;        // nomic, ModernBERT global layers
  double rotary_local_theta = 10000.0;  // ModernBERT sliding layers
  double rotary_ntk_factor = 0.0;       // nomic dynamic NTK (0: off)
  int rotary_ntk_max_trained = 0;
  std::vector<bool> sliding_layers;     // ModernBERT: layer l is local
  int local_attention = 0;              // ModernBERT: keys with |i - j| <= local_attention / 2
  std::string classifier_activation = "gelu";  // ModernBERT head act
  HiddenAct head_activation = HiddenAct::kGelu;
  bool classifier_bias = false;         // ModernBERT head.dense bias
  bool classifier_mean_pooling = false; // ModernBERT classifier_pooling "mean"
  // The LLM-block families (Qwen3): grouped-query heads of their own size, RMSNorm, q/k norms,
  // causal attention, no embedding norm.
  int num_key_value_heads = 0;          // 0: num_attention_heads
  int head_dim = 0;                     // 0: hidden_size / num_attention_heads
  bool rms_norm = false;
  bool qk_norm = false;
  bool causal = false;
  bool embedding_norm = true;
  // Gemma 3: norms after the attention and FFN branches, (1 + weight) norm tables, the word rows
  // scaled by sqrt(hidden), attention scale query_pre_attn_scalar^-0.5 (0: head_dim^-0.5).
  bool post_norms = false;
  bool one_plus_norm_weight = false;
  bool embedding_scale = false;
  double query_pre_attn_scalar = 0.0;
  int kv_heads(int heads) const { return num_key_value_heads > 0 ? num_key_value_heads : heads; }
};

struct BertConfig {
  std::string model_type = "bert";  // config.json model_type
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_hidden_layers = 0;
  int intermediate_size = 0;
  int vocab_size = 0;
  int max_position_embeddings = 0;
  int type_vocab_size = 2;  // 0: no token types (DistilBERT)
  float layer_norm_eps = 1e-12f;
  std::string hidden_act = "gelu";
  HiddenAct activation = HiddenAct::kGelu;
  int num_labels = 0;  // size of id2label if present, else "num_labels" if present, else 0
  bool has_id2label = false;  // num_labels came from id2label
  std::vector<std::string> id2label;  // label names in id order (when has_id2label)
  std::vector<std::string> architectures;
  // sentence-transformers' CrossEncoder score: sigmoid(logit) (true) or the raw logit, from
  // "sentence_transformers": {"activation_fn"} or "sbert_ce_default_activation_function"; without
  // either, sigmoid exactly when num_labels is 1 (CrossEncoder's default).
  bool score_sigmoid = false;
  FamilyConfig family;
  bool is_distilbert() const { return family.family == Family::kDistilBert; }
  bool is_bert_or_distilbert() const { return family.family == Family::kBert || is_distilbert(); }
  bool has_token_types() const { return type_vocab_size > 0; }
};

// Reads and validates a config.json. model_type "bert": hidden_size, num_attention_heads,
// num_hidden_layers, intermediate_size, vocab_size, max_position_embeddings present, integer and
// positive; hidden_act "gelu", "relu", "gelu_new", "gelu_pytorch_tanh" or "gelu_fast" (default
// "gelu"); layer_norm_eps > 0 (default 1e-12); type_vocab_size > 0 (default 2);
// position_embedding_type, if present, "absolute"; is_decoder, if present, false.
// model_type "distilbert": dim, n_heads, n_layers, hidden_dim, vocab_size,
// max_position_embeddings (same checks), activation "gelu" or "relu" (default "gelu"); no token
// types (type_vocab_size 0); LayerNorm eps 1e-12 as in DistilBERT's code.
// id2label, if present, must map every id 0..n-1 (JSON object keys) to a string. Errors name the
// file. The other families' keys: family_config.h.
BertConfig read_bert_config(const std::string& config_json_path);
// The base-model prefix of the family's For* classes ("bert.", "roberta.", "model.", ...).
const char* family_prefix(Family family);

class HfBertCheckpoint {
 public:
  // Reads DIR/config.json and opens the safetensors weights of DIR.
  static HfBertCheckpoint open(const std::string& dir);

  const BertConfig& config() const { return config_; }
  const std::string& dir() const { return dir_; }
  const SafetensorsCheckpoint& weights() const { return weights_; }

  bool has_embeddings() const;  // embeddings.word_embeddings.weight present
  bool has_pooler() const;      // pooler.dense.weight present (BERT)
  // Rows of classifier.weight if present (must match config id2label size when config has
  // id2label), else 0.
  int num_labels() const { return num_labels_; }

  bool has(const std::string& canonical) const;
  // Loads `canonical` into `out` as float. Throws "FILE: missing tensor 'NAME'" (FILE = the
  // directory's weights file, NAME as it would appear in the checkpoint) or
  // "FILE: tensor 'NAME' has shape [a, b], expected [c, d] from config.json".
  void load(const std::string& canonical, const std::vector<int64_t>& expected_shape,
            std::vector<float>& out) const;
  // The checkpoint tensor behind `canonical`, or nullptr.
  const TensorInfo* resolve(const std::string& canonical) const;
  // The name `canonical` has in this checkpoint (with the model prefix when it uses one).
  std::string checkpoint_name(const std::string& canonical) const;

  // Checkpoint tensors load() has not read, in name order.
  std::vector<std::string> unused_tensors() const;
  // Tensors only used in pre-training or masked-LM heads, which inference never needs:
  // cls.predictions.*, cls.seq_relationship.*, vocab_transform.*, vocab_layer_norm.*,
  // vocab_projector.*, and the *.embeddings.position_ids / token_type_ids buffers.
  static bool is_training_only(const std::string& name);
  // is_training_only, plus the training-only heads of the other families: RoBERTa lm_head.*, ALBERT
  // predictions.* / sop_classifier.*, ELECTRA discriminator_predictions.* / generator_*.*,
  // ModernBERT decoder.* (and head.* of ModernBertForMaskedLM), nomic-bert cls.*.
  bool is_training_only_here(const std::string& name) const;

 private:
  std::string dir_;
  BertConfig config_;
  SafetensorsCheckpoint weights_;
  std::string prefix_ = "bert.";  // model prefix of the architecture ("bert." / "distilbert.")
  bool prefixed_ = false;  // the checkpoint uses prefixed names (e.g. BertForSequenceClassification)
  int num_labels_ = 0;
  mutable std::set<std::string> used_;  // checkpoint names load() has read
};

struct Vocab {
  std::vector<std::string> tokens;  // token id = index (line number in vocab.txt)
  bool do_lower_case = true;
  bool tokenize_chinese_chars = true;
};

// Reads DIR/vocab.txt (one token per line; trailing '\r' stripped; a leading UTF-8 BOM stripped;
// a final newline does not add a token; empty lines in between are kept as tokens so ids stay
// line numbers). Error if missing or empty. do_lower_case: DIR/tokenizer_config.json's
// "do_lower_case" if that file and key exist; otherwise a heuristic: the vocab is taken as cased
// (do_lower_case = false) if more than 1% of its tokens, not counting bracketed specials such as
// [CLS] or <s>, contain an ASCII uppercase letter (bert-base-cased has thousands; uncased vocabs
// have none), else uncased. tokenize_chinese_chars: tokenizer_config.json's key if present (default
// true). strip_accents, if present and not null, must equal do_lower_case (the tokenizer strips
// accents exactly when it lower-cases, HF's default); anything else is an error, not a silently
// different tokenization.
Vocab read_vocab(const std::string& dir);

}  // namespace convert
}  // namespace edgebert
