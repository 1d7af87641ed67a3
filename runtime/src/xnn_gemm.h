// SPDX-License-Identifier: Apache-2.0
// xnn_gemm.h: one linear layer as an XNNPACK operator: int8 GEMMs with int8 output (qs8_qc8w
// fully-connected, or qc8 1x1 convolutions on the 2022 API) with the output scales folded into the
// per-channel multipliers, int8 GEMMs with float output (qd8_f32_qc8w, 2024 API only), fp32 GEMMs
// as fully-connected operators. Created once per session; reshaped only when the row count changes.
// With a PackedWeights store (backend/packed_weights.h) the operator's packed weights live in the
// store, shared by every operator created for the same GEMM key (2024 API; ignored on 2022).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <pthreadpool.h>
#include <xnnpack.h>

#include "backend/packed_weights.h"
#include "model.h"
#include "status.h"

// int8 GEMMs with float output: the fully-connected qd8_f32_qc8w operator with reshape, found by
// cmake/xnnpack.cmake's probes (EDGEBERT_XNN_HAS_QD8) on the 2024 API.
#if EDGEBERT_XNN_API >= 2024 && defined(EDGEBERT_XNN_HAS_QD8)
#define EDGEBERT_XNN_FLOAT_OUTPUT 1
#else
#define EDGEBERT_XNN_FLOAT_OUTPUT 0
#endif
// int4-weight GEMMs with float output (qd8_f32_qc4w for channel-wise int4, qd8_f32_qb4w for
// block-wise; EDGEBERT_XNN_HAS_QD8_INT4). Every other int4 GEMM is requantized to per-channel int8
// at creation and runs as an int8 GEMM.
#ifndef EDGEBERT_XNN_USE_QB4W
#define EDGEBERT_XNN_USE_QB4W 0  // cmake -DEDGEBERT_XNN_QB4W=ON sets it (cmake/xnnpack.cmake)
#endif
#if EDGEBERT_XNN_FLOAT_OUTPUT && defined(EDGEBERT_XNN_HAS_QD8_INT4)
#define EDGEBERT_XNN_INT4 1
#else
#define EDGEBERT_XNN_INT4 0
#endif

namespace edgebert {

// Initializes XNNPACK once per process with edgebert's counting allocator.
Status xnn_ready();
// Bytes XNNPACK currently holds through our allocator (all sessions of the process).
size_t xnn_bytes_allocated();
// The balance of what XNNPACK allocated minus freed on the calling thread (a session measures its
// own operators' packed copies with it while other sessions are created concurrently).
long long xnn_bytes_allocated_by_this_thread();

// Output channels [col0, col0 + width) of a linear layer: its weights, scales and bias rows from
// col0 (every other field as `linear`'s). A column slab of XnnGemm::create_slabs.
LinearView linear_columns(const LinearView& linear, int col0, int width);

class XnnGemm {
 public:
  XnnGemm() = default;
  ~XnnGemm();
  XnnGemm(const XnnGemm&) = delete;
  XnnGemm& operator=(const XnnGemm&) = delete;

  // True when this XNNPACK can run an int8 GEMM with a float output (see create).
  static bool int8_float_output_supported();
  // True when this XNNPACK has int4 GEMMs with float output (known at build time); whether a kind
  // really runs as int4 on this CPU is int4_native's answer. Without them, int4 weights are
  // requantized to int8 at creation.
  static bool int4_supported();
  // True when int4 weights (block-wise or channel-wise) of float-output GEMMs run as int4 on this
  // machine: int4_supported(), and XNNPACK's int4 GEMM of that kind gave the exact result of one
  // small GEMM (checked once per process, at the first int4 GEMM created). Else they are
  // requantized to int8 at creation, as without int4 GEMMs: Debian 13's XNNPACK (2024-11) picks
  // AVX512-AMX kernels for qd8_f32_qc4w on CPUs with AMX-INT8, and their outputs are wrong
  // (docs/int4.md).
  static bool int4_native(bool block_wise);
  // True when create() runs int4 weights (linear.int4) on XNNPACK's int4 kernels; false when it
  // requantizes them to int8 (no int4 GEMMs in this XNNPACK, not a float-output GEMM, block-wise
  // weights without block_int4_native, or the kind failed int4_native's check on this CPU).
  static bool runs_as_int4(const LinearView& linear, bool float_output,
                           bool block_int4_native = EDGEBERT_XNN_USE_QB4W);
  // The operator kind create() chose.
  enum class Kind { kNone, kF32, kQs8, kQd8F32Qc8w, kQd8F32Qc4w, kQd8F32Qb4w };
  Kind kind() const { return kind_; }

