// SPDX-License-Identifier: Apache-2.0
// model_writer.h: turns a quantized (or float) BERT into the .ebm FlatBuffer and writes it
// atomically (temporary file + rename), so a failed conversion never leaves a partial file.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "backend/int4_weights.h"
#include "converter/float_bert.h"
#include "converter/quantization.h"

namespace edgebert::convert {
struct TokenizerJson;

struct ConvertedLinear {
  const FloatLinear* source = nullptr;
  bool int8 = false;             // execution precision
  RowQuantized weight;           // int8 only (of W[:, c] * input_factors[c] when factors are used)
  // int8 GEMMs with int4 weights (--weights int4, chosen by the policy): the same matrix in the
  // int4 format (backend/int4_weights.h); `weight` is then not written.
  bool int4 = false;
  int4::Quantized weight4;
  ActivationQuant input, output; // filled for every GEMM of an int8 model
  std::vector<float> input_factors;  // int8 qkv/intermediate only, optional (SmoothQuant)
  float smoothing_alpha = 0.f;       // migration strength behind input_factors (0: none)
};

struct ConvertedModel {
  const FloatBert* model = nullptr;
  const std::vector<std::string>* vocab = nullptr;  // may be null
  const TokenizerJson* tokenizer = nullptr;         // tokenizer.json; may be null
  bool do_lower_case = true;
  bool tokenize_chinese_chars = true;
  bool int8 = false;
  int max_position = 0;  // position rows kept (<= config.max_position_embeddings)
  std::vector<std::array<ConvertedLinear, kGemmsPerLayer>> layers;
  RowQuantized word_embeddings;  // int8 models with embeddings
  // int8 layers with q/k norms: the scales of Q and K after the norms and the rotary embedding
  // (per channel over the Q then K sections; empty: none)
  std::vector<std::vector<float>> qk_norm_scales;
  // int8 masked-LM models: the tied decoder's input quantization and per-channel output scales
  // (its weights are word_embeddings)
  ConvertedLinear mlm_decoder;
  bool word_int4 = false;        // --weights int4 and the policy chose the word table: written as
  int4::Quantized word_embeddings4;  // this instead (rows of the table, block-wise)
  std::string calibration_source, calibration_method;
  int calibration_sequences = 0, calibration_tokens = 0;
};

// schema_version of files of the families beyond BERT / DistilBERT (their fields would be ignored
// by older readers); BERT / DistilBERT files keep version 2.
constexpr uint32_t kFamilySchemaVersion = 4;
// ... and of the files using the LLM-block fields (issue 24: grouped-query heads, RMSNorm, q/k
// norms, causal attention, last-token pooling).
constexpr uint32_t kLlmSchemaVersion = 5;
// int4 weights (issue 26, any family; they carry the family fields too) share version 5: the two
// landed together.
constexpr uint32_t kInt4SchemaVersion = kLlmSchemaVersion;
// ... and of the Gemma 3 files (family GEMMA3, the branch post-norms).
constexpr uint32_t kGemmaSchemaVersion = 6;
// ... and of files whose tensor payloads follow the FlatBuffer (Tensor.external_offset): only those
// whose payloads would not fit FlatBuffers' 2 GiB, e.g. Qwen3-Embedding-0.6B in fp32.
constexpr uint32_t kExternalDataSchemaVersion = 7;
// ... and of every file with a tokenizer (issue 23): its vocabulary as one text (TokenModelSpec
// vocab_text / vocab_ends, `vocab` left empty, which a reader of 7 would refuse as empty) and the
// lookup tables the runtime would otherwise build at every load.
constexpr uint32_t kTokenTablesSchemaVersion = 8;

// A written model's bytes: the FlatBuffer itself, or (schema_version 7) the whole file made of the
// FlatBuffer and the payloads after it.
class ModelBytes {
 public:
  ModelBytes() = default;
  explicit ModelBytes(flatbuffers::DetachedBuffer b) : flat_(std::move(b)) {}
  explicit ModelBytes(std::vector<uint8_t> file) : file_(std::move(file)), whole_file_(true) {}
  const uint8_t* data() const { return whole_file_ ? file_.data() : flat_.data(); }
  size_t size() const { return whole_file_ ? file_.size() : flat_.size(); }

 private:
  flatbuffers::DetachedBuffer flat_;
  std::vector<uint8_t> file_;
  bool whole_file_ = false;
};

// Rows of the position table kept for sequences of up to max_sequence tokens: max_sequence
// (PADDING_OFFSET: + padding_idx + 1), at most max_position_embeddings; 0 without a table.
int64_t position_rows(const FloatBert& m, int max_sequence);

// The model file's bytes. Payloads go inline unless they would pass FlatBuffers' 2 GiB, then after
// the FlatBuffer (schema_version 7); inline_payload_limit (0: FlatBuffers' 2 GiB less 256 MiB)
// says how many payload bytes fit inline. Throws std::runtime_error when even that cannot hold it.
ModelBytes build_model_buffer(const ConvertedModel& model, uint64_t inline_payload_limit = 0);

// Writes `bytes` to `path` via a temporary file in the same directory and rename(2).
// Throws std::runtime_error naming the path; on failure the temporary file is removed.
void write_file_atomically(const std::string& path, const uint8_t* bytes, size_t size);

}  // namespace edgebert::convert
