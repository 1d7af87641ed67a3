// SPDX-License-Identifier: Apache-2.0
// precompiled_charsmap.h: SentencePiece's compiled normalization rules (tokenizer.json's
// Precompiled normalizer): a little-endian u32 trie size in bytes, a darts-clone double array of
// u32 units, then a pool of NUL-terminated UTF-8 replacement strings. Read in place from the model
// file; init() checks the layout so that lookups cannot leave the arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "status.h"

namespace edgebert {
namespace text {

class PrecompiledCharsmap {
 public:
  // Checks and indexes `data` (kept by reference). Returns false with *error on a malformed map.
  Status init(const uint8_t* data, size_t size);
  // The replacement of the shortest prefix of `key` that has one (what spm_precompiled's
  // transform() returns), or false when no prefix of key is in the map.
  bool transform(std::string_view key, std::string_view* replacement) const;

 private:
  uint32_t unit(size_t i) const;
  const uint8_t* units_ = nullptr;  // little-endian u32 units
  size_t num_units_ = 0;
  const char* pool_ = nullptr;
  size_t pool_size_ = 0;
};

}  // namespace text
}  // namespace edgebert
