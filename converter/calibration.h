// SPDX-License-Identifier: Apache-2.0
// calibration.h: chooses the calibration inputs (a user text file, or the documented built-in
// set). The statistics themselves are taken per GEMM while the float reference runs over these
// inputs (activation_params.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/reference_bert.h"

namespace edgebert::text {
class Tokenizer;
}

namespace edgebert::convert {

struct CalibrationInputs {
  TokenBatch batch;
  std::string source;  // "builtin-v1" or the file name
};

// Built-in calibration ("builtin-v1"): 24 fixed English sentences tokenized with the model's
// vocabulary, plus seeded pseudo-random token sequences of lengths 1, 2, 3, 5, 8, 16, 32, 64, 128
// and max_len (those up to max_len): they exercise the whole embedding table, very short inputs
// and every position. Without a vocabulary, 5 more random sequences (4 to 128 tokens). Encoder-only models (no embedding tables) get instead seeded synthetic
// embedding-layer outputs ("builtin-v2"): 18 sequences of 1 to 128 tokens (plus one of max_len
// when that is longer), each token a LayerNorm-normalised Gaussian vector scaled and shifted per
// dimension by the gamma/beta of one of the model's own encoder LayerNorms (drawn per dimension
// and per sequence), since the embedding LayerNorm itself is missing.
// Sentences also contribute their 1-, 2- and 3-token prefixes (last 8 sentences): short inputs
// give attention's extreme (un-averaged) outputs, which long sentences never show.
// Text pairs (token types 0 then 1, as "[CLS] a [SEP] b [SEP]"): a calibration-file line holding
// a TAB is the pair (before TAB, after TAB); question-answering models with token types also get
// each calibration line (file or built-in) paired with the next one (their inputs are pairs).
// With `text_file`: one sentence per line (blank lines skipped), at most 1024 lines, each
// truncated to max_len tokens; positions beyond the longest line are not calibrated, so the file
// should contain inputs as long as those the model will see. Throws std::runtime_error on an
// unreadable or empty file.
CalibrationInputs make_calibration_inputs(const FloatBert& model, const std::vector<std::string>* vocab,
                                          bool do_lower_case, const std::string& text_file, int max_len);
// The same with the model's own tokenizer (any kind; null: no tokenizer), whose template adds
// the special tokens and type ids.
CalibrationInputs make_calibration_inputs(const FloatBert& model, const text::Tokenizer* tokenizer,
                                          const std::string& text_file, int max_len);

// More sequences in the built-in style but from another seed, disjoint from the calibration set:
// `count` sequences of `len` tokens, random token ids for models with embedding tables (every second
// one a pair, its second half token type 1, when the model has token types), synthetic embedding
// outputs (as builtin-v2) otherwise. int4's GPTQ takes its Hessians
// on them (with the calibration sequences the int4 policy's probe does not use).
TokenBatch make_extra_sequences(const FloatBert& model, uint32_t seed, int count, int len);

}  // namespace edgebert::convert
