// SPDX-License-Identifier: Apache-2.0
// tiny_model.h: a small, valid edgebert model built in memory (synthetic weights, a 64-token
// WordPiece vocabulary), shared by the fuzz targets and the multi-threading (TSan) tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgebert::fuzz {

// Sizes of a tiny model (the default: the fuzzers' 1-layer, hidden-32, 2-head model).
struct TinyShape {
  int hidden = 32, heads = 2, layers = 1, intermediate = 64, max_position = 16;
};

// The .ebm bytes of a model of that shape (pooler, 2 labels) with the vocabulary below.
// int8 = false gives the fp32 reference model. Deterministic. inline_payload_limit: the
// converter's (ConvertOptions; a small value writes payloads after the FlatBuffer, schema_version 7).
std::vector<uint8_t> make_tiny_model(bool int8, const TinyShape& shape = TinyShape(), uint64_t inline_payload_limit = 0);

// The vocabulary of the tiny model: [PAD] [UNK] [CLS] [SEP] [MASK], letters, a few words,
// "##" continuations, punctuation and some non-ASCII tokens.
const std::vector<const char*>& tiny_vocabulary();

// A 64-byte aligned copy of some bytes (eb_model_load_memory requires 64-byte alignment).
class AlignedCopy {
 public:
  AlignedCopy(const uint8_t* data, size_t size);
  ~AlignedCopy();
  AlignedCopy(const AlignedCopy&) = delete;
  AlignedCopy& operator=(const AlignedCopy&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace edgebert::fuzz
