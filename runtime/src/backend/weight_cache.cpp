// SPDX-License-Identifier: Apache-2.0
// weight_cache.cpp: load-time preparation of a model's packed weights (see weight_cache.h).
// Packing at load creates one short-lived operator per GEMM through the store: XNNPACK packs
// into the store and the operator is deleted again, so no operator holds the heap copies when the
// written file replaces them.
#include "backend/weight_cache.h"

#include "backend/weight_cache_file.h"
#include "xnn_gemm.h"

namespace edgebert {
namespace {

// Creates (and deletes) one operator per GEMM through the store: packs what is missing.
Status pack_all(const Model& model, const std::vector<GemmToPack>& gemms, PackedWeights* store) {
  for (size_t i = 0; i < gemms.size(); ++i) {
    XnnGemm g;
    std::string err;
    if (!g.create(*gemms[i].linear, gemms[i].float_output, 1, &err, store, i)) return Status(EB_ERROR_BACKEND, err);
    model.release_weight_pages(*gemms[i].linear);  // packed: the mapped weights are not read again
  }
  return Status::ok();
}

}  // namespace

Result<ModelWeights> prepare_model_weights(const Model& model, const std::vector<GemmToPack>& gemms,
                                           const std::string& cache_path) {
  ModelWeights w;
  const bool want_file = !cache_path.empty();
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
  if (!want_file) return w;

  xnn_ready(nullptr);  // the file's identity names the XNNPACK build and CPU
  const ContentId id = model.content_id_or_hash();
  const weight_cache_file::LoadResult loaded = weight_cache_file::load(cache_path, id, w.store.get());
  std::string why = loaded.message;
  if (loaded.outcome == weight_cache_file::LoadOutcome::kLoaded) {
    // Every GEMM must find its packing in the file; one that does not is packed and the file rebuilt.
    const Status s = pack_all(model, gemms, w.store.get());
    if (!s) {
      w.state = EB_WEIGHT_CACHE_UNAVAILABLE;
      w.message = s.message();
      return w;
    }
    if (w.store->packs() == 0) {
      w.state = EB_WEIGHT_CACHE_LOADED;
      return w;
    }
    why = cache_path + ": " + std::to_string(w.store->packs()) + " GEMM packings were missing from the file";
  } else {
    const Status s = pack_all(model, gemms, w.store.get());
    if (!s) {
      w.state = EB_WEIGHT_CACHE_UNAVAILABLE;
      w.message = s.message();
      return w;
    }
  }
  const Status written = weight_cache_file::write(cache_path, id, w.store.get(), true);
  if (!written) {
    w.state = EB_WEIGHT_CACHE_UNAVAILABLE;
    w.message = written.message() + " (the weights are packed in memory instead)";
    return w;
  }
  w.state = EB_WEIGHT_CACHE_CREATED;
  if (loaded.outcome != weight_cache_file::LoadOutcome::kMissing) w.message = "rebuilt: " + why;
  return w;
}

}  // namespace edgebert
