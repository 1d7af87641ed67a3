// SPDX-License-Identifier: Apache-2.0
// weight_cache_file.cpp: reading, checking and atomically writing the weight cache file (format in
// weight_cache_file.h and docs/weight-cache.md).
#include "backend/weight_cache_file.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <cpuinfo.h>
#include <xnnpack.h>

#include "crc32c.h"

#ifndef EDGEBERT_VERSION_STRING
#define EDGEBERT_VERSION_STRING "unknown"
#endif

namespace edgebert {
namespace weight_cache_file {
namespace {

constexpr char kMagic[8] = {'E', 'B', 'W', 'C', 'A', 'C', 'H', 'E'};
constexpr size_t kPayloadAlignment = PackedWeights::kAlignment;
constexpr uint64_t kChecksumSeed = 0x6562776361636865ULL;  // "ebwcache"
constexpr uint64_t kSeedsSeed = 0x7365656473ULL;
constexpr uint32_t kPayloadCrc32c = 1;  // the payload check: CRC32C of every entry

// Header field offsets (see weight_cache_file.h for the ones tests use).
constexpr size_t kVersionOffset = 8, kHeaderBytesOffset = 12, kApiOffset = 40, kCpuArchOffset = 112,
                 kEntryCountOffset = 116, kTableOffset = 128, kPayloadOffset = 136, kPayloadBytesOffset = 144,
                 kSeedsDigestOffset = 152, kPayloadCheckOffset = 160, kGemmCountOffset = 168, kPageSizeOffset = 172;

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
std::string base_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

LoadResult fail(LoadOutcome o, const std::string& path, const std::string& why) {
  LoadResult r;
  r.outcome = o;
  r.message = path + ": " + why;
  return r;
}
const LoadResult kOk{LoadOutcome::kLoaded, ""};

// Opens what is at `path` for reading without following a symbolic link or blocking (a FIFO),
// and says whether it may be read as, and replaced by, a weight cache: kLoaded (a regular file
// with the magic), kMissing, kCorrupt (empty, or unopenable for another reason), kForeign (not
// ours: leave it alone). `f` is open only for kLoaded.
// `seen` (optional) gets the file's st_dev / st_ino once it is known to be a regular file.
LoadResult open_checked(const std::string& path, const FileId& protect, Fd* f, uint64_t* size, FileId* seen = nullptr) {
  f->fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (f->fd < 0) {
    const int e = errno;
    if (e == ENOENT) return fail(LoadOutcome::kMissing, path, "no weight cache file yet");
    if (e == ELOOP) return fail(LoadOutcome::kForeign, path, "a symbolic link, not a weight cache, not overwriting");
    if (e == EACCES || e == EPERM || e == ENXIO || e == EWOULDBLOCK)
      return fail(LoadOutcome::kForeign, path, std::string("cannot open (") + std::strerror(e) + "), not overwriting");
    return fail(LoadOutcome::kCorrupt, path, std::string("cannot open: ") + std::strerror(e));
  }
  struct stat st;
  if (fstat(f->fd, &st) != 0) return fail(LoadOutcome::kForeign, path, "cannot fstat, not overwriting");
  if (!S_ISREG(st.st_mode)) return fail(LoadOutcome::kForeign, path, "not a regular file, not a weight cache, not overwriting");
  if (seen) *seen = FileId{true, uint64_t(st.st_dev), uint64_t(st.st_ino)};
  if (protect.known && uint64_t(st.st_dev) == protect.dev && uint64_t(st.st_ino) == protect.ino)
    return fail(LoadOutcome::kForeign, path, "is the model file itself: not a weight cache, not overwriting");
  *size = static_cast<uint64_t>(st.st_size);
  if (*size == 0) return fail(LoadOutcome::kCorrupt, path, "truncated (an empty file)");
  uint8_t magic[sizeof kMagic];
  if (*size < sizeof kMagic || !read_exact(f->fd, magic, sizeof magic, 0) || std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    return fail(LoadOutcome::kForeign, path, "not a weight cache, not overwriting");
  return kOk;
}

// A file's structure, checked in full: header, table (checksum) and every entry inside the
// payload, aligned, in order, without overflow.
struct Parsed {
  uint8_t h[kHeaderBytes];
  std::vector<PackedWeights::Entry> entries;
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> crcs;
};

LoadResult parse(const std::string& path, int fd, uint64_t size, Parsed* p) {
  if (size < kHeaderBytes)
    return fail(LoadOutcome::kCorrupt, path, "truncated (" + std::to_string(size) + " bytes, no complete header)");
  uint8_t* h = p->h;
  if (!read_exact(fd, h, kHeaderBytes, 0)) return fail(LoadOutcome::kCorrupt, path, "cannot read the header");
  if (std::memcmp(h, kMagic, sizeof kMagic) != 0) return fail(LoadOutcome::kForeign, path, "not a weight cache, not overwriting");
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
  // table == kHeaderBytes <= size, so (size - table) cannot wrap; count is then small enough that
  // table + count * kEntryBytes cannot overflow
  if (count == 0 || table != kHeaderBytes || count > (size - table) / kEntryBytes || payload > size ||
      payload < table + count * kEntryBytes || page == 0 || page % kPayloadAlignment != 0 || payload % page != 0 ||
      get64(h + kPayloadBytesOffset) != size - payload || get32(h + kPayloadCheckOffset) != kPayloadCrc32c)
    return fail(LoadOutcome::kCorrupt, path, "corrupt header (entry count or offsets)");
  std::vector<uint8_t> t(static_cast<size_t>(count * kEntryBytes));
  if (!read_exact(fd, t.data(), t.size(), table)) return fail(LoadOutcome::kCorrupt, path, "cannot read the entry table");
  if (checksum_of(h, t.data(), t.size()) != get64(h + kChecksumOffset))
    return fail(LoadOutcome::kCorrupt, path, "header or entry table is corrupt (checksum mismatch)");

  p->entries.assign(static_cast<size_t>(count), PackedWeights::Entry{});
  p->offsets.assign(p->entries.size(), 0);
  p->crcs.assign(p->entries.size(), 0);
  uint64_t end = payload;
  for (size_t k = 0; k < p->entries.size(); ++k) {
    const uint8_t* e = t.data() + k * kEntryBytes;
    PackedWeights::Entry& entry = p->entries[k];
    entry.gemm = get32(e);
    entry.seed = get32(e + 4);
    const uint64_t offset = get64(e + kEntryOffsetField);
    entry.size = get64(e + kEntrySizeField);
    entry.fingerprint = get64(e + 24);
    p->crcs[k] = get32(e + kEntryCrcField);
    // offset <= size && entry.size <= size - offset: no sum that could wrap
    if (offset < end || offset > size || offset % kPayloadAlignment != 0 || entry.size == 0 ||
        entry.size > size - offset || get32(e + 36) != 0)
      return fail(LoadOutcome::kCorrupt, path, "entry " + std::to_string(k) + " lies outside the payload");
    p->offsets[k] = offset;
    end = offset + entry.size;
  }
  if (seeds_digest(p->entries) != get64(h + kSeedsDigestOffset))
    return fail(LoadOutcome::kCorrupt, path, "corrupt entry table (packing seeds digest)");
  return kOk;
}

// The whole file, mapped read-only. Its pages are not mapped here: load_payload maps them (one
// madvise per part instead of a page fault per 4 KiB in the payload check or in the first run).
LoadResult map_file(const std::string& path, int fd, uint64_t size, std::shared_ptr<Mapping>* out) {
  auto mapping = std::make_shared<Mapping>();
  void* base = mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) return fail(LoadOutcome::kCorrupt, path, std::string("mmap failed: ") + std::strerror(errno));
  mapping->base = base;
  mapping->size = static_cast<size_t>(size);
  *out = std::move(mapping);
  return kOk;
}

// Maps a range's pages by reading a byte of each, so that the first run does not fault them in.
// Measured on Linux 6.18 over the 88 MB of BERT-base's cache: 1.3 ms by reading (a fault maps a
// whole large folio of the page cache, or 16 pages around it), 5.0 ms with MAP_POPULATE, and
// MADV_POPULATE_READ as slow, also holding the memory-map lock against the loading thread's
// mmap and munmap calls.
void populate(const uint8_t* from, const uint8_t* to) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096);
  if (to <= from) return;
  const size_t n = static_cast<size_t>(to - from);
  unsigned sum = 0;
  for (size_t i = 0; i < n; i += page) sum += static_cast<const volatile uint8_t*>(from)[i];
  sum += static_cast<const volatile uint8_t*>(from)[n - 1];
  (void)sum;
}

// What this process's runtime, XNNPACK build and CPU require of a header (the model and its
// program are compared in load()).
LoadResult check_identity(const std::string& path, const uint8_t* h) {
  const Identity& me = identity();
  char version[kRuntimeVersionBytes + 1] = {};
  std::memcpy(version, h + kRuntimeVersionOffset, kRuntimeVersionBytes);
  if (std::strcmp(version, runtime_version()) != 0)
    return fail(LoadOutcome::kMismatch, path, std::string("made by edgebert ") + version + ", this is " + runtime_version());
  const uint32_t build_size = get32(h + kBuildIdSizeOffset);
  if (get32(h + kApiOffset) != me.xnn_api || build_size != me.build_id.size() ||
      std::memcmp(h + kBuildIdOffset, me.build_id.data(), me.build_id.size()) != 0)
    return fail(LoadOutcome::kMismatch, path, "made by another XNNPACK build");
  if (get32(h + kCpuArchOffset) != me.cpu_arch || get64(h + kCpuFeaturesOffset) != me.cpu_features)
    return fail(LoadOutcome::kMismatch, path, "made on a CPU with other instruction-set features");
  return kOk;
}

// The payload's pages are mapped, and with `verify` every entry's CRC32C checked, one entry at a
// time by whichever thread takes it next: up to kLoadThreads threads (one per core), fewer for a
// small payload (kLoadBytesPerThread each).
constexpr unsigned kLoadThreads = 4;
constexpr uint64_t kLoadBytesPerThread = 16u << 20;

}  // namespace

