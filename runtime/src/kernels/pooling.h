// SPDX-License-Identifier: Apache-2.0
// Task-head helpers on the float hidden states: sentence pooling over the attention mask
// (sentence-transformers' Pooling + Normalize), row L2 normalization (ColBERT), and splitting interleaved QA logits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {
namespace kernels {

enum class PoolingKind : int { kCls = 0, kMean = 1, kMax = 2, kMeanSqrtLen = 3, kLastToken = 4 };  // = schema Pooling

// out[H] from h [n, H] over the rows with mask[t] == 1 (mask null: all rows), as
// sentence-transformers computes it: CLS = row 0; MEAN = sum / max(count, 1e-9); MAX = max over
// the rows (masked rows count as -1e9); MEAN_SQRT_LEN = sum / sqrt(max(count, 1e-9)); LAST_TOKEN =
// the last row with mask 1 (row 0 when none is; sentence-transformers' pooling_mode_lasttoken). Then, with
// `normalize`, out /= max(||out||_2, 1e-12). Sums are accumulated in double. No allocation.
void sentence_pool_f32(const float* h, size_t n, size_t H, const uint8_t* mask, PoolingKind mode, bool normalize,
                       float* out);

// v /= max(||v||_2, 1e-12) (torch.nn.functional.normalize), the sum of squares in double.
void l2_normalize_f32(float* v, size_t n);

// start[t] = qa[2t], end[t] = qa[2t + 1] for t < n.
void split_span_logits(const float* qa, size_t n, float* start, float* end);

}  // namespace kernels
}  // namespace edgebert
