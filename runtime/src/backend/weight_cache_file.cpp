// SPDX-License-Identifier: Apache-2.0
// weight_cache_file.cpp: reading, checking and atomically writing the weight cache file (format in
// weight_cache_file.h and docs/weight-cache.md).
#include "backend/weight_cache_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include <cpuinfo.h>
#include <xnnpack.h>

namespace edgebert {
namespace weight_cache_file {
namespace {

constexpr char kMagic[8] = {'E', 'B', 'W', 'C', 'A', 'C', 'H', 'E'};
constexpr size_t kPayloadAlignment = PackedWeights::kAlignment;
constexpr uint64_t kChecksumSeed = 0x6562776361636865ULL;  // "ebwcache"
constexpr uint64_t kSeedsSeed = 0x7365656473ULL;
constexpr uint64_t kPayloadSeed = 0x7061796c6f6164ULL;

// Header field offsets (see weight_cache_file.h for the ones tests use).
constexpr size_t kVersionOffset = 8, kHeaderBytesOffset = 12, kFileBytesOffset = 16, kApiOffset = 40,
                 kCpuArchOffset = 112, kEntryCountOffset = 116, kTableOffset = 128, kPayloadOffset = 136,
                 kPayloadBytesOffset = 144, kSeedsDigestOffset = 152, kPayloadHashOffset = 160,
                 kGemmCountOffset = 168, kPageSizeOffset = 172;

void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

uint64_t page_size() {
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<uint64_t>(p) : 4096;
}

// The bits XNNPACK's kernel selection (and so its packing layout) depends on.
uint64_t cpu_features(uint32_t* arch) {
  *arch = 0;
  uint64_t f = 0;
#if EDGEBERT_XNN_SHARED_WEIGHTS
  if (!cpuinfo_initialize()) return 0;
  int bit = 0;
  auto add = [&](bool has) { f |= uint64_t(has ? 1 : 0) << bit++; };
#if defined(__x86_64__) || defined(_M_X64)
  *arch = 1;
  add(cpuinfo_has_x86_sse2());
  add(cpuinfo_has_x86_ssse3());
  add(cpuinfo_has_x86_sse4_1());
  add(cpuinfo_has_x86_avx());
  add(cpuinfo_has_x86_f16c());
  add(cpuinfo_has_x86_fma3());
  add(cpuinfo_has_x86_avx2());
  add(cpuinfo_has_x86_avx512f());
  add(cpuinfo_has_x86_avx512vl());
  add(cpuinfo_has_x86_avx512bw());
  add(cpuinfo_has_x86_avx512dq());
  add(cpuinfo_has_x86_avx512vnni());
  add(cpuinfo_has_x86_avxvnni());
  add(cpuinfo_has_x86_avx512vbmi());
  add(cpuinfo_has_x86_avx512bf16());
  add(cpuinfo_has_x86_avx512fp16());
  add(cpuinfo_has_x86_avx_vnni_int8());
  add(cpuinfo_has_x86_amx_int8());
  add(cpuinfo_has_x86_avx10_1());
  add(cpuinfo_has_x86_avx10_2());
#elif defined(__aarch64__)
  *arch = 2;
  add(cpuinfo_has_arm_neon());
  add(cpuinfo_has_arm_neon_fp16_arith());
  add(cpuinfo_has_arm_neon_dot());
  add(cpuinfo_has_arm_i8mm());
  add(cpuinfo_has_arm_neon_bf16());
  add(cpuinfo_has_arm_sve());
  add(cpuinfo_has_arm_sve2());
  add(cpuinfo_has_arm_sme());
  add(cpuinfo_has_arm_sme2());
#elif defined(__arm__)
  *arch = 3;
  add(cpuinfo_has_arm_neon());
  add(cpuinfo_has_arm_neon_fp16());
  add(cpuinfo_has_arm_neon_fma());
  add(cpuinfo_has_arm_neon_v8());
  add(cpuinfo_has_arm_neon_dot());
  add(cpuinfo_has_arm_neon_fp16_arith());
#elif defined(__riscv)
  *arch = 4;
  add(cpuinfo_has_riscv_v());
#endif
  (void)add;
#endif
  return f;
}

// Bytes of one mapped file, released with the last reference (the store keeps one).
struct Mapping {
  void* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base) munmap(base, size);
  }
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool read_exact(int fd, uint8_t* p, size_t n, uint64_t offset) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return true;
}

bool write_exact(int fd, const uint8_t* p, size_t n, uint64_t offset) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
  return true;
}

uint64_t checksum_of(const uint8_t* header, const uint8_t* table, size_t table_bytes) {
  uint8_t h[kHeaderBytes];
  std::memcpy(h, header, kHeaderBytes);
  put64(h + kChecksumOffset, 0);
  ContentHasher hasher(kChecksumSeed);
  hasher.update(h, kHeaderBytes);
  hasher.update(table, table_bytes);
  const ContentId id = hasher.finish();
  return get64(id.data());
}

