// SPDX-License-Identifier: Apache-2.0
// rotary.cpp: rotary position embedding of Q and K (the Q and K sections of each QKV row), in
// place, sequence by sequence: a row's angle is its position in its own sequence, and dynamic NTK
// (nomic-bert) scales the base by that sequence's length beyond the trained one (its table built
// into the op's scratch; no allocation). A packed run therefore rotates each sequence exactly as
// its single run does, and never reads past the table (a sequence is at most max_position long).
// int8 rows are rotated in row tiles over the pool (each row independent: the same bytes).
#include <cmath>

#include "exec/op_kernels.h"
#include "exec/parallel.h"
#include "exec/qkv_rows.h"
#include "kernels/kernels.h"

namespace edgebert::exec {

Result<const float*> rotary_table(const BoundOp& b, size_t n) {
  const RotaryOp& r = b.op->rotary;
  if (n > static_cast<size_t>(r.table_positions))
    return Status(EB_ERROR_BACKEND, "rotary: a sequence of " + std::to_string(n) + " rows is longer than the table");
  if (r.ntk_factor > 0 && n > static_cast<size_t>(r.ntk_max_trained)) {
    const double f = r.ntk_factor, scale = f * static_cast<double>(n) / r.ntk_max_trained - (f - 1.0);
    const double base = r.theta * std::pow(scale, static_cast<double>(r.dims) / (r.dims - 2));
    float* scratch = reinterpret_cast<float*>(b.out[1]);
    kernels::build_rope_table(base, r.dims, static_cast<int>(n), scratch);
    return static_cast<const float*>(scratch);
  }
  const RopeTable& table = *b.op->rope_table;
  if (n > static_cast<size_t>(table.filled()))  // Program::prepare_positions was not called for n
    return Status(EB_ERROR_BACKEND, "rotary: a sequence of " + std::to_string(n) + " rows, the table has " +
                                        std::to_string(table.filled()) + " positions ready");
  return table.data();
}

void rope_qk_f32(const Op& op, float* x, size_t rows, const float* table) {
  const QkvRows layout = qkv_rows(op);
  kernels::RopeArgs a{rows, layout.stride, 0, static_cast<int>(layout.heads), op.head_dim, op.rotary.dims,
                      rope_form(op.rotary), nullptr, table};
  kernels::rope_f32(a, x);  // Q
  a.first = layout.heads * layout.head_dim;
  a.heads = static_cast<int>(layout.kv_heads);
  kernels::rope_f32(a, x);  // K
}

Status run_rotary(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const RotaryOp& r = op.rotary;
  const QkvRows layout = qkv_rows(op);
  const size_t d = layout.head_dim, heads = layout.heads, kv = layout.kv_heads, stride = layout.stride;
  const size_t first[2] = {0, heads * d}, count[2] = {heads, kv};
  const kernels::RopeForm form = rope_form(r);
  for (size_t s = 0; s < ctx.sequence_count; ++s) {
    const SequenceRows& seq = ctx.sequences[s];
    const size_t n = seq.rows;
    Result<const float*> t = rotary_table(b, n);
    if (!t.is_ok()) return t.status();
    const float* table = t.value();
    if (op.linear && op.linear->int8) {  // int8 QKV: each head at its own (symmetric) scale, kept
      int8_t* qkv = reinterpret_cast<int8_t*>(b.in[0]) + seq.first_row * stride;
      const size_t table_row = static_cast<size_t>(r.dims / 2) * 2;  // floats per position
      auto rotate = [&](size_t r0, size_t rows) {  // rows [r0, r0 + rows) are positions r0, ...
        for (size_t part = 0; part < 2; ++part)
          for (size_t h = 0; h < count[part]; ++h) {
            const float sc = op.qkv_scale(static_cast<int>(first[part] + h * d));
            kernels::RopeArgs a{rows, stride, first[part] + h * d, 1, op.head_dim, r.dims, form, nullptr,
                                table + r0 * table_row};
            kernels::rope_s8(a, sc, sc, qkv + r0 * stride);
          }
      };
      parallel_rows(ctx.res.pool, n, ctx.row_tile, rotate);
      continue;
    }
    float* qkv = reinterpret_cast<float*>(b.in[0]) + seq.first_row * stride;
    rope_qk_f32(op, qkv, n, table);
  }
  return Status::ok();
}

}  // namespace edgebert::exec
