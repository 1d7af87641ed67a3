// SPDX-License-Identifier: Apache-2.0
// executor.h: runs a session's bound ops over one run. Ops over rows run once on all the run's
// rows (their GEMMs set up for that row count); a stretch of per-sequence ops (Op::per_sequence:
// the pooler, classifiers, sentence pooling) runs once per sequence, on a view of each op moved
// to that sequence and a context of that sequence alone. Optional observers: per-op timing and the
// hidden-state hook of the accuracy tools. Allocation-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exec/bound_op.h"
#include "exec/run_context.h"
#include "status.h"

namespace edgebert::exec {

// Debug hook (Session::HiddenStateHook): called with the float hidden states [rows, width] after
// each op that announces them; when it returns true (it rewrote them) the op's int8 copy for the
// next GEMM is derived again.
using HiddenStateHook = bool (*)(void* ctx, int layer, int stage, float* hidden, size_t rows);

struct ExecObserver {
  int64_t* profile_ns = nullptr;  // [(layers + 1) x OpKind::kCount] or null: no timing
  int64_t* setup_ns = nullptr;    // with profile_ns: the part of it spent in XNNPACK reshape/setup
  size_t layers = 0;              // index `layers`: embeddings and task heads
  HiddenStateHook hook = nullptr;
  void* hook_ctx = nullptr;
};

// Runs ops [first, end of ops) over the run `ctx`.
Status run_ops(const std::vector<BoundOp>& ops, size_t first, const RunContext& ctx, const ExecObserver& observer);

// The hook after `b` (which announces the hidden states) over `rows` rows.
void call_hidden_state_hook(const BoundOp& b, size_t rows, const ExecObserver& observer);

}  // namespace edgebert::exec
