// SPDX-License-Identifier: Apache-2.0
// token_index.cpp: linear probing, power-of-two table kept at most half full.
#include "text/token_index.h"

#include <cstring>

namespace edgebert {
namespace text {

void TokenIndex::reserve(size_t expected) {
  size_t capacity = 16;
  while (capacity < 2 * expected + 2) capacity *= 2;
  slots_.assign(capacity, Slot{nullptr, 0, 0, -2});
  mask_ = capacity - 1;
  count_ = 0;
}

bool TokenIndex::insert(std::string_view key, uint64_t h, int32_t id, bool overwrite) {
  if (slots_.empty() || 2 * (count_ + 1) > slots_.size()) return false;
  const uint32_t h32 = static_cast<uint32_t>(h);
  for (size_t i = static_cast<size_t>(h >> 32) & mask_;; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.id == -2) {
      s = Slot{key.data(), static_cast<uint32_t>(key.size()), h32, id};
      ++count_;
      return true;
    }
    if (s.hash == h32 && s.length == key.size() && std::memcmp(s.key, key.data(), key.size()) == 0) {
      if (s.id == -1 || (overwrite && id >= 0)) s.id = id;
      return true;
    }
  }
}

bool TokenIndex::insert_ids(const std::vector<std::string_view>& keys, std::string_view prefix) {
  constexpr size_t kAhead = 8;  // keys hashed, their slots prefetched, not yet inserted
  struct Pending {
    std::string_view key;
    uint64_t hash;
    int32_t id;
  } ring[kAhead];
  size_t first = 0, pending = 0;
  for (size_t id = 0; id < keys.size() || pending > 0;) {
    if (pending == kAhead || id == keys.size()) {
      const Pending& p = ring[first];
      if (!insert(p.key, p.hash, p.id, true)) return false;
      first = (first + 1) % kAhead;
      --pending;
      continue;
    }
    const std::string_view t = keys[id];
    if (t.size() > prefix.size() && t.compare(0, prefix.size(), prefix) == 0) {
      const std::string_view key = t.substr(prefix.size());
      const uint64_t h = hash(key);
      if (!slots_.empty()) __builtin_prefetch(&slots_[static_cast<size_t>(h >> 32) & mask_]);
      ring[(first + pending) % kAhead] = Pending{key, h, static_cast<int32_t>(id)};
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
    if (s.id == -2) return -2;
    if (s.hash == h32 && s.length == key.size() && std::memcmp(s.key, key.data(), key.size()) == 0) return s.id;
  }
}

}  // namespace text
}  // namespace edgebert
