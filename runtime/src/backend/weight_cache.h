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

// Without `cache_path` the store is made empty (sessions fill it as they create their operators).
// With it: LOADED (mapped), CREATED (packed now, file written; the message says why an existing
// file was rebuilt) or UNAVAILABLE (no provider on this XNNPACK, or the file cannot be written:
// the weights are then packed in memory and still shared). Fails only when memory runs out.
Result<ModelWeights> prepare_model_weights(const Model& model, const std::vector<GemmToPack>& gemms,
                                           const std::string& cache_path);

}  // namespace edgebert
