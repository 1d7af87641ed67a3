// SPDX-License-Identifier: Apache-2.0
// session.cpp: a session's memory plan, operator creation, run entry points with their per-run
// state, and the allocation-free executor over the program's ops.
#include "session.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "exec/executor.h"
#include "exec/parallel.h"
#include "exec/vocab_logits.h"
#include "monotonic_clock.h"
#include "tasks/question_answering.h"
#include "tasks/text_layout.h"
#include "kernels/kernels.h"

namespace edgebert {
namespace {

constexpr size_t kAlignment = 64;
constexpr int kMaxBatchTokens = 1 << 20;

// Whether some of the n key-mask entries is 0 (padding or an unattended expansion token).
bool any_zero(const std::vector<uint8_t>& key_mask, size_t n) {
  const auto end = key_mask.begin() + static_cast<std::ptrdiff_t>(n);
  return std::find(key_mask.begin(), end, 0) != end;
}

bool set_mask(const int32_t* mask, size_t n, uint8_t* key_mask, bool* any_padding, size_t* bad) {
  *any_padding = false;
  for (size_t i = 0; i < n; ++i) {
    const int32_t m = mask ? mask[i] : 1;
    if (m != 0 && m != 1) {
      *bad = i;
      return false;
    }
    key_mask[i] = static_cast<uint8_t>(m);
    if (!m) *any_padding = true;
  }
  return true;
}


}  // namespace

Session::Session(std::shared_ptr<const Program> program, const SessionOptions& o)
    : program_(std::move(program)), model_(program_->model()), text_(model_, o.split_special_tokens) {}

Session::~Session() {
  gemms_.clear();  // operators first
  if (pool_) pthreadpool_destroy(pool_);
  std::free(arena_raw_);
}

eb_status Session::fail(eb_status s, const char* fmt, ...) const {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(last_error_, sizeof last_error_, fmt, ap);
  va_end(ap);
  return s;
}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Program> program, const SessionOptions& o) {
  if (!program) return Status(EB_ERROR_INVALID_ARGUMENT, "no program");
  const Model& model = program->model();
  if (o.threads < 0 || o.threads > 256) return Status(EB_ERROR_INVALID_ARGUMENT, "num_threads must be between 0 and 256");
  if (o.max_seq_len < 0 || o.max_seq_len > model.config.max_position)
    return Status(EB_ERROR_INVALID_ARGUMENT, "max_sequence_length " + std::to_string(o.max_seq_len) + " is outside 1.." +
                                                 std::to_string(model.config.max_position) +
                                                 " (the model's max_position_embeddings)");
  EB_RETURN_IF_ERROR(xnn_ready());
  try {
    std::unique_ptr<Session> s(new Session(std::move(program), o));
    EB_RETURN_IF_ERROR(s->build(o));
    return s;
  } catch (const std::bad_alloc&) {
    return Status(EB_ERROR_OUT_OF_MEMORY, "out of memory while creating the session");
  }
}

Result<std::unique_ptr<Session>> Session::create(const Model& model, const SessionOptions& o) {
  Result<std::shared_ptr<const Program>> program = Program::build(model, XnnGemm::int8_float_output_supported());
  if (!program) return program.status();
  return create(program.take(), o);
}

