// SPDX-License-Identifier: Apache-2.0
// content_hash.cpp: the 128-bit content hash (see content_hash.h). 32-byte blocks feed four lanes
// (v = rotl(v + w * P2, 31) * P1); the lanes, the length and the seed are then mixed into two
// 64-bit halves with different constants. Speed is what matters here (the runtime hashes a whole
// model file when it has no content id): about one multiply per 8 bytes.
#include "content_hash.h"

#include <cstring>

#if defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#endif

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

// ---- CRC32C -------------------------------------------------------------------------------------
namespace {

constexpr uint32_t kCrcPoly = 0x82F63B78u;  // Castagnoli, reflected

struct CrcTables {
  uint32_t t[8][256];
  CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ kCrcPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};
const CrcTables& crc_tables() {
  static const CrcTables t;
  return t;
}

// The raw register update (no pre/post inversion), portable: slicing by 8.
uint32_t crc_raw_portable(uint32_t c, const uint8_t* p, size_t n) {
  const CrcTables& T = crc_tables();
  for (; n >= 8; p += 8, n -= 8) {
    const uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    c = T.t[7][lo & 0xff] ^ T.t[6][(lo >> 8) & 0xff] ^ T.t[5][(lo >> 16) & 0xff] ^ T.t[4][lo >> 24] ^ T.t[3][p[4]] ^
        T.t[2][p[5]] ^ T.t[1][p[6]] ^ T.t[0][p[7]];
  }
  for (; n > 0; --n) c = (c >> 8) ^ T.t[0][(c ^ *p++) & 0xff];
  return c;
}

#if defined(__x86_64__) || (defined(__aarch64__) && defined(__ARM_FEATURE_CRC32))
// a * b modulo the polynomial (reflected: bit 31 is x^0).
uint32_t crc_mul(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) p ^= b;
    b = b & 1 ? (b >> 1) ^ kCrcPoly : b >> 1;
  }
  return p;
}
// x^(8 n) modulo the polynomial: what shifting a register over n zero bytes multiplies it by.
uint32_t crc_shift_bytes(uint64_t n) {
  uint32_t result = 1u << 31, square = 1u << 23;  // x^0, x^8
  for (; n != 0; n >>= 1) {
    if (n & 1) result = crc_mul(result, square);
    square = crc_mul(square, square);
  }
  return result;
}

// Three streams of kLane bytes per block; their registers are joined by multiplication with
// x^(8 kLane) and x^(16 kLane), through tables: the product is linear in the register, so it is
// the XOR of one entry per register byte. 16 KiB lanes: 4 KiB ones checked 88 MB of mapped page
// cache at 11.5 GB/s, 16 KiB ones at 15.8 (on an AVX2 EPYC; each lane restarts the hardware
// prefetcher, which stops at page boundaries).
constexpr size_t kLane = 16384;
struct ShiftTable {
  uint32_t t[4][256];
  explicit ShiftTable(uint32_t factor) {
    for (uint32_t k = 0; k < 4; ++k)
      for (uint32_t v = 0; v < 256; ++v) t[k][v] = crc_mul(v << (8 * k), factor);
  }
  uint32_t operator()(uint32_t c) const {
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
  }
};
struct LaneShifts {
  ShiftTable one{crc_shift_bytes(kLane)}, two{crc_shift_bytes(2 * kLane)};
};
const LaneShifts& lane_shifts() {
  static const LaneShifts s;
  return s;
}

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
#endif

#if defined(__x86_64__)
#define EB_CRC_TARGET __attribute__((target("sse4.2")))
#define EB_CRC64(c, v) static_cast<uint32_t>(__builtin_ia32_crc32di((c), (v)))
#define EB_CRC8(c, v) __builtin_ia32_crc32qi((c), (v))
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#define EB_CRC_TARGET
#define EB_CRC64(c, v) __crc32cd((c), (v))
#define EB_CRC8(c, v) __crc32cb((c), (v))
#endif

#ifdef EB_CRC_TARGET
EB_CRC_TARGET uint32_t crc_raw_hardware(uint32_t c, const uint8_t* p, size_t n) {
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --n) c = EB_CRC8(c, *p++);
  const LaneShifts& s = lane_shifts();
  for (; n >= 3 * kLane; p += 3 * kLane, n -= 3 * kLane) {
    uint32_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < kLane; i += 8) {
      c = EB_CRC64(c, load64(p + i));
      c1 = EB_CRC64(c1, load64(p + kLane + i));
      c2 = EB_CRC64(c2, load64(p + 2 * kLane + i));
    }
    c = s.two(c) ^ s.one(c1) ^ c2;
  }
  for (; n >= 8; p += 8, n -= 8) c = EB_CRC64(c, load64(p));
  for (; n > 0; --n) c = EB_CRC8(c, *p++);
  return c;
}
#endif

bool cpu_has_crc32c() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
#elif defined(EB_CRC_TARGET)
  return true;  // compiled for a CPU with the CRC extension
#else
  return false;
#endif
}

}  // namespace

bool crc32c_hardware() { return cpu_has_crc32c(); }

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
#ifdef EB_CRC_TARGET
  if (cpu_has_crc32c()) return ~crc_raw_hardware(c, p, size);
#endif
  return ~crc_raw_portable(c, p, size);
}

}  // namespace edgebert