  // int8 when linear.int8, else f32. With float_output (linear.int8 only, and only where
  // int8_float_output_supported()), the int8 input keeps its static scale and zero point, given
  // to XNNPACK as per-row quantization parameters (room for max_rows rows, made here), and the
  // output is the float result: input_scale * weight_scale[c] * sum((x - zp) * w) + bias[c].
  // Activations are applied by the caller.
  // With `store` (and an XNNPACK that takes a weights-cache provider), the packed weights are
  // looked up in / packed into the store under `gemm_key` (which GEMM of the model this is; every
  // operator of one key must be created from the same weights and float_output), and the store
  // must outlive this operator. Without it, or on the 2022 API, the operator packs its own copy.
  // block_int4_native: block-wise int4 weights of a float-output GEMM run as qd8_f32_qb4w where
  // XNNPACK has it (else requantized to int8). The default is the build's -DEDGEBERT_XNN_QB4W
  // (off: on x86 qb4w is slower than the int8 GEMM, docs/int4.md); channel-wise int4 always runs
  // as qc4w there.
  Status create(const LinearView& linear, bool float_output, size_t max_rows, PackedWeights* store = nullptr,
                size_t gemm_key = 0, bool block_int4_native = EDGEBERT_XNN_USE_QB4W);
  // The same GEMM as `count` column slabs (views of consecutive output channels of one linear
  // layer, as column_slab_width() cuts them): one XNNPACK operator each, all writing into the one
  // output (row stride: the slabs' total width), slab i under GEMM key first_key + i. Same results
  // as one operator; each slab's weights stay in the L2 cache while all rows pass over them.
  Status create_slabs(const LinearView* slabs, size_t count, bool float_output, size_t max_rows,
                      PackedWeights* store = nullptr, size_t first_key = 0,
                      bool block_int4_native = EDGEBERT_XNN_USE_QB4W);
  // The width of the column slabs a GEMM's packed weights are cut into (linear.out: not cut): as
  // even as multiples of 64 channels allow, each at most half this core's L2 cache. XNNPACK
  // 2024-11 runs a GEMM row tile after row tile, each over all of the weights; on a Xeon with AMX
  // (2 MB L2) a 1024 x 3072 GEMM at 128 rows took 0.96 ms whole and 0.55 ms in 1024-column slabs
  // (edgebert-gemm-kinds --col-slab), BERT-base at 128 tokens 29 -> 21 ms. Only on CPUs with
  // AMX-INT8 by default (on AVX512-VNNI a few per cent on long runs against a slower start, four
  // times the operators to create; elsewhere not measured); EDGEBERT_GEMM_SLAB_BYTES=N sets the
  // bytes per slab anywhere (0: never cut). The tests
  // run with 4096 (tests/CMakeLists.txt). docs/xnnpack.md, "Column slabs".
  static size_t column_slab_width(const LinearView& linear);
  // Binds input/output pointers and the row count. Cheap to call when nothing changed.
  // room_rows: rows the input and output buffers hold (0: just `rows`). An fp32 GEMM of one row
  // runs as two rows when there is room, the second row's output being scratch: for a batch of 1
  // XNNPACK picks a one-row micro-kernel, which on arm64 (2024-11) sums in another order than the
  // several-row kernel, so a 1-token sequence alone would differ from the same sequence in a packed
  // run (tests/unit/test_xnn_gemm.cpp, "one row as several").
  bool setup(size_t rows, const void* input, void* output, pthreadpool_t pool, size_t room_rows = 0);
  // float_output only: the next runs' input rows are quantized per row, row r with scale
  // scales[r] and zero point 0 (dynamic quantization: kernels::dynamic_row_scale), instead of the
  // static scale. XNNPACK reads the parameters when the operator runs, so this is called before
  // every run; false when the operator has no per-row parameters or room for fewer rows.
  bool set_row_scales(const float* scales, size_t rows);
  bool run(pthreadpool_t pool);
  bool int8() const { return int8_; }
  bool float_output() const { return float_output_; }

 private:
  // One operator writing output channels [col0, col0 + linear.out) of rows out_stride wide.
  Status create_part(const LinearView& linear, size_t out_stride, size_t col0, size_t max_rows, PackedWeights* store,
                     size_t gemm_key);
  Status create_int8_from_int4(const LinearView& linear, size_t out_stride, size_t col0, size_t max_rows,
                               PackedWeights* store, size_t gemm_key);
  static bool int4_gives_exact_result(bool block_wise);
  struct Part {
    xnn_operator_t op = nullptr;
    size_t col0 = 0;  // its first output channel
  };
  std::vector<Part> parts_;  // one per column slab (one for a GEMM that is not cut)
  size_t attached_ = 0;      // parts counted in store_'s users
  Kind kind_ = Kind::kNone;
  PackedWeights* store_ = nullptr;  // attached while the parts read the store's packed weights
  bool int8_ = false;
  bool float_output_ = false;
#if EDGEBERT_XNN_FLOAT_OUTPUT
  std::vector<xnn_quantization_params> row_params_;  // float_output: static, or set_row_scales'
#endif
  size_t rows_ = 0;
  const void* input_ = nullptr;
  void* output_ = nullptr;
  pthreadpool_t pool_ = nullptr;  // the pool of the last reshape (eb_session_set_num_threads changes it)
};

}  // namespace edgebert
