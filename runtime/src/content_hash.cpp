// SPDX-License-Identifier: Apache-2.0
// content_hash.cpp: the 128-bit content hash (see content_hash.h). 32-byte blocks feed four lanes
// (v = rotl(v + w * P2, 31) * P1); the lanes, the length and the seed are then mixed into two
// 64-bit halves with different constants. Speed is what matters here (the runtime hashes a whole
// model file when it has no content id): about one multiply per 8 bytes.
#include "content_hash.h"

#include <cstring>

namespace edgebert {
namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t read64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}
inline uint64_t round(uint64_t acc, uint64_t w) { return rotl(acc + w * kP2, 31) * kP1; }
inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

}  // namespace

ContentHasher::ContentHasher(uint64_t seed) : seed_(seed) {
  lane_[0] = seed + kP1 + kP2;
  lane_[1] = seed + kP2;
  lane_[2] = seed;
  lane_[3] = seed - kP1;
}

void ContentHasher::consume_block(const uint8_t* p) {
  lane_[0] = round(lane_[0], read64(p));
  lane_[1] = round(lane_[1], read64(p + 8));
  lane_[2] = round(lane_[2], read64(p + 16));
  lane_[3] = round(lane_[3], read64(p + 24));
}

void ContentHasher::update(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  total_ += size;
  if (tail_size_ > 0) {
    const size_t take = size < 32 - tail_size_ ? size : 32 - tail_size_;
    std::memcpy(tail_ + tail_size_, p, take);
    tail_size_ += take;
    p += take;
    size -= take;
    if (tail_size_ < 32) return;
    consume_block(tail_);
    tail_size_ = 0;
  }
  for (; size >= 32; p += 32, size -= 32) consume_block(p);
  std::memcpy(tail_, p, size);
  tail_size_ = size;
}

ContentId ContentHasher::finish() const {
  uint64_t l[4] = {lane_[0], lane_[1], lane_[2], lane_[3]};
  // the tail, 8 bytes at a time into the lanes in turn, then its last bytes one by one
  size_t i = 0;
  for (; i + 8 <= tail_size_; i += 8) l[(i / 8) & 3] = round(l[(i / 8) & 3], read64(tail_ + i));
  uint64_t last = 0;
  for (size_t k = 0; i + k < tail_size_; ++k) last |= uint64_t(tail_[i + k]) << (8 * k);
  const uint64_t t = total_ ^ (uint64_t(tail_size_ - i) << 56);
  uint64_t h1 = rotl(l[0], 1) + rotl(l[1], 7) + rotl(l[2], 12) + rotl(l[3], 18);
  uint64_t h2 = rotl(l[0], 23) ^ rotl(l[1], 29) ^ rotl(l[2], 37) ^ rotl(l[3], 45);
  for (int k = 0; k < 4; ++k) {
    h1 = (h1 ^ round(0, l[k])) * kP1 + kP4;
    h2 = (h2 + round(kP5, l[3 - k])) * kP3 + kP2;
  }
  h1 = avalanche(h1 ^ t ^ round(seed_, last));
  h2 = avalanche(h2 + (t * kP5) + round(~seed_, last) + h1);
  ContentId id;
  for (int b = 0; b < 8; ++b) {
    id[b] = static_cast<uint8_t>(h1 >> (8 * b));
    id[8 + b] = static_cast<uint8_t>(h2 >> (8 * b));
  }
  return id;
}

ContentId content_hash128(const void* data, size_t size, uint64_t seed) {
  ContentHasher h(seed);
  h.update(data, size);
  return h.finish();
}

uint64_t content_hash64(const void* data, size_t size, uint64_t seed) {
  const ContentId id = content_hash128(data, size, seed);
  uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= uint64_t(id[b]) << (8 * b);
  return v;
}

void content_id_hex(const ContentId& id, char out[33]) {
  static const char kDigits[] = "0123456789abcdef";
  for (size_t i = 0; i < id.size(); ++i) {
    out[2 * i] = kDigits[id[i] >> 4];
    out[2 * i + 1] = kDigits[id[i] & 15];
  }
  out[32] = '\0';
}

}  // namespace edgebert