struct Prefetch::State {
  std::string path;
  bool verify = true;
  // the structure, set once by whoever runs structure() (then `structured` under `mutex`)
  Fd f;
  uint64_t size = 0;
  FileId seen;
  Parsed p;
  std::shared_ptr<Mapping> mapping;
  LoadResult structure_result;
  bool opened = false;  // a regular file with the magic
  std::mutex mutex;
  std::condition_variable cv;
  bool structured = false;
  // the entries
  std::vector<uint8_t> bad;
  std::atomic<size_t> next{0};
  std::atomic<bool> cancel{false};
  std::thread worker;  // the background thread (joinable only when one was started)

  void structure() {
    LoadResult r;
    try {
      r = open_checked(path, FileId(), &f, &size, &seen);
      opened = r.outcome == LoadOutcome::kLoaded;
      if (r.outcome == LoadOutcome::kLoaded) r = parse(path, f.fd, size, &p);
      if (r.outcome == LoadOutcome::kLoaded) r = map_file(path, f.fd, size, &mapping);
      if (r.outcome == LoadOutcome::kLoaded) bad.assign(p.entries.size(), 0);
    } catch (...) {  // std::bad_alloc: nothing is used from the file, which is rebuilt
      r = fail(LoadOutcome::kCorrupt, path, "out of memory while reading the file");
    }
    std::lock_guard<std::mutex> lock(mutex);
    structure_result = std::move(r);
    structured = true;
    cv.notify_all();
  }
  bool usable() const { return structure_result.outcome == LoadOutcome::kLoaded; }
  // After the entries were checked: "" when every CRC matched, else which entry did not.
  std::string bad_entry() const {
    for (size_t k = 0; k < bad.size(); ++k)
      if (bad[k])
        return "the packed weights of entry " + std::to_string(k) + " (GEMM " + std::to_string(p.entries[k].gemm) +
               ") are corrupt (CRC32C mismatch)";
    return std::string();
  }

