// SPDX-License-Identifier: Apache-2.0
// session.h: an inference session over a shared, immutable Program (program/program.h): the
// session's own arena (planned for its maximum length and thread count), its thread pool, its
// XNNPACK operators (one per GEMM op; they carry per-call state), the current run's inputs and
// per-run state, and the executor loop that walks the program's ops. Everything is allocated at
// creation; runs allocate nothing. Modelled on XNNPACK's create/setup/run life cycle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <pthreadpool.h>

#include "edgebert/edgebert.h"
#include "exec/bound_op.h"
#include "exec/executor.h"
#include "exec/run_context.h"
#include "model.h"
#include "program/memory_planner.h"
#include "program/program.h"
#include "status.h"
#include "tasks/chunked_embedding.h"
#include "tasks/packing.h"
#include "tasks/question_answering.h"
#include "tasks/run_inputs.h"
#include "tasks/text_layout.h"
#include "thread_governor.h"
#include "text_encoder.h"
#include "xnn_gemm.h"

namespace edgebert {

struct SessionOptions {
  int threads = 1;
  int max_seq_len = 0;  // 0: model's max_position_embeddings
  bool split_special_tokens = false;  // true: "[SEP]" etc. in the text are plain text
  uint64_t max_memory_bytes = 0;      // 0: no limit; else refuse (before allocating) above it
  int max_batch_tokens = 0;           // tokens of a packed run (>= max_seq_len); 0: max_seq_len
  // A multi-threaded session's runs leave the pool while the cores are contended
  // (thread_governor.h); tests of the thread split itself turn it off.
  bool adaptive_threads = ThreadGovernor::enabled_by_env();
};

using tasks::SequenceInfo;  // one sequence of the last run (tasks/packing.h)

class Session {
 public:
  ~Session();
  // A session over `program` (shared with other sessions; kept alive by the session).
  static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Program> program, const SessionOptions& options);
  // For tools and tests that hold only a Model: builds the model's Program for this session.
  static Result<std::unique_ptr<Session>> create(const Model& model, const SessionOptions& options);

  // Run entry points: each resets the per-run state first, and sets it only when it succeeds.
  eb_status run_ids(const int32_t* ids, const int32_t* token_types, const int32_t* mask, size_t n);
  eb_status run_text(const char* text);
  // "[CLS] a [SEP] b [SEP]", token types 0 (incl. the first [SEP]) then 1.
  eb_status run_text_pair(const char* a, const char* b);
  eb_status run_embeddings(const float* embeddings, const int32_t* mask, size_t n);
  // Packed runs (eb_session_run_texts & co.): as many whole sequences as fit in max_batch_tokens,
  // in order, laid end to end; *consumed: how many of `count` were taken (run or failed alone).
  // texts_b null: single texts, else pairs. Outputs per sequence: sequence(i).
  eb_status run_texts(const char* const* texts_a, const char* const* texts_b, size_t count, size_t* consumed);
  // mask: null (every token attended) or one 0/1 entry per token, as run_ids' attention_mask.
  eb_status run_ids_batch(const int32_t* ids, const int32_t* token_types, const int32_t* mask, const size_t* lengths,
                          size_t count, size_t* consumed);
  // Benchmark floor: runs only the XNNPACK GEMMs of every layer on the buffers of the last
  // successful run (same row count), skipping everything else. Results are meaningless.
  eb_status run_gemms_only();

