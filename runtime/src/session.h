// session.h: an inference session: the op schedule of the whole encoder, its memory plan (one
// arena), the XNNPACK operators and the thread pool, all created once. Runs then allocate
// nothing. Modelled on XNNPACK's create/setup/run life cycle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pthreadpool.h>

#include "edgebert/edgebert.h"
#include "model.h"
#include "planner/memory_planner.h"
#include "xnn_gemm.h"

namespace edgebert {

// Op kinds for --op-profile and the schedule.
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
  kPoolerClassifier,
  kCount
};
const char* op_kind_name(OpKind k);

struct SessionOptions {
  int threads = 1;
  int max_seq_len = 0;  // 0: model's max_position_embeddings
};

class Session {
 public:
  ~Session();
  static eb_status create(const Model& model, const SessionOptions& options, std::unique_ptr<Session>* out,
                          std::string* error);

  eb_status run_ids(const int32_t* ids, const int32_t* token_types, const int32_t* mask, size_t n);
  eb_status run_text(const char* text);
  eb_status run_embeddings(const float* embeddings, const int32_t* mask, size_t n);

  // Benchmark floor: runs only the XNNPACK GEMMs of every layer on the buffers of the last
  // successful run (same row count), skipping everything else. Results are meaningless.
  eb_status run_gemms_only();

  bool has_output() const { return seq_len_ > 0; }
  size_t seq_len() const { return seq_len_; }
  const float* last_hidden_state() const { return hidden_; }
  const float* pooler_output() const { return pooled_; }
  const float* logits() const { return logits_; }
  const int32_t* input_ids() const { return ids_.data(); }
  const Model& model() const { return model_; }
  int threads() const { return threads_; }
  int max_seq_len() const { return max_n_; }

  // Memory facts.
  size_t arena_bytes() const { return plan_.arena_bytes; }
  size_t naive_bytes() const { return plan_.naive_bytes; }
  size_t packed_weight_bytes() const { return packed_bytes_; }
  const std::vector<BufferRequest>& buffers() const { return buffers_; }
  const MemoryPlan& plan() const { return plan_; }

  // Per-op timing (nanoseconds accumulated over runs) when enabled; [layer][kind], with
  // layer == num_layers used for embeddings and pooler. Enabling does not allocate per run.
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

  // Internal: per-head attention task (called from the thread pool).
  void attention_task(size_t head);

 private:
  explicit Session(const Model& m) : model_(m) {}
  bool build(const SessionOptions& o, std::string* error);
  eb_status forward(size_t n);
  void embed(const int32_t* ids, const int32_t* types, size_t n);
  // Calls the hook; when it rewrote the hidden states, re-quantizes them for `next` (nullable).
  void call_hook(int layer, int stage, size_t n, const LinearView* next, const float* next_inv_factors, void* next_q);

  struct LayerBuffers {
    void* input_q = nullptr;   // int8 [n, H] for an int8 qkv GEMM
    void* qkv = nullptr;       // int8 or f32 [n, 3H]
    void* context = nullptr;   // int8 or f32 [n, H] (as attention_output consumes it)
    void* context_alt = nullptr;  // the other type when attention and attention_output differ
    void* attn_out = nullptr;  // int8 or f32 [n, H]
    void* ffn_input_q = nullptr;
    void* inter = nullptr;     // int8 or f32 [n, I]
    void* gelu = nullptr;      // = inter when types agree
    void* ffn_out = nullptr;   // int8 or f32 [n, H]
    std::vector<float*> scores;     // per head [n, n]
    std::vector<uint8_t*> probs;    // per head [n, n] (int8 path)
    std::vector<int8_t*> packed;    // per head scratch (int8 path)
    XnnGemm qkv_gemm, ao_gemm, up_gemm, down_gemm;
    std::vector<float> ao_scales, down_scales;  // per-channel dequantization of GEMM outputs
    std::vector<float> qkv_inv_factors, up_inv_factors;  // optional SmoothQuant factors (1/f)
    int8_t gelu_lut[256];
    float gelu_lut_f32[256];
  };

  const Model& model_;
  int threads_ = 1;
  int max_n_ = 0;
  pthreadpool_t pool_ = nullptr;
  std::vector<BufferRequest> buffers_;
  MemoryPlan plan_;
  uint8_t* arena_raw_ = nullptr;
  uint8_t* arena_ = nullptr;
  std::vector<LayerBuffers> layers_;
  XnnGemm pooler_gemm_, classifier_gemm_;
  float* hidden_ = nullptr;
  float* pooled_ = nullptr;
  float* logits_ = nullptr;
  float* pooler_in_ = nullptr;
  size_t packed_bytes_ = 0;
  std::vector<int32_t> ids_;
  std::vector<int32_t> types_;
  std::vector<uint8_t> key_mask_;
  bool any_padding_ = false;
  size_t seq_len_ = 0;
  size_t cur_n_ = 0;
  int cur_layer_ = 0;
  bool profiling_ = false;
  HiddenStateHook hook_ = nullptr;
  void* hook_ctx_ = nullptr;
  std::vector<int64_t> profile_;
  char last_error_[512] = {0};
};

}  // namespace edgebert
