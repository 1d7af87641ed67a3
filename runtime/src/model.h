// SPDX-License-Identifier: Apache-2.0
// model.h: a loaded, verified edgebert model: the mapped (or caller-owned) FlatBuffer plus typed
// views of every tensor the runtime reads. Everything is checked once here, so the session
// and kernels can trust shapes, sizes and quantization parameters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "content_hash.h"
#include "edgebert/edgebert.h"
#include "status.h"
#include "text/tokenizer.h"

namespace edgebert {

// Newest schema this runtime reads (1 to 8 are accepted; 3 adds content_id, 4 the issue-18 family
// fields, 5 the LLM-block fields of issue 24 and int4 weights of issue 26, 6 Gemma 3, 7 payloads
// after the FlatBuffer for files over 2 GiB, 8 the tokenizer's vocabulary as one text and its
// lookup tables, issue 23).
constexpr uint32_t kSchemaVersion = 8;

// Activation (schema Activation). kGelu is the exact erf form. kSilu / kSigmoid: gated FFNs only;
// kTanh: heads only.
enum class Activation : int { kGelu = 0, kRelu = 1, kGeluTanh = 2, kSilu = 3, kSigmoid = 4, kTanh = 5 };
// The model family (schema Family): how the architecture builder wires the blocks.
enum class Family : int { kBert = 0, kDistilBert, kRoberta, kElectra, kAlbert, kNomicBert, kModernBert, kQwen3, kGemma3 };
// Position ids of the position table (schema PositionIds).
enum class PositionIds : int { kAbsolute = 0, kPaddingOffset = 1, kNone = 2 };
// What the head's pre_classifier reads (schema HeadInput).
enum class HeadInput : int { kCls = 0, kMean = 1, kPerToken = 2 };
const char* family_name(Family f);
// What the model's head computes (schema Task; equals eb_task).
enum class Task : int {
  kEncoder = 0,
  kSequenceClassification = 1,
  kQuestionAnswering = 2,
  kTokenClassification = 3,
  kSentenceEmbedding = 4,
  kMaskedLm = 5,  // the SPLADE vector of a masked-LM head (schema MASKED_LM)
  kTokenVectors = 6,  // ColBERT: the classifier (Dense) on every token, rows L2-normalized (schema TOKEN_VECTORS)
  kBgeM3 = 7  // bge-m3: CLS sentence embedding, sparse_linear token weights, colbert_linear vectors (schema BGE_M3)
};
// Sentence-embedding pooling over the tokens whose attention mask is 1 (schema Pooling).
enum class Pooling : int { kCls = 0, kMean = 1, kMax = 2, kMeanSqrtLen = 3, kLastToken = 4 };
// Lowercase names for tools ("sequence_classification", "mean_sqrt_len", "gelu_tanh", ...).
const char* task_name(Task t);
const char* pooling_name(Pooling p);
const char* activation_name(Activation a);

struct LinearView {
  const char* name = "";
  bool int8 = false;
  int in = 0, out = 0;
  const int8_t* weight_s8 = nullptr;     // int8 with int8 weights: [out, in]
  const float* weight_scales = nullptr;  // int8 with int8 weights: [out]
  // int8 GEMM whose weights are int4 in the file (backend/int4_weights.h; weight_s8 and
  // weight_scales are then null): packed nibbles [out, (in + 1) / 2] and bfloat16 scales
  // [out, blocks] over blocks of `block_size` input channels (0: one scale per output channel).
  bool int4 = false;
  const uint8_t* weight_s4 = nullptr;
  const uint16_t* weight_block_scales = nullptr;
  int block_size = 0;
  const float* weight_f32 = nullptr;     // fp32: [out, in]
  const float* bias = nullptr;           // [out]
  // int8 models (also present on fp32 GEMMs of an int8 model, for their neighbours):
  bool has_quant = false;
  float input_scale = 1.f;
  int32_t input_zero_point = 0;
  const float* input_factors = nullptr;  // optional [in]
  float output_scale = 1.f;
  int32_t output_zero_point = 0;
  const float* output_scales = nullptr;  // optional [out] (symmetric per channel)
  float output_channel_scale(int c) const { return output_scales ? output_scales[c] : output_scale; }
};

struct LayerNormView {
  const float* gamma = nullptr;
  const float* beta = nullptr;
};

struct LayerView {
  LinearView qkv, attention_output, intermediate, output;
  LayerNormView attention_norm, output_norm;
  // Per-head RMSNorm of Q and K (gamma [head_dim]; null: none) and, int8, the scales of Q and K
  // after them and the rotary embedding (per channel over the Q then K sections).
  LayerNormView q_norm, k_norm;
  const float* qk_norm_scales = nullptr;
  // RMSNorms of the attention and FFN branch outputs before their residual adds (Gemma 3; null: none).
  LayerNormView attention_post_norm, ffn_post_norm;
};

// Rotary position embedding of Q and K (schema Rotary); dims 0: none.
struct RotaryConfig {
  int dims = 0;
  bool interleaved = false;
  double theta = 10000.0, local_theta = 10000.0;
  double ntk_factor = 0.0;  // > 0: dynamic NTK beyond ntk_max_trained positions
  int ntk_max_trained = 0;
};

struct ModelConfig {
  int hidden = 0, heads = 0, layers = 0, intermediate = 0, vocab = 0, max_position = 0, type_vocab = 0;
  float eps = 1e-12f;
  int num_labels = 0;
  Activation activation = Activation::kGelu;
  int head_size = 0;  // 0: hidden / heads (schema 5 head_dim)
  int kv_head_count = 0;  // 0: heads (schema 5 num_key_value_heads)
  int head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  int kv_heads() const { return kv_head_count > 0 ? kv_head_count : heads; }
  int q_width() const { return heads * head_dim(); }      // Q channels of a QKV row (= the context row)
  int kv_width() const { return kv_heads() * head_dim(); }  // K (and V) channels of a QKV row
  int qkv_width() const { return q_width() + 2 * kv_width(); }
};

class Model {
 public:
  ~Model();
  // Verifies and indexes the buffer. `owned_mapping`/`mapping_size` (from mmap) are unmapped in
  // the destructor; for caller memory pass nullptr.
  static Result<std::unique_ptr<Model>> create(const void* data, size_t size, void* owned_mapping,
                                               size_t mapping_size);
  // Maps the file read-only and verifies it (EB_ERROR_IO when it cannot be read).
  static Result<std::unique_ptr<Model>> load_file(const char* path);

