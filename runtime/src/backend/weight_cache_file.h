// SPDX-License-Identifier: Apache-2.0
// weight_cache_file.h: the weight cache file: a model's packed GEMM weights (PackedWeights) kept
// on disk, so that later loads map them read-only (clean, shared, reclaimable pages) instead of
// packing, and never read the model's GEMM weights.
//
// Layout (little-endian, format 2; docs/weight-cache.md):
//   header (256 bytes): magic "EBWCACHE", format version, file size, the model's content id, the
//     XNNPACK API generation and build identifier (where the library has one), a CPU signature
//     (architecture + the ISA features that change XNNPACK's kernel choice), entry count, table and
//     payload offsets, the model's GEMM-key count, a digest of the entry table's seeds and sizes,
//     page size, the runtime version that wrote it, the program layout digest (weight_cache.h:
//     every GEMM's kind, shape, quantization and packing), and a checksum of header + table;
//   entry table: {GEMM key, packing seed, offset, size, key fingerprint, CRC32C} per packed weight;
//   payload: page-aligned start, every entry 64-byte aligned.
// A load trusts nothing it reads: the path must be a regular file (opened without following a
// symbolic link, without blocking), every field is checked (offsets and sizes without overflow,
// alignment, every entry exactly the one the program's layout expects, byte count included) and,
// by default, every entry's CRC32C before its bytes are used. Anything that is not an edgebert
// cache is never replaced (kForeign). Written atomically: an unnamed O_TMPFILE file linked into
// place (or a PATH.tmp.<pid>.XXXXXX file where the file system has no O_TMPFILE), fsync, rename,
// fsync of the folder; temporary files of writers that died are removed by the next load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/packed_weights.h"
#include "content_hash.h"
#include "status.h"

namespace edgebert {
namespace weight_cache_file {

constexpr uint32_t kFormatVersion = 2;
constexpr size_t kHeaderBytes = 256;
constexpr size_t kEntryBytes = 40;
// Header field offsets (tests reach into them to make files that differ in one field only).
constexpr size_t kContentIdOffset = 24;
constexpr size_t kBuildIdSizeOffset = 44;
constexpr size_t kBuildIdOffset = 48;
constexpr size_t kBuildIdMax = 64;
constexpr size_t kCpuFeaturesOffset = 120;
constexpr size_t kFileBytesOffset = 16;
constexpr size_t kRuntimeVersionOffset = 176;  // NUL-padded text, kRuntimeVersionBytes
constexpr size_t kRuntimeVersionBytes = 32;
constexpr size_t kLayoutDigestOffset = 208;  // 16 bytes
constexpr size_t kChecksumOffset = 248;
// Field offsets inside one entry of the table (which starts at kHeaderBytes).
constexpr size_t kEntryOffsetField = 8, kEntrySizeField = 16, kEntryCrcField = 32;

// The runtime version recorded in (and required of) every file: the project version.
const char* runtime_version();

// What a file is keyed by besides the model: this process's XNNPACK build and CPU.
struct Identity {
  uint32_t xnn_api = 0;
  std::vector<uint8_t> build_id;  // empty when XNNPACK has no build identifier
  uint32_t cpu_arch = 0;          // 1 x86-64, 2 aarch64, 3 arm, 4 riscv64, 0 other
  uint64_t cpu_features = 0;      // bit set of ISA features (cpuinfo)
};
const Identity& identity();

// What the program needs from a file (weight_cache.h computes it from the program's GEMMs): one
// entry per GEMM key, in key order, with XNNPACK's seed and the exact bytes its packing takes, and
// a digest of everything that decides the packed bytes.
struct ExpectedEntry {
  uint32_t gemm = 0;
  uint32_t seed = 0;
  uint64_t fingerprint = 0;
  uint64_t size = 0;
};
struct Layout {
  ContentId digest{};
  std::vector<ExpectedEntry> entries;
};

// A file to protect: never read as a cache, never replaced (the model file). st_dev / st_ino.
struct FileId {
  bool known = false;
  uint64_t dev = 0, ino = 0;
};

enum class LoadOutcome {
  kLoaded,    // valid: its entries are in the store, nothing needs packing
  kMissing,   // no file at the path yet
  kMismatch,  // a valid file for another model, runtime, program layout, XNNPACK build or CPU
  kCorrupt,   // an edgebert cache (or an empty file) that is truncated, extended or damaged
  kForeign    // not ours to replace: not a regular file (FIFO, directory, device, symbolic
              // link), not a weight cache (wrong magic), or the model file itself
};
struct LoadResult {
  LoadOutcome outcome = LoadOutcome::kMissing;
  std::string message;  // why it was not loaded ("" when loaded)
};

struct LoadOptions {
  bool verify_payload = true;  // every entry's CRC32C, before its bytes are handed to XNNPACK
  FileId protect;              // the model's file, where known
};

// A cache file read ahead: started as soon as the path is known (before the model file is
// loaded), it opens the file, checks its header and table (as a plain load does), maps it and,
// with `verify` and a file this runtime, XNNPACK build and CPU could use, checks every entry's
// CRC32C (reading, and so mapping, every payload page) on background threads (one core is left to
// the caller), so that this work overlaps the model's loading and the program's layout probes.
// load() then compares the model, layout and entries with the program's, checks (or, without
// `verify`, maps) what is left on the caller's thread as well, and waits.
// Nothing is adopted, replaced or deleted before load(); destroying it stops the threads after
// their current entry and waits for them. Where no thread can be started, load() does it all.
class Prefetch {
 public:
  Prefetch(const std::string& path, bool verify, bool background = true);
  ~Prefetch();
  Prefetch(const Prefetch&) = delete;
  Prefetch& operator=(const Prefetch&) = delete;
  const std::string& path() const;
  bool verify() const;
  // Stops the background threads after their current entry and waits (load() is then no faster).
  void cancel();
  struct State;

