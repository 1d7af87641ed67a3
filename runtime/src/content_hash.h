// SPDX-License-Identifier: Apache-2.0
// content_hash.h: a fast non-cryptographic 128-bit hash of a byte range (four 64-bit lanes of
// multiply-rotate rounds, as in xxHash64, with a 128-bit finalization). It names content: the
// model's content id (written by the converter, or computed from the whole file for models
// without one) and the weight cache file's header and layout digests (its payload checksums are
// CRC32C: crc32c.h). Not a defence against deliberate tampering.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace edgebert {

using ContentId = std::array<uint8_t, 16>;

// 128 bits of hash of [data, data + size) (little-endian byte order of the two 64-bit halves).
ContentId content_hash128(const void* data, size_t size, uint64_t seed = 0);
// The first 64 bits of content_hash128.
uint64_t content_hash64(const void* data, size_t size, uint64_t seed = 0);

// Incremental form (same result as one call over the concatenation of every update).
class ContentHasher {
 public:
  explicit ContentHasher(uint64_t seed = 0);
  void update(const void* data, size_t size);
  ContentId finish() const;

 private:
  void consume_block(const uint8_t* p);
  uint64_t lane_[4];
  uint8_t tail_[32];
  size_t tail_size_ = 0;
  uint64_t total_ = 0;
  uint64_t seed_;
};

// "0123...ef": 32 lowercase hex digits.
void content_id_hex(const ContentId& id, char out[33]);

}  // namespace edgebert