  void work() {
    const auto* base = static_cast<const uint8_t*>(mapping->base);
    for (size_t k; !cancel.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < p.entries.size();) {
      const uint8_t* e = base + p.offsets[k];
      const size_t bytes = static_cast<size_t>(p.entries[k].size);
      if (verify)  // its reads map the pages
        bad[k] = crc32c(e, bytes) != p.crcs[k];
      else
        populate(e, e + bytes);
    }
  }
  // How many threads besides the calling one share the entries (std::thread cannot say how many
  // cores are free; `reserved` are taken elsewhere).
  unsigned extra_threads(unsigned reserved) const {
    uint64_t total = 0;
    for (const auto& e : p.entries) total += e.size;
    uint64_t parts = std::thread::hardware_concurrency();
    if (parts > kLoadThreads) parts = kLoadThreads;
    if (parts > total / kLoadBytesPerThread) parts = total / kLoadBytesPerThread;
    if (parts > p.entries.size()) parts = p.entries.size();
    return parts > 1 + reserved ? static_cast<unsigned>(parts - 1 - reserved) : 0;
  }
  // Works on the entries with `extra` more threads (where they can be started) until none is left.
  void share(unsigned extra) {
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < extra; ++i) {
      try {
        threads.emplace_back([this] { work(); });
      } catch (...) {
        break;  // the others take its share
      }
    }
    work();
    for (auto& t : threads) t.join();
  }
  void wait_structured() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [this] { return structured; });
  }
  void join() {
    if (worker.joinable()) worker.join();
  }
  void stop() {
    cancel = true;
    join();
  }
};

