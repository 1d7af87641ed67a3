// SPDX-License-Identifier: Apache-2.0
// converter.h: the edgebert-convert pipeline: read a HuggingFace BERT / DistilBERT directory or a
// sentence-transformers folder, decide the task head from the checkpoint, calibrate with the float
// reference, quantize, report per-GEMM error, and produce the .ebm model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "converter/activation_params.h"
#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/float_bert.h"
#include "converter/int4_policy.h"
#include "converter/model_writer.h"

namespace edgebert::convert {

struct ConvertOptions {
  std::string input_dir;
  std::string output_path;                  // empty: build in memory only
  bool fp32 = false;                        // keep every weight float32 (reference model)
  std::string calibration_file;             // empty: built-in calibration (see calibration.h)
  int max_seq_len = 0;                      // 0: config's max_position_embeddings
  std::vector<std::string> keep_fp32;       // GEMM name patterns kept float32
  // Tensor payload bytes kept inside the FlatBuffer before every payload of 4 KiB or more goes
  // after it (schema_version 7). 0: FlatBuffers' 2 GiB less 256 MiB. Tests set it low to make
  // such files from small models.
  uint64_t inline_payload_limit = 0;
  bool quiet = false;                       // no progress/report on stderr
  bool error_report = true;                 // run the per-GEMM error pass (int8)
  bool quick_calibration = false;           // ~100 calibration tokens (synthetic benchmark models)
  Scheme scheme = Scheme::kAuto;            // int8 quantization scheme (activation_params.h)
  bool int4 = false;                        // --weights int4: int4 GEMM weights under the policy
  Int4Options int4_options;                 // --int4-block, --int4-budget
};

// One row of the per-GEMM error report: the relative L2 error the int8 GEMM introduces
// (input and output quantization plus int8 weights) against its float32 result, measured on
// the float reference's own activations over the calibration inputs. The intermediate GEMM is
// measured after GELU (what the next GEMM sees).
struct GemmReportRow {
  std::string name;
  bool int8 = false;
  bool int4 = false;            // int8 GEMM with int4 weights (the weight error is int4's)
  double input_rel_error = 0;   // from quantizing the input activations alone
  double weight_rel_error = 0;  // from the int8 weights alone
  double total_rel_error = 0;   // input + weights + output quantization together
};

struct ConvertResult {
  ModelBytes buffer;  // the .ebm file's bytes (converter/model_writer.h)
  Task task = Task::kEncoder;
  std::vector<std::string> notes;  // "note: ignoring training-only tensor X", one per tensor
  std::vector<GemmReportRow> report;
  bool int4 = false;        // the int4 policy ran (int4_policy filled)
  Int4Policy int4_policy;
  std::string calibration_source;
  size_t calibration_tokens = 0;
  double seconds = 0;
};

// Throws std::runtime_error (or CheckpointError) with a one-line message naming the file and
// tensor on any bad input; a checkpoint tensor the model does not use is such an error unless it
// is training-only (HfBertCheckpoint::is_training_only), which gives a note (printed unless
// quiet). Writes options.output_path atomically when it is set, never on error.
ConvertResult convert_checkpoint(const ConvertOptions& options);

// Reads the model in `dir` (a sentence-transformers folder or a HF checkpoint directory) into
// float32 with its task head, checking that every checkpoint tensor is used; appends notes for
// the training-only tensors it ignores. Sets *weights_dir to the folder with config.json/vocab.
FloatBert load_model_dir(const std::string& dir, std::vector<std::string>* notes, std::string* weights_dir);

// The same pipeline from an in-memory model (e.g. a synthetic one); `vocab` may be null.
// options.input_dir is ignored.
// `tokenizer` (tokenizer.json, may be null) is written as the model's TokenizerSpec and
// tokenizes the calibration text; else `vocab` does.
struct TokenizerJson;
ConvertResult convert_model(const FloatBert& model, const Vocab* vocab, const ConvertOptions& options,
                            const TokenizerJson* tokenizer = nullptr);

// Pattern match for --keep-fp32: '*' matches any run of characters except '.', '**' matches
// anything, '?' one character. Names look like "layer.3.attention.qkv", "layer.3.output".
bool gemm_name_matches(const std::string& pattern, const std::string& name);

// Human-readable report table.
std::string format_report(const std::vector<GemmReportRow>& rows);

}  // namespace edgebert::convert
