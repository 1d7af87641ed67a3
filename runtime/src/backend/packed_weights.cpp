// SPDX-License-Identifier: Apache-2.0
// packed_weights.cpp: the per-model packed-weight store and its xnn_weights_cache_provider
// callbacks (see packed_weights.h). XNNPACK's create path, per operator: look_up(key) -> hit: the
// operator uses the returned offset; miss: reserve_space(n) -> XNNPACK packs into it ->
// look_up_or_insert(key, ptr, n) returns the offset. Operators turn the offset into an address
// with offset_to_addr at every reshape and check is_finalized at every setup.
#include "backend/packed_weights.h"

#include "page_alloc.h"


#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#if EDGEBERT_XNN_SHARED_WEIGHTS
#include <xnnpack.h>
#endif

namespace edgebert {

struct PackedWeights::Slot {
  std::atomic<const uint8_t*> data{nullptr};  // published last (release), read lock-free
  uint32_t seed = 0;
  uint64_t fingerprint = 0;
  uint64_t size = 0;
  void* heap = nullptr;  // owned bytes when packed by this process
};

struct PackedWeights::GemmProvider {
#if EDGEBERT_XNN_SHARED_WEIGHTS
  xnn_weights_cache_provider provider;  // zero-initialised: fields later XNNPACKs add stay 0
#endif
  PackedWeights* store = nullptr;
  size_t gemm = 0;
  // Space handed out by reserve_space and not yet inserted (creation of this key is serialized).
  void* pending = nullptr;
  size_t pending_size = 0;
  bool last_ok = true;
  bool probing = false;  // begin_probe .. end_probe
  bool probe_looked_up = false;
  PackedWeights::Probe probe;
};

namespace {
[[maybe_unused]] constexpr size_t kNotFound = SIZE_MAX;  // XNNPACK's XNN_CACHE_NOT_FOUND

// Packed weights get pages of their own (not malloc's heap), so that freeing them after the cache
// file replaced them really returns the memory; page-aligned, so also kAlignment-aligned. The pages
// are mapped in one call: XNNPACK writes every byte of a reservation right away, and one call
// costs less than a page fault per 4 KiB (BERT-base's start without a cache: about 400 -> 320 ms
// on a 2-core VM, docs/weight-cache.md); from 2 MiB on, transparent huge pages (page_alloc.h): a
// GEMM streams all its weights on every run.
[[maybe_unused]] void* allocate_packed(size_t n) { return allocate_pages(n); }
void free_packed(void* p, size_t n) { free_pages(p, n); }
}  // namespace

#if EDGEBERT_XNN_SHARED_WEIGHTS
struct PackedWeightsCallbacks {
  static PackedWeights::Slot* slots(PackedWeights::GemmProvider* g) {
    return &g->store->slots_[g->gemm * PackedWeights::kSlotsPerGemm];
  }
  static uint64_t fingerprint(const xnn_weights_cache_look_up_key* key) {
#if defined(EDGEBERT_XNN_CACHE_KEY_HAS_FINGERPRINT)
    return static_cast<uint64_t>(key->fingerprint_id);
#else
    (void)key;
    return 0;
#endif
  }
  static size_t find(PackedWeights::GemmProvider* g, const xnn_weights_cache_look_up_key* key) {
    PackedWeights::Slot* s = slots(g);
    for (size_t i = 0; i < PackedWeights::kSlotsPerGemm; ++i)
      if (s[i].data.load(std::memory_order_acquire) && s[i].seed == key->seed && s[i].fingerprint == fingerprint(key))
        return i;
    return kNotFound;
  }
  static size_t look_up(void* context, const xnn_weights_cache_look_up_key* key) {
    auto* g = static_cast<PackedWeights::GemmProvider*>(context);
    if (g->probing) {
      g->probe_looked_up = true;
      g->probe.seed = key->seed;
      g->probe.fingerprint = fingerprint(key);
      return kNotFound;
    }
    const size_t i = find(g, key);
    if (i != kNotFound) g->store->hits_.fetch_add(1);
    return i;
  }
  static void drop_pending(PackedWeights::GemmProvider* g) {
    free_packed(g->pending, g->pending_size);
    g->pending = nullptr;
    g->pending_size = 0;
  }
  static void* reserve_space(void* context, size_t n) {
    auto* g = static_cast<PackedWeights::GemmProvider*>(context);
    drop_pending(g);
    if (g->probing) {  // the size is all we wanted: the creation fails here, nothing is packed
      g->probe.size = n;
      g->probe.complete = g->probe_looked_up;
      g->last_ok = false;
      return nullptr;
    }
    void* p = allocate_packed(n);
    if (!p) {
      g->last_ok = false;
      return nullptr;
    }
    g->pending = p;
    g->pending_size = n;
    return p;
  }
  static size_t look_up_or_insert(void* context, const xnn_weights_cache_look_up_key* key, void* ptr, size_t size) {
    auto* g = static_cast<PackedWeights::GemmProvider*>(context);
    if (g->probing) {  // an XNNPACK that packed into its own memory: record, insert nothing
      g->probe.size = size;
      g->probe.complete = g->probe_looked_up;
      g->last_ok = false;
      return kNotFound;
    }
    const size_t found = find(g, key);
    if (found != kNotFound) {
      if (ptr == g->pending) drop_pending(g);
      return found;
    }
    void* bytes = ptr;
    if (ptr == nullptr || ptr != g->pending || size > g->pending_size) {  // not space we reserved: copy it
      bytes = ptr && size ? allocate_packed(size) : nullptr;
      if (!bytes) {
        g->last_ok = false;
        return kNotFound;
      }
      std::memcpy(bytes, ptr, size);
    } else {
      size = g->pending_size;  // the whole reservation is the entry (XNNPACK passes the same size)
      g->pending = nullptr;
      g->pending_size = 0;
    }
    PackedWeights::Slot* s = slots(g);
    for (size_t i = 0; i < PackedWeights::kSlotsPerGemm; ++i) {
      if (s[i].data.load(std::memory_order_acquire)) continue;
      s[i].seed = key->seed;
      s[i].fingerprint = fingerprint(key);
      s[i].size = size;
      s[i].heap = bytes;
      s[i].data.store(static_cast<const uint8_t*>(bytes), std::memory_order_release);
      g->store->heap_bytes_.fetch_add(size);
      g->store->entries_.fetch_add(1);
      g->store->packs_.fetch_add(1);
      return i;
    }
    free_packed(bytes, size);  // every slot of this key taken: XnnGemm::create sees last_ok == false
    g->last_ok = false;
    return kNotFound;
  }
  static bool is_finalized(void*) { return true; }  // inserts stay allowed; setup needs true
  static void* offset_to_addr(void* context, size_t offset) {
    auto* g = static_cast<PackedWeights::GemmProvider*>(context);
    if (offset >= PackedWeights::kSlotsPerGemm) return nullptr;
    return const_cast<uint8_t*>(slots(g)[offset].data.load(std::memory_order_acquire));
  }
  static xnn_status delete_cache(void*) { return xnn_status_success; }  // the store owns everything
};
#endif

const char* PackedWeights::unsupported_reason() {
  return supported() ? ""
                     : "this XNNPACK (2022 API) has no weights-cache provider: every session packs its own copy "
                       "of the weights and no weight cache file can be used";
}

Result<std::unique_ptr<PackedWeights>> PackedWeights::create(size_t gemm_count) {
  if (gemm_count == 0 || gemm_count > (SIZE_MAX / kSlotsPerGemm) / sizeof(Slot))
    return Status(EB_ERROR_INVALID_ARGUMENT, "packed weights: bad GEMM count " + std::to_string(gemm_count));
  std::unique_ptr<PackedWeights> s(new (std::nothrow) PackedWeights());
  if (!s) return Status(EB_ERROR_OUT_OF_MEMORY, "out of memory");
  s->gemm_count_ = gemm_count;
  s->slots_.reset(new (std::nothrow) Slot[gemm_count * kSlotsPerGemm]);
  s->providers_.reset(new (std::nothrow) GemmProvider[gemm_count]);
  s->mutexes_.reset(new (std::nothrow) std::mutex[gemm_count]);
  s->tags_.reset(new (std::nothrow) std::atomic<uint64_t>[gemm_count]);
  if (s->tags_)
    for (size_t i = 0; i < gemm_count; ++i) s->tags_[i].store(0);
  if (!s->slots_ || !s->providers_ || !s->mutexes_ || !s->tags_) return Status(EB_ERROR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < gemm_count; ++i) {
    GemmProvider& g = s->providers_[i];
    g.store = s.get();
    g.gemm = i;
#if EDGEBERT_XNN_SHARED_WEIGHTS
    std::memset(&g.provider, 0, sizeof g.provider);
    g.provider.context = &g;
    g.provider.look_up = PackedWeightsCallbacks::look_up;
    g.provider.reserve_space = PackedWeightsCallbacks::reserve_space;
    g.provider.look_up_or_insert = PackedWeightsCallbacks::look_up_or_insert;
    g.provider.is_finalized = PackedWeightsCallbacks::is_finalized;
    g.provider.offset_to_addr = PackedWeightsCallbacks::offset_to_addr;
    g.provider.delete_cache = PackedWeightsCallbacks::delete_cache;
#endif
  }
  return s;
}

PackedWeights::~PackedWeights() {
  release_heap();
  if (providers_)
    for (size_t i = 0; i < gemm_count_; ++i) free_packed(providers_[i].pending, providers_[i].pending_size);
}

void PackedWeights::release_heap() {
  if (!slots_) return;
  for (size_t i = 0; i < gemm_count_ * kSlotsPerGemm; ++i) {
    free_packed(slots_[i].heap, slots_[i].size);
    slots_[i].heap = nullptr;
  }
}

void* PackedWeights::provider(size_t gemm) {
#if EDGEBERT_XNN_SHARED_WEIGHTS
  if (gemm >= gemm_count_) return nullptr;
  providers_[gemm].last_ok = true;  // called under the key's creation mutex
  return &providers_[gemm].provider;
#else
  (void)gemm;
  return nullptr;
#endif
}

std::mutex* PackedWeights::creation_mutex(size_t gemm) { return gemm < gemm_count_ ? &mutexes_[gemm] : nullptr; }

bool PackedWeights::claim_key(size_t gemm, uint64_t tag) {
  if (gemm >= gemm_count_) return false;
  if (tag == 0) tag = 1;
  uint64_t expected = 0;
  return tags_[gemm].compare_exchange_strong(expected, tag) || expected == tag;
}

void PackedWeights::begin_probe(size_t gemm) {
  if (gemm >= gemm_count_) return;
  GemmProvider& g = providers_[gemm];
  g.probing = true;
  g.probe_looked_up = false;
  g.probe = Probe{};
}

PackedWeights::Probe PackedWeights::end_probe(size_t gemm) {
  if (gemm >= gemm_count_) return Probe{};
  GemmProvider& g = providers_[gemm];
  g.probing = false;
  return g.probe;
}

bool PackedWeights::last_creation_ok(size_t gemm) const { return gemm < gemm_count_ && providers_[gemm].last_ok; }

std::vector<PackedWeights::Entry> PackedWeights::entries() const {
  std::vector<Entry> out;
  for (size_t g = 0; g < gemm_count_; ++g)
    for (size_t i = 0; i < kSlotsPerGemm; ++i) {
      const Slot& s = slots_[g * kSlotsPerGemm + i];
      const uint8_t* d = s.data.load(std::memory_order_acquire);
      if (!d) continue;
      Entry e;
      e.gemm = static_cast<uint32_t>(g);
      e.seed = s.seed;
      e.fingerprint = s.fingerprint;
      e.size = s.size;
      e.data = d;
      out.push_back(e);
    }
  return out;
}

Status PackedWeights::adopt(const std::vector<Entry>& mapped, std::shared_ptr<const void> mapping) {
  if (users() != 0 || entry_count() != 0)
    return Status(EB_ERROR_BAD_STATE, "packed weights: mapped entries can only be adopted by an empty store");
  // validate everything before changing anything
  std::vector<size_t> used(gemm_count_, 0);
  for (size_t k = 0; k < mapped.size(); ++k) {
    const Entry& e = mapped[k];
    if (e.gemm >= gemm_count_)
      return Status(EB_ERROR_INVALID_MODEL, "entry " + std::to_string(k) + " names GEMM " + std::to_string(e.gemm) +
                                                " of a model with " + std::to_string(gemm_count_));
    if (!e.data || e.size == 0 || reinterpret_cast<uintptr_t>(e.data) % kAlignment != 0)
      return Status(EB_ERROR_INVALID_MODEL, "entry " + std::to_string(k) + " is empty or misaligned");
    if (++used[e.gemm] > kSlotsPerGemm)
      return Status(EB_ERROR_INVALID_MODEL, "GEMM " + std::to_string(e.gemm) + " has too many entries");
    for (size_t j = 0; j < k; ++j)
      if (mapped[j].gemm == e.gemm && mapped[j].seed == e.seed && mapped[j].fingerprint == e.fingerprint)
        return Status(EB_ERROR_INVALID_MODEL, "entry " + std::to_string(k) + " repeats GEMM " + std::to_string(e.gemm));
  }
  std::vector<size_t> next(gemm_count_, 0);
  size_t bytes = 0;
  for (const Entry& e : mapped) {
    Slot& s = slots_[e.gemm * kSlotsPerGemm + next[e.gemm]++];
    s.seed = e.seed;
    s.fingerprint = e.fingerprint;
    s.size = e.size;
    s.heap = nullptr;
    s.data.store(e.data, std::memory_order_release);
    bytes += e.size;
  }
  entries_.store(mapped.size());
  mapped_bytes_.fetch_add(bytes);
  if (mapping) mappings_.push_back(std::move(mapping));
  return Status::ok();
}

Status PackedWeights::replace_with_mapped(const std::vector<Entry>& mapped, std::shared_ptr<const void> mapping) {
  if (users() != 0)
    return Status(EB_ERROR_BAD_STATE, "packed weights: operators still use the packed copies in memory");
  const std::vector<Entry> mine = entries();
  if (mine.size() != mapped.size()) return Status(EB_ERROR_INVALID_ARGUMENT, "packed weights: entry lists differ");
  for (size_t k = 0; k < mine.size(); ++k)
    if (mine[k].gemm != mapped[k].gemm || mine[k].seed != mapped[k].seed || mine[k].size != mapped[k].size ||
        mine[k].fingerprint != mapped[k].fingerprint || !mapped[k].data ||
        reinterpret_cast<uintptr_t>(mapped[k].data) % kAlignment != 0)
      return Status(EB_ERROR_INVALID_ARGUMENT, "packed weights: entry " + std::to_string(k) + " differs");
  size_t k = 0;
  for (size_t g = 0; g < gemm_count_; ++g)
    for (size_t i = 0; i < kSlotsPerGemm; ++i) {
      Slot& s = slots_[g * kSlotsPerGemm + i];
      if (!s.data.load(std::memory_order_acquire)) continue;
      s.data.store(mapped[k++].data, std::memory_order_release);
      if (s.heap) {
        heap_bytes_.fetch_sub(s.size);
        mapped_bytes_.fetch_add(s.size);
        free_packed(s.heap, s.size);
        s.heap = nullptr;
      }
    }
  if (mapping) mappings_.push_back(std::move(mapping));
  return Status::ok();
}

}  // namespace edgebert
