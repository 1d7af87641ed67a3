// SPDX-License-Identifier: Apache-2.0
// norms.cpp: the residual stream's ops: post-norm add + LayerNorm, pre-norm LayerNorm and add, and
// the quantize / convert ops that hand a float or int8 tensor to the next GEMM in its precision.
#include <algorithm>
#include <cmath>

#include "exec/op_kernels.h"
#include "exec/parallel.h"
#include "exec/qkv_rows.h"
#include "kernels/kernels.h"

namespace edgebert::exec {
namespace {

// hidden rows += a GEMM's output rows [r0, r0 + rows): dequantized with the op's per-channel
// scales when the GEMM wrote int8, added as is when it wrote float.
void add_residual(float* h, const void* y, size_t r0, size_t rows, size_t H, const Op& op) {
  if (op.linear->int8 && !op.float_output) {
    kernels::residual_dequant_add_s8(h, static_cast<const int8_t*>(y) + r0 * H, rows, H, op.dequant_scales.data(),
                                     op.linear->output_zero_point);
  } else {
    const float* yf = static_cast<const float*>(y) + r0 * H;
    for (size_t i = 0; i < rows * H; ++i) h[i] += yf[i];
  }
}

// hidden rows += RMSNorm(y rows) with gamma (Gemma 3's post-norms): y dequantized on the fly when
// the GEMM wrote int8 (two passes over y: its sum of squares, then the add; no scratch).
void add_rms_normed(float* h, const void* y, size_t r0, size_t rows, size_t H, const Op& op) {
  const bool s8 = op.linear->int8 && !op.float_output;
  const int8_t* ys8 = static_cast<const int8_t*>(y) + r0 * H;
  const float* yf = static_cast<const float*>(y) + r0 * H;
  const float* scales = op.dequant_scales.data();
  const int32_t zp = op.linear->output_zero_point;
  const float* gamma = op.norm->gamma;
  for (size_t r = 0; r < rows; ++r) {
    float* hr = h + r * H;
    if (s8) {
      auto value = [&](size_t c) { return static_cast<float>(ys8[r * H + c] - zp) * scales[c]; };
      const float inv = kernels::inverse_rms_of_sum(kernels::sum_squares_f64_of(value, H), H, op.eps);  // rmsnorm.h's order
      for (size_t c = 0; c < H; ++c) hr[c] += value(c) * inv * gamma[c];
    } else {  // the same steps on float rows, in loops the compiler vectorizes
      const float* yr = yf + r * H;
      const float inv = kernels::inverse_rms_of_sum(kernels::sum_squares_f64(yr, H), H, op.eps);
      for (size_t c = 0; c < H; ++c) hr[c] += yr[c] * inv * gamma[c];
    }
  }
}

}  // namespace

Status run_add_norm(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const size_t H = static_cast<size_t>(op.width);
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  auto add_norm = [&](size_t r0, size_t rows) {
    float* h = hidden + r0 * H;
    add_residual(h, b.in[1], r0, rows, H, op);
    if (op.quant_for) {
      kernels::layernorm_quantize_s8(h, op.norm->gamma, op.norm->beta, op.eps, rows, H, op.inv_factors_or_null(),
                                     op.quant_for->input_scale, op.quant_for->input_zero_point,
                                     reinterpret_cast<int8_t*>(b.out[1]) + r0 * H);
    } else {
      kernels::layernorm_f32(h, op.norm->gamma, op.norm->beta, op.eps, rows, H, h);
    }
  };
  parallel_rows(ctx.res.pool, ctx.rows, ctx.row_tile, add_norm);
  return Status::ok();
}

Status run_layer_norm(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const size_t H = static_cast<size_t>(op.width);
  const float* x = reinterpret_cast<const float*>(b.in[0]);
  float* y = reinterpret_cast<float*>(b.out[0]);
  float* row_scales = b.out_count > 2 ? reinterpret_cast<float*>(b.out[2]) : nullptr;
  auto norm = [&](size_t r0, size_t rows) {
    if (op.rms_norm)
      kernels::rmsnorm_f32(x + r0 * H, op.norm->gamma, op.eps, rows, H, y + r0 * H);
    else
      kernels::layernorm_f32(x + r0 * H, op.norm->gamma, op.norm->beta, op.eps, rows, H, y + r0 * H);
    if (!op.quant_for) return;
    int8_t* q = reinterpret_cast<int8_t*>(b.out[1]) + r0 * H;
    if (row_scales) {  // each row at its own scale, for a GEMM that takes it (blocks::pre_norm)
      for (size_t r = 0; r < rows; ++r) {
        float* yr = y + (r0 + r) * H;
        if (!op.inv_factors.empty())  // SmoothQuant: the row as the GEMM reads it (nothing else reads y)
          for (size_t c = 0; c < H; ++c) yr[c] *= op.inv_factors[c];
        row_scales[r0 + r] = kernels::quantize_s8_row_dynamic(yr, H, q + r * H);
      }
    } else {
      kernels::quantize_s8_per_channel(y + r0 * H, rows, H, op.inv_factors_or_null(), op.quant_for->input_scale,
                                       op.quant_for->input_zero_point, q);
    }
  };
  parallel_rows(ctx.res.pool, op_rows(op, ctx), ctx.row_tile, norm);
  return Status::ok();
}

Status run_add(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const size_t H = static_cast<size_t>(op.width);
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  auto add = [&](size_t r0, size_t rows) {
    if (op.assign) std::fill(hidden + r0 * H, hidden + (r0 + rows) * H, 0.0f);  // 0 + y == y exactly
    if (op.norm)
      add_rms_normed(hidden + r0 * H, b.in[1], r0, rows, H, op);
    else
      add_residual(hidden + r0 * H, b.in[1], r0, rows, H, op);
  };
  parallel_rows(ctx.res.pool, ctx.rows, ctx.row_tile, add);
  return Status::ok();
}

void rmsnorm_qk_heads_f32(const Op& op, float* x, size_t rows) {
  const QkvRows layout = qkv_rows(op);
  for (size_t r = 0; r < rows; ++r)
    for (size_t h = 0; h < layout.heads + layout.kv_heads; ++h) {  // Q's heads, then K's
      float* v = x + r * layout.stride + h * layout.head_dim;
      kernels::rmsnorm_f32(v, (h < layout.heads ? op.q_norm : op.k_norm)->gamma, op.eps, 1, layout.head_dim, v);
    }
}

Status run_head_norm(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const QkvRows layout = qkv_rows(op);
  const size_t d = layout.head_dim, heads = layout.heads, kv = layout.kv_heads, stride = layout.stride;
  const LayerNormView* norms[2] = {op.q_norm, op.k_norm};
  const size_t first[2] = {0, heads * d}, count[2] = {heads, kv};
  auto norm = [&](size_t r0, size_t rows) {
    if (!op.linear->int8) {  // fp32 QKV
      rmsnorm_qk_heads_f32(op, reinterpret_cast<float*>(b.out[0]) + r0 * stride, rows);
      return;
    }
    for (size_t part = 0; part < 2; ++part) {  // Q, then K
      // one scale per head on each side: the QKV GEMM's before, the calibrated post-norm after
      float in_scales[1024], out_scales[1024];
      for (size_t h = 0; h < count[part]; ++h) {
        const int c = static_cast<int>(first[part] + h * d);
        in_scales[h] = op.linear->output_channel_scale(c);
        out_scales[h] = op.qkv_scale(c);
      }
      kernels::rmsnorm_heads_s8(reinterpret_cast<int8_t*>(b.out[0]) + r0 * stride, rows, stride, first[part],
                                static_cast<int>(count[part]), op.head_dim, norms[part]->gamma, op.eps, in_scales,
                                out_scales);
    }
  };
  parallel_rows(ctx.res.pool, ctx.rows, ctx.row_tile, norm);
  return Status::ok();
}

Status run_quantize(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  kernels::quantize_s8_per_channel(reinterpret_cast<const float*>(b.in[0]), ctx.rows, static_cast<size_t>(op.width),
                                   op.inv_factors_or_null(), op.quant_for->input_scale, op.quant_for->input_zero_point,
                                   reinterpret_cast<int8_t*>(b.out[0]));
  return Status::ok();
}

Status run_convert_context(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const LinearView& g = *op.quant_for;  // the GEMM that reads the converted context
  const size_t count = ctx.rows * static_cast<size_t>(op.width);
  if (op.float_output) {  // float rows -> int8, each row with its own scale (outputs[1])
    const size_t width = static_cast<size_t>(op.width);
    const float* x = reinterpret_cast<const float*>(b.in[0]);
    int8_t* q = reinterpret_cast<int8_t*>(b.out[0]);
    float* scales = reinterpret_cast<float*>(b.out[1]);
    auto rows = [&](size_t r0, size_t n) {
      for (size_t r = r0; r < r0 + n; ++r) scales[r] = kernels::quantize_s8_row_dynamic(x + r * width, width, q + r * width);
    };
    parallel_rows(ctx.res.pool, ctx.rows, ctx.row_tile, rows);
  } else if (g.int8) {
    kernels::quantize_s8(reinterpret_cast<const float*>(b.in[0]), count, g.input_scale, g.input_zero_point,
                         reinterpret_cast<int8_t*>(b.out[0]));
  } else {
    const int8_t* src = reinterpret_cast<const int8_t*>(b.in[0]);
    float* dst = reinterpret_cast<float*>(b.out[0]);
    for (size_t i = 0; i < count; ++i) dst[i] = (src[i] - g.input_zero_point) * g.input_scale;
  }
  return Status::ok();
}

}  // namespace edgebert::exec
