// SPDX-License-Identifier: Apache-2.0
// token_index.h: string -> token id, an open-addressing hash table over strings that live
// elsewhere (the model file's vocabulary). Keys may also be entered as "prefix only" (id -1), which
// turns the table into a trie for common-prefix searches (Unigram). The hash is FNV-1a, so a
// caller can extend it byte by byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace edgebert {
namespace text {

class TokenIndex {
 public:
  static constexpr uint64_t kHashStart = 0xcbf29ce484222325ull;
  static uint64_t extend(uint64_t h, unsigned char b) { return (h ^ b) * 0x100000001b3ull; }
  static uint64_t hash(std::string_view s, uint64_t h = kHashStart) {
    for (unsigned char b : s) h = extend(h, b);
    return h;
  }

  // Sizes the table for `expected` keys (allocates; done at init).
  void reserve(size_t expected);
  // Inserts key -> id; an existing key gets the new id when overwrite (a later duplicate wins),
  // a prefix-only entry (-1) always does. Returns false when the table is full.
  bool insert(std::string_view key, int32_t id, bool overwrite = true) { return insert(key, hash(key), id, overwrite); }
  // Inserts keys[i] -> i for every key longer than `prefix` that starts with it, without the
  // prefix (an empty prefix: every non-empty key), in order (a later duplicate wins). Hashes a few
  // keys ahead and prefetches their slots: a table larger than the L2 cache (1.5 MB for BERT's
  // 30,522 tokens, 12 MB for Gemma's 262,144) otherwise waits on memory at every insert. Returns
  // false when the table is full.
  bool insert_ids(const std::vector<std::string_view>& keys, std::string_view prefix = {});
  // The entry for key: its id (>= 0), -1 for a prefix-only entry, -2 when absent.
  int32_t find(std::string_view key) const { return find(key, hash(key)); }
  int32_t find(std::string_view key, uint64_t h) const;
  size_t size() const { return count_; }

 private:
  bool insert(std::string_view key, uint64_t h, int32_t id, bool overwrite);
  struct Slot {
    const char* key;
    uint32_t length;
    uint32_t hash;
    int32_t id;  // -2: empty
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

}  // namespace text
}  // namespace edgebert