uint64_t seeds_digest(const std::vector<PackedWeights::Entry>& entries) {
  ContentHasher h(kSeedsSeed);
  for (const auto& e : entries) {
    uint8_t b[24];
    put32(b, e.gemm);
    put32(b + 4, e.seed);
    put64(b + 8, e.size);
    put64(b + 16, e.fingerprint);
    h.update(b, sizeof b);
  }
  return get64(h.finish().data());
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

LoadResult fail(LoadOutcome o, const std::string& path, const std::string& why) {
  LoadResult r;
  r.outcome = o;
  r.message = path + ": " + why;
  return r;
}

}  // namespace

const Identity& identity() {
  static Identity id;
  static std::once_flag once;
  std::call_once(once, [] {
    id.xnn_api = EDGEBERT_XNN_API;
#if defined(EDGEBERT_XNN_HAS_BUILD_IDENTIFIER) && EDGEBERT_XNN_SHARED_WEIGHTS
    const auto* data = static_cast<const uint8_t*>(xnn_experimental_get_build_identifier_data());
    size_t n = xnn_experimental_get_build_identifier_size();
    if (n > kBuildIdMax) n = kBuildIdMax;  // kept whole in every build we know (32 bytes)
    if (data) id.build_id.assign(data, data + n);
#endif
    id.cpu_features = cpu_features(&id.cpu_arch);
  });
  return id;
}

uint64_t header_checksum(const uint8_t* file, size_t size) {
  if (size < kHeaderBytes) return 0;
  const uint64_t table = get64(file + kTableOffset);
  const uint64_t count = get32(file + kEntryCountOffset);
  if (table != kHeaderBytes || table + count * kEntryBytes > size) return 0;
  return checksum_of(file, file + table, static_cast<size_t>(count * kEntryBytes));
}

