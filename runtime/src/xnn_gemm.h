// xnn_gemm.h: one linear layer as an XNNPACK operator: int8 GEMMs as per-channel (qc8) 1x1
// convolutions with the output scales folded into the per-channel multipliers, fp32 GEMMs as
// fully-connected operators. Created once per session; set up only when the row count changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <pthreadpool.h>
#include <xnnpack.h>

#include "model.h"

namespace edgebert {

// Initializes XNNPACK once per process with edgebert's counting allocator.
bool xnn_ready(std::string* error);
// Bytes XNNPACK currently holds through our allocator (all sessions of the process).
size_t xnn_bytes_allocated();

class XnnGemm {
 public:
  XnnGemm() = default;
  ~XnnGemm();
  XnnGemm(const XnnGemm&) = delete;
  XnnGemm& operator=(const XnnGemm&) = delete;

  // int8 (qc8) when linear.int8, else f32. `apply_tanh` is not supported; activations are
  // applied by the caller.
  bool create(const LinearView& linear, std::string* error);
  // Binds input/output pointers and the row count. Cheap to call when nothing changed.
  bool setup(size_t rows, const void* input, void* output, pthreadpool_t pool);
  bool run(pthreadpool_t pool);
  bool int8() const { return int8_; }

 private:
  xnn_operator_t op_ = nullptr;
  bool int8_ = false;
  size_t rows_ = 0;
  const void* input_ = nullptr;
  void* output_ = nullptr;
};

}  // namespace edgebert
