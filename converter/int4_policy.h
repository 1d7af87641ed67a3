// SPDX-License-Identifier: Apache-2.0
// int4_policy.h: `edgebert-convert --weights int4`: quantizes the int8 GEMMs' weights to int4
// (backend/int4_weights.h) and keeps int8 where int4 costs too much, measured on the calibration
// outputs (docs/int4.md). The word embedding table is a candidate too.
//
// The cost of a tensor is what its int4 weights alone do to the encoder output: the float
// reference runs over the probe sequences with that one tensor's weights replaced by their
// dequantized int4 values (everything else float32, so the int8 activation error common to both
// choices is left out); the cost is 1 - cosine(last hidden state, float32's) per token, and its
// mean. Each GEMM is tried with round-to-nearest and GPTQ rounding (--int4-rounding best, the
// default) and keeps the cheaper. Small independent weight errors add up in squared norm, so
// costs are close to additive: tensors are taken in order of bytes saved per unit of mean cost
// while the summed mean cost stays within the budget and the summed cost at every probe token
// within 1 - min_cosine. Then the combination is measured; while its lowest per-token cosine is
// below min_cosine, the chosen tensor that costs most at the worst token per byte it saves goes
// back to int8 and the combination is measured again.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "converter/float_bert.h"
#include "converter/model_writer.h"
#include "converter/reference_bert.h"

namespace edgebert::convert {

enum class Int4Rounding {
  kNearest,  // rtn: round to nearest with the clipping search (backend/int4_weights.h)
  kGptq,     // gptq: error feedback on calibration inputs disjoint from the policy's probe (converter/gptq.h)
  kBest,     // best: both, measured on the probe; each GEMM keeps the cheaper. Round to nearest
             // only when the calibration is synthetic embedding outputs (a model without
             // embedding tables): GPTQ fitted to those does not carry over to real inputs.
};

struct Int4Options {
  int block = 32;        // --int4-block: input channels per scale (32..256); 0: one scale per output channel
  double budget = 0.005;  // --int4-budget: the summed mean cost (1 - cosine) the int4 tensors may take
  // --int4-min-cosine: the lowest per-token cosine (weights alone, on the probe's sequences of 2
  // tokens or more) the chosen combination must keep. 0: no check.
  double min_cosine = 0.991;
  Int4Rounding rounding = Int4Rounding::kBest;  // --int4-rounding rtn|gptq|best
};

struct Int4PolicyRow {
  std::string name;
  int block = 0;        // the block used (fit to the GEMM's input width)
  double cost = 0;      // mean 1 - cosine of the encoder output with this tensor alone int4
  const char* rounding = "rtn";  // "rtn" or "gptq": the rounding kept
  bool int4 = false;    // chosen
  size_t int8_bytes = 0, int4_bytes = 0;  // weight bytes in the file (int8 + float scales; nibbles + bf16 scales)
};

struct Int4Policy {
  std::vector<Int4PolicyRow> rows;   // schedule order
  double combined_cost = 0;          // mean 1 - cosine with every chosen GEMM int4
  double combined_min_cosine = 1;    // the lowest per-token cosine of that run
  int backed_off = 0;                // chosen, then put back to int8 by the measured min_cosine
  size_t probe_tokens = 0;
  size_t hessian_tokens = 0;         // GPTQ's calibration tokens (0: round to nearest only)
  Int4Rounding rounding = Int4Rounding::kNearest;  // what ran: best becomes rtn without token ids
};

// Decides and fills cm.layers[l][k].int4 / weight4 for the int8 GEMMs (input_factors and weights
// of the int8 quantization already chosen) and cm.word_int4 / word_embeddings4 for the word
// embedding table (a candidate like a GEMM, its rows blocked like a GEMM's input channels, when
// the model has one and the probe runs on token ids). Throws std::runtime_error on an invalid
// block or budget.
// hessian_inputs: the sequences whose GEMM inputs GPTQ rounds for (rounding gptq or best).
Int4Policy choose_int4(const FloatBert& m, const TokenBatch& probe, const TokenBatch& hessian_inputs,
                       const Int4Options& options, ConvertedModel& cm);

// The rounding `options` asks for on this probe: best rounds to nearest only when the probe has
// no token ids (synthetic embedding outputs: GPTQ fitted to those does not carry over to real
// inputs). The converter asks it to know whether GPTQ needs Hessian inputs.
Int4Rounding effective_rounding(const Int4Options& options, const TokenBatch& probe);

std::string format_int4_report(const Int4Policy& policy, const Int4Options& options);

}  // namespace edgebert::convert
