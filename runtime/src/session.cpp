// SPDX-License-Identifier: Apache-2.0
// session.cpp: a session's memory plan, operator creation, run entry points with their per-run
// state, and the allocation-free executor over the program's ops.
#include "session.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "exec/executor.h"
#include "kernels/kernels.h"

namespace edgebert {
namespace {

constexpr size_t kAlignment = 64;
constexpr int kMaxBatchTokens = 1 << 20;

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

// Room for the tokens of one word before a window's first token (a word has at most
// max_chars_per_word pieces) when the context is re-tokenized from that word's start.
constexpr size_t kWordSlack = static_cast<size_t>(WordPieceTokenizer::kMaxCharsPerWordLimit) + 1;

}  // namespace

Session::Session(std::shared_ptr<const Program> program, const SessionOptions& o)
    : program_(std::move(program)), model_(program_->model()), text_(model_, o.split_special_tokens) {}

Session::~Session() {
  gemms_.clear();  // operators first
  if (pool_) pthreadpool_destroy(pool_);
  std::free(arena_raw_);
}

eb_status Session::fail(eb_status s, const char* fmt, ...) {
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
  std::string why;
  if (!xnn_ready(&why)) return Status(EB_ERROR_BACKEND, why);
  try {
    std::unique_ptr<Session> s(new Session(std::move(program), o));
    EB_RETURN_IF_ERROR(s->build(o));
    return s;
  } catch (const std::bad_alloc&) {
    return Status(EB_ERROR_OUT_OF_MEMORY, "out of memory while creating the session");
  }
}

eb_status Session::create(const Model& model, const SessionOptions& o, std::unique_ptr<Session>* out,
                          std::string* error) {
  out->reset();
  Result<std::shared_ptr<const Program>> program = Program::build(model, XnnGemm::int8_float_output_supported());
  Status st = program.status();
  if (st.is_ok()) {
    Result<std::unique_ptr<Session>> s = create(program.take(), o);
    st = s.status();
    if (st.is_ok()) *out = s.take();
  }
  if (!st.is_ok() && error) *error = st.message();
  return st.code();
}

Status Session::build(const SessionOptions& o) {
  const ModelConfig& c = model_.config;
  threads_ = std::max(1, o.threads);
  max_n_ = o.max_seq_len > 0 ? o.max_seq_len : c.max_position;
  if (o.max_batch_tokens != 0 && (o.max_batch_tokens < max_n_ || o.max_batch_tokens > kMaxBatchTokens))
    return Status(EB_ERROR_INVALID_ARGUMENT, "max_batch_tokens " + std::to_string(o.max_batch_tokens) +
                                                 " must be 0 or between max_sequence_length " + std::to_string(max_n_) +
                                                 " and " + std::to_string(kMaxBatchTokens));
  max_rows_ = static_cast<size_t>(o.max_batch_tokens > 0 ? o.max_batch_tokens : max_n_);
  const size_t n = max_rows_;  // per-token arrays hold a packed run
  // This session's buffer sizes, then its plan.
  requests_ = program_->requests(max_n_, threads_, static_cast<int>(max_rows_));
  std::string perr;
  if (!plan_memory(requests_, PlanStrategy::kGreedyBySize, kAlignment, &plan_, &perr))
    return Status(EB_ERROR_BACKEND, "memory planning failed: " + perr);
  // The per-token input and text arrays of the session.
  const size_t context_cap = n + kWordSlack;
  const size_t pooled_width = static_cast<size_t>(2 * c.hidden + std::max(c.num_labels, 0));
  const size_t batch = n * (sizeof(SequenceInfo) + 2 * sizeof(size_t) + sizeof(int32_t) + pooled_width * sizeof(float));
  const size_t inputs = batch + n * (5 * sizeof(int32_t) + sizeof(uint8_t) + sizeof(TokenSpan) + sizeof(int32_t) + sizeof(eb_word)) +
                        n * (2 * sizeof(int32_t) + sizeof(TokenSpan)) + context_cap * (2 * sizeof(int32_t) + sizeof(TokenSpan));
  if (o.max_memory_bytes > 0) {  // refuse before allocating anything big
    const size_t packed = estimate_packed_bytes();
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
  resources_.max_tile = attention_row_tile(max_n_);
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
  EB_RETURN_IF_ERROR(create_gemms());
  ids_.assign(n, 0);
  types_.assign(n, 0);
  key_mask_.assign(n, 1);
  spans_.assign(n, TokenSpan{0, 0});
  begin_.assign(n, 0);
  end_.assign(n, 0);
  segment_.assign(n, -1);
  word_ids_.assign(n, -1);
  words_.assign(n, eb_word{});
  question_ids_.assign(n, 0);
  question_words_.assign(n, 0);
  question_spans_.assign(n, TokenSpan{0, 0});
  context_ids_.assign(context_cap, 0);
  context_words_.assign(context_cap, 0);
  context_spans_.assign(context_cap, TokenSpan{0, 0});
  text_.reserve(context_cap, 16 * context_cap);
  sequences_.assign(n, SequenceInfo{});
  run_sequences_.assign(n, exec::SequenceRows{});
  profile_.assign(static_cast<size_t>(c.layers + 1) * static_cast<size_t>(OpKind::kCount), 0);
  return Status::ok();
}

size_t Session::estimate_packed_bytes() const {
  size_t bytes = 0;
  const std::vector<Op>& ops = program_->ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (!op.is_gemm()) continue;
    bool seen = false;  // shared layers' GEMMs are packed once
    for (size_t j = 0; j < i && !seen; ++j) seen = ops[j].is_gemm() && ops[j].linear == op.linear;
    if (seen) continue;
    const size_t w = static_cast<size_t>(op.linear->in) * static_cast<size_t>(op.linear->out);
    const size_t o = static_cast<size_t>(op.linear->out);
    // int8: weights + int32 (or float) bias + float scale per channel; f32: weights + bias
    bytes += op.linear->int8 ? w + o * 8 : (w + o) * 4;
  }
  return bytes;
}

Status Session::create_gemms() {
  const size_t xnn_before = xnn_bytes_allocated();
  // The program's shared packed weights: each GEMM op names its entry (Op::gemm_key).
  PackedWeights* store = program_->packed_weights();
  const size_t shared_before = store ? store->packed_bytes() : 0;
  for (size_t i = 0; i < ops_.size(); ++i) {
    exec::BoundOp& b = ops_[i];
    if (!b.op->is_gemm()) continue;
    // The same weights on the same buffers (ALBERT's shared layers): one operator, packed once.
    for (size_t j = 0; j < i && !b.gemm; ++j) {
      const exec::BoundOp& o = ops_[j];
      if (o.gemm && o.op->type == b.op->type && o.op->linear == b.op->linear && o.in[0] == b.in[0] &&
          o.out[0] == b.out[0] && o.op->float_output == b.op->float_output && o.op->per_sequence == b.op->per_sequence)
        b.gemm = o.gemm;
    }
    if (b.gemm) continue;
    b.owns_gemm = true;
    gemms_.push_back(std::make_unique<XnnGemm>());
    b.gemm = gemms_.back().get();
    std::string why;
    if (!b.gemm->create(*b.op->linear, b.op->float_output, max_rows_, &why, store,
                          static_cast<size_t>(b.op->gemm_key)))
      return Status(EB_ERROR_BACKEND, why);
    model_.release_weight_pages(*b.op->linear);
  }
  // Head GEMMs read one row: set up once here (encoder GEMMs are set up per row count).
  for (exec::BoundOp& b : ops_)
    if (b.owns_gemm && b.op->per_sequence && !b.gemm->setup(1, b.in[0], b.out[0], pool_))
      return Status(EB_ERROR_BACKEND, std::string("XNNPACK setup failed (") + b.op->linear->name + ")");
  // this session's own packed copies (2022 API), plus what it packed into the shared store
  packed_bytes_ = xnn_bytes_allocated() - xnn_before + (store ? store->packed_bytes() - shared_before : 0);
  return Status::ok();
}

void Session::reset_profile() { std::fill(profile_.begin(), profile_.end(), 0); }

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
  ctx.ids = ids_.data();
  ctx.types = types_.data();
  ctx.key_mask = key_mask_.data();
  ctx.any_padding = any_padding_;
  ctx.row_tile = std::max<size_t>(1, (n + 2 * threads_ - 1) / (2 * threads_));
  ctx.res = resources_;
  const exec::ExecObserver observer = observer_for_run();
  cur_n_ = 0;
  const Status s = exec::run_ops(ops_, first, ctx, observer);
  if (!s.is_ok()) return fail(s.code(), "%s", s.message().c_str());
  cur_n_ = n;
  return EB_OK;
}