namespace {

std::string temp_prefix(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()) + "."; }

// The bytes of a cache file written to `fd` (header, table, payload), then fsync: assembled in
// 2 MiB windows, each written at its 2 MiB-aligned offset with one pwrite. Linux (ext4 since 6.16)
// then keeps the file in the page cache as 2 MiB folios, which a mapping that is 2 MiB-aligned (as
// mmap places one this large) maps one page-table entry per folio: mapping BERT-base's 88 MB cache
// took 47 page faults and 0.3-0.4 ms, against 450-980 faults and 2.6-7.3 ms for the same bytes
// written entry by entry (one thread reading a byte per page; docs/weight-cache.md).
bool write_contents(int fd, const std::vector<PackedWeights::Entry>& entries, const std::vector<uint64_t>& offsets,
                    uint64_t file_bytes, const uint8_t* table, size_t table_bytes, const uint8_t* header) {
  if (fchmod(fd, 0644) != 0 || ftruncate(fd, static_cast<off_t>(file_bytes)) != 0) return false;
  constexpr uint64_t kWindow = 2u << 20;
  std::unique_ptr<uint8_t[]> window(new (std::nothrow) uint8_t[file_bytes < kWindow ? file_bytes : kWindow]);
  if (!window) {
    errno = ENOMEM;  // for the caller's message
    return false;
  }
  // [offset, offset + size) of `data` into the window [w, w + n)
  auto place = [&](uint64_t w, uint64_t n, const uint8_t* data, uint64_t offset, uint64_t size) {
    const uint64_t from = offset > w ? offset : w, to = offset + size < w + n ? offset + size : w + n;
    if (from < to) std::memcpy(window.get() + (from - w), data + (from - offset), static_cast<size_t>(to - from));
  };
  for (uint64_t w = 0; w < file_bytes; w += kWindow) {
    const uint64_t n = file_bytes - w < kWindow ? file_bytes - w : kWindow;
    std::memset(window.get(), 0, static_cast<size_t>(n));  // the gaps stay zero
    place(w, n, header, 0, kHeaderBytes);
    place(w, n, table, kHeaderBytes, table_bytes);
    for (size_t k = 0; k < entries.size(); ++k) place(w, n, entries[k].data, offsets[k], entries[k].size);
    if (!write_exact(fd, window.get(), static_cast<size_t>(n), w)) return false;
  }
  return ::fsync(fd) == 0;
}

// Gives the unnamed O_TMPFILE file `fd` the name `*name` (a new PATH.tmp.<pid>.N) in its folder.
bool link_tmpfile(int fd, const std::string& path, std::string* name) {
  static std::atomic<unsigned> counter{0};
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  for (int attempt = 0; attempt < 64; ++attempt) {
    *name = temp_prefix(path) + "l" + std::to_string(counter.fetch_add(1));
    if (::linkat(fd, "", AT_FDCWD, name->c_str(), AT_EMPTY_PATH) == 0) return true;  // needs CAP_DAC_READ_SEARCH
    if (errno == EEXIST) continue;
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name->c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
    if (errno != EEXIST) return false;
  }
  return false;
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
  if (table != kHeaderBytes || count > (size - table) / kEntryBytes) return 0;
  return checksum_of(file, file + table, static_cast<size_t>(count * kEntryBytes));
}

