// A HuggingFace BERT model directory: config.json (BertConfig), safetensors weights (single file
// or sharded), vocab.txt + tokenizer_config.json (Vocab). Tensors are addressed by canonical
// names, the HF names without the "bert." prefix (e.g. "encoder.layer.0.attention.self.query.weight",
// "classifier.weight"); load() resolves prefixed/unprefixed and legacy LayerNorm gamma/beta names,
// checks the shape and converts to float.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/checkpoint/safetensors.h"

namespace edgebert {
namespace convert {

struct BertConfig {
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_hidden_layers = 0;
  int intermediate_size = 0;
  int vocab_size = 0;
  int max_position_embeddings = 0;
  int type_vocab_size = 2;
  float layer_norm_eps = 1e-12f;
  std::string hidden_act = "gelu";
  int num_labels = 0;  // size of id2label if present, else "num_labels" if present, else 0
  bool has_id2label = false;  // num_labels came from id2label
  std::vector<std::string> architectures;
};

// Reads and validates a BERT config.json: model_type "bert"; hidden_size, num_attention_heads,
// num_hidden_layers, intermediate_size, vocab_size, max_position_embeddings present, integer and
// positive; hidden_size divisible by num_attention_heads; hidden_act "gelu" (default "gelu");
// layer_norm_eps > 0 (default 1e-12); type_vocab_size > 0 (default 2); position_embedding_type,
// if present, "absolute"; is_decoder, if present, false. Errors name the file.
BertConfig read_bert_config(const std::string& config_json_path);

class HfBertCheckpoint {
 public:
  // Reads DIR/config.json and opens the safetensors weights of DIR.
  static HfBertCheckpoint open(const std::string& dir);

  const BertConfig& config() const { return config_; }
  const std::string& dir() const { return dir_; }
  const SafetensorsCheckpoint& weights() const { return weights_; }

  bool has_embeddings() const;  // embeddings.word_embeddings.weight present
  bool has_pooler() const;      // pooler.dense.weight present
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

 private:
  std::string dir_;
  BertConfig config_;
  SafetensorsCheckpoint weights_;
  bool prefixed_ = false;  // the checkpoint uses "bert." names (e.g. BertForSequenceClassification)
  int num_labels_ = 0;
};

struct Vocab {
  std::vector<std::string> tokens;  // token id = index (line number in vocab.txt)
  bool do_lower_case = true;
};

// Reads DIR/vocab.txt (one token per line; trailing '\r' stripped; a leading UTF-8 BOM stripped;
// a final newline does not add a token; empty lines in between are kept as tokens so ids stay
// line numbers). Error if missing or empty. do_lower_case: DIR/tokenizer_config.json's
// "do_lower_case" if that file and key exist; otherwise a heuristic: the vocab is taken as cased
// (do_lower_case = false) if more than 1% of its tokens, not counting bracketed specials such as
// [CLS] or <s>, contain an ASCII uppercase letter (bert-base-cased has thousands; uncased vocabs
// have none), else uncased.
Vocab read_vocab(const std::string& dir);

}  // namespace convert
}  // namespace edgebert
