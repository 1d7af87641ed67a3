// SPDX-License-Identifier: Apache-2.0
// weight_cache.cpp: load-time preparation of a model's packed weights (see weight_cache.h).
// Packing at load creates one short-lived operator per GEMM through the store: XNNPACK packs
// into the store and the operator is deleted again, so no operator holds the heap copies when the
// written file replaces them. The program layout a file must match is learnt the same way, with
// creations that stop before packing (PackedWeights::begin_probe).
#include "backend/weight_cache.h"

#include "backend/int4_weights.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "xnn_gemm.h"

namespace edgebert {
namespace {

constexpr uint64_t kLayoutSeed = 0x6c61796f7574ULL;  // "layout"
constexpr uint32_t kLayoutScheme = 2;                // what the digest covers (bump when it changes; 2: int4)

// Creates (and deletes) one operator per GEMM through the store: packs what is missing.
Status pack_all(const Model& model, const std::vector<GemmToPack>& gemms, PackedWeights* store) {
  for (size_t i = 0; i < gemms.size(); ++i) {
    XnnGemm g;
    EB_RETURN_IF_ERROR(g.create(*gemms[i].linear, gemms[i].float_output, 1, store, i));
    model.release_weight_pages(*gemms[i].linear);  // packed: the mapped weights are not read again
  }
  return Status::ok();
}

void hash_u64(ContentHasher& h, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  h.update(b, sizeof b);
}
void hash_f32(ContentHasher& h, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  hash_u64(h, bits);
}
// An optional per-channel array: its presence, then its values (each float's bits as hash_f32
// gives them), a block at a time (one update per value made this hash most of a warm start).
void hash_floats(ContentHasher& h, const float* v, int n) {
  hash_u64(h, v ? static_cast<uint64_t>(n) : ~uint64_t(0));
  if (!v) return;
  constexpr int kBlock = 256;
  uint8_t bytes[kBlock * 8];
  for (int i = 0; i < n; i += kBlock) {
    const int m = n - i < kBlock ? n - i : kBlock;
    for (int j = 0; j < m; ++j) {
      uint32_t bits;
      std::memcpy(&bits, v + i + j, sizeof bits);
      uint64_t wide = bits;  // little-endian bytes
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      wide = __builtin_bswap64(wide);
#endif
      std::memcpy(bytes + 8 * j, &wide, sizeof wide);
    }
    h.update(bytes, static_cast<size_t>(m) * 8);
  }
}

// Where a GEMM's weights are: their offset in the model's bytes, or ~0 for weights the program
// made in memory (then the name says which).
uint64_t weight_place(const Model& model, const LinearView& l) {
  const auto* w = l.int4   ? static_cast<const void*>(l.weight_s4)
                  : l.int8 ? static_cast<const void*>(l.weight_s8)
                           : static_cast<const void*>(l.weight_f32);
  const auto* p = static_cast<const uint8_t*>(w);
  if (p && model.buffer && p >= model.buffer && p < model.buffer + model.file_size)
    return static_cast<uint64_t>(p - model.buffer);
  return ~uint64_t(0);
}

}  // namespace

Result<weight_cache_file::Layout> describe_layout(const Model& model, const std::vector<GemmToPack>& gemms,
                                                  PackedWeights* store) {
  weight_cache_file::Layout layout;
  ContentHasher h(kLayoutSeed);
  hash_u64(h, kLayoutScheme);
  hash_u64(h, gemms.size());
  for (size_t i = 0; i < gemms.size(); ++i) {
    const LinearView& l = *gemms[i].linear;
    store->begin_probe(i);
    {
      XnnGemm g;
      const Status probed = g.create(l, gemms[i].float_output, 1, store, i);  // stops before packing: fails
      (void)probed;
    }
    const PackedWeights::Probe probe = store->end_probe(i);
    if (!probe.complete || probe.size == 0)
      return Status(EB_ERROR_BACKEND, std::string(l.name) + ": XNNPACK did not ask for packed-weight space");
    weight_cache_file::ExpectedEntry e;
    e.gemm = static_cast<uint32_t>(i);
    e.seed = probe.seed;
    e.fingerprint = probe.fingerprint;
    e.size = probe.size;
    layout.entries.push_back(e);

    hash_u64(h, i);
    hash_u64(h, (l.int8 ? 1u : 0u) | (gemms[i].float_output ? 2u : 0u) | (l.has_quant ? 4u : 0u) | (l.int4 ? 8u : 0u));
    if (l.int4) {  // int4 weights: their block size and bf16 block scales decide the packed bytes too
      hash_u64(h, static_cast<uint64_t>(l.block_size));
      const size_t blocks = static_cast<size_t>(l.out) * static_cast<size_t>(int4::blocks_per_row(l.in, l.block_size));
      hash_u64(h, blocks);
      h.update(l.weight_block_scales, blocks * sizeof(uint16_t));
    }
    hash_u64(h, static_cast<uint64_t>(l.in));
    hash_u64(h, static_cast<uint64_t>(l.out));
    const size_t name_len = std::strlen(l.name);
    hash_u64(h, name_len);
    h.update(l.name, name_len);
    hash_u64(h, weight_place(model, l));
    hash_f32(h, l.input_scale);
    hash_u64(h, static_cast<uint32_t>(l.input_zero_point));
    hash_f32(h, l.output_scale);
    hash_u64(h, static_cast<uint32_t>(l.output_zero_point));
    hash_floats(h, l.int8 ? l.weight_scales : nullptr, l.out);
    hash_floats(h, l.output_scales, l.out);
    hash_floats(h, l.bias, l.out);
    hash_floats(h, l.input_factors, l.in);
    hash_u64(h, e.seed);
    hash_u64(h, e.fingerprint);
    hash_u64(h, e.size);
  }
  layout.digest = h.finish();
  return layout;
}

weight_cache_file::FileId model_file_id(const Model& model) {
  weight_cache_file::FileId id;
  if (!model.buffer) return id;
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (!maps) return id;
  const auto addr = reinterpret_cast<uintptr_t>(model.buffer);
  char line[512];
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long long lo = 0, hi = 0, offset = 0, inode = 0;
    unsigned major_dev = 0, minor_dev = 0;
    char perms[8];
    if (std::sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &lo, &hi, perms, &offset, &major_dev, &minor_dev, &inode) != 7)
      continue;
    if (addr < lo || addr >= hi) continue;
    if (inode != 0) {
      id.known = true;
      id.dev = static_cast<uint64_t>(makedev(major_dev, minor_dev));
      id.ino = inode;
    }
    break;
  }
  std::fclose(maps);
  return id;
}

