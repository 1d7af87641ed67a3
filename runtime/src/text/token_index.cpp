// SPDX-License-Identifier: Apache-2.0
// token_index.cpp: linear probing, power-of-two table kept at most half full.
#include "text/token_index.h"

#include <cstdint>
#include <cstring>

#include "text/token_tables.h"

namespace edgebert {
namespace text {

void TokenIndex::reserve(size_t expected, const VocabView& keys, std::string_view prefix) {
  static_assert(sizeof(Slot) == kSlotBytes, "the model file's TokenIndexSlot");
  size_t capacity = 16;  // at least twice the keys: insert() keeps the table at most half full
  while (capacity < 2 * expected) capacity *= 2;
  owned_.assign(capacity, Slot{0, kEmpty, 0});
  slots_ = &owned_[0];
  capacity_ = capacity;
  keys_ = keys;
  prefix_ = prefix;
  skip_ = prefix.size();
  mask_ = capacity - 1;
  count_ = 0;
}

bool TokenIndex::adopt(const void* slots, size_t capacity, size_t count, const VocabView& keys, std::string_view prefix) {
  if (!table_shape_ok(slots, capacity, count, alignof(Slot))) return false;
  owned_ = PageArray<Slot>();
  slots_ = static_cast<const Slot*>(slots);
  capacity_ = capacity;
  keys_ = keys;
  prefix_ = prefix;
  skip_ = prefix.size();
  mask_ = capacity - 1;
  count_ = count;
  return true;
}

bool TokenIndex::holds(const Slot& s, std::string_view key, uint32_t h32) const {
  if (s.hash != h32 || s.length != key.size()) return false;
  const uint32_t ref = s.ref & ~kPrefixOnly;
  if (ref >= keys_.size()) return false;
  const std::string_view t = keys_[ref];
  return t.size() >= skip_ && t.size() - skip_ >= key.size() &&
         (key.empty() || std::memcmp(t.data() + skip_, key.data(), key.size()) == 0);  // (an empty view may be null)
}

bool TokenIndex::insert(std::string_view key, uint64_t h, uint32_t ref, bool overwrite) {
  if (owned_.empty() || 2 * (count_ + 1) > owned_.size()) return false;
  const uint32_t h32 = static_cast<uint32_t>(h);
  for (size_t i = static_cast<size_t>(h >> 32) & mask_;; i = (i + 1) & mask_) {
    Slot& s = owned_[i];
    if (s.ref == kEmpty) {
      s = Slot{h32, ref, static_cast<uint32_t>(key.size())};
      ++count_;
      return true;
    }
    if (holds(s, key, h32)) {
      if ((s.ref & kPrefixOnly) || (overwrite && !(ref & kPrefixOnly))) s.ref = ref;
      return true;
    }
  }
}

bool TokenIndex::insert(int32_t id, bool overwrite) {
  if (id < 0 || static_cast<size_t>(id) >= keys_.size()) return false;
  const std::string_view t = keys_[id];
  if (t.size() < skip_ || t.size() - skip_ > 0xFFFFFFFFu || t.compare(0, skip_, prefix_) != 0) return false;
  const std::string_view key = t.substr(skip_);
  return insert(key, hash(key), static_cast<uint32_t>(id), overwrite);
}

bool TokenIndex::insert_prefix(int32_t source, size_t length) {
  if (source < 0 || static_cast<size_t>(source) >= keys_.size()) return false;
  const std::string_view t = keys_[source];
  if (t.size() < skip_ || length > t.size() - skip_ || t.compare(0, skip_, prefix_) != 0) return false;
  const std::string_view key = t.substr(skip_, length);
  return insert(key, hash(key), static_cast<uint32_t>(source) | kPrefixOnly, false);
}

bool TokenIndex::insert_ids() {
  if (keys_.size() > 0x7FFFFFFFu) return false;  // ids are int32
  constexpr size_t kAhead = 8;  // keys hashed, their slots prefetched, not yet inserted
  struct Pending {
    std::string_view key;
    uint64_t hash;
    uint32_t id;
  } ring[kAhead];
  size_t first = 0, pending = 0;
  const size_t key_count = keys_.size();
  for (size_t id = 0; id < key_count || pending > 0;) {
    if (pending == kAhead || id == key_count) {
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
      if (!owned_.empty()) __builtin_prefetch(&owned_[static_cast<size_t>(h >> 32) & mask_]);
      ring[(first + pending) % kAhead] = Pending{key, h, static_cast<uint32_t>(id)};
      ++pending;
    }
    ++id;
  }
  return true;
}

int32_t TokenIndex::find(std::string_view key, uint64_t h) const {
  const uint32_t h32 = static_cast<uint32_t>(h);
  size_t i = static_cast<size_t>(h >> 32) & mask_;
  for (size_t probes = 0; probes < capacity_; ++probes, i = (i + 1) & mask_) {  // one lap at most
    const Slot& s = slots_[i];
    if (s.ref == kEmpty) return -2;
    if (holds(s, key, h32)) return (s.ref & kPrefixOnly) ? -1 : static_cast<int32_t>(s.ref);
  }
  return -2;
}

}  // namespace text
}  // namespace edgebert
