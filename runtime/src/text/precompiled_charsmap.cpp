// SPDX-License-Identifier: Apache-2.0
// precompiled_charsmap.cpp: darts-clone double-array lookups, bounds-checked on every step.
#include "text/precompiled_charsmap.h"

#include "text/unicode.h"

namespace edgebert {
namespace text {
namespace {
bool has_leaf(uint32_t u) { return ((u >> 8) & 1) == 1; }
uint32_t value(uint32_t u) { return u & ((1u << 31) - 1); }
uint32_t label(uint32_t u) { return u & ((1u << 31) | 0xFF); }
uint32_t offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }
}  // namespace

uint32_t PrecompiledCharsmap::unit(size_t i) const {
  const uint8_t* p = units_ + 4 * i;
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

Status PrecompiledCharsmap::init(const uint8_t* data, size_t size) {
  auto fail = [&](const char* m) {
    return Status(EB_ERROR_INVALID_MODEL, std::string("precompiled_charsmap: ") + m);
  };
  if (size < 4) return fail("shorter than its 4-byte header");
  const uint32_t trie_bytes = static_cast<uint32_t>(data[0]) | (static_cast<uint32_t>(data[1]) << 8) |
                              (static_cast<uint32_t>(data[2]) << 16) | (static_cast<uint32_t>(data[3]) << 24);
  if (trie_bytes % 4 != 0 || trie_bytes > size - 4) return fail("trie size is not a multiple of 4 inside the map");
  if (trie_bytes == 0) return fail("empty trie");
  units_ = data + 4;
  num_units_ = trie_bytes / 4;
  pool_ = reinterpret_cast<const char*>(data + 4 + trie_bytes);
  pool_size_ = size - 4 - trie_bytes;
  // Every replacement string must be valid UTF-8 (spm_precompiled refuses the map otherwise).
  for (size_t i = 0; i < pool_size_;) {
    if (pool_[i] == 0) {
      ++i;
      continue;
    }
    size_t len;
    const uint32_t c = decode_utf8(pool_ + i, pool_size_ - i, &len);
    if (c == kReplacementChar && len == 1)
      return fail("replacement pool is not valid UTF-8");
    i += len;
  }
  return Status::ok();
}

bool PrecompiledCharsmap::transform(std::string_view key, std::string_view* replacement) const {
  if (num_units_ == 0) return false;
  size_t node = 0;
  uint32_t u = unit(node);
  node ^= offset(u);
  for (unsigned char c : key) {
    if (c == 0) break;
    node ^= c;
    if (node >= num_units_) return false;
    u = unit(node);
    if (label(u) != c) return false;
    node ^= offset(u);
    if (node >= num_units_) return false;
    if (has_leaf(u)) {
      const size_t index = value(unit(node));
      if (index >= pool_size_ || (static_cast<unsigned char>(pool_[index]) & 0xC0) == 0x80) return false;
      size_t stop = index;
      while (stop < pool_size_ && pool_[stop] != 0) ++stop;
      *replacement = std::string_view(pool_ + index, stop - index);
      return true;
    }
  }
  return false;
}

}  // namespace text
}  // namespace edgebert