 private:
  friend Status verify_payload(const std::string& path);
  friend LoadResult load(Prefetch& prefetch, const ContentId& content_id, const Layout& layout,
                         PackedWeights* store, const FileId& protect);
  std::unique_ptr<State> state_;
};

// Removes stale temporary files of `path` (PATH.tmp.<pid>.*, regular files whose writer process
// no longer exists); returns how many were removed. load() calls it first.
size_t remove_stale_temporaries(const std::string& path);

// Maps `path` and, when it is a valid cache of `content_id` for this runtime, XNNPACK build and
// CPU whose entries are exactly `layout`'s, adopts its entries into `store` (empty, no operator
// attached). Never an error: anything else is reported in the result, and the store is left
// untouched.
LoadResult load(const std::string& path, const ContentId& content_id, const Layout& layout, PackedWeights* store,
                const LoadOptions& options = LoadOptions());
// The same for a file read ahead (its path; its verify setting replaces LoadOptions'). Call once.
LoadResult load(Prefetch& prefetch, const ContentId& content_id, const Layout& layout, PackedWeights* store,
                const FileId& protect);

// Writes every entry of `store` (which must be `layout`'s) to `path` atomically. With `remap`, the
// store's heap copies are then replaced by the new file's read-only mapping (only possible while no
// operator is attached; otherwise they stay on the heap). Refuses (EB_ERROR_IO) to replace anything
// at the path that is not a regular file holding an edgebert cache (an empty file excepted) or is
// `protect`. A failure leaves no file behind and the store unchanged.
Status write(const std::string& path, const ContentId& content_id, const Layout& layout, PackedWeights* store,
             bool remap, const FileId& protect = FileId());

// Checks the file's structure and every entry's CRC32C (what load does with verify_payload, without
// a model). For tests and tools.
Status verify_payload(const std::string& path);

// The checksum of a file's header (checksum field taken as 0) and entry table, as stored at
// kChecksumOffset; 0 when the bytes are too short. For tests that change one header field.
uint64_t header_checksum(const uint8_t* file, size_t size);
// What a forger can do (these digests are not cryptographic): recomputes the table's seeds digest
// and the header checksum of `file` in place after fields were edited. False when the header or
// table does not fit. For tests and the fuzz target.
bool reseal(uint8_t* file, size_t size);

}  // namespace weight_cache_file
}  // namespace edgebert
