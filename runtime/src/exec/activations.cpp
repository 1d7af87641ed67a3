// SPDX-License-Identifier: Apache-2.0
// activations.cpp: the FFN activation (a 256-entry table on int8, the float function otherwise)
// and the gated FFN (GeGLU, SwiGLU, GLU) in every mix of int8 and float neighbours.
#include "exec/activation_f32.h"
#include "exec/op_kernels.h"
#include "exec/parallel.h"
#include "kernels/kernels.h"

namespace edgebert::exec {

Status run_activation(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const size_t I = static_cast<size_t>(op.width);
  const LinearView* next = op.quant_for;
  auto act = [&](size_t r0, size_t rows) {
    const size_t o = r0 * I, cnt = rows * I;
    if (op.linear->int8 && next) {
      kernels::apply_lut_s8(reinterpret_cast<int8_t*>(b.out[0]) + o, cnt, op.lut_s8.data());
    } else if (op.linear->int8) {
      const int8_t* src = reinterpret_cast<const int8_t*>(b.in[0]) + o;
      float* dst = reinterpret_cast<float*>(b.out[0]) + o;
      for (size_t i = 0; i < cnt; ++i) dst[i] = op.lut_f32[static_cast<size_t>(src[i] + 128)];
    } else {
      float* x = reinterpret_cast<float*>(b.in[0]) + o;
      kernels::activation_f32(static_cast<kernels::ActivationKind>(op.activation), x, cnt);
      if (next)
        kernels::quantize_s8(x, cnt, next->input_scale, next->input_zero_point, reinterpret_cast<int8_t*>(b.out[0]) + o);
    }
  };
  parallel_rows(ctx.res.pool, ctx.rows, ctx.row_tile, act);
  return Status::ok();
}

// y[r, c] = act(x[r, c]) * x[r, I + c]; int8 or float halves in, the down GEMM's int8 input or
// floats out (mixed precision through --keep-fp32 gives the two mixed cases).
Status run_gated_activation(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const size_t I = static_cast<size_t>(op.width);
  pthreadpool_t pool = ctx.res.pool;
  if (op.linear->int8 && !op.quant_for) {  // int8 halves, fp32 down GEMM (--keep-fp32): float out
    const float s = op.linear->output_scale;
    const int32_t zp = op.linear->output_zero_point;
    auto gate = [&](size_t r0, size_t rows) {
      for (size_t r = r0; r < r0 + rows; ++r) {
        const int8_t* g = reinterpret_cast<const int8_t*>(b.in[0]) + r * 2 * I;
        float* y = reinterpret_cast<float*>(b.out[0]) + r * I;
        for (size_t c = 0; c < I; ++c) y[c] = op.lut_f32[static_cast<uint8_t>(g[c])] * ((g[I + c] - zp) * s);  // the table's order (gated.h)
      }
    };
    parallel_rows(pool, ctx.rows, ctx.row_tile, gate);
    return Status::ok();
  }
  // outputs[1], when there: each row's dynamic scale (per-row quantization for the down GEMM)
  float* row_scales = b.out_count > 1 ? reinterpret_cast<float*>(b.out[1]) : nullptr;
  if (op.linear->int8) {  // int8 halves -> the down GEMM's int8 input (kernels/gated.h)
    auto gate_s8 = [&](size_t r0, size_t rows) {
      kernels::GatedArgs a{reinterpret_cast<const int8_t*>(b.in[0]) + r0 * 2 * I, 2 * I, rows, I, op.lut_f32.data(),
                           op.linear->output_scale, op.linear->output_zero_point, op.quant_for->input_scale,
                           op.quant_for->input_zero_point, reinterpret_cast<int8_t*>(b.out[0]) + r0 * I, I,
                           row_scales ? row_scales + r0 : nullptr};
      kernels::gated_s8(a);
    };
    parallel_rows(pool, ctx.rows, ctx.row_tile, gate_s8);
    return Status::ok();
  }
  float* x = reinterpret_cast<float*>(b.in[0]);
  float* y = reinterpret_cast<float*>(b.out[0]);
  const LinearView* next = op.quant_for;  // an int8 down GEMM after an fp32 up GEMM (--keep-fp32)
  auto gate = [&](size_t r0, size_t rows) {
    for (size_t r = r0; r < r0 + rows; ++r) {
      float* g = x + r * 2 * I;
      activation_in_place(op.activation, g, I);
      if (next) {  // the product into the first half, then quantized for the down GEMM
        for (size_t c = 0; c < I; ++c) g[c] *= g[I + c];
        int8_t* q = reinterpret_cast<int8_t*>(b.out[0]) + r * I;
        if (row_scales)
          row_scales[r] = kernels::quantize_s8_row_dynamic(g, I, q);
        else
          kernels::quantize_s8(g, I, next->input_scale, next->input_zero_point, q);
      } else {
        for (size_t c = 0; c < I; ++c) y[r * I + c] = g[c] * g[I + c];
      }
    }
  };
  parallel_rows(pool, ctx.rows, ctx.row_tile, gate);
  return Status::ok();
}

}  // namespace edgebert::exec
