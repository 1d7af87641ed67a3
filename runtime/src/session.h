// session.h: an inference session: the op schedule (schedule.h) bound to its memory plan (one
// arena), the XNNPACK operators and the thread pool, all created once; the executor walks the op
// list. Runs then allocate nothing. Modelled on XNNPACK's create/setup/run life cycle.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pthreadpool.h>

#include "edgebert/edgebert.h"
#include "model.h"
#include "planner/memory_planner.h"
#include "schedule.h"
#include "xnn_gemm.h"

namespace edgebert {

struct SessionOptions {
  int threads = 1;
  int max_seq_len = 0;  // 0: model's max_position_embeddings
  bool split_special_tokens = false;  // true: "[SEP]" etc. in the text are plain text
  uint64_t max_memory_bytes = 0;      // 0: no limit; else refuse (before allocating) above it
};

class Session {
 public:
  ~Session();
  static eb_status create(const Model& model, const SessionOptions& options, std::unique_ptr<Session>* out,
                          std::string* error);

  eb_status run_ids(const int32_t* ids, const int32_t* token_types, const int32_t* mask, size_t n);
  eb_status run_text(const char* text);
  // "[CLS] a [SEP] b [SEP]", token types 0 (incl. the first [SEP]) then 1.
  eb_status run_text_pair(const char* a, const char* b);
  eb_status run_embeddings(const float* embeddings, const int32_t* mask, size_t n);

  // Benchmark floor: runs only the XNNPACK GEMMs of every layer on the buffers of the last
  // successful run (same row count), skipping everything else. Results are meaningless.
  eb_status run_gemms_only();

  bool has_output() const { return seq_len_ > 0; }
  size_t seq_len() const { return seq_len_; }
  const float* last_hidden_state() const { return hidden_; }
  const float* pooler_output() const { return pooled_; }
  const float* logits() const { return logits_; }
  const float* sentence_embedding() const { return sentence_embedding_; }
  const float* start_logits() const { return start_logits_; }
  const float* end_logits() const { return end_logits_; }
  const float* token_logits() const { return token_logits_; }
  // Byte range of each token of the last text run in its text, and its segment (0: text / text_a,
  // 1: text_b, -1: added special token). False after run_ids / run_embeddings.
  bool has_offsets() const { return has_output() && offsets_valid_; }
  const int32_t* token_begin() const { return begin_.data(); }
  const int32_t* token_end() const { return end_.data(); }
  const int32_t* token_segment() const { return segment_.data(); }
  // Extractive QA after run_text_pair(question, context): best span of the context (segment 1),
  // start <= end, at most max_tokens tokens (<= 0: 30), by start_logits + end_logits.
  eb_status best_span(int max_tokens, eb_span* out);
  const int32_t* input_ids() const { return ids_.data(); }
  const Model& model() const { return model_; }
  int threads() const { return threads_; }
  int max_seq_len() const { return max_n_; }

  // Memory facts.
  size_t arena_bytes() const { return plan_.arena_bytes; }
  size_t naive_bytes() const { return plan_.naive_bytes; }
  size_t packed_weight_bytes() const { return packed_bytes_; }
  const std::vector<BufferRequest>& buffers() const { return schedule_.buffers; }
  const Schedule& schedule() const { return schedule_; }
  const MemoryPlan& plan() const { return plan_; }

  // Per-op timing (nanoseconds accumulated over runs) when enabled; [layer][kind], with
  // layer == num_layers used for embeddings and the task head. Enabling does not allocate per run.
  void enable_profiling(bool on) { profiling_ = on; }
  void reset_profile();
  int64_t profile_ns(int layer, OpKind kind) const;

  // Debug hook for accuracy tools (off by default; costs one branch per block when unset and never
  // allocates). Called with the float hidden states [n, hidden] after the embedding LayerNorm (or
  // the precomputed embeddings: layer -1, stage 0) and after each add & LayerNorm of every layer
  // (stage 0: attention block, stage 1: FFN block). The hook may overwrite the n rows and return
  // true; the session then re-derives the next int8 GEMM input from them (edgebert-eval uses this
  // to feed each block the fp32 model's input and measure that block's own error).
  using HiddenStateHook = bool (*)(void* ctx, int layer, int stage, float* hidden, size_t n);
  void set_hidden_state_hook(HiddenStateHook hook, void* ctx) {
    hook_ = hook;
    hook_ctx_ = ctx;
  }

