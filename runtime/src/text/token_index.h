// SPDX-License-Identifier: Apache-2.0
// token_index.h: string -> token id, an open-addressing hash table over a vocabulary that lives
// elsewhere (the model file's token views). A slot holds no string: only the hash, the length and
// which vocabulary entry the key is in, so BERT's 30,522 tokens take 768 KB (not 1.5 MB with a
// pointer per slot) and the table is filled in half the fresh memory at load. Every key is the
// vocabulary entry `ref` without the index's fixed prefix (WordPiece's "##" for continuations), or
// the first bytes of it, entered as "prefix only" (id -1), which turns the table into a trie for
// common-prefix searches (Unigram). The hash is FNV-1a, so a caller can extend it byte by byte.
// A table is built at load (reserve, insert) or adopted as the converter wrote it into the model
// file (adopt: schema_version 8); lookups then trust none of its slots: every entry is checked
// against the vocabulary before its bytes are read, and a probe stops after one lap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "page_alloc.h"
#include "text/vocab_view.h"

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

  // Sizes the table for `expected` keys taken from `keys` less `prefix` (allocates; done at init).
  // `keys`' bytes must stay where they are while the index is used.
  void reserve(size_t expected, const VocabView& keys, std::string_view prefix = {});
  // Uses `capacity` slots built by the same code (slot_data() of an index over the same keys and
  // prefix, as the converter writes them) in place, without copying or reading them. False when
  // the shape is wrong: capacity not a power of two of at least 16, more than half full, or
  // `slots` not aligned for a slot (then nothing changes).
  bool adopt(const void* slots, size_t capacity, size_t count, const VocabView& keys, std::string_view prefix = {});
  static constexpr size_t kSlotBytes = 12;  // the model file's TokenIndexSlot
  const void* slot_data() const { return slots_; }
  size_t capacity() const { return capacity_; }
  // keys[id] (less the prefix, which it must start with) -> id; an existing key gets the new id
  // when overwrite (a later duplicate wins), a prefix-only entry always does. Returns false when
  // the table is full.
  bool insert(int32_t id, bool overwrite = true);
  // The first `length` bytes of keys[source] (less the prefix) as a prefix-only entry (-1), unless
  // the key is already there. Returns false when the table is full.
  bool insert_prefix(int32_t source, size_t length);
  // Inserts keys[i] -> i for every key longer than the prefix that starts with it, in order (a
  // later duplicate wins). Hashes a few keys ahead and prefetches their slots: a table larger than
  // the L2 cache otherwise waits on memory at every insert. Returns false when the table is full.
  bool insert_ids();
  // The entry for key: its id (>= 0), -1 for a prefix-only entry, -2 when absent.
  int32_t find(std::string_view key) const { return find(key, hash(key)); }
  int32_t find(std::string_view key, uint64_t h) const;
  size_t size() const { return count_; }

 private:
  static constexpr uint32_t kEmpty = 0xFFFFFFFFu, kPrefixOnly = 0x80000000u;
  struct Slot {
    uint32_t hash;    // the low 32 bits of the key's hash (the high ones chose the slot)
    uint32_t ref;     // the key's vocabulary entry, | kPrefixOnly for a prefix-only entry; kEmpty
    uint32_t length;  // the key's bytes
  };
  bool insert(std::string_view key, uint64_t h, uint32_t ref, bool overwrite);
  // Whether slot s holds `key` (its entry checked against the vocabulary first).
  bool holds(const Slot& s, std::string_view key, uint32_t h32) const;

  PageArray<Slot> owned_;  // a built table: whole pages, huge pages when large (page_alloc.h)
  const Slot* slots_ = nullptr;  // owned_'s, or an adopted table's
  size_t capacity_ = 0;
  VocabView keys_;
  size_t skip_ = 0;
  std::string_view prefix_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

}  // namespace text
}  // namespace edgebert
