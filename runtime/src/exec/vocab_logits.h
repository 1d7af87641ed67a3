// SPDX-License-Identifier: Apache-2.0
// vocab_logits.h: the masked-LM decoder of a kSparseVocab op (the tied word table, int8 or fp32)
// over some rows of the head's features into the op's logits block (its first output), and
// reading a block row's logits: what SPLADE's streamed reduction (sparse_vocab.cpp) and
// fill-mask's one-row decode (Session::masked_lm_logits) share. Allocation-free.
#pragma once

#include <cstddef>

#include "exec/bound_op.h"
#include "status.h"

namespace edgebert::exec {

// Bytes of one row of the decoder's input (the features: int8 for an int8 decoder, else float).
inline size_t vocab_input_row_bytes(const BoundOp& b) {
  const LinearView& d = *b.op->linear;
  return static_cast<size_t>(d.in) * (d.int8 ? 1 : 4);
}

// The decoder GEMM over `rows` (<= the op's block_rows) rows starting at `input` into block rows
// [0, rows).
Status run_vocab_gemm(const BoundOp& b, const uint8_t* input, size_t rows, pthreadpool_t pool);

// The logit of entry c for the int8 features row x, from the int8 decoder's weights with an int32
// sum: input_scale * weight_scale[c] * sum((x - zp) * w[c]) + bias[c] (what a float-output int8
// GEMM computes). Used where the 2022 XNNPACK's int8 logit saturated.
float exact_vocab_logit(const LinearView& d, const int8_t* x, size_t c);

// Whether the int8 logits of this decoder can be recomputed exactly (its int8 weights are at hand
// and carry no per-input-channel factors).
inline bool can_recompute_vocab_logits(const LinearView& d) {
  return d.int8 && !d.int4 && d.weight_s8 && d.weight_scales && !d.input_factors;
}

// f(c, logit) for every vocabulary entry c of block row r, whose input row is `input`: the logit
// as a float. int8 logits (the 2022 XNNPACK) are dequantized with their per-channel scales, and
// the saturated ones (-128 / 127: the largest logits, above the calibrated range) recomputed
// exactly (exact_vocab_logit), so the top entries keep their order.
template <class F>
void for_each_vocab_logit(const BoundOp& b, size_t r, const uint8_t* input, F&& f) {
  const Op& op = *b.op;
  const LinearView& d = *op.linear;
  const size_t V = static_cast<size_t>(op.width);
  if (d.int8 && !op.float_output) {
    const int8_t* q = reinterpret_cast<const int8_t*>(b.out[0]) + r * V;
    const int8_t* x = reinterpret_cast<const int8_t*>(input);
    const bool exact = can_recompute_vocab_logits(d);
    for (size_t c = 0; c < V; ++c) {
      if (exact && (q[c] == 127 || q[c] == -128))
        f(c, exact_vocab_logit(d, x, c));
      else
        f(c, static_cast<float>(q[c] - d.output_zero_point) * d.output_channel_scale(static_cast<int>(c)));
    }
  } else {
    const float* y = reinterpret_cast<const float*>(b.out[0]) + r * V;
    for (size_t c = 0; c < V; ++c) f(c, y[c]);
  }
}

// The float logits [vocab] of one features row (`input`), decoded into the op's block buffer:
// the GEMM writes block row 0; int8 logits are then dequantized into the block past that row
// (the block holds block_rows >= 8 rows of int8 logits: room for one float row after the first).
// *logits points into the block until the block is next written (the next run).
Status vocab_logits_row(const BoundOp& b, const uint8_t* input, pthreadpool_t pool, const float** logits);

}  // namespace edgebert::exec
