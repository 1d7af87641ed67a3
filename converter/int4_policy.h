// SPDX-License-Identifier: Apache-2.0
// int4_policy.h: `edgebert-convert --weights int4`: quantizes the int8 GEMMs' weights to int4
// (backend/int4_weights.h) and keeps int8 where int4 costs too much, measured on the calibration
// outputs (docs/int4.md). The word embedding table is a candidate too.
//
// The cost of a GEMM is what its int4 weights alone do to the encoder output: the float reference
// runs over the probe sequences with that one GEMM's weights replaced by their dequantized int4
// values (everything else float32, so the int8 activation error common to both choices is left
// out), and the cost is the mean over tokens of 1 - cosine(last hidden state, float32's). Small
// independent weight errors add up in squared norm, so 1 - cosine is close to additive: GEMMs are
// taken int4 cheapest first while the sum of their costs stays within the budget; the rest stay
// int8. Then one more run with every chosen GEMM int4 at once measures the combination; while its
// lowest per-token cosine is below min_cosine, the most expensive chosen tensor goes back to int8
// and the combination is measured again.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "converter/float_bert.h"
#include "converter/model_writer.h"
#include "converter/reference_bert.h"

namespace edgebert::convert {

struct Int4Options {
  int block = 32;        // --int4-block: input channels per scale (32..256); 0: one scale per output channel
  double budget = 0.004;  // --int4-budget: the summed cost (mean 1 - cosine) int4 GEMMs may take
  // --int4-min-cosine: the lowest per-token cosine (weights alone, on the probe) the chosen
  // combination must keep; while it does not, the most expensive chosen tensor goes back to int8.
  // 0: no check.
  double min_cosine = 0.991;
  // --int4-rounding gptq: error feedback on calibration inputs disjoint from the policy's probe
  // (converter/gptq.h). Not the default (rtn, round to nearest): even with the held-out probe it
  // misses test_int4's held-out bars on two random test models (docs/int4.md).
  bool gptq = false;
};

struct Int4PolicyRow {
  std::string name;
  int block = 0;        // the block used (fit to the GEMM's input width)
  double cost = 0;      // mean 1 - cosine of the encoder output with this GEMM alone int4
  bool int4 = false;    // chosen
  size_t int8_bytes = 0, int4_bytes = 0;  // weight bytes in the file (int8 + float scales; nibbles + bf16 scales)
};

struct Int4Policy {
  std::vector<Int4PolicyRow> rows;   // schedule order
  double combined_cost = 0;          // mean 1 - cosine with every chosen GEMM int4
  double combined_min_cosine = 1;    // the lowest per-token cosine of that run
  int backed_off = 0;                // chosen by the budget, then put back to int8 by min_cosine
  size_t probe_tokens = 0;
  size_t hessian_tokens = 0;         // GPTQ's calibration tokens (0: round to nearest)
};

// Decides and fills cm.layers[l][k].int4 / weight4 for the int8 GEMMs (input_factors and weights
// of the int8 quantization already chosen) and cm.word_int4 / word_embeddings4 for the word
// embedding table (a candidate like a GEMM, its rows blocked like a GEMM's input channels, when
// the model has one and the probe runs on token ids). Throws std::runtime_error on an invalid
// block or budget.
// hessian_inputs: the sequences whose GEMM inputs GPTQ rounds for (options.gptq).
Int4Policy choose_int4(const FloatBert& m, const TokenBatch& probe, const TokenBatch& hessian_inputs,
                       const Int4Options& options, ConvertedModel& cm);

std::string format_int4_report(const Int4Policy& policy, const Int4Options& options);

}  // namespace edgebert::convert
