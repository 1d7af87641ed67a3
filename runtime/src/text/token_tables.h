// SPDX-License-Identifier: Apache-2.0
// token_tables.h: a tokenizer model's lookup tables as raw slots: what the converter writes into
// the model file (TokenizerTables, schema_version 8) and what a model adopts from it instead of
// building them at load. The layout belongs to the runtime's code (token_index.h, bpe_model.h);
// kTokenTableScheme names it, and changes whenever a slot's layout, a hash or an insertion rule
// changes, so that tables written by another version are never used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace edgebert {
namespace text {

constexpr uint32_t kTokenTableScheme = 1;

struct IndexTable {
  const void* slots = nullptr;  // capacity TokenIndex slots
  size_t capacity = 0, count = 0;
};

struct TokenTables {
  // WordPiece: words, continuations; BPE: the vocabulary; Unigram: pieces and their prefixes.
  std::vector<IndexTable> indexes;
  const void* pairs = nullptr;  // BPE: pair_capacity merge slots
  size_t pair_capacity = 0;
  const int32_t* byte_ids = nullptr;  // BPE, Unigram: 256 ids of the <0xXX> tokens (-1: absent)
};

// Whether a table of `capacity` slots holding `used` keys has the shape every adopted table needs:
// a power of two of at least 16 slots, at most half full, `slots` aligned to `align`.
inline bool table_shape_ok(const void* slots, size_t capacity, size_t used, size_t align) {
  return slots != nullptr && capacity >= 16 && (capacity & (capacity - 1)) == 0 && used <= capacity / 2 &&
         reinterpret_cast<uintptr_t>(slots) % align == 0;
}

// The <0xXX> token ids: from `tables` when it has them (each checked: -1 or an id below
// vocab_size; false when one is not), else looked up with find("<0xXX>").
template <typename Find>
bool fill_byte_ids(int32_t (&out)[256], const TokenTables* tables, size_t vocab_size, Find&& find) {
  for (int b = 0; b < 256; ++b) {
    int32_t id;
    if (tables && tables->byte_ids) {
      id = tables->byte_ids[b];
      if (id < -1 || (id >= 0 && static_cast<size_t>(id) >= vocab_size)) return false;
    } else {
      static const char kHex[] = "0123456789ABCDEF";
      const char name[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
      id = find(std::string_view(name, sizeof name));
    }
    out[b] = id >= 0 ? id : -1;
  }
  return true;
}

}  // namespace text
}  // namespace edgebert