  // What the last run produced (all false / 0 after a failed run or before any run).
  bool has_output() const { return state_.tokens > 0 || state_.packed; }
  bool has_input_ids() const { return has_output() && state_.ids; }   // not after run_embeddings
  bool has_offsets() const { return has_output() && state_.text; }    // run_text / run_text_pair / answer
  bool has_pair() const { return has_output() && state_.pair; }       // run_text_pair / answer
  size_t seq_len() const { return state_.tokens; }
  // Sequences of the last run (1 after a single run) and each one's status, tokens and words.
  bool packed() const { return state_.packed; }
  bool packed_pairs() const { return state_.packed && state_.packed_pairs; }  // run_text_pairs
  size_t sequence_count() const { return state_.packed ? state_.sequences : (has_output() ? 1 : 0); }
  SequenceInfo sequence(size_t i) const;
  // How text runs cut texts longer than the session maximum (eb_session_set_truncation).
  void set_truncation(tasks::Truncation t) { truncation_ = t; }
  tasks::Truncation truncation() const { return truncation_; }
  size_t max_batch_tokens() const { return max_rows_; }
  const float* last_hidden_state() const { return hidden_; }
  // Per-sequence outputs: [sequence_count(), width] (one row after a single run).
  const float* pooler_output() const { return pooled_; }
  const float* logits() const { return logits_; }
  const float* sentence_embedding() const { return sentence_embedding_; }
  // Values per sequence of sentence_embedding(): the Matryoshka dims when set, else hidden.
  size_t sentence_embedding_width() const;
  // 0 (full) or 1..hidden: later runs truncate the sentence embedding and re-normalize it.
  eb_status set_embedding_dims(int32_t dims);
  // The prompt put before the first text of later text runs (null / "": none).
  eb_status set_prompt(const char* name);
  // How later single-text runs of a ColBERT model with PyLate conventions are laid out
  // (eb_colbert_input: 0 plain, 1 query, 2 document); keeps the last run.
  eb_status set_colbert_input(int input);
  int run_colbert_input() const { return state_.colbert; }  // the last run's
  const float* start_logits() const { return start_logits_; }
  const float* end_logits() const { return end_logits_; }
  const float* token_logits() const { return token_logits_; }
  const float* sparse_embedding() const { return sparse_embedding_; }  // masked-LM: [sequences, vocab]
  const float* token_vectors() const { return token_vectors_; }  // ColBERT: [rows, dim], rows normalized
  // Masked-LM models (fill-mask): the decoder's float logits [vocab] of row `row` (< seq_len()) of
  // the last successful run, decoded from the head's features (a graph output) into the planned
  // logits block; *logits is valid until the next run or call. EB_ERROR_UNSUPPORTED for other
  // models; the caller checks the run and the row (tasks/fill_mask.h). No allocation.
  bool has_masked_lm_head() const { return vocab_op_ >= 0; }
  eb_status masked_lm_logits(size_t row, const float** logits);
  // Byte range of each token of the last text run in its text, and its segment (0: text / text_a,
  // 1: text_b, -1: added special token). Valid when has_offsets().
  const int32_t* token_begin() const { return inputs_.begin.data(); }
  const int32_t* token_end() const { return inputs_.end.data(); }
  const int32_t* token_segment() const { return inputs_.segment.data(); }
  const int32_t* word_ids() const { return inputs_.word_ids.data(); }
  const eb_word* words() const { return inputs_.words.data(); }
  size_t word_count() const { return state_.words; }
  const int32_t* input_ids() const { return inputs_.ids.data(); }
  const Model& model() const { return program_->model(); }
  const Program& program() const { return *program_; }
  int threads() const { return threads_; }
  // The runs after this call on 1 thread (the caller's: the pool stays, asleep) or on all threads_
  // (eb_session_set_num_threads); no allocation, the outputs of the last run stay.
  eb_status set_num_threads(int n);
  // Pool-or-caller decisions of this session's runs (thread_governor.h); null pool: unused.
  const ThreadGovernor& thread_governor() const { return governor_; }
  int max_seq_len() const { return max_n_; }

  // Memory facts.
  size_t arena_bytes() const { return plan_.arena_bytes; }
  size_t naive_bytes() const { return plan_.naive_bytes; }
  size_t packed_weight_bytes() const { return packed_bytes_; }
  // The program's buffers with this session's sizes, and their plan.
  const std::vector<BufferRequest>& buffers() const { return requests_; }
  const MemoryPlan& plan() const { return plan_; }

  // Per-op timing (nanoseconds accumulated over runs) when enabled; [layer][kind], with
  // layer == num_layers used for embeddings and the task head. Enabling does not allocate per run.
  void enable_profiling(bool on) { profiling_ = on; }
  void reset_profile();
  int64_t profile_ns(int layer, OpKind kind) const;
  // With profiling, the phases around the ops (accumulated like profile_ns; reset_profile clears
  // them): text checks + tokenization + packing, the whole forward pass (ops and executor), the
  // XNNPACK reshape/setup part of the GEMM ops' time, and the runs and rows that ran.
  struct RunPhases {
    int64_t tokenize_ns = 0, forward_ns = 0, setup_ns = 0;
    int64_t runs = 0, rows = 0;
  };
  const RunPhases& run_phases() const { return phases_; }

