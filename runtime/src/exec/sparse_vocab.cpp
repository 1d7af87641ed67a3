// SPDX-License-Identifier: Apache-2.0
// sparse_vocab.cpp: the SPLADE reduction of a masked-LM decoder, streamed. The vocabulary GEMM
// runs over one sequence's rows `block_rows` at a time into one block buffer, and each block's
// unmasked rows update a running per-entry maximum of the logits; log(1 + relu(.)) is monotonic,
// so max_t log(1 + relu(l[t])) = log(1 + relu(max_t l[t])) is taken once at the end. The
// [tokens x vocab] logits never exist beyond one block.
#include <algorithm>
#include <cmath>

#include "exec/op_kernels.h"
#include "exec/vocab_logits.h"

namespace edgebert::exec {

Status run_sparse_vocab(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const size_t V = static_cast<size_t>(op.width), block = static_cast<size_t>(op.block_rows);
  const size_t in_row = vocab_input_row_bytes(b);
  float* sparse = reinterpret_cast<float*>(b.out[1]);
  std::fill(sparse, sparse + V, 0.f);  // relu: an entry no token raises stays 0
  for (size_t r0 = 0; r0 < ctx.rows; r0 += block) {
    const size_t n = std::min(block, ctx.rows - r0);
    EB_RETURN_IF_ERROR(run_vocab_gemm(b, b.in[0] + r0 * in_row, n, ctx.res.pool));
    for (size_t r = 0; r < n; ++r)
      if (ctx.key_mask[r0 + r])
        for_each_vocab_logit(b, r, b.in[0] + (r0 + r) * in_row,
                             [sparse](size_t c, float l) { sparse[c] = std::max(sparse[c], l); });
  }
  for (size_t c = 0; c < V; ++c) sparse[c] = std::log1p(sparse[c]);
  return Status::ok();
}

}  // namespace edgebert::exec
