// SPDX-License-Identifier: Apache-2.0
// pooling.cpp: sentence pooling (CLS, mask mean, max, ... [+ L2 normalization]) of one sequence's
// rows: a per-sequence op, handed that sequence's rows and mask by the executor.
#include "exec/op_kernels.h"
#include "kernels/kernels.h"

namespace edgebert::exec {

Status run_sentence_pooling(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  kernels::sentence_pool_f32(reinterpret_cast<const float*>(b.in[0]), ctx.rows, static_cast<size_t>(op.width),
                             ctx.key_mask, static_cast<kernels::PoolingKind>(op.pooling), op.normalize,
                             reinterpret_cast<float*>(b.out[0]));
  return Status::ok();
}

Status run_l2_normalize(const BoundOp& b, const RunContext&) {
  kernels::l2_normalize_f32(reinterpret_cast<float*>(b.out[0]), static_cast<size_t>(b.op->width));
  return Status::ok();
}

}  // namespace edgebert::exec
