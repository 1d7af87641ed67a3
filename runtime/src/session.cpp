// SPDX-License-Identifier: Apache-2.0
// session.cpp: a session's memory plan, operator creation, run entry points with their per-run
// state, and the allocation-free executor over the program's ops.
#include "session.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/kernels.h"

namespace edgebert {
namespace {

constexpr size_t kAlignment = 64;
constexpr int kMaxBatchTokens = 1 << 20;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Runs f(start, count) over [0, range) in tiles on the pool (inline when pool is null).
template <class F>
void parallel_rows(pthreadpool_t pool, size_t range, size_t tile, F& f) {
  pthreadpool_parallelize_1d_tile_1d(
      pool, [](void* ctx, size_t start, size_t count) { (*static_cast<F*>(ctx))(start, count); }, &f, range, tile, 0);
}

// Scoped timer for --op-profile (no allocation).
class OpTimer {
 public:
  OpTimer(bool on, int64_t* slot) : slot_(on ? slot : nullptr), t0_(on ? now_ns() : 0) {}
  ~OpTimer() {
    if (slot_) *slot_ += now_ns() - t0_;
  }

 private:
  int64_t* slot_;
  int64_t t0_;
};

// hidden rows += a GEMM's output rows [r0, r0 + rows): dequantized with the op's per-channel
// scales when the GEMM wrote int8, added as is when it wrote float.
void add_residual(float* h, const void* y, size_t r0, size_t rows, size_t H, const Op& op) {
  if (op.linear->int8 && !op.float_output) {
    kernels::residual_dequant_add_s8(h, static_cast<const int8_t*>(y) + r0 * H, rows, H, op.dequant_scales.data(),
                                     op.linear->output_zero_point);
  } else {
    const float* yf = static_cast<const float*>(y) + r0 * H;
    for (size_t i = 0; i < rows * H; ++i) h[i] += yf[i];
  }
}

// x = act(x) in place, every Activation (GELU / ReLU / tanh-GELU by the kernels, the others here).
void activation_in_place(Activation a, float* x, size_t count) {
  switch (a) {
    case Activation::kGelu:
    case Activation::kRelu:
    case Activation::kGeluTanh:
      kernels::activation_f32(static_cast<kernels::ActivationKind>(a), x, count);
      break;
    case Activation::kSilu:
      for (size_t i = 0; i < count; ++i) x[i] = x[i] / (1.f + std::exp(-x[i]));
      break;
    case Activation::kSigmoid:
      for (size_t i = 0; i < count; ++i) x[i] = 1.f / (1.f + std::exp(-x[i]));
      break;
    case Activation::kTanh:
      for (size_t i = 0; i < count; ++i) x[i] = std::tanh(x[i]);
      break;
  }
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
  attention_workers_ = static_cast<size_t>(threads_);
  attention_max_tile_ = attention_row_tile(max_n_);
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
  if (posix_memalign(reinterpret_cast<void**>(&arena_raw_), kAlignment, std::max<size_t>(plan_.arena_bytes, 64)) != 0) {
    arena_raw_ = nullptr;
    return Status(EB_ERROR_OUT_OF_MEMORY, "cannot allocate the " + std::to_string(plan_.arena_bytes) + "-byte arena");
  }
  arena_ = arena_raw_;
  std::memset(arena_, 0, plan_.arena_bytes);
  // Every op bound to its arena pointers.
  const std::vector<Op>& ops = program_->ops();
  auto ptr = [&](int b) { return arena_ + plan_.offsets[static_cast<size_t>(b)]; };
  ops_.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    BoundOp& b = ops_[i];
    b.op = &ops[i];
    for (int x : ops[i].inputs) b.in.push_back(ptr(x));
    for (int x : ops[i].outputs) b.out.push_back(ptr(x));
  }
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
  active_.assign(n, 0);
  positions_.assign(n, 0);
  const size_t H = static_cast<size_t>(c.hidden);
  if (pooled_) batch_pooled_.assign(n * H, 0.f);
  if (logits_) batch_logits_.assign(n * static_cast<size_t>(std::max(c.num_labels, 1)), 0.f);
  if (sentence_embedding_) batch_sentence_.assign(n * H, 0.f);
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
    BoundOp& b = ops_[i];
    if (!b.op->is_gemm()) continue;
    // The same weights on the same buffers (ALBERT's shared layers): one operator, packed once.
    for (size_t j = 0; j < i && !b.gemm; ++j) {
      const BoundOp& o = ops_[j];
      if (o.gemm && o.op->type == b.op->type && o.op->linear == b.op->linear && o.in[0] == b.in[0] &&
          o.out[0] == b.out[0] && o.op->float_output == b.op->float_output && o.op->per_token == b.op->per_token)
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
  for (BoundOp& b : ops_)
    if (b.owns_gemm && !b.op->per_token && !b.gemm->setup(1, b.in[0], b.out[0], pool_))
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

namespace {
// Points the kernel arguments `a` at head h of the QKV rows [n, 3H] (Q | K | V) and of the
// context rows [n, H].
template <typename Args, typename T>
void point_at_head(Args& a, const T* qkv, T* context, const Op& op, size_t h, size_t n, const uint8_t* mask) {
  const size_t H = static_cast<size_t>(op.width), d = static_cast<size_t>(op.head_dim);
  a.q = qkv + h * d;
  a.k = qkv + H + h * d;
  a.v = qkv + 2 * H + h * d;
  a.qkv_stride = 3 * H;
  a.n = static_cast<int>(n);
  a.head_dim = static_cast<int>(d);
  a.key_mask = mask;
  a.context = context + h * d;
  a.context_stride = H;
}

// Head h's arguments for the int8 kernel (scratch pointers left for the caller).
kernels::AttentionHeadS8 head_args_s8(const Op& op, const uint8_t* qkv_buf, uint8_t* context, uint8_t* packed, size_t h,
                                      size_t n, const uint8_t* mask) {
  const int H = op.width, d = op.head_dim, hd = static_cast<int>(h) * d;
  kernels::AttentionHeadS8 a;
  point_at_head(a, reinterpret_cast<const int8_t*>(qkv_buf), reinterpret_cast<int8_t*>(context), op, h, n, mask);
  a.q_scale = op.linear->output_channel_scale(hd);
  a.k_scale = op.linear->output_channel_scale(H + hd);
  a.v_scale = op.linear->output_channel_scale(2 * H + hd);
  a.scores = nullptr;
  a.probs = nullptr;
  a.packed = reinterpret_cast<int8_t*>(packed);
  a.context_scale = op.quant_for->input_scale;
  a.context_zero_point = op.quant_for->input_zero_point;
  return a;
}
}  // namespace

// Buffers of the attention op (blocks::attention): out[0] context; int8: out[1] packed K/V per
// head (one slot, reused head after head, with one worker), out[2] scores and out[3]
// probabilities per worker; float: out[1] scores per worker.
uint8_t* Session::packed_slot(const BoundOp& b, size_t h) const {
  const size_t slot = attention_workers_ > 1 ? h : 0;
  return b.out[1] + slot * attention_packed_stride(static_cast<size_t>(max_n_), static_cast<size_t>(b.op->head_dim));
}

// The QKV rows [3H] and context rows [H] of the sequence from row `row0` (int8 or float).
namespace {
size_t element_bytes(const Op& op) { return op.linear->int8 ? 1 : 4; }
}  // namespace

void Session::attention_pack(size_t h, size_t row0, size_t n, uint8_t* slot) {
  const BoundOp& b = *cur_attention_;
  const size_t H = static_cast<size_t>(b.op->width), e = element_bytes(*b.op);
  const kernels::AttentionHeadS8 a = head_args_s8(*b.op, b.in[0] + row0 * 3 * H * e, b.out[0] + row0 * H * e, slot, h, n,
                                                  any_padding_ ? key_mask_.data() + row0 : nullptr);
  if (b.op->window > 0)
    kernels::attention_s8_pack_window(a);  // a no-op where the window kernel reads keys in place
  else
    kernels::attention_s8_kernel().pack(a);
}

void Session::attention_pack_task(size_t h) { attention_pack(h, attention_row0_, attention_n_, packed_slot(*cur_attention_, h)); }

void Session::attention_rows(size_t h, size_t row0, size_t n, uint8_t* slot, size_t row_begin, size_t row_end, size_t w) {
  const BoundOp& b = *cur_attention_;
  const size_t n_max = static_cast<size_t>(max_n_), tile = attention_max_tile_;
  const uint8_t* mask = any_padding_ ? key_mask_.data() + row0 : nullptr;
  const size_t scores_stride = attention_scratch_stride(tile * n_max * 4);
  const size_t H = static_cast<size_t>(b.op->width), e = element_bytes(*b.op);
  const uint8_t* qkv = b.in[0] + row0 * 3 * H * e;
  uint8_t* context = b.out[0] + row0 * H * e;
  if (b.op->linear->int8) {
    kernels::AttentionHeadS8 a = head_args_s8(*b.op, qkv, context, slot, h, n, mask);
    a.scores = reinterpret_cast<float*>(b.out[2] + w * scores_stride);
    a.probs = b.out[3] + w * attention_scratch_stride(tile * n_max);
    if (b.op->window > 0)  // sliding window: |i - j| <= window / 2, cost n x (window + 1)
      kernels::attention_s8_rows_window(a, b.op->window / 2, static_cast<int>(row_begin), static_cast<int>(row_end));
    else
      kernels::attention_s8_kernel().rows(a, static_cast<int>(row_begin), static_cast<int>(row_end));
  } else {
    kernels::AttentionHeadF32 a;
    point_at_head(a, reinterpret_cast<const float*>(qkv), reinterpret_cast<float*>(context), *b.op, h, n, mask);
    a.scores = reinterpret_cast<float*>(b.out[1] + w * scores_stride);
    if (b.op->window > 0)  // sliding window: |i - j| <= window / 2
      kernels::attention_rows_window_f32(a, b.op->window / 2, static_cast<int>(row_begin), static_cast<int>(row_end));
    else
      kernels::attention_rows_f32(a, static_cast<int>(row_begin), static_cast<int>(row_end));
  }
}

void Session::attention_worker(size_t w) {
  const size_t total = static_cast<size_t>(cur_attention_->op->heads) * attention_tiles_per_head_;
  for (size_t item = attention_next_.fetch_add(1, std::memory_order_relaxed); item < total;
       item = attention_next_.fetch_add(1, std::memory_order_relaxed)) {
    const size_t h = item / attention_tiles_per_head_, r0 = (item % attention_tiles_per_head_) * attention_tile_;
    attention_rows(h, attention_row0_, attention_n_, packed_slot(*cur_attention_, h), r0,
                   std::min(r0 + attention_tile_, attention_n_), w);
  }
}

void Session::run_attention(const BoundOp& b, size_t row0, size_t n) {
  cur_attention_ = &b;
  attention_row0_ = row0;
  attention_n_ = n;
  const size_t heads = static_cast<size_t>(b.op->heads);
  const size_t workers = attention_workers_, max_tile = attention_max_tile_;
  const bool int8 = b.op->linear->int8;
  // Rows per item: the whole tile on one thread; with several, small enough for about 4 items per
  // worker, so that a few heads (or one) still keep every thread busy.
  size_t tile = max_tile;
  if (pool_ && workers > 1) {
    const size_t tiles_per_head = (4 * workers + heads - 1) / heads;
    tile = std::min(max_tile, std::max<size_t>(4, ((n + tiles_per_head - 1) / tiles_per_head + 3) & ~size_t{3}));
  }
  attention_tile_ = tile;
  attention_tiles_per_head_ = (n + tile - 1) / tile;
  if (!pool_ || workers <= 1) {
    for (size_t h = 0; h < heads; ++h) {  // head by head (one packed slot), its K and V stay in cache
      if (int8) attention_pack_task(h);
      for (size_t r0 = 0; r0 < n; r0 += tile) attention_rows(h, row0, n, packed_slot(b, h), r0, std::min(r0 + tile, n), 0);
    }
    return;
  }
  if (int8)
    pthreadpool_parallelize_1d(
        pool_, [](void* ctx, size_t h) { static_cast<Session*>(ctx)->attention_pack_task(h); }, this, heads, 0);
  attention_next_.store(0, std::memory_order_relaxed);
  pthreadpool_parallelize_1d(
      pool_, [](void* ctx, size_t w) { static_cast<Session*>(ctx)->attention_worker(w); }, this, workers, 0);
}

void Session::run_embeddings_op(const BoundOp& b, size_t n) {
  const Op& op = *b.op;
  const EmbeddingTables& e = op.embeddings;
  const size_t H = static_cast<size_t>(op.width);
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  size_t non_pad = 0;  // PADDING_OFFSET: the non-pad tokens so far
  for (size_t t = 0; t < n; ++t) {
    float* row = hidden + t * H;
    const int32_t id = ids_[t];
    if (e.word_s8) {
      const int8_t* w = e.word_s8 + static_cast<size_t>(id) * H;
      const float s = e.word_scales[id];
      for (size_t i = 0; i < H; ++i) row[i] = w[i] * s;
    } else {
      const float* w = e.word_f32 + static_cast<size_t>(id) * H;
      for (size_t i = 0; i < H; ++i) row[i] = w[i];
    }
    // position within its sequence (a packed run lays several sequences end to end)
    const size_t local = state_.packed ? static_cast<size_t>(positions_[t]) : t;
    if (local == 0) non_pad = 0;
    if (e.position_ids != PositionIds::kNone) {
      size_t p = local;
      if (e.position_ids == PositionIds::kPaddingOffset)  // RoBERTa: pads get padding_idx
        p = id == e.padding_idx ? static_cast<size_t>(e.padding_idx) : static_cast<size_t>(e.padding_idx) + ++non_pad;
      const float* pos = e.position + p * H;
      for (size_t i = 0; i < H; ++i) row[i] += pos[i];
    }
    if (e.token_type) {  // DistilBERT has none
      const float* typ = e.token_type + static_cast<size_t>(types_[t]) * H;
      for (size_t i = 0; i < H; ++i) row[i] += typ[i];
    }
  }
  if (const LinearView* q = op.quant_for) {
    kernels::layernorm_quantize_s8(hidden, op.norm->gamma, op.norm->beta, op.eps, n, H, op.inv_factors_or_null(),
                                   q->input_scale, q->input_zero_point, reinterpret_cast<int8_t*>(b.out[1]));
  } else {
    kernels::layernorm_f32(hidden, op.norm->gamma, op.norm->beta, op.eps, n, H, hidden);
  }
}

void Session::run_add_norm(const BoundOp& b, size_t n) {
  const Op& op = *b.op;
  const size_t H = static_cast<size_t>(op.width);
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  auto add_norm = [&](size_t r0, size_t rows) {
    float* h = hidden + r0 * H;
    add_residual(h, b.in[1], r0, rows, H, op);
    if (op.quant_for) {
      kernels::layernorm_quantize_s8(h, op.norm->gamma, op.norm->beta, op.eps, rows, H, op.inv_factors_or_null(),
                                     op.quant_for->input_scale, op.quant_for->input_zero_point,
                                     reinterpret_cast<int8_t*>(b.out[1]) + r0 * H);
    } else {
      kernels::layernorm_f32(h, op.norm->gamma, op.norm->beta, op.eps, rows, H, h);
    }
  };
  parallel_rows(pool_, n, row_tile_, add_norm);
}

void Session::run_layer_norm(const BoundOp& b, size_t n) {
  const Op& op = *b.op;
  const size_t H = static_cast<size_t>(op.width);
  const float* x = reinterpret_cast<const float*>(b.in[0]);
  float* y = reinterpret_cast<float*>(b.out[0]);
  if (!op.per_token) n = 1;  // a head's one row
  auto norm = [&](size_t r0, size_t rows) {
    kernels::layernorm_f32(x + r0 * H, op.norm->gamma, op.norm->beta, op.eps, rows, H, y + r0 * H);
    if (op.quant_for)
      kernels::quantize_s8_per_channel(y + r0 * H, rows, H, op.inv_factors_or_null(), op.quant_for->input_scale,
                                       op.quant_for->input_zero_point, reinterpret_cast<int8_t*>(b.out[1]) + r0 * H);
  };
  parallel_rows(pool_, n, row_tile_, norm);
}

// Rotary embedding of Q and K (the first 2H channels of each QKV row), in place. Dynamic NTK
// (nomic-bert) beyond the trained length: this length's base, its table built into the op's
// scratch (no allocation).
void Session::run_rotary(const BoundOp& b, size_t n) {
  const Op& op = *b.op;
  const RotaryOp& r = op.rotary;
  const float* table = op.rope_table->data();
  if (r.ntk_factor > 0 && n > static_cast<size_t>(r.ntk_max_trained)) {
    const double f = r.ntk_factor, scale = f * static_cast<double>(n) / r.ntk_max_trained - (f - 1.0);
    const double base = r.theta * std::pow(scale, static_cast<double>(r.dims) / (r.dims - 2));
    float* scratch = reinterpret_cast<float*>(b.out[1]);
    kernels::build_rope_table(base, r.dims, static_cast<int>(n), scratch);
    table = scratch;
  }
  const size_t H = static_cast<size_t>(op.width), d = static_cast<size_t>(op.head_dim);
  const kernels::RopeForm form = r.interleaved ? kernels::RopeForm::kInterleaved : kernels::RopeForm::kRotateHalf;
  if (op.linear && op.linear->int8) {  // int8 QKV: each head at its own (symmetric) scale, kept
    int8_t* qkv = reinterpret_cast<int8_t*>(b.in[0]);
    for (size_t part = 0; part < 2; ++part)
      for (size_t h = 0; h < static_cast<size_t>(op.heads); ++h) {
        const float s = op.linear->output_channel_scale(static_cast<int>(part * H + h * d));
        kernels::RopeArgs a{n, 3 * H, part * H + h * d, 1, op.head_dim, r.dims, form, nullptr, table};
        kernels::rope_s8(a, s, s, qkv);
      }
    return;
  }
  float* qkv = reinterpret_cast<float*>(b.in[0]);
  for (size_t part = 0; part < 2; ++part) {  // Q, then K
    kernels::RopeArgs a{n, 3 * H, part * H, op.heads, op.head_dim, r.dims, form, nullptr, table};
    kernels::rope_f32(a, qkv);
  }
}

// Gated FFN: y[r, c] = act(x[r, c]) * x[r, I + c]; int8 or float halves in, the down GEMM's int8
// input or floats out (mixed precision through --keep-fp32 gives the two mixed cases).
void Session::run_gated_activation(const BoundOp& b, size_t n) {
  const Op& op = *b.op;
  const size_t I = static_cast<size_t>(op.width);
  if (op.linear->int8 && !op.quant_for) {  // int8 halves, fp32 down GEMM (--keep-fp32): float out
    const float s = op.linear->output_scale;
    const int32_t zp = op.linear->output_zero_point;
    auto gate = [&](size_t r0, size_t rows) {
      for (size_t r = r0; r < r0 + rows; ++r) {
        const int8_t* g = reinterpret_cast<const int8_t*>(b.in[0]) + r * 2 * I;
        float* y = reinterpret_cast<float*>(b.out[0]) + r * I;
        for (size_t c = 0; c < I; ++c) y[c] = op.lut_f32[static_cast<uint8_t>(g[c])] * ((g[I + c] - zp) * s);  // the table's order (gated.h)
      }
    };
    parallel_rows(pool_, n, row_tile_, gate);
    return;
  }
  if (op.linear->int8) {  // int8 halves -> the down GEMM's int8 input (kernels/gated.h)
    auto gate_s8 = [&](size_t r0, size_t rows) {
      kernels::GatedArgs a{reinterpret_cast<const int8_t*>(b.in[0]) + r0 * 2 * I, 2 * I, rows, I, op.lut_f32.data(),
                           op.linear->output_scale, op.linear->output_zero_point, op.quant_for->input_scale,
                           op.quant_for->input_zero_point, reinterpret_cast<int8_t*>(b.out[0]) + r0 * I, I};
      kernels::gated_s8(a);
    };
    parallel_rows(pool_, n, row_tile_, gate_s8);
    return;
  }
  float* x = reinterpret_cast<float*>(b.in[0]);
  float* y = reinterpret_cast<float*>(b.out[0]);
  const LinearView* next = op.quant_for;  // an int8 down GEMM after an fp32 up GEMM (--keep-fp32)
  auto gate = [&](size_t r0, size_t rows) {
    for (size_t r = r0; r < r0 + rows; ++r) {
      float* g = x + r * 2 * I;
      activation_in_place(op.activation, g, I);
      if (next) {  // the product into the first half, then quantized for the down GEMM
        for (size_t c = 0; c < I; ++c) g[c] *= g[I + c];
        kernels::quantize_s8(g, I, next->input_scale, next->input_zero_point, reinterpret_cast<int8_t*>(b.out[0]) + r * I);
      } else {
        for (size_t c = 0; c < I; ++c) y[r * I + c] = g[c] * g[I + c];
      }
    }
  };
  parallel_rows(pool_, n, row_tile_, gate);
}

void Session::run_add(const BoundOp& b, size_t n) {
  const Op& op = *b.op;
  const size_t H = static_cast<size_t>(op.width);
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  auto add = [&](size_t r0, size_t rows) {
    if (op.assign) std::fill(hidden + r0 * H, hidden + (r0 + rows) * H, 0.0f);  // 0 + y == y exactly
    add_residual(hidden + r0 * H, b.in[1], r0, rows, H, op);
  };
  parallel_rows(pool_, n, row_tile_, add);
}

void Session::run_activation(const BoundOp& b, size_t n) {
  const Op& op = *b.op;
  const size_t I = static_cast<size_t>(op.width);
  const LinearView* next = op.quant_for;
  auto act = [&](size_t r0, size_t rows) {
    const size_t o = r0 * I, cnt = rows * I;
    if (op.linear->int8 && next) {
      kernels::apply_lut_s8(reinterpret_cast<int8_t*>(b.out[0]) + o, cnt, op.lut_s8.data());
    } else if (op.linear->int8) {
      const int8_t* src = reinterpret_cast<const int8_t*>(b.in[0]) + o;
      float* dst = reinterpret_cast<float*>(b.out[0]) + o;
      for (size_t i = 0; i < cnt; ++i) dst[i] = op.lut_f32[static_cast<size_t>(src[i] + 128)];
    } else {
      float* x = reinterpret_cast<float*>(b.in[0]) + o;
      kernels::activation_f32(static_cast<kernels::ActivationKind>(op.activation), x, cnt);
      if (next)
        kernels::quantize_s8(x, cnt, next->input_scale, next->input_zero_point, reinterpret_cast<int8_t*>(b.out[0]) + o);
    }
  };
  parallel_rows(pool_, n, row_tile_, act);
}

eb_status Session::execute(const BoundOp& b, size_t n) {
  const Op& op = *b.op;
  switch (op.type) {
    case OpType::kEmbeddings: run_embeddings_op(b, n); break;
    case OpType::kGemm: {
      if (!b.gemm->run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed (%s)", op.linear->name);
      if (op.post == PostOp::kNone) break;
      float* y = reinterpret_cast<float*>(b.out[0]);  // head GEMMs with a post op write float
      const size_t count = (op.per_token ? n : 1) * static_cast<size_t>(op.linear->out);
      if (op.post == PostOp::kActivation) {
        activation_in_place(op.activation, y, count);
      } else {
        for (size_t i = 0; i < count; ++i) y[i] = op.post == PostOp::kTanh ? std::tanh(y[i]) : std::max(y[i], 0.f);
      }
      break;
    }
    case OpType::kAttention:
      if (state_.packed) {
        run_attention_packed(b);
      } else {
        run_attention(b, 0, n);
      }
      break;
    case OpType::kConvertContext: {
      const LinearView& g = *op.quant_for;  // the GEMM that reads the converted context
      const size_t count = n * static_cast<size_t>(op.width);
      if (g.int8) {
        kernels::quantize_s8(reinterpret_cast<const float*>(b.in[0]), count, g.input_scale, g.input_zero_point,
                             reinterpret_cast<int8_t*>(b.out[0]));
      } else {
        const int8_t* src = reinterpret_cast<const int8_t*>(b.in[0]);
        float* dst = reinterpret_cast<float*>(b.out[0]);
        for (size_t i = 0; i < count; ++i) dst[i] = (src[i] - g.input_zero_point) * g.input_scale;
      }
      break;
    }
    case OpType::kAddNorm: run_add_norm(b, n); break;
    case OpType::kLayerNorm: run_layer_norm(b, n); break;
    case OpType::kAdd: run_add(b, n); break;
    case OpType::kActivation: run_activation(b, n); break;
    case OpType::kSpanLogits:
      if (!b.gemm->run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed (%s)", op.linear->name);
      kernels::split_span_logits(reinterpret_cast<const float*>(b.out[0]), n, reinterpret_cast<float*>(b.out[1]),
                                 reinterpret_cast<float*>(b.out[2]));
      break;
    case OpType::kRotary: run_rotary(b, n); break;
    case OpType::kGatedActivation: run_gated_activation(b, n); break;
    case OpType::kQuantize:
      kernels::quantize_s8_per_channel(reinterpret_cast<const float*>(b.in[0]), n, static_cast<size_t>(op.width),
                                       op.inv_factors_or_null(), op.quant_for->input_scale,
                                       op.quant_for->input_zero_point, reinterpret_cast<int8_t*>(b.out[0]));
      break;
    case OpType::kSentencePooling:
      kernels::sentence_pool_f32(reinterpret_cast<const float*>(b.in[0]), n, static_cast<size_t>(op.width),
                                 key_mask_.data(), static_cast<kernels::PoolingKind>(op.pooling), op.normalize,
                                 reinterpret_cast<float*>(b.out[0]));
      break;
    case OpType::kCount: break;
  }
  return EB_OK;
}

eb_status Session::setup_gemms(size_t n) {
  row_tile_ = std::max<size_t>(1, (n + 2 * threads_ - 1) / (2 * threads_));
  if (n != cur_n_) {
    for (BoundOp& b : ops_) {
      if (!b.owns_gemm || !b.op->per_token) continue;
      if (!b.gemm->setup(n, b.in[0], b.out[0], pool_)) {
        cur_n_ = 0;
        return fail(EB_ERROR_BACKEND, "XNNPACK setup failed for %zu rows", n);
      }
    }
    cur_n_ = n;
  }
  return EB_OK;
}

eb_status Session::forward(size_t n, size_t first) {
  const size_t layers = static_cast<size_t>(model_.config.layers), kinds = static_cast<size_t>(OpKind::kCount);
  const eb_status setup = setup_gemms(n);
  if (setup != EB_OK) return setup;
  for (size_t i = first; i < ops_.size(); ++i) {
    if (state_.packed && is_one_row_head(i)) {  // pooler, classifiers, pooling: per sequence
      size_t end = i + 1;
      while (end < ops_.size() && is_one_row_head(end)) ++end;
      const eb_status s = run_heads_per_sequence(i, end);
      if (s != EB_OK) return s;
      i = end - 1;
      continue;
    }
    const BoundOp& b = ops_[i];
    {
      const size_t layer = b.op->layer >= 0 ? static_cast<size_t>(b.op->layer) : layers;
      OpTimer t(profiling_, &profile_[layer * kinds + static_cast<size_t>(b.op->profile)]);
      const eb_status s = execute(b, n);
      if (s != EB_OK) return s;
    }
    if (hook_ && b.op->hidden_states.set) call_hook(b, n);
  }
  return EB_OK;
}

void Session::call_hook(const BoundOp& b, size_t n) {
  const Op& op = *b.op;
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  if (!hook_(hook_ctx_, op.hidden_states.layer, op.hidden_states.stage, hidden, n)) return;
  const LinearView* next = op.quant_for;
  if (!next || !next->int8 || b.out.size() < 2) return;
  kernels::quantize_s8_per_channel(hidden, n, static_cast<size_t>(op.width), op.inv_factors_or_null(),
                                   next->input_scale, next->input_zero_point, reinterpret_cast<int8_t*>(b.out[1]));
}

eb_status Session::run_gemms_only() {
  if (cur_n_ == 0) return fail(EB_ERROR_BAD_STATE, "run_gemms_only needs a previous successful run");
  for (const BoundOp& b : ops_)
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
  const BoundOp& eop = ops_[e];
  float* hidden = reinterpret_cast<float*>(eop.out[0]);
  std::memcpy(hidden, embeddings, n * H * sizeof(float));
  if (const LinearView* q = eop.op->quant_for)
    kernels::quantize_s8_per_channel(hidden, n, H, eop.op->inv_factors_or_null(), q->input_scale, q->input_zero_point,
                                     reinterpret_cast<int8_t*>(eop.out[1]));
  if (hook_ && eop.op->hidden_states.set) call_hook(eop, n);
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

bool Session::is_one_row_head(size_t i) const {
  const Op& op = *ops_[i].op;
  if (op.layer >= 0 || static_cast<int>(i) <= program_->embeddings_op()) return false;
  return (op.is_gemm() && !op.per_token) || op.type == OpType::kSentencePooling;
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

void Session::attention_packed_worker(size_t w) {
  const BoundOp& b = *cur_attention_;
  const size_t heads = static_cast<size_t>(b.op->heads), total = active_count_ * heads, tile = attention_max_tile_;
  const bool int8 = b.op->linear->int8;
  // this worker's own K/V slot (there is one per head and workers <= heads)
  uint8_t* slot = int8 ? b.out[1] + w * attention_packed_stride(static_cast<size_t>(max_n_), static_cast<size_t>(b.op->head_dim))
                       : nullptr;
  for (size_t item = attention_next_.fetch_add(1, std::memory_order_relaxed); item < total;
       item = attention_next_.fetch_add(1, std::memory_order_relaxed)) {
    const SequenceInfo& q = sequences_[active_[item / heads]];
    const size_t h = item % heads;
    if (int8) attention_pack(h, q.first_token, q.tokens, slot);
    for (size_t r0 = 0; r0 < q.tokens; r0 += tile)
      attention_rows(h, q.first_token, q.tokens, slot, r0, std::min(r0 + tile, q.tokens), w);
  }
}

void Session::run_attention_packed(const BoundOp& b) {
  cur_attention_ = &b;
  const size_t heads = static_cast<size_t>(b.op->heads);
  if (!pool_ || attention_workers_ <= 1 || attention_workers_ > heads) {
    for (size_t k = 0; k < active_count_; ++k) {
      const SequenceInfo& q = sequences_[active_[k]];
      run_attention(b, q.first_token, q.tokens);
    }
    return;
  }
  // Work items (sequence, head) over every worker: each packs that head's K/V into its own slot
  // and computes all its row tiles.
  attention_next_.store(0, std::memory_order_relaxed);
  pthreadpool_parallelize_1d(
      pool_, [](void* ctx, size_t w) { static_cast<Session*>(ctx)->attention_packed_worker(w); }, this,
      attention_workers_, 0);
}

eb_status Session::run_heads_per_sequence(size_t first, size_t end) {
  const size_t layers = static_cast<size_t>(model_.config.layers), kinds = static_cast<size_t>(OpKind::kCount);
  const size_t H = static_cast<size_t>(model_.config.hidden), labels = static_cast<size_t>(std::max(model_.config.num_labels, 1));
  const std::vector<ProgramBuffer>& buffers = program_->buffers();
  eb_status status = EB_OK;
  for (size_t k = 0; k < active_count_ && status == EB_OK; ++k) {
    const size_t s = active_[k];
    const SequenceInfo& q = sequences_[s];
    for (size_t i = first; i < end && status == EB_OK; ++i) {
      BoundOp& b = ops_[i];
      OpTimer t(profiling_, &profile_[layers * kinds + static_cast<size_t>(b.op->profile)]);
      const size_t in_row = buffers[static_cast<size_t>(b.op->inputs[0])].size.row_bytes;  // 0: a one-row input
      if (b.op->type == OpType::kSentencePooling) {
        kernels::sentence_pool_f32(reinterpret_cast<const float*>(b.in[0] + q.first_token * in_row), q.tokens,
                                   static_cast<size_t>(b.op->width), key_mask_.data() + q.first_token,
                                   static_cast<kernels::PoolingKind>(b.op->pooling), b.op->normalize,
                                   reinterpret_cast<float*>(b.out[0]));
        continue;
      }
      if (in_row > 0 && !b.gemm->setup(1, b.in[0] + q.first_token * in_row, b.out[0], pool_))
        status = fail(EB_ERROR_BACKEND, "XNNPACK setup failed (%s)", b.op->linear->name);
      else
        status = execute(b, 1);
    }
    if (pooled_) std::memcpy(batch_pooled_.data() + s * H, pooled_, H * sizeof(float));
    if (logits_) std::memcpy(batch_logits_.data() + s * labels, logits_, labels * sizeof(float));
    if (sentence_embedding_) std::memcpy(batch_sentence_.data() + s * H, sentence_embedding_, H * sizeof(float));
  }
  // back to row 0 for single runs
  for (size_t i = first; i < end; ++i) {
    BoundOp& b = ops_[i];
    if (b.gemm && !b.gemm->setup(1, b.in[0], b.out[0], pool_) && status == EB_OK)
      status = fail(EB_ERROR_BACKEND, "XNNPACK setup failed (%s)", b.op->linear->name);
  }
  return status;
}

eb_status Session::run_packed(size_t count, bool text, bool pair) {
  size_t rows = 0;
  active_count_ = 0;
  for (size_t k = 0; k < count; ++k) {
    SequenceInfo& q = sequences_[k];
    if (q.status != EB_OK) continue;
    active_[active_count_++] = k;
    for (size_t i = 0; i < q.tokens; ++i) positions_[q.first_token + i] = static_cast<int32_t>(i);
    rows = q.first_token + q.tokens;
  }
  std::fill(key_mask_.begin(), key_mask_.begin() + static_cast<std::ptrdiff_t>(rows), uint8_t{1});
  any_padding_ = false;
  const size_t H = static_cast<size_t>(model_.config.hidden), labels = static_cast<size_t>(std::max(model_.config.num_labels, 1));
  std::fill(batch_pooled_.begin(), batch_pooled_.begin() + static_cast<std::ptrdiff_t>(pooled_ ? count * H : 0), 0.f);
  std::fill(batch_logits_.begin(), batch_logits_.begin() + static_cast<std::ptrdiff_t>(logits_ ? count * labels : 0), 0.f);
  std::fill(batch_sentence_.begin(),
            batch_sentence_.begin() + static_cast<std::ptrdiff_t>(sentence_embedding_ ? count * H : 0), 0.f);
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
