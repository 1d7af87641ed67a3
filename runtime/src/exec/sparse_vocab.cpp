// SPDX-License-Identifier: Apache-2.0
// sparse_vocab.cpp: the SPLADE reduction of a masked-LM decoder, streamed. The vocabulary GEMM
// runs over one sequence's rows `block_rows` at a time into one block buffer, and each block's
// unmasked rows update a running per-entry maximum of the logits; log(1 + relu(.)) is monotonic,
// so max_t log(1 + relu(l[t])) = log(1 + relu(max_t l[t])) is taken once at the end. The
// [tokens x vocab] logits never exist beyond one block.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "exec/op_kernels.h"

namespace edgebert::exec {

Status run_sparse_vocab(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const LinearView& d = *op.linear;
  const size_t V = static_cast<size_t>(op.width), block = static_cast<size_t>(op.block_rows);
  const bool int8_out = d.int8 && !op.float_output;  // the 2022 XNNPACK: int8 logits, per-channel scales
  const size_t in_row = static_cast<size_t>(d.in) * (d.int8 ? 1 : 4);
  float* sparse = reinterpret_cast<float*>(b.out[1]);
  std::fill(sparse, sparse + V, 0.f);  // relu: an entry no token raises stays 0
  for (size_t r0 = 0; r0 < ctx.rows; r0 += block) {
    const size_t n = std::min(block, ctx.rows - r0);
    if (!b.gemm->setup(n, b.in[0] + r0 * in_row, b.out[0], ctx.res.pool) || !b.gemm->run(ctx.res.pool))
      return Status(EB_ERROR_BACKEND, std::string("XNNPACK run failed (") + d.name + ")");
    for (size_t r = 0; r < n; ++r) {
      if (!ctx.key_mask[r0 + r]) continue;
      if (int8_out) {
        const int8_t* q = reinterpret_cast<const int8_t*>(b.out[0]) + r * V;
        for (size_t c = 0; c < V; ++c)
          sparse[c] = std::max(sparse[c], static_cast<float>(q[c] - d.output_zero_point) * d.output_channel_scale(static_cast<int>(c)));
      } else {
        const float* y = reinterpret_cast<const float*>(b.out[0]) + r * V;
        for (size_t c = 0; c < V; ++c) sparse[c] = std::max(sparse[c], y[c]);
      }
    }
  }
  for (size_t c = 0; c < V; ++c) sparse[c] = std::log1p(sparse[c]);
  return Status::ok();
}

}  // namespace edgebert::exec