Status Session::build(const SessionOptions& o) {
  const ModelConfig& c = model_.config;
  threads_ = std::max(1, o.threads);
  governor_ = ThreadGovernor(o.adaptive_threads);
  max_n_ = o.max_seq_len > 0 ? o.max_seq_len : c.max_position;
  if (o.max_batch_tokens != 0 && (o.max_batch_tokens < max_n_ || o.max_batch_tokens > kMaxBatchTokens))
    return Status(EB_ERROR_INVALID_ARGUMENT, "max_batch_tokens " + std::to_string(o.max_batch_tokens) +
                                                 " must be 0 or between max_sequence_length " + std::to_string(max_n_) +
                                                 " and " + std::to_string(kMaxBatchTokens));
  max_rows_ = static_cast<size_t>(o.max_batch_tokens > 0 ? o.max_batch_tokens : max_n_);
  const size_t n = max_rows_;  // per-token arrays hold a packed run
  // This session's buffer sizes, then its plan.
  requests_ = program_->requests(max_n_, threads_, static_cast<int>(max_rows_));
  const Status planned = plan_memory(requests_, PlanStrategy::kGreedyBySize, kAlignment, &plan_);
  if (!planned) return Status(EB_ERROR_BACKEND, "memory planning failed: " + planned.message());
  // The per-token input and text arrays of the session.
  const size_t context_cap = n + tasks::kContextWordSlack;
  const size_t pooled_width = static_cast<size_t>(2 * c.hidden + std::max(c.num_labels, 0));
  const size_t batch = n * (sizeof(SequenceInfo) + 2 * sizeof(size_t) + sizeof(int32_t) + pooled_width * sizeof(float));
  const size_t inputs = batch + n * (5 * sizeof(int32_t) + sizeof(uint8_t) + sizeof(TokenSpan) + sizeof(int32_t) + sizeof(eb_word)) +
                        n * (2 * sizeof(int32_t) + sizeof(TokenSpan)) + context_cap * (2 * sizeof(int32_t) + sizeof(TokenSpan)) +
                        tasks::ChunkScratch::bytes(static_cast<size_t>(max_n_), context_cap, static_cast<size_t>(c.hidden), n);
  if (o.max_memory_bytes > 0) {  // refuse before allocating anything big
    const size_t packed = program_->session_packed_bytes_estimate();
    const uint64_t need = static_cast<uint64_t>(plan_.arena_bytes) + packed + inputs;
    if (need > o.max_memory_bytes)
      return Status(EB_ERROR_OUT_OF_MEMORY, "session needs about " + std::to_string(need) + " bytes (arena " +
                                                std::to_string(plan_.arena_bytes) + " + packed weights " +
                                                std::to_string(packed) + " + inputs " + std::to_string(inputs) +
                                                "), more than max_memory_bytes " + std::to_string(o.max_memory_bytes));
  }
  if (threads_ > 1) {  // after the memory check: nothing big exists before it
    pool_ = pthreadpool_create(static_cast<size_t>(threads_));
    if (!pool_) return Status(EB_ERROR_BACKEND, "cannot create a thread pool of " + std::to_string(threads_) + " threads");
  }
  resources_.pool = pool_;
  resources_.workers = static_cast<size_t>(threads_);
  resources_.max_seq_len = static_cast<size_t>(max_n_);
  resources_.max_rows = max_rows_;
  resources_.max_tile = attention_row_tile(max_n_);
  program_->prepare_positions(max_n_);  // the rotary tables' rows up to this session's length
  if (posix_memalign(reinterpret_cast<void**>(&arena_raw_), kAlignment, std::max<size_t>(plan_.arena_bytes, 64)) != 0) {
    arena_raw_ = nullptr;
    return Status(EB_ERROR_OUT_OF_MEMORY, "cannot allocate the " + std::to_string(plan_.arena_bytes) + "-byte arena");
  }
  arena_ = arena_raw_;
  std::memset(arena_, 0, plan_.arena_bytes);
  // Every op bound to its arena pointers.
  const std::vector<Op>& ops = program_->ops();
  auto ptr = [&](int b) { return arena_ + plan_.offsets[static_cast<size_t>(b)]; };
  const std::vector<ProgramBuffer>& buffers = program_->buffers();
  // how a buffer advances per row / per sequence when a per-sequence op runs on one sequence
  auto step = [&](int x) {
    const BufferSize& sz = buffers[static_cast<size_t>(x)].size;
    exec::BufferStep st;
    if (sz.rule == BufferSize::Rule::kRows) st.row_bytes = sz.row_bytes;
    if (sz.rule == BufferSize::Rule::kPerSequence) st.sequence_bytes = sz.row_bytes;
    return st;
  };
  ops_.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    exec::BoundOp& b = ops_[i];
    b.op = &ops[i];
    if (ops[i].inputs.size() > exec::kMaxOpBuffers || ops[i].outputs.size() > exec::kMaxOpBuffers)
      return Status(EB_ERROR_BACKEND, "op " + std::to_string(i) + " has more buffers than the executor binds");
    for (int x : ops[i].inputs) b.in_step[b.in_count] = step(x), b.in[b.in_count++] = ptr(x);
    for (int x : ops[i].outputs) b.out_step[b.out_count] = step(x), b.out[b.out_count++] = ptr(x);
  }
  for (size_t x = 0; x < buffers.size(); ++x)  // cleared for the sequences of a packed run that fail
    if (buffers[x].graph_output && buffers[x].size.rule == BufferSize::Rule::kPerSequence)
      per_sequence_outputs_.push_back({ptr(static_cast<int>(x)), buffers[x].size.row_bytes});
  auto output = [&](const char* name) {
    const int b = program_->find_buffer(name);
    return b >= 0 ? reinterpret_cast<float*>(ptr(b)) : nullptr;
  };
  hidden_ = output("hidden");
  pooled_ = output("pooler_output");
  logits_ = output("logits");
  sentence_embedding_ = output("sentence_embedding");
  start_logits_ = output("start_logits");
  end_logits_ = output("end_logits");
  token_logits_ = output("token_logits");
  sparse_embedding_ = output("sparse_embedding");
  token_vectors_ = output("token_vectors");
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].type == OpType::kSparseVocab) vocab_op_ = static_cast<int>(i);
  EB_RETURN_IF_ERROR(create_gemms());
  inputs_.allocate(n);
  qa_.allocate(n, context_cap);
  chunk_.allocate(static_cast<size_t>(max_n_), context_cap, static_cast<size_t>(c.hidden), n);
  text_.reserve(context_cap, 16 * context_cap);
  if (model_.default_prompt >= 0) text_.set_prompt(model_.prompts[static_cast<size_t>(model_.default_prompt)].second);
  sequences_.assign(n, SequenceInfo{});
  run_sequences_.assign(n, exec::SequenceRows{});
  profile_.assign(static_cast<size_t>(c.layers + 1) * static_cast<size_t>(OpKind::kCount), 0);
  return Status::ok();
}

