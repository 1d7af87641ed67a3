// SPDX-License-Identifier: Apache-2.0
// qkv_to_int8.cpp: the float rows of an int8 QKV GEMM that wrote float (the LLM-block families,
// blocks::attention) made into the int8 rows the attention reads: Q's and K's per-head RMSNorms,
// the rotary, then every head quantized once at its own scale (Op::qkv_scale: Q and K after
// their norms, V as the GEMM's output). The three steps run on a few rows at a time, so the
// float rows of a long input are read from memory once.
#include <algorithm>

#include "exec/op_kernels.h"
#include "exec/parallel.h"
#include "exec/qkv_rows.h"
#include "kernels/kernels.h"

namespace edgebert::exec {
namespace {

constexpr size_t kRowsPerStep = 8;  // 8 rows of EmbeddingGemma's QKV are 40 KB of floats

}  // namespace

Status run_qkv_to_int8(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const RotaryOp& rot = op.rotary;
  const QkvRows layout = qkv_rows(op);
  const size_t d = layout.head_dim, heads = layout.heads, kv = layout.kv_heads, stride = layout.stride;
  const size_t table_row = static_cast<size_t>(rot.dims / 2) * 2;  // floats per position
  for (size_t s = 0; s < ctx.sequence_count; ++s) {
    const SequenceRows& seq = ctx.sequences[s];
    const float* table = nullptr;
    if (rot.dims > 0) {
      Result<const float*> t = rotary_table(b, seq.rows);
      if (!t.is_ok()) return t.status();
      table = t.value();
    }
    float* x = reinterpret_cast<float*>(b.in[0]) + seq.first_row * stride;
    int8_t* y = reinterpret_cast<int8_t*>(b.out[0]) + seq.first_row * stride;
    auto convert = [&](size_t r0, size_t rows) {  // rows [r0, r0 + rows) are positions r0, ...
      for (size_t p0 = r0; p0 < r0 + rows; p0 += kRowsPerStep) {
        const size_t n = std::min(kRowsPerStep, r0 + rows - p0);
        float* xs = x + p0 * stride;
        if (op.q_norm) rmsnorm_qk_heads_f32(op, xs, n);
        if (table) rope_qk_f32(op, xs, n, table + p0 * table_row);
        for (size_t r = 0; r < n; ++r)
          for (size_t h = 0; h < heads + 2 * kv; ++h)  // symmetric, one scale per head (model.cpp checks)
            kernels::quantize_s8(xs + r * stride + h * d, d, op.qkv_scale(static_cast<int>(h * d)), 0,
                                 y + (p0 + r) * stride + h * d);
      }
    };
    parallel_rows(ctx.res.pool, seq.rows, ctx.row_tile, convert);
  }
  return Status::ok();
}

}  // namespace edgebert::exec
