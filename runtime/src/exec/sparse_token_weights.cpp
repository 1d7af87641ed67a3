// SPDX-License-Identifier: Apache-2.0
// sparse_token_weights.cpp: bge-m3's sparse output for one sequence. Each unmasked token's weight
// is relu(w . h + b) (sparse_linear, [1, hidden], fp32; the dot product in double), and the
// vocabulary row keeps per token id the largest weight of the sequence's tokens with that id, as
// FlagEmbedding's _process_token_weights does; the unused ids (cls, eos, pad, unk) stay 0.
#include <algorithm>

#include "exec/op_kernels.h"

namespace edgebert::exec {

Status run_sparse_token_weights(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const LinearView& l = *op.linear;
  const size_t V = static_cast<size_t>(op.width), H = static_cast<size_t>(l.in);
  const float* h = reinterpret_cast<const float*>(b.in[0]);
  float* sparse = reinterpret_cast<float*>(b.out[0]);
  std::fill(sparse, sparse + V, 0.f);
  if (!ctx.ids) return Status(EB_ERROR_INVALID_ARGUMENT, "bge-m3's sparse weights need token ids (not embeddings)");
  for (size_t r = 0; r < ctx.rows; ++r) {
    if (!ctx.key_mask[r]) continue;
    const int32_t id = ctx.ids[r];
    if (id < 0 || static_cast<size_t>(id) >= V) continue;  // ids are checked at the run's start
    double dot = l.bias[0];
    const float* x = h + r * H;
    for (size_t k = 0; k < H; ++k) dot += static_cast<double>(l.weight_f32[k]) * x[k];
    sparse[id] = std::max(sparse[id], static_cast<float>(std::max(dot, 0.0)));
  }
  for (size_t i = 0; i < op.skip_count; ++i) sparse[op.skip_ids[i]] = 0.f;
  return Status::ok();
}

}  // namespace edgebert::exec
