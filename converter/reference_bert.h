// SPDX-License-Identifier: Apache-2.0
// reference_bert.h: the converter's own float32 forward pass of BERT, used for calibration and
// for the per-GEMM error report. Calibration sequences are run as one batch: GEMMs see all
// tokens of all sequences at once; attention stays within each sequence (no padding needed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "converter/float_bert.h"

namespace edgebert::convert {

// A batch of unpadded sequences laid end to end.
struct TokenBatch {
  std::vector<int32_t> ids;          // total_tokens (empty when `embeddings` is used)
  std::vector<int32_t> token_types;  // total_tokens
  std::vector<float> embeddings;     // [total_tokens, H] precomputed embedding outputs (encoder-only models)
  std::vector<size_t> starts;        // sequence s is tokens [starts[s], starts[s+1])
  size_t num_sequences() const { return starts.empty() ? 0 : starts.size() - 1; }
  size_t total_tokens() const { return starts.empty() ? 0 : starts.back(); }
};

// Sees every GEMM's float input x [rows, in] and float output y [rows, out] (bias included).
class GemmObserver {
 public:
  virtual ~GemmObserver() = default;
  virtual void observe(int layer, GemmKind kind, const FloatLinear& linear, const float* x, const float* y,
                       size_t rows) = 0;
  // Layers with q/k norms: the QKV rows [rows, q_width + 2 kv_width] after the norms and the rotary
  // embedding (what the attention core reads).
  virtual void observe_attention_input(int /*layer*/, const float* /*qkv*/, size_t /*rows*/) {}
};

// y[rows, out] = x[rows, in] W^T + b, multithreaded over output channels.
void linear_forward(const FloatLinear& linear, const float* x, size_t rows, float* y);

// Runs embeddings (or takes batch.embeddings) and every encoder layer; returns the final hidden
// states [total_tokens, H].
std::vector<float> reference_encoder(const FloatBert& model, const TokenBatch& batch, GemmObserver* observer);

// The masked-LM head's features before its decoder: mlm_norm(mlm_act(mlm_transform(h))) for the
// rows of `hidden` [rows, H]; returns [rows, E].
std::vector<float> reference_masked_lm_features(const FloatBert& model, const float* hidden, size_t rows);

}  // namespace edgebert::convert