Status Session::create_gemms() {
  const long long xnn_before = xnn_bytes_allocated_by_this_thread();
  for (size_t i = 0; i < ops_.size(); ++i) {
    exec::BoundOp& b = ops_[i];
    if (!b.op->is_gemm()) continue;
    const size_t owner = static_cast<size_t>(b.op->operator_of);
    if (owner != i) {  // the program's rule: this op uses an earlier op's operator
      b.gemm = ops_[owner].gemm;
      continue;
    }
    gemms_.push_back(std::make_unique<XnnGemm>());
    b.gemm = gemms_.back().get();
    EB_RETURN_IF_ERROR(program_->create_gemm(*b.op, max_rows_, b.gemm));
    // Only a session that packed its own copy (2022 API) read the model's weights; over the
    // program's store (packed with the program, which released them then, or mapped from the
    // weight cache, so never read) the madvise calls only cost time: 0.2 ms for BERT-base's 48
    // GEMMs, on the warm start's critical path.
    if (!program_->weights().store) model_.release_weight_pages(*b.op->linear);
  }
  // this session's own packed copies (2022 API; the shared weights were packed with the program)
  packed_bytes_ = static_cast<size_t>(std::max(0LL, xnn_bytes_allocated_by_this_thread() - xnn_before));
  return Status::ok();
}

void Session::reset_profile() {
  std::fill(profile_.begin(), profile_.end(), 0);
  phases_ = RunPhases();
}

