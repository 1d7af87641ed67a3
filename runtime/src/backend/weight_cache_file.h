// SPDX-License-Identifier: Apache-2.0
// weight_cache_file.h: the weight cache file: a model's packed GEMM weights (PackedWeights) kept
// on disk, so that later loads map them read-only (clean, shared, reclaimable pages) instead of
// packing, and never read the model's GEMM weights.
//
// Layout (little-endian; docs/weight-cache.md):
//   header (256 bytes): magic "EBWCACHE", format version, file size, the model's content id, the
//     XNNPACK API generation and build identifier (where the library has one), a CPU signature
//     (architecture + the ISA features that change XNNPACK's kernel choice), entry count, table and
//     payload offsets, the model's GEMM-key count, a digest of every entry's packing seed, a hash of
//     the payload, and a checksum of header + table;
//   entry table: {GEMM key, packing seed, offset, size, key fingerprint} per packed weight;
//   payload: page-aligned start, every entry 64-byte aligned.
// At load the header and table are checked in full (size, magic, version, checksum, identity,
// bounds); the payload is not hashed (docs/weight-cache.md says why; verify_payload() can).
// Written atomically: a unique temporary file in the same folder, fsync, rename, fsync of the
// folder; two processes writing the same path at once both succeed (the last rename wins, and
// both files are identical).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/packed_weights.h"
#include "content_hash.h"
#include "status.h"

namespace edgebert {
namespace weight_cache_file {

constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 256;
constexpr size_t kEntryBytes = 32;
// Header field offsets (tests reach into them to make files that differ in one field only).
constexpr size_t kContentIdOffset = 24;
constexpr size_t kBuildIdSizeOffset = 44;
constexpr size_t kBuildIdOffset = 48;
constexpr size_t kBuildIdMax = 64;
constexpr size_t kCpuFeaturesOffset = 120;
constexpr size_t kChecksumOffset = 248;

// What a file is keyed by besides the model: this process's XNNPACK build and CPU.
struct Identity {
  uint32_t xnn_api = 0;
  std::vector<uint8_t> build_id;  // empty when XNNPACK has no build identifier
  uint32_t cpu_arch = 0;          // 1 x86-64, 2 aarch64, 3 arm, 4 riscv64, 0 other
  uint64_t cpu_features = 0;      // bit set of ISA features (cpuinfo)
};
const Identity& identity();

enum class LoadOutcome {
  kLoaded,    // valid: its entries are in the store, nothing needs packing
  kMissing,   // no file at the path yet
  kMismatch,  // a valid file for another model, XNNPACK build, CPU or GEMM layout
  kCorrupt    // truncated, extended, not a cache file, bad checksum or bounds, unreadable
};
struct LoadResult {
  LoadOutcome outcome = LoadOutcome::kMissing;
  std::string message;  // why it was not loaded ("" when loaded)
};

// Maps `path` and, when it is a valid cache of `content_id` for this XNNPACK build and CPU with
// the store's GEMM-key count, adopts its entries into `store` (empty, no operator attached). Never
// an error: anything else is reported in the result, and the store is left untouched.
LoadResult load(const std::string& path, const ContentId& content_id, PackedWeights* store);

// Writes every entry of `store` to `path` atomically. With `remap`, the store's heap copies are
// then replaced by the new file's read-only mapping (only possible while no operator is attached;
// otherwise they stay on the heap). A failure leaves no file behind and the store unchanged.
Status write(const std::string& path, const ContentId& content_id, PackedWeights* store, bool remap);

// Hashes the whole payload and compares it with the header's payload hash (not done at load).
Status verify_payload(const std::string& path);

// The checksum of a file's header (checksum field taken as 0) and entry table, as stored at
// kChecksumOffset; 0 when the bytes are too short. For tests that change one header field.
uint64_t header_checksum(const uint8_t* file, size_t size);

}  // namespace weight_cache_file
}  // namespace edgebert
