// SPDX-License-Identifier: Apache-2.0
// vocab_logits.cpp: the masked-LM decoder GEMM into the logits block, one row or a block of rows
// (see vocab_logits.h).
#include "exec/vocab_logits.h"

#include <string>

namespace edgebert::exec {

Status run_vocab_gemm(const BoundOp& b, const uint8_t* input, size_t rows, pthreadpool_t pool) {
  if (!b.gemm->setup(rows, input, b.out[0], pool) || !b.gemm->run(pool))
    return Status(EB_ERROR_BACKEND, std::string("XNNPACK run failed (") + b.op->linear->name + ")");
  return Status::ok();
}

float exact_vocab_logit(const LinearView& d, const int8_t* x, size_t c) {
  const int8_t* w = d.weight_s8 + c * static_cast<size_t>(d.in);
  int32_t acc = 0;
  for (int k = 0; k < d.in; ++k) acc += (static_cast<int32_t>(x[k]) - d.input_zero_point) * w[k];
  return d.input_scale * d.weight_scales[c] * static_cast<float>(acc) + (d.bias ? d.bias[c] : 0.f);
}

Status vocab_logits_row(const BoundOp& b, const uint8_t* input, pthreadpool_t pool, const float** logits) {
  const Op& op = *b.op;
  const size_t V = static_cast<size_t>(op.width);
  EB_RETURN_IF_ERROR(run_vocab_gemm(b, input, 1, pool));
  if (!op.linear->int8 || op.float_output) {  // the GEMM wrote float logits
    *logits = reinterpret_cast<const float*>(b.out[0]);
    return Status::ok();
  }
  // int8 logits in bytes [0, V); their float values from byte 4 V on (4-aligned), 8 V bytes in all
  if (op.block_rows < 8) return Status(EB_ERROR_BACKEND, "the masked-LM logits block has no room for a float row");
  float* row = reinterpret_cast<float*>(b.out[0] + 4 * V);
  for_each_vocab_logit(b, 0, input, [row](size_t c, float l) { row[c] = l; });
  *logits = row;
  return Status::ok();
}

}  // namespace edgebert::exec