  // Debug hook for accuracy tools (off by default; costs one branch per op when unset and never
  // allocates). Called with the float hidden states [n, hidden] after every op that announces
  // them (Op::hidden_states): the embeddings (or the precomputed embeddings: layer -1, stage 0)
  // and each residual of every layer (stage 0: attention block, stage 1: FFN block). The hook may
  // overwrite the n rows and return true; the session then re-derives the op's int8 output for
  // the next GEMM from them (edgebert-eval uses this to feed each block the fp32 model's input and
  // measure that block's own error).
  using HiddenStateHook = exec::HiddenStateHook;
  void set_hidden_state_hook(HiddenStateHook hook, void* ctx) {
    hook_ = hook;
    hook_ctx_ = ctx;
  }

  // For the tasks (tasks/): the tokenizer, the run's inputs to lay out, QA's token buffers, and a
  // single text run of the n tokens laid out in the inputs (segment 1 the context when `pair`).
  const TextEncoder& text() const { return text_; }
  tasks::RunInputs& inputs() { return inputs_; }
  const tasks::RunInputs& inputs() const { return inputs_; }
  tasks::QaScratch& qa_scratch() { return qa_; }
  // Chunked embedding (tasks/chunked_embedding.h): its token buffers, the sequences of a packed
  // run it lays out in the inputs itself (max_batch_tokens() slots), and that packed text run of
  // sequences [0, count) (their statuses EB_OK; the run's outputs as after run_texts).
  tasks::ChunkScratch& chunk_scratch() { return chunk_; }
  SequenceInfo* sequence_slots() { return sequences_.data(); }
  eb_status run_laid_out_texts(size_t count) {
    state_ = RunState();
    return run_packed(count, true, false);
  }
  // The laid-out text run of n tokens; mask_laid: tokenize laid the key mask (else all attended).
  eb_status run_text_inputs(size_t n, bool pair, bool mask_laid = false);
  // EB_OK, or the error (EB_ERROR_INVALID_ARGUMENT naming `what` and the byte) when text is not UTF-8.
  eb_status check_text(const char* text, const char* what);
  // Forgets the last run (its outputs are no longer readable).
  void reset_run() { state_ = RunState(); }
  // A run refused before it started (the C API's own argument checks): the previous run's
  // outputs are gone, as after any failed run.
  eb_status refuse_run(eb_status s, const char* message) {
    state_ = RunState();
    return fail(s, "%s", message);
  }
  const char* last_error() const { return last_error_; }
  // The handle's error channel (eb_session_last_error): the message of the last failing call,
  // getters included, so it is written through const access too; it is not part of the run's
  // state and no getter reads it. One session is used by one thread at a time (edgebert.h).
  eb_status fail(eb_status s, const char* fmt, ...) const __attribute__((format(printf, 3, 4)));
  void clear_error() const { last_error_[0] = '\0'; }

 private:
  // What the last run produced; every run entry point resets it first and sets it on success.
  struct RunState {
    size_t tokens = 0;  // positions of the last successful run; 0: none
    bool ids = false;   // input ids are the run's (not after run_embeddings)
    bool text = false;  // token offsets, word ids and words are the run's
    bool pair = false;  // a (question, context) pair: segment 1 is the context (best_span)
    size_t words = 0;
    bool packed = false;   // a packed run: `sequences` sequences (sequences_ has them)
    bool packed_pairs = false;  // a packed run of text pairs (sequence_best_span)
    size_t sequences = 0;
    size_t truncated = 0;  // a single text run: tokens its truncation left out
    int colbert = 0;       // the eb_colbert_input its text runs were laid out with
  };