bool reseal(uint8_t* file, size_t size) {
  if (size < kHeaderBytes) return false;
  const uint64_t count = get32(file + kEntryCountOffset);
  if (get64(file + kTableOffset) != kHeaderBytes || count > (size - kHeaderBytes) / kEntryBytes) return false;
  std::vector<PackedWeights::Entry> entries(static_cast<size_t>(count));
  for (size_t k = 0; k < entries.size(); ++k) {
    const uint8_t* e = file + kHeaderBytes + k * kEntryBytes;
    entries[k].gemm = get32(e);
    entries[k].seed = get32(e + 4);
    entries[k].size = get64(e + kEntrySizeField);
    entries[k].fingerprint = get64(e + 24);
  }
  put64(file + kSeedsDigestOffset, seeds_digest(entries));
  put64(file + kChecksumOffset, header_checksum(file, size));
  return true;
}

const char* runtime_version() { return EDGEBERT_VERSION_STRING; }

size_t remove_stale_temporaries(const std::string& path) {
  const std::string dir = dir_of(path), prefix = base_of(path) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  size_t removed = 0;
  const pid_t me = ::getpid();
  while (const dirent* e = ::readdir(d)) {
    const char* name = e->d_name;
    if (std::strncmp(name, prefix.c_str(), prefix.size()) != 0) continue;
    const char* digits = name + prefix.size();
    char* after = nullptr;
    errno = 0;
    const long pid = std::strtol(digits, &after, 10);
    if (errno != 0 || after == digits || *after != '.' || pid <= 0 || pid == me || pid > 0x7fffffffL) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to ask)
    struct stat st;
    if (::fstatat(::dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::unlinkat(::dirfd(d), name, 0) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

// Keeps the background thread off the core the loading thread is on. Linux places a new thread
// on its creator's core and either runs it first (the creator then waits, runnable) or leaves it
// waiting for the core; the two shared it until the balancer moved one, up to 4 ms later, beside
// an idle core (scheduler traces of warm starts on a 2-core VM: docs/weight-cache.md). Either
// thread alone acting came too late in one of the two cases, so both act: the creator notes its
// core before starting the thread (loading_core), sets the new thread's affinity at once where
// glibc can (keep_off_core), and the thread's first act is to move itself off that core
// (move_off_core) in case it ran first. Only when another allowed core exists; the thread ends
// with the load, so nothing else is pinned. (Failures leave the threads where they are.)
static int loading_core() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}
#if defined(__linux__)
// The allowed cores of `set` without `core`; false when that would leave none or changes nothing.
static bool without_core(cpu_set_t* set, int core) {
  if (core < 0 || core >= CPU_SETSIZE || !CPU_ISSET(core, set) || CPU_COUNT(set) < 2) return false;
  CPU_CLR(core, set);
  return true;
}
#endif
static void move_off_core(int core) {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && without_core(&set, core))  // 0: this thread
    sched_setaffinity(0, sizeof set, &set);
#else
  (void)core;
#endif
}
static void keep_off_core(std::thread& t, int core) {
#if defined(__linux__) && defined(__GLIBC__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(t.native_handle(), sizeof set, &set) == 0 && without_core(&set, core))
    pthread_setaffinity_np(t.native_handle(), sizeof set, &set);
#else
  (void)t;
  (void)core;
#endif
}

Prefetch::Prefetch(const std::string& path, bool verify, bool background) : state_(new State) {
  state_->path = path;
  state_->verify = verify;
  if (!background || !PackedWeights::supported()) return;
  try {
    const int core = loading_core();
    state_->worker = std::thread([s = state_.get(), core] {
      move_off_core(core);
      s->structure();  // then the payload's check, unless the file cannot be this process's
      if (s->verify && s->usable() && check_identity(s->path, s->p.h).outcome == LoadOutcome::kLoaded)
        s->share(s->extra_threads(1));  // one core is the loading thread's
    });
    keep_off_core(state_->worker, core);
  } catch (...) {  // no thread: load() does it all
  }
}

Prefetch::~Prefetch() { state_->stop(); }
void Prefetch::cancel() { state_->stop(); }
const std::string& Prefetch::path() const { return state_->path; }
bool Prefetch::verify() const { return state_->verify; }

LoadResult load(Prefetch& prefetch, const ContentId& content_id, const Layout& layout, PackedWeights* store,
                const FileId& protect) {
  Prefetch::State& s = *prefetch.state_;
  const std::string& path = s.path;
  if (!PackedWeights::supported()) return fail(LoadOutcome::kMismatch, path, PackedWeights::unsupported_reason());
  remove_stale_temporaries(path);
  const bool background = s.worker.joinable();
  if (background)
    s.wait_structured();
  else
    s.structure();
  auto stop_with = [&](LoadResult r) {
    s.stop();
    return r;
  };
  if (protect.known && s.seen.known && s.seen.dev == protect.dev && s.seen.ino == protect.ino)
    return stop_with(fail(LoadOutcome::kForeign, path, "is the model file itself: not a weight cache, not overwriting"));
  if (!s.usable()) return stop_with(s.structure_result);
  const Parsed& p = s.p;
  const uint8_t* h = p.h;

  // identity: the runtime, XNNPACK build and CPU, the model and its program layout
  if (const LoadResult r = check_identity(path, h); r.outcome != LoadOutcome::kLoaded) return stop_with(r);
  if (std::memcmp(h + kContentIdOffset, content_id.data(), content_id.size()) != 0)
    return stop_with(fail(LoadOutcome::kMismatch, path, "made for another model (content id differs)"));
  if (get32(h + kGemmCountOffset) != store->gemm_count())
    return stop_with(fail(LoadOutcome::kMismatch, path, "made for " + std::to_string(get32(h + kGemmCountOffset)) +
                                                            " GEMMs, the model has " + std::to_string(store->gemm_count())));
  if (std::memcmp(h + kLayoutDigestOffset, layout.digest.data(), layout.digest.size()) != 0)
    return stop_with(fail(LoadOutcome::kMismatch, path,
                          "made for another program layout (GEMM kinds, shapes, quantization or packing differ)"));
  // every entry exactly the packing its GEMM needs, byte count included
  if (p.entries.size() != layout.entries.size())
    return stop_with(fail(LoadOutcome::kCorrupt, path, std::to_string(p.entries.size()) + " entries, the program needs " +
                                                           std::to_string(layout.entries.size())));
  for (size_t k = 0; k < p.entries.size(); ++k) {
    const PackedWeights::Entry& e = p.entries[k];
    const ExpectedEntry& x = layout.entries[k];
    if (e.gemm != x.gemm || e.seed != x.seed || e.fingerprint != x.fingerprint || e.size != x.size)
      return stop_with(fail(LoadOutcome::kCorrupt, path,
                            "entry " + std::to_string(k) + " (GEMM " + std::to_string(e.gemm) + ", " +
                                std::to_string(e.size) + " bytes) is not the packing GEMM " + std::to_string(x.gemm) +
                                " needs (" + std::to_string(x.size) + " bytes)"));
  }

  // the payload: what the background threads have not checked yet, on this thread; without them
  // (or without a check: mapping the pages beside the loading thread slowed it down), on as many
  // threads as the payload and the cores call for
  const bool checking = background && s.verify;
  if (!checking) s.join();  // the structure is done: the thread ends
  s.share(checking ? 0 : s.extra_threads(0));
  s.join();  // all entries taken: waits for the last ones
  if (const std::string bad = s.bad_entry(); !bad.empty()) return fail(LoadOutcome::kCorrupt, path, bad);
  std::vector<PackedWeights::Entry> entries = p.entries;
  const auto* base = static_cast<const uint8_t*>(s.mapping->base);
  for (size_t k = 0; k < entries.size(); ++k) entries[k].data = base + p.offsets[k];
  const Status adopted = store->adopt(entries, s.mapping);
  if (!adopted) return fail(LoadOutcome::kCorrupt, path, adopted.message());
  return kOk;
}

LoadResult load(const std::string& path, const ContentId& content_id, const Layout& layout, PackedWeights* store,
                const LoadOptions& options) {
  Prefetch prefetch(path, options.verify_payload, false);
  return load(prefetch, content_id, layout, store, options.protect);
}

Status write(const std::string& path, const ContentId& content_id, const Layout& layout, PackedWeights* store,
             bool remap, const FileId& protect) {
  if (!PackedWeights::supported()) return Status(EB_ERROR_UNSUPPORTED, PackedWeights::unsupported_reason());
  const std::vector<PackedWeights::Entry> entries = store->entries();
  if (entries.empty()) return Status(EB_ERROR_BAD_STATE, path + ": nothing packed to write");
  bool matches = entries.size() == layout.entries.size();
  for (size_t k = 0; matches && k < entries.size(); ++k) {
    const ExpectedEntry& x = layout.entries[k];
    matches = entries[k].gemm == x.gemm && entries[k].seed == x.seed && entries[k].fingerprint == x.fingerprint &&
              entries[k].size == x.size;
  }
  if (!matches) return Status(EB_ERROR_BAD_STATE, path + ": the packed weights are not the program layout's");
  // never replace what is not ours (checked again just before the rename)
  auto replaceable = [&](std::string* why) {
    Fd existing;
    uint64_t ignored = 0;
    const LoadResult r = open_checked(path, protect, &existing, &ignored);
    if (r.outcome != LoadOutcome::kForeign) return true;
    *why = r.message;
    return false;
  };
  std::string why;
  if (!replaceable(&why)) return Status(EB_ERROR_IO, why);

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

  std::vector<uint8_t> t(static_cast<size_t>(table_bytes));
  for (size_t k = 0; k < entries.size(); ++k) {
    uint8_t* e = t.data() + k * kEntryBytes;
    put32(e, entries[k].gemm);
    put32(e + 4, entries[k].seed);
    put64(e + kEntryOffsetField, offsets[k]);
    put64(e + kEntrySizeField, entries[k].size);
    put64(e + 24, entries[k].fingerprint);
    put32(e + kEntryCrcField, crc32c(entries[k].data, static_cast<size_t>(entries[k].size)));
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
  put32(h + kPayloadCheckOffset, kPayloadCrc32c);
  put32(h + kGemmCountOffset, static_cast<uint32_t>(store->gemm_count()));
  put32(h + kPageSizeOffset, static_cast<uint32_t>(page));
  std::strncpy(reinterpret_cast<char*>(h + kRuntimeVersionOffset), runtime_version(), kRuntimeVersionBytes - 1);
  std::memcpy(h + kLayoutDigestOffset, layout.digest.data(), layout.digest.size());
  put64(h + kChecksumOffset, checksum_of(h, t.data(), t.size()));

  // An unnamed file (nothing is left if the process dies while writing), named only once complete;
  // where the file system has no O_TMPFILE, a PATH.tmp.<pid>.XXXXXX file (removed by a later load
  // if this process dies).
  Fd f;
  std::string name;
  bool written = false;
#ifdef O_TMPFILE
  f.fd = ::open(dir_of(path).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
  if (f.fd >= 0) {
    written = write_contents(f.fd, entries, offsets, file_bytes, t.data(), t.size(), h) && link_tmpfile(f.fd, path, &name);
    if (!written) {
      ::close(f.fd);
      f.fd = -1;
    }
  }
#endif
  auto give_up = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    if (!name.empty()) ::unlink(name.c_str());
    return Status(EB_ERROR_IO, path + ": " + what + ": " + reason);
  };
  if (!written) {
    std::string tmp = temp_prefix(path) + "XXXXXX";
    std::vector<char> chars(tmp.begin(), tmp.end());
    chars.push_back('\0');
    f.fd = mkstemp(chars.data());
    if (f.fd < 0) return Status(EB_ERROR_IO, path + ": cannot create the weight cache file: " + std::strerror(errno));
    name = chars.data();
    if (!write_contents(f.fd, entries, offsets, file_bytes, t.data(), t.size(), h)) return give_up("write failed");
  }

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
  if (!replaceable(&why)) {
    ::unlink(name.c_str());
    return Status(EB_ERROR_IO, why);
  }
  if (std::rename(name.c_str(), path.c_str()) != 0) return give_up("cannot rename the temporary file into place");
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
  Prefetch prefetch(path, true, false);
  Prefetch::State& s = *prefetch.state_;
  s.structure();
  if (s.usable()) {
    s.share(s.extra_threads(0));
    const std::string bad = s.bad_entry();
    return bad.empty() ? Status::ok() : Status(EB_ERROR_INVALID_MODEL, path + ": " + bad);
  }
  return Status(s.opened ? EB_ERROR_INVALID_MODEL : EB_ERROR_IO, s.structure_result.message);
}

}  // namespace weight_cache_file
}  // namespace edgebert