  // After a session has packed a GEMM's weights into XNNPACK's own buffers, the mapped pages
  // holding them are not read again: for file-backed models this advises the kernel to drop them
  // from resident memory (they are re-read from the page cache if another session packs them).
  // No-op for caller-owned memory.
  void release_weight_pages(const LinearView& gemm) const;

  ModelConfig config;
  bool int8 = false;
  bool has_embeddings = false;
  bool has_vocab = false;
  // embeddings
  const int8_t* word_s8 = nullptr;
  const float* word_scales = nullptr;
  // int4 word table (schema_version 5, --weights int4): nibbles [vocab, (E + 1) / 2], bf16 scales
  // per block of word_block features (0: one per row); dequantized at lookup.
  const uint8_t* word_s4 = nullptr;
  const uint16_t* word_block_scales = nullptr;
  int word_block = 0;
  const float* word_f32 = nullptr;
  const float* position = nullptr;
  const float* token_type = nullptr;  // null when the model has no token types (DistilBERT)
  bool has_token_types = false;
  LayerNormView embedding_norm;
  std::vector<LayerView> layers;  // the stored layers (fewer than config.layers with shared ALBERT groups)
  bool has_pooler = false;
  LinearView pooler;
  bool has_classifier = false;
  LinearView classifier;  // sequence: [num_labels, H] on one row; QA: [2, H] and token
                          // classification: [num_labels, H] on every token
  Task task = Task::kEncoder;
  bool is_distilbert = false;
  // The family fields (schema_version 4; older files: BERT / DistilBERT defaults).
  Family family = Family::kBert;
  PositionIds position_ids = PositionIds::kAbsolute;
  int padding_idx = 0;           // kPaddingOffset: the pad token id
  int embedding_size = 0;        // width of the embedding tables (hidden unless factorized)
  bool pre_norm = false;         // x += f(LN(x)); a layer's attention_norm may be absent (identity)
  bool gated_ffn = false;        // intermediate has 2 x intermediate outputs: act(y[:I]) * y[I:]
  RotaryConfig rotary;
  std::vector<int> layer_map;    // applied layer i runs layers[layer_map[i]] (config.layers entries)
  std::vector<int> local_window; // per applied layer: 0 global, w: |i - j| <= w / 2
  bool rms_norm = false;         // every norm table is an RMSNorm (schema NormKind RMS_NORM)
  bool causal = false;           // query i attends keys j <= i only
  bool has_embedding_projection = false;
  LinearView embedding_projection;  // [hidden, embedding_size] after the embedding norm
  bool has_final_norm = false;
  LayerNormView final_norm;
  Activation pre_classifier_act = Activation::kRelu;
  bool has_head_norm = false;
  LayerNormView head_norm;          // after pre_classifier + its activation
  HeadInput head_input = HeadInput::kCls;
  bool has_pre_classifier = false;  // DistilBERT sequence classification: ReLU(pre_classifier(h[CLS]))
  LinearView pre_classifier;
  std::vector<std::string> labels;  // num_labels names ("LABEL_i" when the file has none)
  bool score_sigmoid = false;       // one-label classifier: rerank score = sigmoid(logit), else the logit
  // kMaskedLm (schema mlm_*): logits = mlm_decoder(mlm_norm(mlm_act(mlm_transform(h)))) per token;
  // mlm_decoder's weights are the word table's (tied), int8 in int8 models.
  LinearView mlm_transform;         // fp32 [E, hidden]
  Activation mlm_act = Activation::kGelu;
  LayerNormView mlm_norm;           // over E
  LinearView mlm_decoder;           // [vocab, E]
  // kBgeM3: sparse_linear fp32 [1, hidden] + bias (a token's weight relu(w.h + b)) and the ids whose
  // sparse weight is always 0 (cls, eos, pad, unk); colbert_linear is `classifier` [num_labels, hidden].
  LinearView sparse_linear;
  const int32_t* sparse_unused_ids = nullptr;
  size_t sparse_unused_count = 0;
  Pooling pooling = Pooling::kCls;  // sentence embedding (bge-m3: CLS)
  bool normalize = false;           // sentence embedding: L2-normalize after pooling (and the Dense modules)
  // sentence embedding: sentence-transformers Dense modules after the pooling (fp32, hidden -> ...
  // -> hidden), each with tanh when sentence_dense_tanh[i] (else Identity)
  std::vector<LinearView> sentence_dense;
  std::vector<bool> sentence_dense_tanh;
  // sentence-transformers prompts (name, text; schema_version 6) and the default one's index (-1: none)
  std::vector<std::pair<std::string, std::string>> prompts;
  int default_prompt = -1;
  // kTokenVectors from a PyLate folder (schema ColbertInputs): how queries and documents are laid
  // out (Session::set_colbert_input); `present` false: the plain template only.
  struct ColbertInputs {
    bool present = false;
    int32_t query_prefix_id = -1, document_prefix_id = -1;  // -1: no marker
    int32_t query_length = 0, document_length = 0;
    int32_t expansion_id = -1;  // -1: no query expansion
    bool attend_to_expansion = false;
    const int32_t* skiplist_ids = nullptr;  // sorted, unique (in the file)
    size_t skiplist_count = 0;
  } colbert;
  uint32_t schema_version = 1;
  // The model's own tokenizer for every kind: the TokenizerSpec pipeline when the file has one,
  // else the BERT pipeline of the `vocab` table (text::Tokenizer::init_bert_vocab); null when the
  // model has neither (allocated after the config checks).
  std::unique_ptr<text::Tokenizer> text_tokenizer;
  std::string calibration_source;
  size_t file_size = 0;
  const uint8_t* buffer = nullptr;  // the verified FlatBuffer (for edgebert-inspect)
  // The converter's content id (schema 3), or none in older files.
  bool has_content_id = false;
  ContentId content_id{};
  // content_id, or for files without one a hash of the whole file (reads every byte).
  ContentId content_id_or_hash() const {
    return has_content_id ? content_id : content_hash128(buffer, file_size);
  }

