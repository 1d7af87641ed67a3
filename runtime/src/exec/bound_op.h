// SPDX-License-Identifier: Apache-2.0
// bound_op.h: one op of the program bound to a session: its buffers' addresses in the session's
// arena, how each buffer advances per row and per sequence (for ops that run once per sequence),
// and its XNNPACK operator (GEMM ops; XnnGemm::setup skips a setup that changes nothing). Fixed-size arrays, so that a per-sequence view of an op is
// a copy without allocation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "program/op.h"
#include "xnn_gemm.h"

namespace edgebert::exec {

constexpr size_t kMaxOpBuffers = 4;

struct BufferStep {
  size_t row_bytes = 0;       // per-row buffers: bytes of one row
  size_t sequence_bytes = 0;  // per-sequence buffers: bytes of one sequence's row
};

struct BoundOp {
  const Op* op = nullptr;
  std::array<uint8_t*, kMaxOpBuffers> in{}, out{};
  std::array<BufferStep, kMaxOpBuffers> in_step{}, out_step{};
  size_t in_count = 0, out_count = 0;
  XnnGemm* gemm = nullptr;  // GEMM ops

  // This op as it runs on `seq`: each buffer moved to the sequence's first row (per-row buffers) or
  // to its output row (per-sequence buffers); one-row buffers stay.
  template <class Seq>
  BoundOp for_sequence(const Seq& seq) const {
    BoundOp v = *this;
    for (size_t i = 0; i < in_count; ++i)
      v.in[i] += seq.first_row * in_step[i].row_bytes + seq.output_index * in_step[i].sequence_bytes;
    for (size_t i = 0; i < out_count; ++i)
      v.out[i] += seq.first_row * out_step[i].row_bytes + seq.output_index * out_step[i].sequence_bytes;
    return v;
  }
};

}  // namespace edgebert::exec