bool weight_cache_verify(const WeightCacheOptions& options) {
  const char* env = std::getenv("EDGEBERT_WEIGHT_CACHE_VERIFY");
  return options.verify_payload && !(env && std::strcmp(env, "0") == 0);
}

std::shared_ptr<weight_cache_file::Prefetch> prefetch_weight_cache(const std::string& cache_path,
                                                                   const WeightCacheOptions& options) {
  if (cache_path.empty() || !PackedWeights::supported()) return nullptr;
  try {
    return std::make_shared<weight_cache_file::Prefetch>(cache_path, weight_cache_verify(options));
  } catch (...) {  // out of memory: the load reads the file itself
    return nullptr;
  }
}

Result<ModelWeights> prepare_model_weights(const Model& model, const std::vector<GemmToPack>& gemms,
                                           const std::string& cache_path, const WeightCacheOptions& options) {
  ModelWeights w;
  const bool want_file = !cache_path.empty();
  const bool verify = weight_cache_verify(options);
  weight_cache_file::Prefetch* prefetch =
      options.prefetch && options.prefetch->path() == cache_path && options.prefetch->verify() == verify
          ? options.prefetch.get()
          : nullptr;
  struct StopReading {  // whatever the way out, a file read ahead is not read any further
    weight_cache_file::Prefetch* p;
    ~StopReading() {
      if (p) p->cancel();
    }
  } stop_reading{options.prefetch.get()};
  if (!PackedWeights::supported()) {
    if (want_file) {
      w.state = EB_WEIGHT_CACHE_UNAVAILABLE;
      w.message = PackedWeights::unsupported_reason();
    }
    return w;
  }
  if (gemms.empty()) {
    if (want_file) {
      w.state = EB_WEIGHT_CACHE_UNAVAILABLE;
      w.message = "the model has no GEMM weights to cache";
    }
    return w;
  }
  auto store = PackedWeights::create(gemms.size());
  if (!store) return store.status();
  w.store = store.take();
  // (XNNPACK must be initialized before anything is packed; the file's identity also names the
  // XNNPACK build and CPU)
  if (const Status ready = xnn_ready(); !ready) return ready;
  if (!want_file) {  // packed now, in memory: sessions only look their packings up
    EB_RETURN_IF_ERROR(pack_all(model, gemms, w.store.get()));
    return w;
  }

  auto packed_in_memory = [&](const std::string& why) -> Result<ModelWeights> {
    const Status s = pack_all(model, gemms, w.store.get());
    w.state = EB_WEIGHT_CACHE_UNAVAILABLE;
    w.message = s ? why + " (the weights are packed in memory instead)" : s.message();
    return std::move(w);
  };
  Result<weight_cache_file::Layout> layout = describe_layout(model, gemms, w.store.get());
  if (!layout) return packed_in_memory(cache_path + ": cannot describe the program layout: " + layout.status().message());
  const ContentId id = model.content_id_or_hash();
  weight_cache_file::LoadOptions load_options;
  load_options.verify_payload = verify;
  load_options.protect = model_file_id(model);
  const weight_cache_file::LoadResult loaded =
      prefetch ? weight_cache_file::load(*prefetch, id, layout.value(), w.store.get(), load_options.protect)
               : weight_cache_file::load(cache_path, id, layout.value(), w.store.get(), load_options);
  if (loaded.outcome == weight_cache_file::LoadOutcome::kForeign) return packed_in_memory(loaded.message);
  if (loaded.outcome == weight_cache_file::LoadOutcome::kLoaded) {
    // The file holds exactly the layout's entries (key, seed, fingerprint, size: what the probes
    // saw XNNPACK look up), so every GEMM's operator finds its packing: no creation is needed now.
    w.state = EB_WEIGHT_CACHE_LOADED;
    return w;
  }
  const Status packed = pack_all(model, gemms, w.store.get());
  if (!packed) {
    w.state = EB_WEIGHT_CACHE_UNAVAILABLE;
    w.message = packed.message();
    return w;
  }
  const Status written =
      weight_cache_file::write(cache_path, id, layout.value(), w.store.get(), true, load_options.protect);
  if (!written) {
    w.state = EB_WEIGHT_CACHE_UNAVAILABLE;
    w.message = written.message() + " (the weights are packed in memory instead)";
    return w;
  }
  w.state = EB_WEIGHT_CACHE_CREATED;
  if (loaded.outcome != weight_cache_file::LoadOutcome::kMissing) w.message = "rebuilt: " + loaded.message;
  return w;
}

}  // namespace edgebert