 private:
  // The two loads with the verifier's own reporting (an eb_status and its message).
  static eb_status create_checked(const void* data, size_t size, void* owned_mapping, size_t mapping_size,
                                  std::unique_ptr<Model>* out, std::string* error);
  static eb_status load_file_checked(const char* path, std::unique_ptr<Model>* out, std::string* error);
  Model() = default;
  // A mapped file: copies the small arrays every run reads (each layer's norms, per-channel
  // scales, biases and factors, the final norm, the word table's row scales) into memory the model
  // owns, and points the views at the copies. The page cache may hold the file in large folios
  // (2 MB), and a read of a few bytes maps the whole folio: a scale array next to a GEMM's
  // weights brought megabytes of those released weights back into the process (Qwen3-0.6B: 168
  // MB, docs/llm-encoders.md). Values are unchanged.
  void pin_run_time_arrays();
  // A mapped file: the word table is read a few rows per run, at random, so it is advised
  // MADV_RANDOM. Without it the kernel (6.18, large page-cache folios) mapped the whole 2 MB folio
  // around every row a run read: EmbeddingGemma's peak resident memory was 270 / 319 / 346 MB at
  // 128 / 512 / 2048 tokens, 146 / 162 / 194 MB with it (docs/llm-encoders.md). Not for masked-LM
  // models, whose tied decoder packs the whole table (sequential reads want the read-ahead).
  void advise_word_table_random() const;
  const float* pin(const float* p, size_t count);
  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  std::vector<std::vector<float>> pinned_;  // pin_run_time_arrays' copies
};

}  // namespace edgebert
