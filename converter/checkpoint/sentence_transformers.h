// SPDX-License-Identifier: Apache-2.0
// A sentence-transformers model folder: modules.json lists a Transformer module (the BERT /
// DistilBERT checkpoint, in the folder root or in the module's "path"), a Pooling module
// (1_Pooling/config.json), any number of Dense modules (EmbeddingGemma: 768 -> 3072 -> 768) and
// optionally a Normalize module (2_Normalize); or, in a PyLate / ColBERT folder, one Dense module
// right after the Transformer (projecting every token). Reads and validates that layout; any other
// module kind is an error naming it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace edgebert {
namespace convert {

// Pooling modes of sentence-transformers' Pooling module over the tokens whose mask is 1.
enum class PoolingMode { kCls = 0, kMean = 1, kMax = 2, kMeanSqrtLen = 3, kLastToken = 4 };
const char* pooling_mode_name(PoolingMode mode);  // "cls", "mean", "max", "mean_sqrt_len", "last_token"

// A Dense module after the pooling (sentence_transformers.models.Dense), or ColBERT's after the
// Transformer: y = act(x W^T + b), its config.json (in_features, out_features, bias,
// activation_function; use_residual true is refused) and model.safetensors (linear.weight,
// linear.bias) in its folder.
struct DenseModule {
  std::string dir;
  int in_features = 0, out_features = 0;
  bool bias = true;
  bool tanh = false;  // activation_function Tanh; else Identity
};

struct SentenceTransformersLayout {
  std::string transformer_dir;  // folder holding config.json, weights and vocab.txt
  PoolingMode pooling = PoolingMode::kMean;
  std::string pooling_config;   // its 1_Pooling/config.json
  bool include_prompt = true;   // its include_prompt (false: the prompt's tokens are not pooled)
  std::vector<DenseModule> dense;  // in pipeline order, after the pooling
  bool normalize = false;       // a Normalize module follows the pooling (and the Dense modules)
  int embedding_dimension = 0;  // 1_Pooling/config.json word_embedding_dimension (0: absent)
  int max_seq_length = 0;       // sentence_bert_config.json max_seq_length (0: absent)
  bool lowercase_input = false; // sentence_bert_config.json do_lower_case (text lower-cased first)
  // config_sentence_transformers.json "prompts" (name, text) in file order, and default_prompt_name
  std::vector<std::pair<std::string, std::string>> prompts;
  std::string default_prompt_name;
  // ColBERT (PyLate): Transformer then one Dense module (pylate.models.Dense.Dense, or
  // sentence_transformers.models.Dense in older PyLate folders) and no Pooling: the projection of
  // every token, L2-normalized by PyLate after it (Identity activation only). Empty dir: not a
  // ColBERT folder.
  DenseModule token_dense;
  // PyLate's input conventions (config_sentence_transformers.json of a ColBERT folder), as strings;
  // `present` false when the file has none of these keys (then none are recorded).
  struct PyLateInputs {
    bool present = false;
    std::string query_prefix = "[Q] ", document_prefix = "[D] ";  // PyLate's defaults
    int query_length = 32, document_length = 180;
    bool do_query_expansion = true, attend_to_expansion_tokens = false;
    bool skiplist_given = false;  // false: PyLate's default, string.punctuation one character each
    std::vector<std::string> skiplist_words;
  } pylate;
};

// False when DIR has no modules.json (not a sentence-transformers folder). Otherwise reads
// modules.json (an array of {"type", "path", ...} objects in pipeline order: Transformer, Pooling,
// Dense modules, then optionally Normalize; or Transformer, Dense for ColBERT) and the Pooling config: exactly one of pooling_mode_cls_token,
// pooling_mode_mean_tokens, pooling_mode_max_tokens, pooling_mode_mean_sqrt_len_tokens,
// pooling_mode_lasttoken is true (weighted-mean and combined modes are refused). Also reads the optional
// sentence_bert_config.json (max_seq_length, do_lower_case). Throws CheckpointError naming the
// file on anything malformed or unsupported.
bool read_sentence_transformers(const std::string& dir, SentenceTransformersLayout* layout);

}  // namespace convert
}  // namespace edgebert