namespace {
// Adds the time of its scope to *slot when slot is not null (the session's profiling phases).
class PhaseTimer {
 public:
  explicit PhaseTimer(int64_t* slot) : slot_(slot), t0_(slot ? monotonic_ns() : 0) {}
  ~PhaseTimer() {
    if (slot_) *slot_ += monotonic_ns() - t0_;
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  int64_t* slot_;
  int64_t t0_;
};
}  // namespace

int64_t Session::profile_ns(int layer, OpKind kind) const {
  const size_t i = static_cast<size_t>(layer) * static_cast<size_t>(OpKind::kCount) + static_cast<size_t>(kind);
  return i < profile_.size() ? profile_[i] : 0;
}

// ---- the executor

eb_status Session::forward(size_t n, size_t first) {
  exec::RunContext ctx;
  ctx.rows = n;
  ctx.sequences = run_sequences_.data();
  ctx.sequence_count = run_sequence_count_;
  ctx.ids = inputs_.ids.data();
  ctx.types = inputs_.types.data();
  ctx.key_mask = inputs_.key_mask.data();
  ctx.any_padding = any_padding_;
  // On the pool (eb_session_set_num_threads: 1 or threads_) unless the governor finds the cores
  // contended (thread_governor.h): then on the caller alone, with the same output bytes.
  ctx.res = resources_;
  const int64_t start_ns = resources_.pool ? monotonic_ns() : 0;
  const bool pooled = resources_.pool && governor_.use_pool(start_ns);
  if (!pooled) {
    ctx.res.pool = nullptr;
    ctx.res.workers = 1;
  }
  run_pool_ = ctx.res.pool;
  const int64_t preempted_before = pooled ? ThreadGovernor::process_preemptions() : 0;
  const size_t workers = ctx.res.workers;
  ctx.row_tile = std::max<size_t>(1, (n + 2 * workers - 1) / (2 * workers));
  const exec::ExecObserver observer = observer_for_run();
  cur_n_ = 0;
  if (profiling_) {
    ++phases_.runs;
    phases_.rows += static_cast<int64_t>(n);
  }
  PhaseTimer timer(profiling_ ? &phases_.forward_ns : nullptr);
  const Status s = exec::run_ops(ops_, first, ctx, observer);
  if (pooled) {
    exec::yield_workers(run_pool_);  // the workers sleep until the next run
    const int64_t end_ns = monotonic_ns();
    governor_.after_pool_run(end_ns, end_ns - start_ns, ThreadGovernor::process_preemptions() - preempted_before);
  }
  if (!s.is_ok()) return fail(s.code(), "%s", s.message().c_str());
  cur_n_ = n;
  truncate_embeddings();
  return EB_OK;
}

size_t Session::sentence_embedding_width() const {
  return embedding_dims_ > 0 ? static_cast<size_t>(embedding_dims_) : static_cast<size_t>(model_.config.hidden);
}

eb_status Session::set_embedding_dims(int32_t dims) {
  if (!sentence_embedding_) return fail(EB_ERROR_UNSUPPORTED, "this model is not a sentence-embedding model");
  if (dims < 0 || dims > model_.config.hidden)
    return fail(EB_ERROR_INVALID_ARGUMENT, "embedding dims %d is outside 0..%d (0: the full embedding)", dims,
                model_.config.hidden);
  reset_run();
  embedding_dims_ = dims == model_.config.hidden ? 0 : dims;
  clear_error();
  return EB_OK;
}

eb_status Session::set_num_threads(int n) {
  if (n != 1 && n != threads_)
    return fail(EB_ERROR_INVALID_ARGUMENT,
                "num_threads %d: this session (created with %d threads) runs on 1 or %d (its thread pool's size)", n,
                threads_, threads_);
  // The GEMMs reshape for the new pool at their next setup (XnnGemm::setup compares the pool).
  resources_.pool = n == 1 ? nullptr : pool_;
  resources_.workers = static_cast<size_t>(n);
  governor_.reset();  // the app chose: the load seen so far is forgotten
  return EB_OK;
}

eb_status Session::set_prompt(const char* name) {
  // (a refused name changes nothing: the last run's outputs stay, as after a refused dims)
  if (!name || !*name) {
    reset_run();
    text_.set_prompt({});
    clear_error();
    return EB_OK;
  }
  for (const auto& [n, text] : model_.prompts)
    if (n == name) {
      reset_run();
      text_.set_prompt(text);
      clear_error();
      return EB_OK;
    }
  std::string names;
  for (const auto& p : model_.prompts) names += (names.empty() ? "" : ", ") + p.first;
  return fail(EB_ERROR_INVALID_ARGUMENT, "unknown prompt '%.128s' (%s%.300s)", name,
              names.empty() ? "this model has no prompts" : "this model's prompts: ", names.c_str());
}

void Session::truncate_embeddings() {
  if (!sentence_embedding_ || embedding_dims_ <= 0) return;
  const size_t H = static_cast<size_t>(model_.config.hidden), N = static_cast<size_t>(embedding_dims_);
  for (size_t s = 0; s < run_sequence_count_; ++s) {
    kernels::l2_normalize_f32(sentence_embedding_ + run_sequences_[s].output_index * H, N);
  }
}

void Session::compact_embeddings(size_t rows) {
  if (!sentence_embedding_ || embedding_dims_ <= 0) return;
  const size_t H = static_cast<size_t>(model_.config.hidden), N = static_cast<size_t>(embedding_dims_);
  for (size_t k = 1; k < rows; ++k)  // row k moves down to k * N (<= k * H): in order, never overlapping ahead
    std::memmove(sentence_embedding_ + k * N, sentence_embedding_ + k * H, N * sizeof(float));
}

exec::ExecObserver Session::observer_for_run() {
  exec::ExecObserver o;
  o.profile_ns = profiling_ ? profile_.data() : nullptr;
  o.setup_ns = profiling_ ? &phases_.setup_ns : nullptr;
  o.layers = static_cast<size_t>(model_.config.layers);
  o.hook = hook_;
  o.hook_ctx = hook_ctx_;
  return o;
}

void Session::one_sequence(size_t n) {
  run_sequences_[0] = exec::SequenceRows{0, n, 0};
  run_sequence_count_ = 1;
}

eb_status Session::run_gemms_only() {
  if (cur_n_ == 0) return fail(EB_ERROR_BAD_STATE, "run_gemms_only needs a previous successful run");
  for (const exec::BoundOp& b : ops_)
    if (b.gemm && b.op->layer >= 0 && !b.gemm->run(run_pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed");
  return EB_OK;
}

// ---- run entry points

eb_status Session::run_prepared(const int32_t* mask, size_t n, bool mask_laid) {
  if (!model_.has_embeddings)
    return fail(EB_ERROR_UNSUPPORTED, "this model has no embedding tables; run it on precomputed embeddings");
  const ModelConfig& c = model_.config;
  if (!model_.has_token_types) std::fill(inputs_.types.begin(), inputs_.types.begin() + static_cast<std::ptrdiff_t>(n), 0);
  for (size_t i = 0; i < n; ++i) {
    if (inputs_.ids[i] < 0 || inputs_.ids[i] >= c.vocab)
      return fail(EB_ERROR_INVALID_ARGUMENT, "input_ids[%zu] = %d is outside the vocabulary [0, %d)", i, inputs_.ids[i], c.vocab);
    if (inputs_.types[i] < 0 || (inputs_.types[i] != 0 && inputs_.types[i] >= c.type_vocab))
      return fail(EB_ERROR_INVALID_ARGUMENT, "token_type_ids[%zu] = %d is outside [0, %d)", i, inputs_.types[i], c.type_vocab);
  }
  size_t bad = 0;
  if (mask_laid)
    any_padding_ = any_zero(inputs_.key_mask, n);
  else if (!set_mask(mask, n, inputs_.key_mask.data(), &any_padding_, &bad))
    return fail(EB_ERROR_INVALID_ARGUMENT, "attention_mask[%zu] = %d is not 0 or 1", bad, mask[bad]);
  clear_error();
  one_sequence(n);
  const eb_status s = forward(n, 0);
  if (s != EB_OK) return s;
  state_.tokens = n;
  state_.ids = true;
  return EB_OK;
}

eb_status Session::run_ids(const int32_t* ids, const int32_t* token_types, const int32_t* mask, size_t n) {
  state_ = RunState();
  if (!ids) return fail(EB_ERROR_INVALID_ARGUMENT, "input_ids is NULL");
  if (n == 0) return fail(EB_ERROR_INVALID_ARGUMENT, "sequence length is 0");
  if (n > static_cast<size_t>(max_n_))
    return fail(EB_ERROR_SEQUENCE_TOO_LONG, "sequence length %zu exceeds the session maximum %d", n, max_n_);
  std::memcpy(inputs_.ids.data(), ids, n * sizeof(int32_t));
  for (size_t i = 0; i < n; ++i) inputs_.types[i] = token_types && model_.has_token_types ? token_types[i] : 0;  // DistilBERT: ignored
  return run_prepared(mask, n);
}

eb_status Session::tokenize(const char* a, const char* b, size_t* n) {
  PhaseTimer timer(profiling_ ? &phases_.tokenize_ns : nullptr);
  *n = 0;
  const size_t cap = text_limit();
  size_t na = 0;
  size_t cut = 0;
  const size_t total =
      tasks::lay_out_sequence(text_, model_.has_token_types, cap, inputs_, a, b, 0, cap, &na, truncation_, &cut);
  if (total == 0)  // (a tokenizer without special tokens, on a text with no token)
    return fail(EB_ERROR_INVALID_ARGUMENT, "the %s gives no tokens (this model's tokenizer adds no special tokens)",
                b ? "text pair" : "text");
  if (total <= cap) {
    state_.truncated = cut;
    *n = tasks::expand_sequence(inputs_, 0, total, expansion());  // (its key mask laid: 1, expansion's)
    return EB_OK;
  }
  char msg[256];
  tasks::too_long_message(text_, a, b, total, na, cap, msg, sizeof msg);
  if (colbert_input_)
    fail(EB_ERROR_SEQUENCE_TOO_LONG, "%s (the ColBERT %s_length; eb_session_set_truncation cuts it as PyLate does)", msg,
         colbert_input_ == EB_COLBERT_INPUT_QUERY ? "query" : "document");
  else
    fail(EB_ERROR_SEQUENCE_TOO_LONG, "%s", msg);
  return EB_ERROR_SEQUENCE_TOO_LONG;
}

size_t Session::text_limit() const {
  const Model::ColbertInputs& c = model_.colbert;
  const int32_t len = colbert_input_ == EB_COLBERT_INPUT_QUERY      ? c.query_length
                      : colbert_input_ == EB_COLBERT_INPUT_DOCUMENT ? c.document_length
                                                                    : max_n_;
  return static_cast<size_t>(std::min(len, max_n_));
}

tasks::Expansion Session::expansion() const {
  const Model::ColbertInputs& c = model_.colbert;
  if (colbert_input_ != EB_COLBERT_INPUT_QUERY || c.expansion_id < 0) return tasks::Expansion{};
  return tasks::Expansion{c.expansion_id, static_cast<size_t>(c.query_length), c.attend_to_expansion};
}

eb_status Session::check_pairs_allowed() {
  if (!colbert_input_) return EB_OK;
  return fail(EB_ERROR_INVALID_ARGUMENT, "text pairs cannot run as ColBERT %s inputs (single texts only; "
              "eb_session_set_colbert_input(EB_COLBERT_INPUT_PLAIN) for pairs)",
              colbert_input_ == EB_COLBERT_INPUT_QUERY ? "query" : "document");
}

eb_status Session::set_colbert_input(int input) {
  if (input < EB_COLBERT_INPUT_PLAIN || input > EB_COLBERT_INPUT_DOCUMENT)
    return fail(EB_ERROR_INVALID_ARGUMENT,
                "colbert input %d is not EB_COLBERT_INPUT_PLAIN, EB_COLBERT_INPUT_QUERY or EB_COLBERT_INPUT_DOCUMENT",
                input);
  const Model::ColbertInputs& c = model_.colbert;
  if (input != EB_COLBERT_INPUT_PLAIN) {
    if (!c.present)
      return fail(EB_ERROR_UNSUPPORTED, "this model has no PyLate query / document conventions (only models converted "
                  "from a PyLate ColBERT folder do); its text runs use the plain template");
    if (!text_.available()) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
    if (!text_.has_leading_special())
      return fail(EB_ERROR_UNSUPPORTED, "the model's template has no first token to put the ColBERT marker after");
    if (input == EB_COLBERT_INPUT_QUERY && c.expansion_id >= 0 && c.query_length > max_n_)
      return fail(EB_ERROR_INVALID_ARGUMENT, "query_length %d (query expansion) exceeds the session maximum %d",
                  c.query_length, max_n_);
  }
  colbert_input_ = input;
  text_.set_marker(input);
  clear_error();
  return EB_OK;
}

void Session::finish_text_run(size_t n, bool pair) {
  state_.text = true;
  state_.pair = pair;
  state_.words = tasks::build_words(inputs_, n, token_logits_, model_.config.num_labels);
}

eb_status Session::run_text_inputs(size_t n, bool pair, bool mask_laid) {
  const eb_status s = run_prepared(nullptr, n, mask_laid);
  if (s != EB_OK) return s;
  finish_text_run(n, pair);
  state_.colbert = colbert_input_;
  return EB_OK;
}

eb_status Session::check_text(const char* text, const char* what) {
  const Status st = TextEncoder::check(text, what);
  return st.is_ok() ? EB_OK : fail(st.code(), "%s", st.message().c_str());
}

eb_status Session::run_text(const char* text) {
  state_ = RunState();
  if (!text) return fail(EB_ERROR_INVALID_ARGUMENT, "text is NULL");
  if (!text_.available()) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  if (check_text(text, "text") != EB_OK) return EB_ERROR_INVALID_ARGUMENT;
  size_t n = 0;
  if (const eb_status s = tokenize(text, nullptr, &n); s != EB_OK) return s;
  return run_text_inputs(n, false, true);  // the key mask tokenize laid (ColBERT query expansion)
}

eb_status Session::run_text_pair(const char* a, const char* b) {
  state_ = RunState();
  if (!a || !b) return fail(EB_ERROR_INVALID_ARGUMENT, "text_a and text_b must not be NULL");
  if (!text_.available()) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  if (check_text(a, "text_a") != EB_OK || check_text(b, "text_b") != EB_OK) return EB_ERROR_INVALID_ARGUMENT;
  if (check_pairs_allowed() != EB_OK) return EB_ERROR_INVALID_ARGUMENT;
  size_t n = 0;
  if (const eb_status s = tokenize(a, b, &n); s != EB_OK) return s;
  return run_text_inputs(n, true);
}

eb_status Session::run_embeddings(const float* embeddings, const int32_t* mask, size_t n) {
  state_ = RunState();
  if (!embeddings) return fail(EB_ERROR_INVALID_ARGUMENT, "embeddings is NULL");
  if (n == 0) return fail(EB_ERROR_INVALID_ARGUMENT, "sequence length is 0");
  if (n > static_cast<size_t>(max_n_))
    return fail(EB_ERROR_SEQUENCE_TOO_LONG, "sequence length %zu exceeds the session maximum %d", n, max_n_);
  size_t bad = 0;
  if (!set_mask(mask, n, inputs_.key_mask.data(), &any_padding_, &bad))
    return fail(EB_ERROR_INVALID_ARGUMENT, "attention_mask[%zu] = %d is not 0 or 1", bad, mask[bad]);
  const size_t H = static_cast<size_t>(model_.config.hidden);
  for (size_t i = 0; i < n * H; ++i)
    if (!std::isfinite(embeddings[i]))
      return fail(EB_ERROR_INVALID_ARGUMENT, "embeddings[%zu] is not a finite number", i);
  clear_error();
  // The given embeddings replace the op that computes them: its outputs are written here.
  const size_t e = static_cast<size_t>(program_->embeddings_op());
  const exec::BoundOp& eop = ops_[e];
  float* hidden = reinterpret_cast<float*>(eop.out[0]);
  std::memcpy(hidden, embeddings, n * H * sizeof(float));
  if (const LinearView* q = eop.op->quant_for)
    kernels::quantize_s8_per_channel(hidden, n, H, eop.op->inv_factors_or_null(), q->input_scale, q->input_zero_point,
                                     reinterpret_cast<int8_t*>(eop.out[1]));
  if (hook_ && eop.op->hidden_states.set) exec::call_hidden_state_hook(eop, n, observer_for_run());
  one_sequence(n);
  const eb_status s = forward(n, e + 1);
  if (s != EB_OK) return s;
  state_.tokens = n;
  return EB_OK;
}

eb_status Session::masked_lm_logits(size_t row, const float** logits) {
  if (vocab_op_ < 0) return fail(EB_ERROR_UNSUPPORTED, "this model has no masked-LM head");
  const exec::BoundOp& b = ops_[static_cast<size_t>(vocab_op_)];
  const Status s = exec::vocab_logits_row(b, b.in[0] + row * exec::vocab_input_row_bytes(b), run_pool_, logits);
  exec::yield_workers(run_pool_);  // as after a run
  return s.is_ok() ? EB_OK : fail(s.code(), "%s", s.message().c_str());
}

// ---- packed runs

SequenceInfo Session::sequence(size_t i) const {
  if (state_.packed) return i < state_.sequences ? sequences_[i] : SequenceInfo{EB_ERROR_INVALID_ARGUMENT, 0, 0, 0, 0};
  SequenceInfo q;
  q.tokens = state_.tokens;
  q.words = state_.words;
  q.truncated = state_.truncated;
  return q;
}

tasks::PackLimits Session::pack_limits() const {
  return tasks::PackLimits{max_rows_, static_cast<size_t>(max_n_), model_.config.vocab, model_.config.type_vocab,
                           model_.has_token_types};
}

eb_status Session::run_packed(size_t count, bool text, bool pair, bool mask_laid) {
  size_t rows = 0;
  run_sequence_count_ = 0;
  for (size_t k = 0; k < count; ++k) {  // the sequences that run; sequence k's outputs go to row k
    SequenceInfo& q = sequences_[k];
    if (q.status == EB_OK && q.tokens == 0) q.status = EB_ERROR_INVALID_ARGUMENT;  // (nothing to pool or label)
    if (q.status != EB_OK) continue;
    run_sequences_[run_sequence_count_++] = exec::SequenceRows{q.first_token, q.tokens, k};
    rows = q.first_token + q.tokens;
  }
  // the key mask pack_texts laid (ColBERT queries' expansion tokens may be 0), else all attended
  if (!mask_laid) std::fill(inputs_.key_mask.begin(), inputs_.key_mask.begin() + static_cast<std::ptrdiff_t>(rows), uint8_t{1});
  any_padding_ = mask_laid && any_zero(inputs_.key_mask, rows);
  clear_error();
  state_.packed = true;
  state_.packed_pairs = text && pair;
  state_.sequences = count;
  if (rows > 0) {
    const eb_status s = forward(rows, 0);
    if (s != EB_OK) {
      state_ = RunState();
      return s;
    }
  }
  for (size_t k = 0; k < count; ++k)  // the sequences that failed read 0 (after the run: the arena is shared)
    if (sequences_[k].status != EB_OK)
      for (const PerSequenceOutput& o : per_sequence_outputs_) std::memset(o.data + k * o.row_bytes, 0, o.row_bytes);
  compact_embeddings(count);  // Matryoshka dims: [count, dims]
  // A packed run whose inputs all failed is still a successful run (each input has its status): its
  // getters give zero tokens and words, not EB_ERROR_BAD_STATE.
  state_.tokens = rows;
  state_.ids = true;
  if (!text) return EB_OK;
  finish_text_run(rows, false);
  state_.pair = false;  // best_span reads single runs only
  size_t w = 0;
  for (size_t k = 0; k < count; ++k) {
    SequenceInfo& q = sequences_[k];
    q.first_word = w;
    while (w < state_.words && static_cast<size_t>(inputs_.words[w].first_token) < q.first_token + q.tokens) ++w;
    q.words = w - q.first_word;
  }
  return EB_OK;
}

eb_status Session::run_texts(const char* const* texts_a, const char* const* texts_b, size_t count, size_t* consumed) {
  state_ = RunState();
  if (!consumed) return fail(EB_ERROR_INVALID_ARGUMENT, "out_consumed is NULL");
  *consumed = 0;
  if (count == 0) return fail(EB_ERROR_INVALID_ARGUMENT, "count is 0");
  if (!texts_a) return fail(EB_ERROR_INVALID_ARGUMENT, "texts is NULL");
  if (!model_.has_embeddings)
    return fail(EB_ERROR_UNSUPPORTED, "this model has no embedding tables; run it on precomputed embeddings");
  if (!text_.available()) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  size_t k = 0;
  {  // the checks, tokenization and packing (a profiling phase)
    PhaseTimer timer(profiling_ ? &phases_.tokenize_ns : nullptr);
    // text that is not UTF-8 refuses the call, naming the first such input (docs/tokenizers.md)
    for (size_t i = 0; i < count && i < max_rows_; ++i)
      for (int side = 0; side < (texts_b ? 2 : 1); ++side) {
        const char* t = side == 0 ? texts_a[i] : texts_b[i];
        if (!t || TextEncoder::check(t, "").is_ok()) continue;
        char what[32];  // (the input's name only for the message)
        std::snprintf(what, sizeof what, "%s[%zu]", side == 0 ? (texts_b ? "texts_a" : "texts") : "texts_b", i);
        return check_text(t, what);
      }
    if (texts_b && check_pairs_allowed() != EB_OK) return EB_ERROR_INVALID_ARGUMENT;
    tasks::PackLimits limits = pack_limits();
    limits.max_len = text_limit();
    k = tasks::pack_texts(text_, limits, truncation_, texts_a, texts_b, count, inputs_, sequences_.data(), expansion());
  }
  *consumed = k;
  const eb_status st = run_packed(k, true, texts_b != nullptr, true);
  if (st == EB_OK) state_.colbert = colbert_input_;
  return st;
}

eb_status Session::run_ids_batch(const int32_t* ids, const int32_t* token_types, const int32_t* mask,
                                 const size_t* lengths, size_t count, size_t* consumed) {
  state_ = RunState();
  if (!consumed) return fail(EB_ERROR_INVALID_ARGUMENT, "out_consumed is NULL");
  *consumed = 0;
  if (count == 0) return fail(EB_ERROR_INVALID_ARGUMENT, "count is 0");
  if (!ids || !lengths) return fail(EB_ERROR_INVALID_ARGUMENT, "input_ids and lengths must not be NULL");
  // The sequences lie end to end in the caller's arrays: lengths that add up past any array of
  // int32_t (a wrapped n - 1, say) would move the later ones before its start.
  for (size_t i = 0, total = 0; i < count; ++i) {
    if (lengths[i] > SIZE_MAX / sizeof(int32_t) - total)
      return fail(EB_ERROR_INVALID_ARGUMENT, "lengths[%zu] = %zu: the lengths add up to more than an int32_t array can hold", i,
                  lengths[i]);
    total += lengths[i];
  }
  if (!model_.has_embeddings)
    return fail(EB_ERROR_UNSUPPORTED, "this model has no embedding tables; run it on precomputed embeddings");
  const size_t k = tasks::pack_ids(pack_limits(), ids, token_types, mask, lengths, count, inputs_, sequences_.data());
  *consumed = k;
  return run_packed(k, false, false, true);
}

}  // namespace edgebert
