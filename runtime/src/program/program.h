// SPDX-License-Identifier: Apache-2.0
// program.h: the immutable Program of a model: the op list (program/op.h) from the model family's
// architecture builder (program/arch/), the buffer table with each buffer's lifetime (first
// writer to last reader, graph outputs to the end) and each buffer's size as a function of the
// session's maximum length and thread count. Built once per model at load and shared (read
// only) by every session; a Session turns it into concrete sizes, its own arena plan and its own
// XNNPACK operators.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backend/weight_cache.h"
#include "model.h"
#include "program/memory_planner.h"
#include "program/op.h"
#include "status.h"
#include "xnn_gemm.h"

namespace edgebert {

// A buffer's size for a session of `max_seq_len` positions and `threads` threads.
struct BufferSize {
  enum class Rule : int {
    kRows,          // row_bytes * max_seq_len + fixed_bytes
    kWorkerScores,  // per thread: a row tile of float attention scores (tile x max_seq_len)
    kWorkerProbs,   // per thread: a row tile of int8 attention probabilities
    kPackedKv,      // int8 K/V of one head packed for the attention kernel: one slot per head with
                    // several threads, a single reused slot with one
    kPerSequence,   // row_bytes per sequence of a packed run (at most one sequence per row): the
                    // per-sequence outputs (pooled vectors, logits), [sequences, width]
  };
  Rule rule = Rule::kRows;
  size_t row_bytes = 0;
  size_t fixed_bytes = 0;
  int heads = 0, head_dim = 0;  // kPackedKv

  static BufferSize rows(size_t bytes_per_row) { return {Rule::kRows, bytes_per_row, 0, 0, 0}; }
  static BufferSize fixed(size_t bytes) { return {Rule::kRows, 0, bytes, 0, 0}; }
  static BufferSize per_sequence(size_t bytes) { return {Rule::kPerSequence, bytes, 0, 0, 0}; }
  size_t bytes(int max_seq_len, int threads) const { return bytes(max_seq_len, threads, max_seq_len); }
  // Packed runs: per-token buffers hold max_rows rows (all sequences of a run); the attention
  // scratch stays sized for one sequence of max_seq_len.
  size_t bytes(int max_seq_len, int threads, int max_rows) const;
};

struct ProgramBuffer {
  std::string name;
  BufferSize size;
  int first_op = -1, last_op = -1;  // lifetime over the op list
  bool graph_output = false;        // read by the caller after the run
};

// Attention execution geometry, derived per session (not program data): a worker's scratch holds
// `row_tile` query rows; each packed K/V slot and each worker's scratch start on 64 bytes.
constexpr size_t kAttentionMaxRowTile = 32;
inline size_t attention_row_tile(int max_seq_len) {
  const size_t rows = (static_cast<size_t>(max_seq_len > 0 ? max_seq_len : 1) + 3) & ~static_cast<size_t>(3);
  return rows < kAttentionMaxRowTile ? rows : kAttentionMaxRowTile;
}
inline size_t attention_scratch_stride(size_t bytes) { return (bytes + 63) & ~static_cast<size_t>(63); }
size_t attention_packed_stride(size_t n, size_t head_dim);

class Program {
 public:
  // Picks the model family's builder (program/arch/registry.h) and builds the op list, the
  // buffer table and every op's constants. float_output_gemms: the backend has int8 GEMMs with
  // float output (the residual-feeding GEMMs then use them).
  // The program also owns the model's packed GEMM weights (backend/weight_cache.h), shared by every
  // session and packed here, when the program is built: with `weight_cache_path` they are mapped
  // from that file, or packed now and the file written; without it they are packed in memory.
  // (On the 2022 XNNPACK, which cannot share packed weights, every session packs its own.)
  static Result<std::shared_ptr<const Program>> build(const Model& model, bool float_output_gemms,
                                                      const std::string& weight_cache_path = "",
                                                      const WeightCacheOptions& cache_options = WeightCacheOptions());
  // The same, keeping the model alive by shared ownership for as long as the program (and so every
  // session over it) lives: what the C API does, so that eb_model_free with live sessions is safe.
  static Result<std::shared_ptr<const Program>> build(std::shared_ptr<const Model> model, bool float_output_gemms,
                                                      const std::string& weight_cache_path = "",
                                                      const WeightCacheOptions& cache_options = WeightCacheOptions());

