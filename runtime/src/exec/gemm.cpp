// SPDX-License-Identifier: Apache-2.0
// gemm.cpp: the GEMM ops (XNNPACK operators set up by the executor) with their elementwise post
// op (tanh, relu, an activation, row L2 normalization), and QA's span logits (one [n, 2] GEMM split into start and end).
#include <algorithm>
#include <cmath>

#include "exec/activation_f32.h"
#include "exec/op_kernels.h"
#include "kernels/kernels.h"

namespace edgebert::exec {

Status run_gemm(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  if (op.row_scaled_input && !b.gemm->set_row_scales(reinterpret_cast<const float*>(b.in[1]), op_rows(op, ctx)))
    return Status(EB_ERROR_BACKEND, std::string("no per-row input scales for ") + op.linear->name);
  if (!b.gemm->run(ctx.res.pool)) return Status(EB_ERROR_BACKEND, std::string("XNNPACK run failed (") + op.linear->name + ")");
  if (op.post == PostOp::kNone) return Status::ok();
  float* y = reinterpret_cast<float*>(b.out[0]);  // head GEMMs with a post op write float
  const size_t count = op_rows(op, ctx) * static_cast<size_t>(op.linear->out);
  if (op.post == PostOp::kActivation) {
    activation_in_place(op.activation, y, count);
  } else if (op.post == PostOp::kL2Normalize) {
    const size_t width = static_cast<size_t>(op.linear->out);
    for (size_t r = 0; r < count / width; ++r) kernels::l2_normalize_f32(y + r * width, width);
  } else {
    for (size_t i = 0; i < count; ++i) y[i] = op.post == PostOp::kTanh ? std::tanh(y[i]) : std::max(y[i], 0.f);
  }
  return Status::ok();
}

Status run_span_logits(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  if (!b.gemm->run(ctx.res.pool)) return Status(EB_ERROR_BACKEND, std::string("XNNPACK run failed (") + op.linear->name + ")");
  kernels::split_span_logits(reinterpret_cast<const float*>(b.out[0]), ctx.rows, reinterpret_cast<float*>(b.out[1]),
                             reinterpret_cast<float*>(b.out[2]));
  return Status::ok();
}

}  // namespace edgebert::exec
