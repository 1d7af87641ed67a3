// SPDX-License-Identifier: Apache-2.0
// op_kernels.h: one kernel per op type (OpType), each run(const BoundOp&, const RunContext&): the
// op carries everything it computes with, the context carries the run's rows and sequences. No
// kernel reads an op's label, its position in the program or the run mode. Ops that run once per
// sequence (Op::per_sequence) are handed a view of the op and a context of that one sequence by
// the executor (exec/executor.h).
#pragma once

#include "exec/bound_op.h"
#include "exec/run_context.h"
#include "status.h"

namespace edgebert::exec {

Status run_embeddings(const BoundOp& b, const RunContext& ctx);
Status run_gemm(const BoundOp& b, const RunContext& ctx);
Status run_span_logits(const BoundOp& b, const RunContext& ctx);
Status run_attention(const BoundOp& b, const RunContext& ctx);
Status run_convert_context(const BoundOp& b, const RunContext& ctx);
Status run_add_norm(const BoundOp& b, const RunContext& ctx);
Status run_layer_norm(const BoundOp& b, const RunContext& ctx);
Status run_add(const BoundOp& b, const RunContext& ctx);
Status run_quantize(const BoundOp& b, const RunContext& ctx);
Status run_activation(const BoundOp& b, const RunContext& ctx);
Status run_gated_activation(const BoundOp& b, const RunContext& ctx);
Status run_rotary(const BoundOp& b, const RunContext& ctx);
Status run_sentence_pooling(const BoundOp& b, const RunContext& ctx);
Status run_head_norm(const BoundOp& b, const RunContext& ctx);
Status run_qkv_to_int8(const BoundOp& b, const RunContext& ctx);
Status run_sparse_vocab(const BoundOp& b, const RunContext& ctx);
Status run_l2_normalize(const BoundOp& b, const RunContext& ctx);
Status run_sparse_token_weights(const BoundOp& b, const RunContext& ctx);
Status run_drop_first_rows(const BoundOp& b, const RunContext& ctx);

// The kernel of the op's type.
Status run_op(const BoundOp& b, const RunContext& ctx);

// Rows the op works on in this context: a per-sequence op reads one row (h[CLS] or its one-row
// input) unless it pools the sequence; the vocabulary GEMM reads a block of the sequence's rows.
inline size_t op_rows(const Op& op, const RunContext& ctx) {
  if (op.type == OpType::kSparseVocab) return ctx.rows < static_cast<size_t>(op.block_rows) ? ctx.rows : op.block_rows;
  return op.per_sequence && op.type != OpType::kSentencePooling ? 1 : ctx.rows;
}

}  // namespace edgebert::exec
