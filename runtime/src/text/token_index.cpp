// SPDX-License-Identifier: Apache-2.0
// token_index.cpp: linear probing, power-of-two table kept at most half full.
#include "text/token_index.h"

#include <cstring>

namespace edgebert {
namespace text {

void TokenIndex::reserve(size_t expected, const std::vector<std::string_view>& keys, std::string_view prefix) {
  size_t capacity = 16;  // at least twice the keys: insert() keeps the table at most half full
  while (capacity < 2 * expected) capacity *= 2;
  slots_.assign(capacity, Slot{0, kEmpty, 0});
  keys_ = keys.data();
  key_count_ = keys.size();
  prefix_ = prefix;
  skip_ = prefix.size();
  mask_ = capacity - 1;
  count_ = 0;
}

bool TokenIndex::insert(std::string_view key, uint64_t h, uint32_t ref, bool overwrite) {
  if (slots_.empty() || 2 * (count_ + 1) > slots_.size()) return false;
  const uint32_t h32 = static_cast<uint32_t>(h);
  for (size_t i = static_cast<size_t>(h >> 32) & mask_;; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.ref == kEmpty) {
      s = Slot{h32, ref, static_cast<uint32_t>(key.size())};
      ++count_;
      return true;
    }
    if (s.hash == h32 && s.length == key.size() && std::memcmp(key_of(s), key.data(), key.size()) == 0) {
      if ((s.ref & kPrefixOnly) || (overwrite && !(ref & kPrefixOnly))) s.ref = ref;
      return true;
    }
  }
}

bool TokenIndex::insert(int32_t id, bool overwrite) {
  if (id < 0 || static_cast<size_t>(id) >= key_count_) return false;
  const std::string_view t = keys_[id];
  if (t.size() < skip_ || t.size() - skip_ > 0xFFFFFFFFu || t.compare(0, skip_, prefix_) != 0) return false;
  const std::string_view key = t.substr(skip_);
  return insert(key, hash(key), static_cast<uint32_t>(id), overwrite);
}

bool TokenIndex::insert_prefix(int32_t source, size_t length) {
  if (source < 0 || static_cast<size_t>(source) >= key_count_) return false;
  const std::string_view t = keys_[source];
  if (t.size() < skip_ || length > t.size() - skip_ || t.compare(0, skip_, prefix_) != 0) return false;
  const std::string_view key = t.substr(skip_, length);
  return insert(key, hash(key), static_cast<uint32_t>(source) | kPrefixOnly, false);
}

bool TokenIndex::insert_ids() {
  if (key_count_ > 0x7FFFFFFFu) return false;  // ids are int32
  constexpr size_t kAhead = 8;  // keys hashed, their slots prefetched, not yet inserted
  struct Pending {
    std::string_view key;
    uint64_t hash;
    uint32_t id;
  } ring[kAhead];
  size_t first = 0, pending = 0;
  for (size_t id = 0; id < key_count_ || pending > 0;) {
    if (pending == kAhead || id == key_count_) {
      const Pending& p = ring[first];
      if (!insert(p.key, p.hash, p.id, true)) return false;
      first = (first + 1) % kAhead;
      --pending;
      continue;
    }
    const std::string_view t = keys_[id];
    if (t.size() > skip_ && t.size() - skip_ <= 0xFFFFFFFFu && t.compare(0, skip_, prefix_) == 0) {
      const std::string_view key = t.substr(skip_);
      const uint64_t h = hash(key);
      if (!slots_.empty()) __builtin_prefetch(&slots_[static_cast<size_t>(h >> 32) & mask_]);
      ring[(first + pending) % kAhead] = Pending{key, h, static_cast<uint32_t>(id)};
      ++pending;
    }
    ++id;
  }
  return true;
}

int32_t TokenIndex::find(std::string_view key, uint64_t h) const {
  if (slots_.empty()) return -2;
  const uint32_t h32 = static_cast<uint32_t>(h);
  for (size_t i = static_cast<size_t>(h >> 32) & mask_;; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.ref == kEmpty) return -2;
    if (s.hash == h32 && s.length == key.size() && std::memcmp(key_of(s), key.data(), key.size()) == 0)
      return (s.ref & kPrefixOnly) ? -1 : static_cast<int32_t>(s.ref);
  }
}

}  // namespace text
}  // namespace edgebert
