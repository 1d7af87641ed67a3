// SPDX-License-Identifier: Apache-2.0
// drop_first_rows.cpp: a per-token output without each sequence's first row, in place. Sequence
// after sequence, its rows 1..n-1 move up to follow the previous sequence's kept rows (a row never
// moves down, so one forward pass is safe); padded rows (key mask 0) become zeros, as bge-m3's
// colbert vectors are multiplied by the attention mask. The rows past the kept ones are left as
// they are (the getter's shape does not include them).
#include <cstring>

#include "exec/op_kernels.h"

namespace edgebert::exec {

Status run_drop_first_rows(const BoundOp& b, const RunContext& ctx) {
  const size_t width = static_cast<size_t>(b.op->width);
  float* rows = reinterpret_cast<float*>(b.out[0]);
  size_t kept = 0;
  for (size_t s = 0; s < ctx.sequence_count; ++s) {
    const SequenceRows& seq = ctx.sequences[s];
    for (size_t r = 1; r < seq.rows; ++r, ++kept) {
      const size_t from = seq.first_row + r;
      float* to = rows + kept * width;
      if (!ctx.key_mask[from]) {
        std::memset(to, 0, width * sizeof(float));
      } else if (kept != from) {
        std::memmove(to, rows + from * width, width * sizeof(float));
      }
    }
  }
  return Status::ok();
}

}  // namespace edgebert::exec
