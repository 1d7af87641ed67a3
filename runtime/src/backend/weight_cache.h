// SPDX-License-Identifier: Apache-2.0
// weight_cache.h: a model's packed weights as the loader prepares them: the shared store
// (packed_weights.h) and, when a weight cache file is asked for, the file (weight_cache_file.h):
// mapped when it is valid (nothing is packed and the model's GEMM weights are never read),
// otherwise every GEMM is packed now and the file (re)written and mapped in place of the heap
// copies. Whatever happens to the file, the model loads: the state and message say what happened.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/packed_weights.h"
#include "backend/weight_cache_file.h"
#include "edgebert/edgebert.h"
#include "model.h"
#include "status.h"

namespace edgebert {

// A GEMM of the model as its operators are created; its index in the list is its GEMM key.
struct GemmToPack {
  const LinearView* linear = nullptr;
  bool float_output = false;
};

struct ModelWeights {
  std::unique_ptr<PackedWeights> store;  // null when this XNNPACK cannot share packed weights
  eb_weight_cache_state state = EB_WEIGHT_CACHE_NONE;
  std::string message;  // why the file was rebuilt or not used ("" when there is nothing to say)
  size_t packed_bytes() const { return store ? store->packed_bytes() : 0; }
};

// How a weight cache file is used. verify_payload: every entry's CRC32C is checked before the
// file's bytes are used (the default). Turned off by `verify_payload = false` or by the environment
// variable EDGEBERT_WEIGHT_CACHE_VERIFY=0, for callers that verify the file themselves
// (docs/weight-cache.md); everything else (header, table, sizes, layout) is always checked.
// prefetch: the file read ahead (prefetch_weight_cache, started before the model was loaded so
// that the reading overlaps it); used when it names the same path and payload check.
struct WeightCacheOptions {
  bool verify_payload = true;
  std::shared_ptr<weight_cache_file::Prefetch> prefetch;
};
// Whether the payload is checked: options.verify_payload, unless EDGEBERT_WEIGHT_CACHE_VERIFY=0.
bool weight_cache_verify(const WeightCacheOptions& options);
// Starts reading `cache_path` ahead with `options`' payload check; null where this XNNPACK has no
// weight cache or nothing is named.
std::shared_ptr<weight_cache_file::Prefetch> prefetch_weight_cache(const std::string& cache_path,
                                                                   const WeightCacheOptions& options);

// The program layout a cache file must match (weight_cache_file.h): for every GEMM key, what
// XNNPACK would pack (its packing seed and exact byte count, learnt by a creation that stops
// before packing: PackedWeights::begin_probe) and a digest of everything that decides the packed
// bytes: kind (int8 / fp32, float output), shape, quantization (input and output scales and zero
// points, per-channel weight and output scales, bias), which of the model's weights (their place
// in the model file, or their name), plus the probes. `store` must be empty.
Result<weight_cache_file::Layout> describe_layout(const Model& model, const std::vector<GemmToPack>& gemms,
                                                  PackedWeights* store);

// The file the model was mapped from (st_dev / st_ino of the mapping holding model.buffer, from
// /proc/self/maps); unknown for caller memory or where /proc is not readable.
weight_cache_file::FileId model_file_id(const Model& model);

// Without `cache_path` every GEMM is packed into the store now (in memory).
// With it: LOADED (mapped), CREATED (packed now, file written; the message says why an existing
// file was rebuilt) or UNAVAILABLE (no provider on this XNNPACK; the file cannot be written; or
// something at the path that is not a weight cache, which is never replaced: the weights are then
// packed in memory and still shared). Fails only when memory runs out.
Result<ModelWeights> prepare_model_weights(const Model& model, const std::vector<GemmToPack>& gemms,
                                           const std::string& cache_path,
                                           const WeightCacheOptions& options = WeightCacheOptions());

}  // namespace edgebert
