// SPDX-License-Identifier: Apache-2.0
// embeddings.cpp: the embeddings op: word (float, int8 or int4 rows, dequantized here) + position
// (+ token type) rows, LayerNorm'd, and their
// int8 copy for the first GEMM. Positions count from 0 in each sequence of the run (RoBERTa's
// padding offset restarts with each sequence too).
#include "backend/int4_weights.h"
#include "exec/op_kernels.h"
#include "kernels/kernels.h"

namespace edgebert::exec {

Status run_embeddings(const BoundOp& b, const RunContext& ctx) {
  const Op& op = *b.op;
  const EmbeddingTables& e = op.embeddings;
  const size_t H = static_cast<size_t>(op.width);
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  for (size_t s = 0; s < ctx.sequence_count; ++s) {
    const SequenceRows& seq = ctx.sequences[s];
    size_t non_pad = 0;  // PADDING_OFFSET: the sequence's non-pad tokens so far
    for (size_t local = 0; local < seq.rows; ++local) {
      const size_t t = seq.first_row + local;
      float* row = hidden + t * H;
      const int32_t id = ctx.ids[t];
      if (e.word_s4) {
        const uint8_t* w = e.word_s4 + static_cast<size_t>(id) * int4::row_bytes(static_cast<int>(H));
        const int width = int4::block_width(static_cast<int>(H), e.word_block);
        const uint16_t* sc = e.word_block_scales + static_cast<size_t>(id) * int4::blocks_per_row(static_cast<int>(H), e.word_block);
        for (size_t i = 0; i < H; ++i)
          row[i] = static_cast<float>(int4::value_at(w, static_cast<int>(i))) * int4::float_from_bf16(sc[i / width]);
      } else if (e.word_s8) {
        const int8_t* w = e.word_s8 + static_cast<size_t>(id) * H;
        const float sc = e.word_scales[id];
        for (size_t i = 0; i < H; ++i) row[i] = w[i] * sc;
      } else {
        const float* w = e.word_f32 + static_cast<size_t>(id) * H;
        for (size_t i = 0; i < H; ++i) row[i] = w[i];
      }
      if (e.position_ids != PositionIds::kNone) {
        size_t p = local;
        if (e.position_ids == PositionIds::kPaddingOffset)  // RoBERTa: pads get padding_idx
          p = id == e.padding_idx ? static_cast<size_t>(e.padding_idx) : static_cast<size_t>(e.padding_idx) + ++non_pad;
        const float* pos = e.position + p * H;
        for (size_t i = 0; i < H; ++i) row[i] += pos[i];
      }
      if (e.token_type) {  // DistilBERT has none
        const float* typ = e.token_type + static_cast<size_t>(ctx.types[t]) * H;
        for (size_t i = 0; i < H; ++i) row[i] += typ[i];
      }
    }
  }
  const size_t n = ctx.rows;
  if (!op.norm) {  // no embedding norm (Qwen3): the rows as they are [+ their int8 copy]
    if (const LinearView* q = op.quant_for)
      kernels::quantize_s8_per_channel(hidden, n, H, op.inv_factors_or_null(), q->input_scale, q->input_zero_point,
                                       reinterpret_cast<int8_t*>(b.out[1]));
  } else if (const LinearView* q = op.quant_for) {
    kernels::layernorm_quantize_s8(hidden, op.norm->gamma, op.norm->beta, op.eps, n, H, op.inv_factors_or_null(),
                                   q->input_scale, q->input_zero_point, reinterpret_cast<int8_t*>(b.out[1]));
  } else {
    kernels::layernorm_f32(hidden, op.norm->gamma, op.norm->beta, op.eps, n, H, hidden);
  }
  return Status::ok();
}

}  // namespace edgebert::exec
