// SPDX-License-Identifier: Apache-2.0
// synthetic_model.h: seeded random BERT models built in memory, for benchmarking on a board
// with no checkpoint at hand (edgebert-bench --synthetic / --head-sweep) and for tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/float_bert.h"

namespace edgebert::convert {

struct SyntheticSpec {
  int hidden = 768, heads = 12, layers = 12, intermediate = 3072;
  int vocab = 30522, max_position = 512, type_vocab = 2, labels = 0;
  bool pooler = true;
  uint32_t seed = 1;
  // Structured outliers (stress model for int8): this many hidden dimensions (0..8) get
  // LayerNorm gammas from 20 to 50 in the embedding LayerNorm and every output LayerNorm, and
  // FFN-output rows that are large (see make_synthetic_bert).
  int outliers = 0;
};

// Parses "hidden=768,heads=12,layers=12,intermediate=3072[,vocab=..,max_position=..,labels=..,
// seed=..,outliers=K]" over `spec`'s defaults; false + *error on an unknown key or bad value.
bool parse_synthetic_spec(const std::string& text, SyntheticSpec* spec, std::string* error);

// Weights uniform with the standard deviation of full-scale init (1/sqrt(fan_in)) for linear
// layers, N(0,1)-like embeddings, LayerNorm gamma 1 +- 0.1, small biases. Deterministic.
//
// With spec.outliers = K > 0 (the int8 stress model), hidden dimensions
// d_k = (k H / K + H / 2K + 7) mod H carry structured outliers like trained BERTs': gamma G_k
// (20 .. 50, evenly spaced) in one kind of LayerNorm, and that dimension's row of the GEMM that
// writes the residual before it scaled by 2 with a bias of +-2 (so the outlier keeps its sign
// and magnitude across tokens, as in trained BERTs). Even k: the embedding (beta +-1.5 G_k too)
// and output LayerNorms (every qkv input has the outlier) and the FFN-output row; odd k: the
// attention LayerNorm (every FFN input) and the attention-output row. In a post-LN network a dimension with gamma > 1 in
// every LayerNorm grows until it swamps the rest, so the other LayerNorm kind gets gamma 2/G_k on
// it (the loop gain stays below 1, as trained networks arrange), and queries/keys read an even-k
// dimension with weights / G_k (values in full): full-scale Q/K weights on a 50x dimension make
// every attention row an argmax, which trained models avoid. Result (4 layers, 768 wide):
// those GEMM inputs hold dimensions with 20-120x the RMS of the others, the others stay ~0.8-1.
FloatBert make_synthetic_bert(const SyntheticSpec& spec, std::vector<int>* outlier_dims = nullptr);

// Closed forms for the head-sweep table.
int64_t bert_parameter_count(const SyntheticSpec& spec);        // encoder + embeddings + pooler
int64_t encoder_projection_macs(const SyntheticSpec& s, int64_t n);  // QKV + output projections, all layers
int64_t encoder_attention_core_macs(const SyntheticSpec& s, int64_t n);  // QK^T + PV, all layers
int64_t encoder_ffn_macs(const SyntheticSpec& s, int64_t n);

}  // namespace edgebert::convert
