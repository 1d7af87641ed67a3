// SPDX-License-Identifier: Apache-2.0
// qkv_rows.h: what the ops on QKV rows (kHeadNorm, kRotary, kQkvToInt8, blocks::attention) share:
// the row's layout (Q of every head, then K and V of the KV heads) and the rotary's cos/sin table.
#pragma once

#include <cstddef>

#include "exec/bound_op.h"
#include "kernels/rope.h"
#include "status.h"

namespace edgebert::exec {

struct QkvRows {
  size_t head_dim, heads, kv_heads, stride;  // stride: (heads + 2 * kv_heads) * head_dim
};
inline QkvRows qkv_rows(const Op& op) {
  const size_t d = static_cast<size_t>(op.head_dim), heads = static_cast<size_t>(op.heads);
  const size_t kv = static_cast<size_t>(op.kv_heads > 0 ? op.kv_heads : op.heads);
  return {d, heads, kv, (heads + 2 * kv) * d};
}
inline kernels::RopeForm rope_form(const RotaryOp& r) {
  return r.interleaved ? kernels::RopeForm::kInterleaved : kernels::RopeForm::kRotateHalf;
}

// Q's and K's heads of `rows` float QKV rows (from x) RMS-normalized in place with the op's
// q_norm / k_norm (kHeadNorm of an fp32 QKV, kQkvToInt8).
void rmsnorm_qk_heads_f32(const Op& op, float* x, size_t rows);
// Q's and K's heads of `rows` float QKV rows (from x) rotated in place; `table` starts at the
// first row's position (kRotary of an fp32 QKV, kQkvToInt8).
void rope_qk_f32(const Op& op, float* x, size_t rows, const float* table);

// The table for a sequence of n rows: the op's (Op::rope_table), or with dynamic NTK (nomic-bert)
// beyond the trained length one built for this length into the op's scratch, outputs[1] (no
// allocation). An error when n exceeds the table's positions.
Result<const float*> rotary_table(const BoundOp& b, size_t n);

}  // namespace edgebert::exec
