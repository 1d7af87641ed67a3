// A HuggingFace BERT or DistilBERT model directory: config.json (BertConfig), safetensors weights
// (single file or sharded), vocab.txt + tokenizer_config.json (Vocab). Tensors are addressed by
// canonical names, the HF names without the "bert." / "distilbert." prefix (e.g.
// "encoder.layer.0.attention.self.query.weight", "transformer.layer.0.ffn.lin1.weight"); head
// tensors ("classifier.*", "qa_outputs.*", "pre_classifier.*") are never prefixed. load()
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
enum class HiddenAct { kGelu = 0, kRelu = 1, kGeluTanh = 2 };

struct BertConfig {
  std::string model_type = "bert";  // "bert" or "distilbert"
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
  bool is_distilbert() const { return model_type == "distilbert"; }
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
// file.
BertConfig read_bert_config(const std::string& config_json_path);

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
