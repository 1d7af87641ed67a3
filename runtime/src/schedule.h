// schedule.h: a session's op schedule as explicit data (an "execution plan"): the list of ops in
// run order, each with its kind, per-op parameters and named input/output buffers. One function
// builds it from the model; buffer lifetimes (first producer to last consumer, graph outputs to
// the end) are derived from the list and handed to the memory planner; the session's executor
// walks the list calling one function per op kind.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "model.h"
#include "planner/memory_planner.h"

namespace edgebert {

// Profiling categories (edgebert-bench --op-profile): several op types may share one.
enum class OpKind : int {
  kEmbeddings = 0,
  kQkvGemm,
  kAttention,
  kAttentionOutputGemm,
  kAddNorm1,
  kIntermediateGemm,
  kGelu,
  kOutputGemm,
  kAddNorm2,
  kPoolerClassifier,  // every task head (pooler, classifiers, QA, pooling)
  kCount
};
const char* op_kind_name(OpKind k);

// What an op does; the executor has one function per type.
enum class OpType : int {
  kEmbeddings,      // ids -> hidden (float) [+ int8 input of the first GEMM]
  kGemm,            // XNNPACK GEMM: inputs[0] -> outputs[0] (`linear`), then `post`
  kAttention,       // attention core of one layer: every head, query rows shared among `workers`
  kConvertContext,  // attention context into the precision the output GEMM reads
  kAddNorm,         // hidden += dequant(inputs[1]); LayerNorm; [+ quantize for `quant_for`]
  kActivation,      // FFN activation (GELU / ReLU / tanh-GELU), via a 256-entry table on int8
  kSpanLogits,      // QA: GEMM [n, 2] into outputs[0], split into start (outputs[1]), end (outputs[2])
  kSentencePooling, // pooling over the attention mask [+ L2 normalization]
  kCount
};
const char* op_type_name(OpType t);

// Elementwise function applied to a head GEMM's output.
enum class PostOp : int { kNone, kTanh, kRelu };

struct ScheduledOp {
  OpType type = OpType::kGemm;
  OpKind profile = OpKind::kEmbeddings;
  int layer = -1;  // encoder layer, -1 for embeddings and heads
  int stage = 0;   // kAddNorm: 0 after attention, 1 after the FFN (hidden-state hook stage)
  int workers = 0, row_tile = 0;          // kAttention: worker scratch slots, rows per slot
  bool per_token = true;                  // GEMMs: one row per token, else one row ([CLS])
  bool float_residual = false;            // kGemm: int8 GEMM writing float; kAddNorm: inputs[1] is
                                          // that float output
  PostOp post = PostOp::kNone;            // kGemm
  const LinearView* linear = nullptr;     // kGemm / kSpanLogits: the weights; kAddNorm: the GEMM
                                          // whose output is added
  const LinearView* quant_for = nullptr;  // int8 GEMM whose input this op's float output feeds
                                          // (quantized into outputs[1]); null: stays float
  const LayerNormView* norm = nullptr;    // kEmbeddings / kAddNorm
  const char* detail = nullptr;           // shown by format_schedule (activation, pooling)
  std::vector<int> inputs, outputs;       // indices into Schedule::buffers
};

struct Schedule {
  std::vector<ScheduledOp> ops;
  // Name, bytes (at the maximum sequence length) and the lifetime derived from `ops`.
  std::vector<BufferRequest> buffers;
  std::vector<bool> graph_output;  // per buffer: read by the caller after the run
  int find(const std::string& name) const;  // buffer index or -1
};

// Geometry of the attention core's buffers (the schedule sizes them, the executor indexes them):
// a worker's scratch holds `row_tile` query rows; each head's packed K/V and each worker's scratch
// start on a 64-byte boundary.
constexpr size_t kAttentionMaxRowTile = 32;
inline size_t attention_row_tile(int max_seq_len) {
  const size_t rows = (static_cast<size_t>(max_seq_len > 0 ? max_seq_len : 1) + 3) & ~static_cast<size_t>(3);
  return rows < kAttentionMaxRowTile ? rows : kAttentionMaxRowTile;
}
inline size_t attention_scratch_stride(size_t bytes) { return (bytes + 63) & ~static_cast<size_t>(63); }
inline size_t attention_packed_stride(size_t n, size_t head_dim) {
  return attention_scratch_stride(kernels::attention_s8_packed_bytes(n, head_dim));
}

// Builds the schedule of `model` for sequences up to max_seq_len for `threads` threads (the
// attention core's worker scratch slots), and derives the lifetimes. float_residual: the backend
// has int8 GEMMs with float output; the attention-output and FFN-down GEMMs then use them.
// False (with *error) only on an inconsistent list.
bool build_schedule(const Model& model, int max_seq_len, int threads, bool float_residual, Schedule* out,
                    std::string* error);

// One line per op: index, type, layer, inputs -> outputs (edgebert-inspect --plan).
std::string format_schedule(const Schedule& s);

}  // namespace edgebert
