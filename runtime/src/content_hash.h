// SPDX-License-Identifier: Apache-2.0
// content_hash.h: a fast non-cryptographic 128-bit hash of a byte range (four 64-bit lanes of
// multiply-rotate rounds, as in xxHash64, with a 128-bit finalization). It names content: the
// model's content id (written by the converter, or computed from the whole file for models
// without one) and the weight cache file's checksums. Not a defence against deliberate tampering.
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

// CRC32C (Castagnoli, reflected, as in iSCSI / ext4) of [data, data + size), continuing from
// `crc` (0 for a new range; crc32c(b, crc32c(a)) is the CRC of a followed by b). Uses the CPU's
// instruction where it has one (SSE4.2 on x86-64, checked at run time; the ARMv8 CRC extension
// when compiled for it), three independent streams per block so the instruction's latency is
// hidden; elsewhere a portable table (slicing by 8).
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);
// Whether crc32c uses the CPU's instruction here (for messages and measurements).
bool crc32c_hardware();

// "0123...ef": 32 lowercase hex digits.
void content_id_hex(const ContentId& id, char out[33]);

}  // namespace edgebert