LoadResult load(const std::string& path, const ContentId& content_id, PackedWeights* store) {
  if (!PackedWeights::supported()) return fail(LoadOutcome::kMismatch, path, PackedWeights::unsupported_reason());
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) {
    if (errno == ENOENT) return fail(LoadOutcome::kMissing, path, "no weight cache file yet");
    return fail(LoadOutcome::kCorrupt, path, std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat st;
  if (fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return fail(LoadOutcome::kCorrupt, path, "not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kHeaderBytes)
    return fail(LoadOutcome::kCorrupt, path, "truncated (" + std::to_string(size) + " bytes, no complete header)");
  uint8_t h[kHeaderBytes];
  if (!read_exact(f.fd, h, kHeaderBytes, 0)) return fail(LoadOutcome::kCorrupt, path, "cannot read the header");
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0) return fail(LoadOutcome::kCorrupt, path, "not an edgebert weight cache file");
  if (get32(h + kVersionOffset) != kFormatVersion)
    return fail(LoadOutcome::kMismatch, path, "format version " + std::to_string(get32(h + kVersionOffset)) +
                                                  ", this runtime writes " + std::to_string(kFormatVersion));
  if (get32(h + kHeaderBytesOffset) != kHeaderBytes) return fail(LoadOutcome::kCorrupt, path, "corrupt header (size)");
  const uint64_t file_bytes = get64(h + kFileBytesOffset);
  if (file_bytes != size)
    return fail(LoadOutcome::kCorrupt, path, "truncated or extended: " + std::to_string(size) + " bytes, header says " +
                                                 std::to_string(file_bytes));
  const uint64_t count = get32(h + kEntryCountOffset);
  const uint64_t table = get64(h + kTableOffset);
  const uint64_t payload = get64(h + kPayloadOffset);
  const uint64_t page = get32(h + kPageSizeOffset);
  if (count == 0 || count > store->gemm_count() * PackedWeights::kSlotsPerGemm || table != kHeaderBytes ||
      payload < table + count * kEntryBytes || payload > size || page == 0 || page % kPayloadAlignment != 0 ||
      payload % page != 0 || get64(h + kPayloadBytesOffset) != size - payload)
    return fail(LoadOutcome::kCorrupt, path, "corrupt header (entry count or offsets)");
  std::vector<uint8_t> t(static_cast<size_t>(count * kEntryBytes));
  if (!read_exact(f.fd, t.data(), t.size(), table)) return fail(LoadOutcome::kCorrupt, path, "cannot read the entry table");
  if (checksum_of(h, t.data(), t.size()) != get64(h + kChecksumOffset))
    return fail(LoadOutcome::kCorrupt, path, "header or entry table is corrupt (checksum mismatch)");

  // identity
  const Identity& me = identity();
  if (std::memcmp(h + kContentIdOffset, content_id.data(), content_id.size()) != 0)
    return fail(LoadOutcome::kMismatch, path, "made for another model (content id differs)");
  const uint32_t build_size = get32(h + kBuildIdSizeOffset);
  if (get32(h + kApiOffset) != me.xnn_api || build_size != me.build_id.size() ||
      std::memcmp(h + kBuildIdOffset, me.build_id.data(), me.build_id.size()) != 0)
    return fail(LoadOutcome::kMismatch, path, "made by another XNNPACK build");
  if (get32(h + kCpuArchOffset) != me.cpu_arch || get64(h + kCpuFeaturesOffset) != me.cpu_features)
    return fail(LoadOutcome::kMismatch, path, "made on a CPU with other instruction-set features");
  if (get32(h + kGemmCountOffset) != store->gemm_count())
    return fail(LoadOutcome::kMismatch, path, "made for " + std::to_string(get32(h + kGemmCountOffset)) + " GEMMs, the model has " +
                                                  std::to_string(store->gemm_count()));

  // entries: inside the payload, aligned, in order, not overlapping
  std::vector<PackedWeights::Entry> entries(static_cast<size_t>(count));
  std::vector<uint64_t> offsets(entries.size());
  uint64_t end = payload;
  for (size_t k = 0; k < entries.size(); ++k) {
    const uint8_t* e = t.data() + k * kEntryBytes;
    entries[k].gemm = get32(e);
    entries[k].seed = get32(e + 4);
    offsets[k] = get64(e + 8);
    entries[k].size = get64(e + 16);
    entries[k].fingerprint = get64(e + 24);
    if (offsets[k] < end || offsets[k] % kPayloadAlignment != 0 || entries[k].size == 0 ||
        entries[k].size > size - offsets[k])
      return fail(LoadOutcome::kCorrupt, path, "entry " + std::to_string(k) + " lies outside the payload");
    end = offsets[k] + entries[k].size;
  }
  if (seeds_digest(entries) != get64(h + kSeedsDigestOffset))
    return fail(LoadOutcome::kCorrupt, path, "corrupt entry table (packing seeds digest)");

  auto mapping = std::make_shared<Mapping>();
  void* base = mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (base == MAP_FAILED) return fail(LoadOutcome::kCorrupt, path, std::string("mmap failed: ") + std::strerror(errno));
  mapping->base = base;
  mapping->size = static_cast<size_t>(size);
  for (size_t k = 0; k < entries.size(); ++k) entries[k].data = static_cast<const uint8_t*>(base) + offsets[k];
  const Status s = store->adopt(entries, mapping);
  if (!s) return fail(LoadOutcome::kCorrupt, path, s.message());
  return LoadResult{LoadOutcome::kLoaded, ""};
}

Status write(const std::string& path, const ContentId& content_id, PackedWeights* store, bool remap) {
  if (!PackedWeights::supported()) return Status(EB_ERROR_UNSUPPORTED, PackedWeights::unsupported_reason());
  const std::vector<PackedWeights::Entry> entries = store->entries();
  if (entries.empty()) return Status(EB_ERROR_BAD_STATE, path + ": nothing packed to write");
  const uint64_t page = page_size();
  const uint64_t table_bytes = entries.size() * kEntryBytes;
  const uint64_t payload = round_up(kHeaderBytes + table_bytes, page);
  std::vector<uint64_t> offsets(entries.size());
  uint64_t end = payload;
  for (size_t k = 0; k < entries.size(); ++k) {
    offsets[k] = round_up(end, kPayloadAlignment);
    end = offsets[k] + entries[k].size;
  }
  const uint64_t file_bytes = round_up(end, kPayloadAlignment);

  std::string tmp = path + ".tmp.XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  Fd f;
  f.fd = mkstemp(name.data());
  if (f.fd < 0) return Status(EB_ERROR_IO, path + ": cannot create the weight cache file: " + std::strerror(errno));
  auto give_up = [&](const std::string& what) {
    const std::string why = std::strerror(errno);
    ::unlink(name.data());
    return Status(EB_ERROR_IO, path + ": " + what + ": " + why);
  };
  if (fchmod(f.fd, 0644) != 0) return give_up("cannot set permissions");
  if (ftruncate(f.fd, static_cast<off_t>(file_bytes)) != 0) return give_up("cannot size the file");

  // payload first (its hash goes into the header); the gaps stay zero (ftruncate)
  ContentHasher payload_hash(kPayloadSeed);
  static const uint8_t kZeros[kPayloadAlignment] = {};
  uint64_t at = payload;
  for (size_t k = 0; k < entries.size(); ++k) {
    payload_hash.update(kZeros, static_cast<size_t>(offsets[k] - at));
    payload_hash.update(entries[k].data, static_cast<size_t>(entries[k].size));
    if (!write_exact(f.fd, entries[k].data, static_cast<size_t>(entries[k].size), offsets[k]))
      return give_up("write failed");
    at = offsets[k] + entries[k].size;
  }
  payload_hash.update(kZeros, static_cast<size_t>(file_bytes - at));

  std::vector<uint8_t> t(static_cast<size_t>(table_bytes));
  for (size_t k = 0; k < entries.size(); ++k) {
    uint8_t* e = t.data() + k * kEntryBytes;
    put32(e, entries[k].gemm);
    put32(e + 4, entries[k].seed);
    put64(e + 8, offsets[k]);
    put64(e + 16, entries[k].size);
    put64(e + 24, entries[k].fingerprint);
  }
  const Identity& me = identity();
  uint8_t h[kHeaderBytes] = {};
  std::memcpy(h, kMagic, sizeof kMagic);
  put32(h + kVersionOffset, kFormatVersion);
  put32(h + kHeaderBytesOffset, kHeaderBytes);
  put64(h + kFileBytesOffset, file_bytes);
  std::memcpy(h + kContentIdOffset, content_id.data(), content_id.size());
  put32(h + kApiOffset, me.xnn_api);
  put32(h + kBuildIdSizeOffset, static_cast<uint32_t>(me.build_id.size()));
  if (!me.build_id.empty()) std::memcpy(h + kBuildIdOffset, me.build_id.data(), me.build_id.size());
  put32(h + kCpuArchOffset, me.cpu_arch);
  put32(h + kEntryCountOffset, static_cast<uint32_t>(entries.size()));
  put64(h + kCpuFeaturesOffset, me.cpu_features);
  put64(h + kTableOffset, kHeaderBytes);
  put64(h + kPayloadOffset, payload);
  put64(h + kPayloadBytesOffset, file_bytes - payload);
  put64(h + kSeedsDigestOffset, seeds_digest(entries));
  put64(h + kPayloadHashOffset, get64(payload_hash.finish().data()));
  put32(h + kGemmCountOffset, static_cast<uint32_t>(store->gemm_count()));
  put32(h + kPageSizeOffset, static_cast<uint32_t>(page));
  put64(h + kChecksumOffset, checksum_of(h, t.data(), t.size()));
  if (!write_exact(f.fd, t.data(), t.size(), kHeaderBytes) || !write_exact(f.fd, h, kHeaderBytes, 0))
    return give_up("write failed");
  if (::fsync(f.fd) != 0) return give_up("fsync failed");

  // The mapping of exactly the bytes written (another process may rename its own copy over ours).
  std::shared_ptr<Mapping> mapping;
  if (remap && store->users() == 0) {
    void* base = mmap(nullptr, static_cast<size_t>(file_bytes), PROT_READ, MAP_PRIVATE, f.fd, 0);
    if (base != MAP_FAILED) {
      mapping = std::make_shared<Mapping>();
      mapping->base = base;
      mapping->size = static_cast<size_t>(file_bytes);
    }
  }
  if (std::rename(name.data(), path.c_str()) != 0) return give_up("cannot rename the temporary file into place");
  {
    Fd dir;  // make the rename itself durable (best effort)
    dir.fd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir.fd >= 0) (void)::fsync(dir.fd);
  }
  if (mapping) {
    std::vector<PackedWeights::Entry> mapped = entries;
    for (size_t k = 0; k < mapped.size(); ++k) mapped[k].data = static_cast<const uint8_t*>(mapping->base) + offsets[k];
    (void)store->replace_with_mapped(mapped, mapping);  // on failure the heap copies simply stay
  }
  return Status::ok();
}

Status verify_payload(const std::string& path) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) return Status(EB_ERROR_IO, path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(f.fd, &st) != 0 || st.st_size < static_cast<off_t>(kHeaderBytes))
    return Status(EB_ERROR_INVALID_MODEL, path + ": truncated");
  uint8_t h[kHeaderBytes];
  if (!read_exact(f.fd, h, kHeaderBytes, 0)) return Status(EB_ERROR_IO, path + ": cannot read the header");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t payload = get64(h + kPayloadOffset);
  if (get64(h + kFileBytesOffset) != size || payload > size) return Status(EB_ERROR_INVALID_MODEL, path + ": truncated");
  void* base = mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (base == MAP_FAILED) return Status(EB_ERROR_IO, path + ": mmap failed: " + std::strerror(errno));
  const ContentId id =
      content_hash128(static_cast<const uint8_t*>(base) + payload, static_cast<size_t>(size - payload), kPayloadSeed);
  munmap(base, static_cast<size_t>(size));
  if (get64(id.data()) != get64(h + kPayloadHashOffset))
    return Status(EB_ERROR_INVALID_MODEL, path + ": packed weights are corrupt (payload hash mismatch)");
  return Status::ok();
}

}  // namespace weight_cache_file
}  // namespace edgebert