  const Model& model() const { return *model_; }
  // The packed weights shared by every session (null store on the 2022 API, where each session
  // packs its own) and what happened to the weight cache file. GEMM key k: Op::gemm_key.
  const ModelWeights& weights() const { return weights_; }
  // Creates the XNNPACK operator of GEMM op `op` (one whose operator_of is itself) for up to
  // max_rows rows over the shared packed weights: the one way sessions make GEMM operators. Safe
  // from any thread (the store serializes creations per GEMM key and only reads once packed).
  Status create_gemm(const Op& op, size_t max_rows, XnnGemm* gemm) const;
  // Bytes a session's GEMM operators pack for themselves: 0 when the weights are shared (packed
  // once, with the program); on the 2022 API an estimate of every operator's own copy.
  size_t session_packed_bytes_estimate() const;
  // The GEMMs (one per operator) whose weights are int4 in the file, and how many of them run as
  // int8 on this machine (XnnGemm::runs_as_int4): edgebert-bench reports both, since the outputs
  // do not show it (only the larger packed weights do).
  size_t int4_gemms(size_t* requantized) const;
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<ProgramBuffer>& buffers() const { return buffers_; }
  const char* architecture() const { return architecture_; }
  int find_buffer(const std::string& name) const;  // index or -1
  // The op that first writes `buffer` (its producer), or -1.
  int producer(int buffer) const;
  // The op computing the embeddings (the producer of "hidden"): run_embeddings replaces it.
  int embeddings_op() const { return embeddings_op_; }

  // Makes the constants that depend on position ready for sequences of up to max_seq_len tokens
  // (the rotary tables' rows, program/rope_table.h): each session calls it when it is created,
  // before any run. Safe from any thread and beside runs of other sessions; allocates nothing
  // (the rows were reserved with the program).
  void prepare_positions(int max_seq_len) const;

  // Concrete buffer requests (name, bytes, lifetime) for a session, for the memory planner.
  std::vector<BufferRequest> requests(int max_seq_len, int threads) const { return requests(max_seq_len, threads, max_seq_len); }
  // ... with per-token buffers of max_rows rows (packed runs of several sequences).
  std::vector<BufferRequest> requests(int max_seq_len, int threads, int max_rows) const;
  // One line per op: index, layer label, type (weights, details), inputs -> outputs
  // (edgebert-inspect --plan). The attention ops show the session's workers and row tile.
  std::string format(int max_seq_len, int threads) const;

 private:
  friend class ProgramBuilder;
  Program() = default;
  Status finish();  // lifetimes, constants, checks

  const Model* model_ = nullptr;
  std::shared_ptr<const Model> owner_;  // set when the program keeps its model alive
  const char* architecture_ = "";
  std::vector<Op> ops_;
  std::vector<ProgramBuffer> buffers_;
  int embeddings_op_ = -1;
  std::vector<std::unique_ptr<LinearView[]>> slab_views_;  // GEMMs cut into column slabs (Op::slabs)
  std::vector<std::shared_ptr<RopeTable>> rope_tables_;     // one per rotary base (Op::rope_table)
  ModelWeights weights_;
};

// Collects buffers and ops while an architecture builder walks the model.
class ProgramBuilder {
 public:
  ProgramBuilder(const Model& model, bool float_output_gemms);
  const Model& model() const { return *program_->model_; }
  bool float_output_gemms() const { return float_output_gemms_; }
  void set_architecture(const char* name) { program_->architecture_ = name; }
  void keep_model_alive(std::shared_ptr<const Model> owner) { program_->owner_ = std::move(owner); }
  int buffer(const std::string& name, BufferSize size, bool graph_output = false);
  Op& op(OpType type, OpKind profile, int layer, std::vector<int> inputs, std::vector<int> outputs);
  const std::vector<Op>& ops() const { return program_->ops_; }
  const std::vector<ProgramBuffer>& buffers() const { return program_->buffers_; }
  // Derives lifetimes and builds every op's constants, then prepares the packed weights (see
  // Program::build); the builder is empty afterwards.
  Result<std::shared_ptr<const Program>> finish(const std::string& weight_cache_path = "",
                                                const WeightCacheOptions& cache_options = WeightCacheOptions());

 private:
  std::unique_ptr<Program> program_;
  bool float_output_gemms_;
};

}  // namespace edgebert
