// SPDX-License-Identifier: Apache-2.0
// packed_weights.h: one model's packed GEMM weights, shared by every XNNPACK operator made for the
// model (every session's), through our own `struct xnn_weights_cache_provider` (XNNPACK 2024+).
//
// Entries are keyed by which GEMM of the model is being created (a "GEMM key" the caller picks:
// its index in the model; layers that share weights share a key) and by XNNPACK's packing seed
// (which names the micro-kernel layout), never by the kernel/bias pointers XNNPACK also passes
// (ours are temporaries: the requantization scales and int32 biases are made per creation).
// Every GEMM key has its own provider struct whose context names the key, so no thread-local or
// global "current GEMM" is needed. The entry table has a fixed capacity, made at creation:
// offset_to_addr (which operators call at every reshape, from any session's thread) is one
// atomic load, allocation-free and race-free while other sessions are being created. Creation of
// operators for one GEMM key is serialized by that key's mutex (XnnGemm::create takes it), so N
// sessions creating the same GEMM at once pack it once; different GEMMs pack in parallel.
//
// The packed bytes live either on the heap (packed by this process) or in a read-only mapping of
// a weight cache file (weight_cache_file.h), which the store keeps alive.
//
// On Debian 12's 2022 XNNPACK there is no weights-cache API: supported() is false, provider()
// returns null and every operator packs its own copy (as before).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "status.h"

#if EDGEBERT_XNN_API >= 2024 && defined(EDGEBERT_XNN_HAS_WEIGHTS_CACHE)
#define EDGEBERT_XNN_SHARED_WEIGHTS 1
#else
#define EDGEBERT_XNN_SHARED_WEIGHTS 0
#endif

namespace edgebert {

class PackedWeights {
 public:
  // Packings one GEMM key can hold (one per packing seed: e.g. int8 and float output of the same
  // weights). XnnGemm fails cleanly if a GEMM key would need more.
  static constexpr size_t kSlotsPerGemm = 4;
  // Alignment of every entry's bytes (XNNPACK asks for XNN_ALLOCATION_ALIGNMENT <= 64).
  static constexpr size_t kAlignment = 64;

  // One packed weight as the cache file stores it.
  struct Entry {
    uint32_t gemm = 0;          // GEMM key
    uint32_t seed = 0;          // XNNPACK's packing seed
    uint64_t fingerprint = 0;   // XNNPACK's key fingerprint where it has one (else 0)
    uint64_t size = 0;          // bytes
    const uint8_t* data = nullptr;
  };

  ~PackedWeights();
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;

  // True when this XNNPACK takes our provider (2024+ API), i.e. packed weights can be shared.
  static bool supported() { return EDGEBERT_XNN_SHARED_WEIGHTS != 0; }
  // Why not, for messages ("" when supported).
  static const char* unsupported_reason();

  // A store for GEMM keys 0 .. gemm_count-1 (every table allocated here).
  static Result<std::unique_ptr<PackedWeights>> create(size_t gemm_count);

  size_t gemm_count() const { return gemm_count_; }
  // For XnnGemm::create: the provider of GEMM key `gemm` (an xnn_weights_cache_t; null when not
  // supported or out of range) and the mutex that serializes creation of its operators.
  void* provider(size_t gemm);
  std::mutex* creation_mutex(size_t gemm);
  // After an operator of `gemm` was created through provider(gemm): whether its packed weights
  // are in the store (false if the table of that key was full or space could not be reserved).
  bool last_creation_ok(size_t gemm) const;

  // What XNNPACK needs for GEMM key `gemm`, learnt without packing (the weight cache file's
  // expected entries): between begin_probe and end_probe, look_up records the packing seed (and
  // fingerprint) and answers "not found", and reserve_space records the byte count and refuses, so
  // the operator's creation fails before XNNPACK reads a weight. Load time only: no other operator
  // of the key may be created meanwhile (call it under creation_mutex or before any session).
  struct Probe {
    bool complete = false;  // both calls were seen
    uint32_t seed = 0;
    uint64_t fingerprint = 0;
    uint64_t size = 0;  // the bytes XNNPACK reserves: what an entry of this packing must hold
  };
  void begin_probe(size_t gemm);
  Probe end_probe(size_t gemm);

  // Ties GEMM key `gemm` to one GEMM (a tag naming it, e.g. its weight's name and shape): the first
  // call claims the key, later ones must give the same tag. False for a key out of range or a
  // different tag (a caller that numbered its GEMMs differently).
  bool claim_key(size_t gemm, uint64_t tag);

  // Operators alive that read this store (XnnGemm counts itself in and out).
  void attach() { users_.fetch_add(1); }
  void detach() { users_.fetch_sub(1); }
  size_t users() const { return users_.load(); }

  // Accounting (thread-safe).
  size_t packed_bytes() const { return heap_bytes_.load() + mapped_bytes_.load(); }
  size_t heap_bytes() const { return heap_bytes_.load(); }      // packed by this process
  size_t mapped_bytes() const { return mapped_bytes_.load(); }  // from a cache file's mapping
  size_t entry_count() const { return entries_.load(); }
  size_t packs() const { return packs_.load(); }  // weights XNNPACK packed into the store
  size_t hits() const { return hits_.load(); }    // operators that found their weights packed

  // The complete entries, by GEMM key then slot (allocates: load time only).
  std::vector<Entry> entries() const;

  // Adopts entries whose bytes live in a mapping the store keeps alive (`mapping`, released with
  // the store). Only on an empty store with no operator attached. Checks that every key is in
  // range, every (key, seed) unique and every key's entries fit its slots.
  Status adopt(const std::vector<Entry>& mapped, std::shared_ptr<const void> mapping);
  // Replaces heap entries by byte-identical mapped ones (after the cache file was written), freeing
  // the heap copies. Only with no operator attached (they may hold pointers to the heap copies);
  // `mapped` must list exactly the store's entries, in entries() order.
  Status replace_with_mapped(const std::vector<Entry>& mapped, std::shared_ptr<const void> mapping);

  // Internal (the provider callbacks).
  struct Slot;
  struct GemmProvider;

 private:
  PackedWeights() = default;
  void release_heap();

  size_t gemm_count_ = 0;
  std::unique_ptr<Slot[]> slots_;               // gemm_count * kSlotsPerGemm
  std::unique_ptr<GemmProvider[]> providers_;   // one per GEMM key
  std::unique_ptr<std::mutex[]> mutexes_;       // one per GEMM key
  std::unique_ptr<std::atomic<uint64_t>[]> tags_;  // one per GEMM key (0: not claimed yet)
  std::vector<std::shared_ptr<const void>> mappings_;
  std::atomic<size_t> users_{0};
  std::atomic<size_t> heap_bytes_{0}, mapped_bytes_{0}, entries_{0}, packs_{0}, hits_{0};
  friend struct PackedWeightsCallbacks;
};

}  // namespace edgebert
