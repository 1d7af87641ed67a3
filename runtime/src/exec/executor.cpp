// SPDX-License-Identifier: Apache-2.0
// executor.cpp: the op loop of a run (see executor.h).
#include "exec/executor.h"

#include "exec/op_kernels.h"
#include "kernels/kernels.h"
#include "monotonic_clock.h"

namespace edgebert::exec {
namespace {

// Scoped timer for --op-profile (no allocation).
class OpTimer {
 public:
  OpTimer(const ExecObserver& o, const Op& op) {
    if (!o.profile_ns) return;
    const size_t layer = op.layer >= 0 ? static_cast<size_t>(op.layer) : o.layers;
    slot_ = &o.profile_ns[layer * static_cast<size_t>(OpKind::kCount) + static_cast<size_t>(op.profile)];
    t0_ = monotonic_ns();
  }
  ~OpTimer() {
    if (slot_) *slot_ += monotonic_ns() - t0_;
  }

 private:
  int64_t* slot_ = nullptr;
  int64_t t0_ = 0;
};

// Rows the GEMM's input and output buffers hold: a per-token GEMM over the whole run reads and
// writes per-token buffers (room for a packed run); 0 (no room past `rows`) for every other GEMM.
size_t gemm_room_rows(const BoundOp& b, const ExecResources& res) {
  const Op& op = *b.op;
  if (op.type != OpType::kGemm || op.per_sequence || b.in_step[0].row_bytes == 0 || b.out_step[0].row_bytes == 0) return 0;
  return res.max_rows;
}

Status setup_gemm(const BoundOp& b, size_t rows, const ExecResources& res) {
  if (!b.gemm) return Status::ok();  // (ops sharing an operator bind their own buffers: cheap when equal)
  if (!b.gemm->setup(rows, b.in[0], b.out[0], res.pool, gemm_room_rows(b, res)))
    return Status(EB_ERROR_BACKEND, "XNNPACK setup failed for " + std::to_string(rows) + " rows (" + b.op->linear->name + ")");
  return Status::ok();
}

Status run_one(const BoundOp& b, const RunContext& ctx, const ExecObserver& observer) {
  OpTimer t(observer, *b.op);
  if (observer.profile_ns && observer.setup_ns && b.gemm) {
    const int64_t t0 = monotonic_ns();
    const Status s = setup_gemm(b, op_rows(*b.op, ctx), ctx.res);
    *observer.setup_ns += monotonic_ns() - t0;
    EB_RETURN_IF_ERROR(s);
  } else {
    EB_RETURN_IF_ERROR(setup_gemm(b, op_rows(*b.op, ctx), ctx.res));
  }
  return run_op(b, ctx);
}

}  // namespace

void call_hidden_state_hook(const BoundOp& b, size_t rows, const ExecObserver& observer) {
  const Op& op = *b.op;
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  if (!observer.hook(observer.hook_ctx, op.hidden_states.layer, op.hidden_states.stage, hidden, rows)) return;
  const LinearView* next = op.quant_for;
  if (!next || !next->int8 || b.out_count < 2) return;
  kernels::quantize_s8_per_channel(hidden, rows, static_cast<size_t>(op.width), op.inv_factors_or_null(),
                                   next->input_scale, next->input_zero_point, reinterpret_cast<int8_t*>(b.out[1]));
}

Status run_ops(const std::vector<BoundOp>& ops, size_t first, const RunContext& ctx, const ExecObserver& observer) {
  for (size_t i = first; i < ops.size(); ++i) {
    if (!ops[i].op->per_sequence) {
      EB_RETURN_IF_ERROR(run_one(ops[i], ctx, observer));
      if (observer.hook && ops[i].op->hidden_states.set) call_hidden_state_hook(ops[i], ctx.rows, observer);
      continue;
    }
    size_t end = i + 1;  // the stretch of per-sequence ops, run sequence by sequence
    while (end < ops.size() && ops[end].op->per_sequence) ++end;
    for (size_t s = 0; s < ctx.sequence_count; ++s) {
      const SequenceRows& seq = ctx.sequences[s];
      const SequenceRows whole{0, seq.rows, 0};
      RunContext one = ctx;
      one.rows = seq.rows;
      one.sequences = &whole;
      one.sequence_count = 1;
      one.ids = ctx.ids ? ctx.ids + seq.first_row : nullptr;
      one.types = ctx.types ? ctx.types + seq.first_row : nullptr;
      one.key_mask = ctx.key_mask + seq.first_row;
      for (size_t j = i; j < end; ++j) EB_RETURN_IF_ERROR(run_one(ops[j].for_sequence(seq), one, observer));
    }
    i = end - 1;
  }
  return Status::ok();
}

}  // namespace edgebert::exec