  Session(std::shared_ptr<const Program> program, const SessionOptions& o);
  Status build(const SessionOptions& o);
  // Creates the XNNPACK operator of every GEMM op (the one place operators are made).
  Status create_gemms();
  // Validates ids_/types_ (n tokens, already in place) and the mask, then runs the program.
  // mask_laid: the key mask is already in inputs_ (text runs of ColBERT queries), mask is ignored.
  eb_status run_prepared(const int32_t* mask, size_t n, bool mask_laid = false);
  // Tokenizes the template around a (and b, may be null) into the inputs, *n tokens; the error set
  // when they do not fit the session, or when there are none.
  eb_status tokenize(const char* a, const char* b, size_t* n);
  // The most tokens of a text run's sequence (the session's, or the ColBERT input's length), and
  // the query expansion of its single texts.
  size_t text_limit() const;
  tasks::Expansion expansion() const;
  // Refuses a text pair run in a ColBERT query / document input (EB_OK otherwise).
  eb_status check_pairs_allowed();
  // Runs the sequences_[0, count) laid out in the inputs (their statuses set): the encoder over all
  // their tokens, attention and the one-row heads per sequence.
  // mask_laid: pack_texts laid the key mask of the run's tokens (else every token is attended).
  eb_status run_packed(size_t count, bool text, bool pair, bool mask_laid = false);
  // What a packed run of this session may hold (tasks/packing.h).
  tasks::PackLimits pack_limits() const;
  // After a successful text run: word ids known, builds the words (labels of token classifiers).
  void finish_text_run(size_t n, bool pair);
  // Runs ops [first, end) over the n rows of the sequences in run_sequences_ (exec/executor.h).
  eb_status forward(size_t n, size_t first);
  exec::ExecObserver observer_for_run();
  // A single run: one sequence of n rows.
  void one_sequence(size_t n);
  std::shared_ptr<const Program> program_;
  const Model& model_;
  TextEncoder text_;
  tasks::Truncation truncation_ = tasks::Truncation::kNone;
  int colbert_input_ = 0;  // eb_colbert_input of later text runs
  int threads_ = 1;
  int max_n_ = 0;
  size_t max_rows_ = 0;  // tokens of a packed run (max_batch_tokens)
  pthreadpool_t pool_ = nullptr;
  std::vector<BufferRequest> requests_;
  MemoryPlan plan_;
  uint8_t* arena_raw_ = nullptr;
  uint8_t* arena_ = nullptr;
  std::vector<exec::BoundOp> ops_;
  std::vector<std::unique_ptr<XnnGemm>> gemms_;
  exec::ExecResources resources_;
  ThreadGovernor governor_;
  pthreadpool_t run_pool_ = nullptr;  // the pool the last run used (null: the caller alone)
  // Packed runs: the sequences (laid out in the inputs) and the rows of those that run.
  std::vector<SequenceInfo> sequences_;
  std::vector<exec::SequenceRows> run_sequences_;
  size_t run_sequence_count_ = 0;
  // The per-sequence graph outputs (a packed run's failed sequences read 0 there).
  struct PerSequenceOutput {
    uint8_t* data;
    size_t row_bytes;
  };
  std::vector<PerSequenceOutput> per_sequence_outputs_;
  float* hidden_ = nullptr;
  float* pooled_ = nullptr;
  float* logits_ = nullptr;
  float* sentence_embedding_ = nullptr;
  int32_t embedding_dims_ = 0;  // Matryoshka truncation of the sentence embedding (0: none)
  // The sentence embedding rows of the run's sequences truncated to embedding_dims_ and
  // re-normalized in place (row stride hidden); compact_embeddings(rows) then packs `rows` of them
  // [rows, embedding_dims_]. No allocation.
  void truncate_embeddings();
  void compact_embeddings(size_t rows);
  float* start_logits_ = nullptr;
  float* end_logits_ = nullptr;
  float* token_logits_ = nullptr;
  float* sparse_embedding_ = nullptr;
  float* token_vectors_ = nullptr;
  int vocab_op_ = -1;  // the masked-LM decoder's kSparseVocab op (-1: none)
  size_t packed_bytes_ = 0;
  // The current run's inputs, and QA's token buffers.
  tasks::RunInputs inputs_;
  bool any_padding_ = false;
  tasks::QaScratch qa_;
  tasks::ChunkScratch chunk_;
  RunState state_;
  size_t cur_n_ = 0;
  bool profiling_ = false;
  HiddenStateHook hook_ = nullptr;
  void* hook_ctx_ = nullptr;
  std::vector<int64_t> profile_;
  RunPhases phases_;
  mutable char last_error_[512] = {0};  // see fail()
};

}  // namespace edgebert