  const char* last_error() const { return last_error_; }
  eb_status fail(eb_status s, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  void clear_error() { last_error_[0] = '\0'; }

  // Internal, called from the thread pool during the attention op: pack head `h`'s K and V;
  // worker `w` takes (head, row tile) items until none are left.
  void attention_pack_task(size_t h);
  void attention_worker(size_t w);

 private:
  // One op of the schedule bound to arena pointers, its XNNPACK operator and its constants.
  struct BoundOp {
    const ScheduledOp* op = nullptr;
    std::vector<uint8_t*> in, out;
    XnnGemm* gemm = nullptr;             // GEMM ops
    const float* scales = nullptr;       // kAddNorm: per-channel dequantization of inputs[1]
    const float* inv_factors = nullptr;  // 1 / SmoothQuant factors of op->quant_for (or null)
  };
  // Per-layer activation tables (FFN activation on int8 input).
  struct LayerTables {
    int8_t act_lut[256];
    float act_lut_f32[256];
  };

  explicit Session(const Model& m) : model_(m) {}
  eb_status build(const SessionOptions& o, std::string* error);
  // Bytes of XNNPACK's packed copies of the session's GEMM weights (estimated before packing).
  size_t estimate_packed_bytes() const;
  eb_status run_tokens(size_t n, bool pair);  // runs ids_/types_ after tokenization
  bool bind(std::string* error);
  // Sets up the GEMMs for n rows when n changed, then runs ops [first, end).
  eb_status forward(size_t n, size_t first);
  eb_status execute(const BoundOp& b, size_t n);
  void run_embeddings_op(const BoundOp& b, size_t n);
  void run_attention(const BoundOp& b);
  // Where head h's packed K/V live during the attention op `b`.
  uint8_t* packed_slot(const BoundOp& b, size_t h) const;
  // Computes query rows [row_begin, row_end) of head h with worker w's scratch.
  void attention_rows(size_t h, size_t row_begin, size_t row_end, size_t w);
  void run_add_norm(const BoundOp& b, size_t n);
  void run_activation(const BoundOp& b, size_t n);
  // Calls the hook; when it rewrote the hidden states, re-quantizes them for `next` (nullable).
  void call_hook(int layer, int stage, size_t n, const LinearView* next, const float* next_inv_factors, void* next_q);
  const float* inv_factors_for(const LinearView* g);

  const Model& model_;
  int threads_ = 1;
  int max_n_ = 0;
  pthreadpool_t pool_ = nullptr;
  Schedule schedule_;
  MemoryPlan plan_;
  uint8_t* arena_raw_ = nullptr;
  uint8_t* arena_ = nullptr;
  std::vector<BoundOp> ops_;
  std::vector<std::unique_ptr<XnnGemm>> gemms_;
  std::vector<std::vector<float>> constants_;  // owned per-channel scales and inverse factors
  std::vector<LayerTables> tables_;
  // The attention op being executed: its op, rows per item, items per head, next item to take.
  const BoundOp* cur_attention_ = nullptr;
  size_t attention_tile_ = 0, attention_tiles_per_head_ = 0;
  std::atomic<size_t> attention_next_{0};
  size_t row_tile_ = 1;
  float* hidden_ = nullptr;
  float* pooled_ = nullptr;
  float* logits_ = nullptr;
  float* sentence_embedding_ = nullptr;
  float* start_logits_ = nullptr;
  float* end_logits_ = nullptr;
  float* token_logits_ = nullptr;
  size_t packed_bytes_ = 0;
  bool split_special_tokens_ = false;
  std::vector<TokenSpan> spans_;
  std::vector<int32_t> begin_, end_, segment_;
  bool offsets_valid_ = false;
  bool pair_run_ = false;
  std::vector<int32_t> ids_;
  std::vector<int32_t> types_;
  std::vector<uint8_t> key_mask_;
  bool any_padding_ = false;
  size_t seq_len_ = 0;
  size_t cur_n_ = 0;
  bool profiling_ = false;
  HiddenStateHook hook_ = nullptr;
  void* hook_ctx_ = nullptr;
  std::vector<int64_t> profile_;
  char last_error_[512] = {0};
};

}  // namespace edgebert