exec::ExecObserver Session::observer_for_run() {
  exec::ExecObserver o;
  o.profile_ns = profiling_ ? profile_.data() : nullptr;
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
    if (b.gemm && b.op->layer >= 0 && !b.gemm->run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed");
  return EB_OK;
}

// ---- run entry points

eb_status Session::run_prepared(const int32_t* mask, size_t n) {
  if (!model_.has_embeddings)
    return fail(EB_ERROR_UNSUPPORTED, "this model has no embedding tables; run it on precomputed embeddings");
  const ModelConfig& c = model_.config;
  if (!model_.has_token_types) std::fill(types_.begin(), types_.begin() + static_cast<std::ptrdiff_t>(n), 0);
  for (size_t i = 0; i < n; ++i) {
    if (ids_[i] < 0 || ids_[i] >= c.vocab)
      return fail(EB_ERROR_INVALID_ARGUMENT, "input_ids[%zu] = %d is outside the vocabulary [0, %d)", i, ids_[i], c.vocab);
    if (types_[i] < 0 || (types_[i] != 0 && types_[i] >= c.type_vocab))
      return fail(EB_ERROR_INVALID_ARGUMENT, "token_type_ids[%zu] = %d is outside [0, %d)", i, types_[i], c.type_vocab);
  }
  size_t bad = 0;
  if (!set_mask(mask, n, key_mask_.data(), &any_padding_, &bad))
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
  std::memcpy(ids_.data(), ids, n * sizeof(int32_t));
  for (size_t i = 0; i < n; ++i) types_[i] = token_types && model_.has_token_types ? token_types[i] : 0;  // DistilBERT: ignored
  return run_prepared(mask, n);
}

size_t Session::lay_out_sequence(const char* a, const char* b, size_t at, size_t cap, size_t* first_len) {
  // The model's template around the texts (prefix A suffix, or prefix A middle B suffix) written at
  // token `at`, at most `cap` tokens. Returns the sequence's length; more than `cap`: it does not
  // fit (a text longer than the tokenizer's buffers: more than the session maximum).
  *first_len = 0;
  const text::Tokenizer::Frame& f = text_.frame(b != nullptr);
  const size_t specials = f.prefix.size() + f.middle.size() + f.suffix.size();
  const size_t max_bytes = text_.max_text_bytes();
  for (const char* t : {a, b})
    if (t && std::strlen(t) > max_bytes) return static_cast<size_t>(max_n_) + 1;
  if (cap < specials + (b ? 1 : 0)) return specials + 1;
  const size_t end_cap = at + cap;
  size_t pos = at;
  auto put_specials = [&](const std::vector<int32_t>& ids, const std::vector<int32_t>& types) {
    for (size_t k = 0; k < ids.size() && pos < end_cap; ++k, ++pos) {
      ids_[pos] = ids[k];
      types_[pos] = types[k];
      begin_[pos] = end_[pos] = 0;
      segment_[pos] = word_ids_[pos] = -1;
    }
  };
  auto put_text = [&](const char* t, size_t room, int32_t seg, int32_t type) {
    const size_t n = text_.encode(t, ids_.data() + pos, spans_.data() + pos, word_ids_.data() + pos, room);
    for (size_t i = pos; i < pos + std::min(n, room); ++i) {
      types_[i] = type;
      begin_[i] = spans_[i].begin;
      end_[i] = spans_[i].end;
      segment_[i] = seg;
    }
    return n;
  };
  put_specials(f.prefix, f.prefix_types);
  const size_t na = put_text(a, end_cap > pos ? end_cap - pos : 0, 0, f.type_a);
  *first_len = na;
  if (pos - at + na + specials - f.prefix.size() + (b ? 1 : 0) > cap) return pos - at + na + specials - f.prefix.size() + (b ? 1 : 0);
  pos += na;
  if (b) {
    put_specials(f.middle, f.middle_types);
    const size_t nb = put_text(b, end_cap - pos, 1, f.type_b);
    if (pos - at + nb + f.suffix.size() > cap) return pos - at + nb + f.suffix.size();
    pos += nb;
  }
  put_specials(f.suffix, f.suffix_types);
  if (!model_.has_token_types)
    for (size_t i = at; i < pos; ++i) types_[i] = 0;
  return pos - at;
}

size_t Session::tokenize(const char* a, const char* b) {
  const size_t cap = static_cast<size_t>(max_n_);
  size_t na = 0;
  const size_t total = lay_out_sequence(a, b, 0, cap, &na);
  if (total <= cap) return total;
  const size_t max_bytes = text_.max_text_bytes();
  for (const char* t : {a, b}) {
    if (t && std::strlen(t) > max_bytes) {
      fail(EB_ERROR_SEQUENCE_TOO_LONG,
           "text is %zu bytes long; this model's tokenizer takes texts of up to %zu bytes in sessions of %d positions",
           std::strlen(t), max_bytes, max_n_);
      return 0;
    }
  }
  const text::Tokenizer::Frame& f = text_.frame(true);
  if (b && na + f.prefix.size() + f.middle.size() + f.suffix.size() + 1 > cap) {
    fail(EB_ERROR_SEQUENCE_TOO_LONG,
         "text pair is more than %zu tokens long (the first text alone is %zu), the session maximum is %d", total, na,
         max_n_);
  } else {
    fail(EB_ERROR_SEQUENCE_TOO_LONG, "%s is %zu tokens long, the session maximum is %d", b ? "text pair" : "text", total,
         max_n_);
  }
  return 0;
}

void Session::finish_text_run(size_t n, bool pair) {
  state_.text = true;
  state_.pair = pair;
  const int labels = model_.config.num_labels;
  size_t count = 0;
  for (size_t t = 0; t < n; ++t) {
    if (segment_[t] < 0) continue;
    const bool continues = count > 0 && t > 0 && segment_[t - 1] == segment_[t] && word_ids_[t - 1] == word_ids_[t];
    if (continues) {
      eb_word& w = words_[count - 1];
      w.last_token = static_cast<int32_t>(t);
      w.end_byte = end_[t];
      continue;
    }
    eb_word& w = words_[count++];
    w.first_token = w.last_token = static_cast<int32_t>(t);
    w.segment = segment_[t];
    w.begin_byte = begin_[t];
    w.end_byte = end_[t];
    w.label = -1;
    if (token_logits_ && labels > 0) {  // the label of the word's first token
      const float* row = token_logits_ + t * static_cast<size_t>(labels);
      w.label = static_cast<int32_t>(std::max_element(row, row + labels) - row);
    }
  }
  state_.words = count;
}

eb_status Session::run_text(const char* text) {
  state_ = RunState();
  if (!text) return fail(EB_ERROR_INVALID_ARGUMENT, "text is NULL");
  if (!text_.available()) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  const size_t n = tokenize(text, nullptr);
  if (n == 0) return EB_ERROR_SEQUENCE_TOO_LONG;
  const eb_status s = run_prepared(nullptr, n);
  if (s == EB_OK) finish_text_run(n, false);
  return s;
}

eb_status Session::run_text_pair(const char* a, const char* b) {
  state_ = RunState();
  if (!a || !b) return fail(EB_ERROR_INVALID_ARGUMENT, "text_a and text_b must not be NULL");
  if (!text_.available()) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  const size_t n = tokenize(a, b);
  if (n == 0) return EB_ERROR_SEQUENCE_TOO_LONG;
  const eb_status s = run_prepared(nullptr, n);
  if (s == EB_OK) finish_text_run(n, true);
  return s;
}

eb_status Session::run_embeddings(const float* embeddings, const int32_t* mask, size_t n) {
  state_ = RunState();
  if (!embeddings) return fail(EB_ERROR_INVALID_ARGUMENT, "embeddings is NULL");
  if (n == 0) return fail(EB_ERROR_INVALID_ARGUMENT, "sequence length is 0");
  if (n > static_cast<size_t>(max_n_))
    return fail(EB_ERROR_SEQUENCE_TOO_LONG, "sequence length %zu exceeds the session maximum %d", n, max_n_);
  size_t bad = 0;
  if (!set_mask(mask, n, key_mask_.data(), &any_padding_, &bad))
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

// ---- packed runs

SequenceInfo Session::sequence(size_t i) const {
  if (state_.packed) return i < state_.sequences ? sequences_[i] : SequenceInfo{EB_ERROR_INVALID_ARGUMENT, 0, 0, 0, 0};
  SequenceInfo q;
  q.tokens = state_.tokens;
  q.words = state_.words;
  return q;
}

eb_status Session::check_sequence(size_t first, size_t n) {
  const ModelConfig& c = model_.config;
  for (size_t t = first; t < first + n; ++t) {
    if (!model_.has_token_types) types_[t] = 0;
    if (ids_[t] < 0 || ids_[t] >= c.vocab || types_[t] < 0 || (types_[t] != 0 && types_[t] >= c.type_vocab))
      return EB_ERROR_INVALID_ARGUMENT;
  }
  return EB_OK;
}

eb_status Session::run_packed(size_t count, bool text, bool pair) {
  size_t rows = 0;
  run_sequence_count_ = 0;
  for (size_t k = 0; k < count; ++k) {  // the sequences that run; sequence k's outputs go to row k
    const SequenceInfo& q = sequences_[k];
    if (q.status != EB_OK) continue;
    run_sequences_[run_sequence_count_++] = exec::SequenceRows{q.first_token, q.tokens, k};
    rows = q.first_token + q.tokens;
  }
  std::fill(key_mask_.begin(), key_mask_.begin() + static_cast<std::ptrdiff_t>(rows), uint8_t{1});
  any_padding_ = false;
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
  state_.tokens = rows;
  state_.ids = rows > 0;
  if (!text || rows == 0) return EB_OK;
  finish_text_run(rows, false);
  state_.pair = false;  // best_span reads single runs only
  size_t w = 0;
  for (size_t k = 0; k < count; ++k) {
    SequenceInfo& q = sequences_[k];
    q.first_word = w;
    while (w < state_.words && static_cast<size_t>(words_[w].first_token) < q.first_token + q.tokens) ++w;
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
  const size_t max_n = static_cast<size_t>(max_n_);
  size_t at = 0, k = 0;
  for (; k < count && k < max_rows_; ++k) {
    const char* a = texts_a[k];
    const char* b = texts_b ? texts_b[k] : nullptr;
    SequenceInfo& q = sequences_[k];
    q = SequenceInfo{};
    q.first_token = at;
    if (!a || (texts_b && !b)) {
      q.status = EB_ERROR_INVALID_ARGUMENT;
      continue;
    }
    const size_t cap = std::min(max_rows_ - at, max_n);
    size_t na = 0;
    const size_t need = lay_out_sequence(a, b, at, cap, &na);
    if (need <= cap) {
      q.status = check_sequence(at, need);
      if (q.status == EB_OK) q.tokens = need, at += need;
      continue;
    }
    if (need > max_n) {
      q.status = EB_ERROR_SEQUENCE_TOO_LONG;
      continue;
    }
    break;  // fits only a run of its own: the caller's next call
  }
  *consumed = k;
  return run_packed(k, true, texts_b != nullptr);
}

eb_status Session::run_ids_batch(const int32_t* ids, const int32_t* token_types, const size_t* lengths, size_t count,
                                 size_t* consumed) {
  state_ = RunState();
  if (!consumed) return fail(EB_ERROR_INVALID_ARGUMENT, "out_consumed is NULL");
  *consumed = 0;
  if (count == 0) return fail(EB_ERROR_INVALID_ARGUMENT, "count is 0");
  if (!ids || !lengths) return fail(EB_ERROR_INVALID_ARGUMENT, "input_ids and lengths must not be NULL");
  if (!model_.has_embeddings)
    return fail(EB_ERROR_UNSUPPORTED, "this model has no embedding tables; run it on precomputed embeddings");
  const size_t max_n = static_cast<size_t>(max_n_);
  size_t at = 0, src = 0, k = 0;
  for (; k < count && k < max_rows_; ++k) {
    const size_t len = lengths[k];
    SequenceInfo& q = sequences_[k];
    q = SequenceInfo{};
    q.first_token = at;
    if (len == 0) {
      q.status = EB_ERROR_INVALID_ARGUMENT;
    } else if (len > max_n) {
      q.status = EB_ERROR_SEQUENCE_TOO_LONG;
    } else if (len > max_rows_ - at) {
      break;  // the caller's next call
    } else {
      std::memcpy(ids_.data() + at, ids + src, len * sizeof(int32_t));
      for (size_t i = 0; i < len; ++i) types_[at + i] = token_types ? token_types[src + i] : 0;
      q.status = check_sequence(at, len);
      if (q.status == EB_OK) q.tokens = len, at += len;
    }
    src += len;
  }
  *consumed = k;
  return run_packed(k, false, false);
}

// ---- question answering

bool Session::best_span_in_run(size_t begin, size_t n, size_t max_len, eb_span* out) const {
  bool found = false;
  for (size_t s = begin; s < n; ++s) {
    if (segment_[s] != 1) continue;
    for (size_t e = s; e < n && e - s < max_len && segment_[e] == 1; ++e) {
      const float score = start_logits_[s] + end_logits_[e];
      if (found && !(score > out->score)) continue;
      found = true;
      out->start_token = static_cast<int32_t>(s);
      out->end_token = static_cast<int32_t>(e);
      out->begin_byte = begin_[s];
      out->end_byte = end_[e];
      out->score = score;
    }
  }
  return found;
}

eb_status Session::best_span(int max_tokens, eb_span* out) {
  if (!out) return fail(EB_ERROR_INVALID_ARGUMENT, "out_span is NULL");
  if (model_.task != Task::kQuestionAnswering || !start_logits_)
    return fail(EB_ERROR_UNSUPPORTED, "best_span needs a question-answering model");
  if (!has_pair())
    return fail(EB_ERROR_BAD_STATE, "best_span needs a successful run_text_pair(question, context) as the last run");
  if (!best_span_in_run(0, state_.tokens, max_tokens <= 0 ? 30 : static_cast<size_t>(max_tokens), out))
    return fail(EB_ERROR_BAD_STATE, "the context of the last run has no tokens");
  clear_error();
  return EB_OK;
}

eb_status Session::sequence_best_span(size_t index, int max_tokens, eb_span* out) {
  if (!out) return fail(EB_ERROR_INVALID_ARGUMENT, "out_span is NULL");
  if (model_.task != Task::kQuestionAnswering || !start_logits_)
    return fail(EB_ERROR_UNSUPPORTED, "sequence_best_span needs a question-answering model");
  if (!state_.packed) {
    if (index != 0) return fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu of 1 (the last run was a single run)", index);
    return best_span(max_tokens, out);
  }
  if (!state_.packed_pairs)
    return fail(EB_ERROR_BAD_STATE, "sequence_best_span needs a successful run_text_pairs(questions, contexts) as the last run");
  if (index >= state_.sequences)
    return fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu of %zu", index, state_.sequences);
  const SequenceInfo& q = sequences_[index];
  if (q.status != EB_OK)
    return fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu did not run (%s)", index, eb_status_string(q.status));
  if (!best_span_in_run(q.first_token, q.first_token + q.tokens, max_tokens <= 0 ? 30 : static_cast<size_t>(max_tokens),
                        out))
    return fail(EB_ERROR_BAD_STATE, "the context of sequence %zu has no tokens", index);
  clear_error();
  return EB_OK;
}

size_t Session::tokenize_context(std::string_view context, size_t from, size_t need) {
  // Tokenizes a prefix of context[from, end) that ends before ASCII whitespace (no word crosses
  // it, so its tokens are the first tokens of the whole rest) and holds at least `need` tokens,
  // or the whole rest: each window reads about its own bytes, not the rest of a long context.
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (size_t guess = 8 * need + 64;; guess *= 2) {
    size_t cut = guess < context.size() - from ? from + guess : context.size();
    while (cut < context.size() && !is_space(context[cut])) ++cut;
    const size_t tokens = text_.encode(context.substr(from, cut - from), context_ids_.data(), context_spans_.data(),
                                       context_words_.data(), need);
    if (tokens >= need || cut == context.size()) return tokens;
  }
}

eb_status Session::answer(const char* question, const char* context, int max_answer_tokens, int doc_stride,
                          eb_span* out, int32_t* out_windows) {
  state_ = RunState();
  if (out_windows) *out_windows = 0;
  if (!question || !context) return fail(EB_ERROR_INVALID_ARGUMENT, "question and context must not be NULL");
  if (!out) return fail(EB_ERROR_INVALID_ARGUMENT, "out_span is NULL");
  if (model_.task != Task::kQuestionAnswering || !start_logits_)
    return fail(EB_ERROR_UNSUPPORTED, "answer needs a question-answering model");
  if (!text_.available()) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  const size_t cap = static_cast<size_t>(max_n_);
  const text::Tokenizer::Frame& f = text_.frame(true);  // prefix question middle window suffix
  const size_t specials = f.prefix.size() + f.middle.size() + f.suffix.size();
  const size_t q = text_.encode(question, question_ids_.data(), question_spans_.data(), question_words_.data(), cap);
  if (q + specials + 1 > cap)
    return fail(EB_ERROR_SEQUENCE_TOO_LONG,
                "the question is %zu tokens long: with the model's %zu special tokens it leaves no room for context in "
                "the session maximum of %d",
                q, specials, max_n_);
  const size_t window = cap - q - specials;  // context tokens per window
  const std::string_view ctx(context);
  // BERT's WordPiece re-tokenizes the context from a word start before each window (any length);
  // the other tokenizers' pieces can carry the space before a word, so their context is
  // tokenized once, whole, into buffers sized at session creation (longer contexts are refused).
  const bool whole = !text_.retokenizes_from_words();
  if (whole && ctx.size() > text_.max_text_bytes())
    return fail(EB_ERROR_SEQUENCE_TOO_LONG,
                "the context is %zu bytes long; with this model's tokenizer a session of %d positions answers over "
                "contexts of up to %zu bytes",
                ctx.size(), max_n_, text_.max_text_bytes());
  size_t total = text_.encode(ctx, nullptr, nullptr, nullptr, 0);
  if (whole) {
    if (total > context_ids_.size())  // bounded buffers: never grown during a run
      return fail(EB_ERROR_SEQUENCE_TOO_LONG,
                  "the context is %zu tokens long; with this model's tokenizer a session of %d positions answers over "
                  "contexts of up to %zu tokens",
                  total, max_n_, context_ids_.size());
    total = text_.encode(ctx, context_ids_.data(), context_spans_.data(), context_words_.data(), context_ids_.size());
  }
  const size_t stride = doc_stride < 0 ? std::min<size_t>(128, window / 2) : static_cast<size_t>(doc_stride);
  if (total > window && stride >= window)
    return fail(EB_ERROR_INVALID_ARGUMENT, "doc_stride %zu must be smaller than the %zu context tokens of a window", stride,
                window);
  const size_t step = window - stride, max_len = max_answer_tokens <= 0 ? 30 : static_cast<size_t>(max_answer_tokens);
  // The windows start at context tokens 0, step, 2 step, ... (as HuggingFace's overflowing tokens)
  // until one reaches the end. The context is tokenized from a word start at or before each
  // window (its pieces are the same as in the whole context's tokenization), not kept whole.
  size_t cursor_byte = 0, cursor_token = 0;
  int32_t cursor_word = 0;
  eb_span best{};
  bool found = false;
  int32_t windows = 0;
  for (size_t start = 0;; start += step) {
    // the tokens from the cursor to the window's end, and the one after it (the next window may
    // start there)
    const size_t skip = start - cursor_token, need = skip + window + 1;
    if (!whole) {
      if (need > context_ids_.size())
        return fail(EB_ERROR_BACKEND, "a word of the context is longer than %zu tokens", context_ids_.size() - window - 1);
      const size_t rest = tokenize_context(ctx, cursor_byte, need);
      if (cursor_token + rest > total || (rest < need && rest != total - cursor_token))
        return fail(EB_ERROR_BACKEND, "the context re-tokenized from byte %zu gave %zu tokens, not %zu", cursor_byte,
                    rest, total - cursor_token);
    }
    const size_t win = std::min(window, total - start);
    const size_t n = q + win + specials;
    size_t t = 0;
    auto put_specials = [&](const std::vector<int32_t>& sp, const std::vector<int32_t>& types) {
      for (size_t k = 0; k < sp.size(); ++k, ++t) {
        ids_[t] = sp[k];
        begin_[t] = end_[t] = 0;
        segment_[t] = word_ids_[t] = -1;
        types_[t] = model_.has_token_types ? types[k] : 0;
      }
    };
    put_specials(f.prefix, f.prefix_types);
    for (size_t i = 0; i < q; ++i, ++t) {
      ids_[t] = question_ids_[i];
      begin_[t] = question_spans_[i].begin;
      end_[t] = question_spans_[i].end;
      segment_[t] = 0;
      word_ids_[t] = question_words_[i];
      types_[t] = model_.has_token_types ? f.type_a : 0;
    }
    put_specials(f.middle, f.middle_types);
    for (size_t i = 0; i < win; ++i, ++t) {
      const size_t c = skip + i;
      ids_[t] = context_ids_[c];
      begin_[t] = static_cast<int32_t>(cursor_byte) + context_spans_[c].begin;
      end_[t] = static_cast<int32_t>(cursor_byte) + context_spans_[c].end;
      segment_[t] = 1;
      word_ids_[t] = cursor_word + context_words_[c];
      types_[t] = model_.has_token_types ? f.type_b : 0;
    }
    put_specials(f.suffix, f.suffix_types);
    const eb_status s = run_prepared(nullptr, n);
    if (s != EB_OK) {
      state_ = RunState();
      return s;
    }
    finish_text_run(n, true);
    ++windows;
    eb_span span;
    if (best_span_in_run(0, n, max_len, &span) && (!found || span.score > best.score)) best = span, found = true;
    if (start + window >= total) break;
    // the next cursor: the start of the word holding the next window's first token
    if (whole) continue;  // the whole context stays in the buffers
    size_t local = start + step - cursor_token;
    while (local > 0 && context_words_[local] == context_words_[local - 1]) --local;
    cursor_byte += static_cast<size_t>(context_spans_[local].begin);
    cursor_word += context_words_[local];
    cursor_token += local;
  }
  if (!found) {
    state_ = RunState();
    return fail(EB_ERROR_BAD_STATE, "the context has no tokens");
  }
  *out = best;
  if (out_windows) *out_windows = windows;
  clear_error();
  return EB_OK;
}

}  // namespace edgebert
