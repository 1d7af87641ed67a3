// synthetic_model.h: seeded random BERT models built in memory, for benchmarking on a board
// with no checkpoint at hand (edgebert-bench --synthetic / --head-sweep) and for tests.
#pragma once

#include <cstdint>
#include <string>

#include "converter/float_bert.h"

namespace edgebert::convert {

struct SyntheticSpec {
  int hidden = 768, heads = 12, layers = 12, intermediate = 3072;
  int vocab = 30522, max_position = 512, type_vocab = 2, labels = 0;
  bool pooler = true;
  uint32_t seed = 1;
};

// Parses "hidden=768,heads=12,layers=12,intermediate=3072[,vocab=..,max_position=..,labels=..,
// seed=..]" over `spec`'s defaults; false + *error on an unknown key or bad value.
bool parse_synthetic_spec(const std::string& text, SyntheticSpec* spec, std::string* error);

// Weights uniform with the standard deviation of full-scale init (1/sqrt(fan_in)) for linear
// layers, N(0,1)-like embeddings, LayerNorm gamma 1 +- 0.1, small biases. Deterministic.
FloatBert make_synthetic_bert(const SyntheticSpec& spec);

// Closed forms for the head-sweep table.
int64_t bert_parameter_count(const SyntheticSpec& spec);        // encoder + embeddings + pooler
int64_t encoder_projection_macs(const SyntheticSpec& s, int64_t n);  // QKV + output projections, all layers
int64_t encoder_attention_core_macs(const SyntheticSpec& s, int64_t n);  // QK^T + PV, all layers
int64_t encoder_ffn_macs(const SyntheticSpec& s, int64_t n);

}  // namespace edgebert::convert
