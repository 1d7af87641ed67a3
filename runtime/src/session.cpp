// session.cpp: schedule, memory plan, operator creation and the allocation-free forward pass.
#include "session.h"

#include <algorithm>
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

// hidden rows += a GEMM's output rows [r0, r0 + rows): dequantized with per-channel scales when
// the GEMM is int8, added as is when it is float.
void add_residual(float* h, const void* y, size_t r0, size_t rows, size_t H, const ScheduledOp& op,
                  const float* scales) {
  const LinearView& gemm = *op.linear;
  if (gemm.int8 && !op.float_residual) {
    kernels::residual_dequant_add_s8(h, static_cast<const int8_t*>(y) + r0 * H, rows, H, scales,
                                     gemm.output_zero_point);
  } else {
    const float* yf = static_cast<const float*>(y) + r0 * H;
    for (size_t i = 0; i < rows * H; ++i) h[i] += yf[i];
  }
}

}  // namespace

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

eb_status Session::create(const Model& model, const SessionOptions& o, std::unique_ptr<Session>* out,
                          std::string* error) {
  out->reset();
  if (o.threads < 0 || o.threads > 256) {
    if (error) *error = "num_threads must be between 0 and 256";
    return EB_ERROR_INVALID_ARGUMENT;
  }
  if (o.max_seq_len < 0 || o.max_seq_len > model.config.max_position) {
    if (error)
      *error = "max_sequence_length " + std::to_string(o.max_seq_len) + " is outside 1.." +
               std::to_string(model.config.max_position) + " (the model's max_position_embeddings)";
    return EB_ERROR_INVALID_ARGUMENT;
  }
  if (!xnn_ready(error)) return EB_ERROR_BACKEND;
  std::unique_ptr<Session> s(new (std::nothrow) Session(model));
  if (!s) {
    if (error) *error = "out of memory";
    return EB_ERROR_OUT_OF_MEMORY;
  }
  try {
    const eb_status st = s->build(o, error);
    if (st != EB_OK) return st;
  } catch (const std::bad_alloc&) {
    if (error) *error = "out of memory while creating the session";
    return EB_ERROR_OUT_OF_MEMORY;
  }
  *out = std::move(s);
  return EB_OK;
}

eb_status Session::build(const SessionOptions& o, std::string* error) {
  const ModelConfig& c = model_.config;
  threads_ = std::max(1, o.threads);
  split_special_tokens_ = o.split_special_tokens;
  max_n_ = o.max_seq_len > 0 ? o.max_seq_len : c.max_position;
  const size_t n = static_cast<size_t>(max_n_);
  // The op list and its buffer lifetimes, then the plan.
  if (!build_schedule(model_, max_n_, threads_, XnnGemm::int8_float_output_supported(), &schedule_, error))
    return EB_ERROR_BACKEND;
  std::string perr;
  if (!plan_memory(schedule_.buffers, PlanStrategy::kGreedyBySize, kAlignment, &plan_, &perr)) {
    if (error) *error = "memory planning failed: " + perr;
    return EB_ERROR_BACKEND;
  }
  if (o.max_memory_bytes > 0) {  // refuse before allocating anything big
    const size_t packed = estimate_packed_bytes();
    const size_t tables = static_cast<size_t>(c.layers) * (sizeof(LayerTables) + 4 * (2 * c.hidden + c.hidden + c.intermediate)) +
                          n * (3 * sizeof(int32_t) + sizeof(uint8_t) + sizeof(TokenSpan) + 3 * sizeof(int32_t));
    const uint64_t need = static_cast<uint64_t>(plan_.arena_bytes) + packed + tables;
    if (need > o.max_memory_bytes) {
      if (error)
        *error = "session needs about " + std::to_string(need) + " bytes (arena " + std::to_string(plan_.arena_bytes) +
                 " + packed weights " + std::to_string(packed) + " + tables " + std::to_string(tables) +
                 "), more than max_memory_bytes " + std::to_string(o.max_memory_bytes);
      return EB_ERROR_OUT_OF_MEMORY;
    }
  }
  if (threads_ > 1) {  // after the memory check: nothing big exists before it
    pool_ = pthreadpool_create(static_cast<size_t>(threads_));
    if (!pool_) {
      if (error) *error = "cannot create a thread pool of " + std::to_string(threads_) + " threads";
      return EB_ERROR_BACKEND;
    }
  }
  if (posix_memalign(reinterpret_cast<void**>(&arena_raw_), kAlignment, std::max<size_t>(plan_.arena_bytes, 64)) != 0) {
    arena_raw_ = nullptr;
    if (error) *error = "cannot allocate the " + std::to_string(plan_.arena_bytes) + "-byte arena";
    return EB_ERROR_OUT_OF_MEMORY;
  }
  arena_ = arena_raw_;
  std::memset(arena_, 0, plan_.arena_bytes);
  if (!bind(error)) return EB_ERROR_BACKEND;
  ids_.assign(n, 0);
  types_.assign(n, 0);
  key_mask_.assign(n, 1);
  spans_.assign(n, TokenSpan{0, 0});
  begin_.assign(n, 0);
  end_.assign(n, 0);
  segment_.assign(n, -1);
  profile_.assign(static_cast<size_t>(c.layers + 1) * static_cast<size_t>(OpKind::kCount), 0);
  return EB_OK;
}

size_t Session::estimate_packed_bytes() const {
  size_t bytes = 0;
  for (const ScheduledOp& op : schedule_.ops) {
    if (op.type != OpType::kGemm && op.type != OpType::kSpanLogits) continue;
    const size_t w = static_cast<size_t>(op.linear->in) * static_cast<size_t>(op.linear->out);
    const size_t o = static_cast<size_t>(op.linear->out);
    // int8: weights + int32 (or float) bias + float scale per channel; f32: weights + bias
    bytes += op.linear->int8 ? w + o * 8 : (w + o) * 4;
  }
  return bytes;
}

const float* Session::inv_factors_for(const LinearView* g) {
  if (!g || !g->input_factors) return nullptr;
  std::vector<float> inv(static_cast<size_t>(g->in));
  for (size_t i = 0; i < inv.size(); ++i) inv[i] = 1.f / g->input_factors[i];
  constants_.push_back(std::move(inv));
  return constants_.back().data();
}

// Binds every op to its arena pointers, creates its XNNPACK operator and its constants.
bool Session::bind(std::string* error) {
  const ModelConfig& c = model_.config;
  auto ptr = [&](int b) { return arena_ + plan_.offsets[static_cast<size_t>(b)]; };
  auto output = [&](const char* name) {
    const int b = schedule_.find(name);
    return b >= 0 ? reinterpret_cast<float*>(ptr(b)) : nullptr;
  };
  hidden_ = output("hidden");
  pooled_ = output("pooler_output");
  logits_ = output("logits");
  sentence_embedding_ = output("sentence_embedding");
  start_logits_ = output("start_logits");
  end_logits_ = output("end_logits");
  token_logits_ = output("token_logits");
  tables_.resize(static_cast<size_t>(c.layers));
  const size_t xnn_before = xnn_bytes_allocated();
  ops_.resize(schedule_.ops.size());
  for (size_t i = 0; i < ops_.size(); ++i) {
    const ScheduledOp& op = schedule_.ops[i];
    BoundOp& b = ops_[i];
    b.op = &op;
    for (int x : op.inputs) b.in.push_back(ptr(x));
    for (int x : op.outputs) b.out.push_back(ptr(x));
    b.inv_factors = inv_factors_for(op.quant_for);
    if (op.type == OpType::kGemm || op.type == OpType::kSpanLogits) {
      gemms_.push_back(std::make_unique<XnnGemm>());
      b.gemm = gemms_.back().get();
      if (!b.gemm->create(*op.linear, op.float_residual, static_cast<size_t>(max_n_), error)) return false;
      model_.release_weight_pages(*op.linear);
    }
    if (op.type == OpType::kAddNorm && op.linear->int8 && !op.float_residual) {  // dequantizes an int8 output
      std::vector<float> s(static_cast<size_t>(op.linear->out));
      for (size_t k = 0; k < s.size(); ++k) s[k] = op.linear->output_channel_scale(static_cast<int>(k));
      constants_.push_back(std::move(s));
      b.scales = constants_.back().data();
    }
    if (op.type == OpType::kActivation) {
      const LayerView& L = model_.layers[op.layer];
      LayerTables& t = tables_[op.layer];
      const auto kind = static_cast<kernels::ActivationKind>(c.activation);
      if (L.intermediate.int8) {
        if (L.output.int8)
          kernels::build_activation_lut_s8(kind, L.intermediate.output_scale, L.intermediate.output_zero_point,
                                           L.output.input_scale, L.output.input_zero_point, t.act_lut);
        for (int q = -128; q < 128; ++q) {
          float x = (q - L.intermediate.output_zero_point) * L.intermediate.output_scale;
          kernels::activation_f32(kind, &x, 1);
          t.act_lut_f32[q + 128] = x;
        }
      }
    }
  }
  // Head GEMMs read one row: set up once here (encoder GEMMs are set up per row count).
  for (BoundOp& b : ops_)
    if (b.gemm && !b.op->per_token && !b.gemm->setup(1, b.in[0], b.out[0], pool_)) {
      if (error) *error = std::string("XNNPACK setup failed (") + b.op->linear->name + ")";
      return false;
    }
  packed_bytes_ = xnn_bytes_allocated() - xnn_before;
  return true;
}

void Session::reset_profile() { std::fill(profile_.begin(), profile_.end(), 0); }

int64_t Session::profile_ns(int layer, OpKind kind) const {
  const size_t i = static_cast<size_t>(layer) * static_cast<size_t>(OpKind::kCount) + static_cast<size_t>(kind);
  return i < profile_.size() ? profile_[i] : 0;
}

namespace {
// Points the kernel arguments `a` at head h of the QKV rows [n, 3H] (Q | K | V) and of the
// context rows [n, H].
template <typename Args, typename T>
void point_at_head(Args& a, const T* qkv, T* context, const ModelConfig& c, size_t h, size_t n, const uint8_t* mask) {
  const size_t H = c.hidden, d = c.head_dim();
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
kernels::AttentionHeadS8 head_args_s8(const ModelConfig& c, const LayerView& L, const uint8_t* qkv_buf, uint8_t* context,
                                      uint8_t* packed, size_t h, size_t n, const uint8_t* mask) {
  const size_t H = c.hidden, d = c.head_dim();
  kernels::AttentionHeadS8 a;
  point_at_head(a, reinterpret_cast<const int8_t*>(qkv_buf), reinterpret_cast<int8_t*>(context), c, h, n, mask);
  a.q_scale = L.qkv.output_channel_scale(static_cast<int>(h * d));
  a.k_scale = L.qkv.output_channel_scale(static_cast<int>(H + h * d));
  a.v_scale = L.qkv.output_channel_scale(static_cast<int>(2 * H + h * d));
  a.scores = nullptr;
  a.probs = nullptr;
  a.packed = reinterpret_cast<int8_t*>(packed);
  a.context_scale = L.attention_output.input_scale;
  a.context_zero_point = L.attention_output.input_zero_point;
  return a;
}
}  // namespace

// Buffers of the attention op (schedule.cpp): out[0] context; int8: out[1] packed K/V per head
// (one slot, reused head after head, with one worker), out[2] scores and out[3] probabilities per
// worker; float: out[1] scores per worker.
uint8_t* Session::packed_slot(const BoundOp& b, size_t h) const {
  const size_t slot = b.op->workers > 1 ? h : 0;
  return b.out[1] + slot * attention_packed_stride(static_cast<size_t>(max_n_), model_.config.head_dim());
}

void Session::attention_pack_task(size_t h) {
  const BoundOp& b = *cur_attention_;
  const LayerView& L = model_.layers[b.op->layer];
  const kernels::AttentionHeadS8 a = head_args_s8(model_.config, L, b.in[0], b.out[0], packed_slot(b, h), h, cur_n_,
                                                  any_padding_ ? key_mask_.data() : nullptr);
  kernels::attention_s8_kernel().pack(a);
}

void Session::attention_rows(size_t h, size_t row_begin, size_t row_end, size_t w) {
  const BoundOp& b = *cur_attention_;
  const ModelConfig& c = model_.config;
  const LayerView& L = model_.layers[b.op->layer];
  const size_t n_max = static_cast<size_t>(max_n_), tile = static_cast<size_t>(b.op->row_tile);
  const uint8_t* mask = any_padding_ ? key_mask_.data() : nullptr;
  const size_t scores_stride = attention_scratch_stride(tile * n_max * 4);
  if (L.qkv.int8) {
    kernels::AttentionHeadS8 a = head_args_s8(c, L, b.in[0], b.out[0], packed_slot(b, h), h, cur_n_, mask);
    a.scores = reinterpret_cast<float*>(b.out[2] + w * scores_stride);
    a.probs = b.out[3] + w * attention_scratch_stride(tile * n_max);
    kernels::attention_s8_kernel().rows(a, static_cast<int>(row_begin), static_cast<int>(row_end));
  } else {
    kernels::AttentionHeadF32 a;
    point_at_head(a, reinterpret_cast<const float*>(b.in[0]), reinterpret_cast<float*>(b.out[0]), c, h, cur_n_, mask);
    a.scores = reinterpret_cast<float*>(b.out[1] + w * scores_stride);
    kernels::attention_rows_f32(a, static_cast<int>(row_begin), static_cast<int>(row_end));
  }
}

void Session::attention_worker(size_t w) {
  const size_t total = static_cast<size_t>(model_.config.heads) * attention_tiles_per_head_;
  for (size_t item = attention_next_.fetch_add(1, std::memory_order_relaxed); item < total;
       item = attention_next_.fetch_add(1, std::memory_order_relaxed)) {
    const size_t h = item / attention_tiles_per_head_, r0 = (item % attention_tiles_per_head_) * attention_tile_;
    attention_rows(h, r0, std::min(r0 + attention_tile_, cur_n_), w);
  }
}

void Session::run_attention(const BoundOp& b) {
  cur_attention_ = &b;
  const size_t heads = static_cast<size_t>(model_.config.heads), n = cur_n_;
  const size_t workers = static_cast<size_t>(b.op->workers), max_tile = static_cast<size_t>(b.op->row_tile);
  const bool int8 = model_.layers[b.op->layer].qkv.int8;
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
      for (size_t r0 = 0; r0 < n; r0 += tile) attention_rows(h, r0, std::min(r0 + tile, n), 0);
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
  const size_t H = model_.config.hidden;
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  for (size_t t = 0; t < n; ++t) {
    float* row = hidden + t * H;
    const float* pos = model_.position + t * H;
    const int32_t id = ids_[t];
    if (model_.word_s8) {
      const int8_t* w = model_.word_s8 + static_cast<size_t>(id) * H;
      const float s = model_.word_scales[id];
      for (size_t i = 0; i < H; ++i) row[i] = w[i] * s + pos[i];
    } else {
      const float* w = model_.word_f32 + static_cast<size_t>(id) * H;
      for (size_t i = 0; i < H; ++i) row[i] = w[i] + pos[i];
    }
    if (model_.has_token_types) {  // DistilBERT has none
      const float* typ = model_.token_type + static_cast<size_t>(types_[t]) * H;
      for (size_t i = 0; i < H; ++i) row[i] += typ[i];
    }
  }
  const LayerNormView& norm = *b.op->norm;
  if (const LinearView* q = b.op->quant_for) {
    kernels::layernorm_quantize_s8(hidden, norm.gamma, norm.beta, model_.config.eps, n, H, b.inv_factors,
                                   q->input_scale, q->input_zero_point, reinterpret_cast<int8_t*>(b.out[1]));
  } else {
    kernels::layernorm_f32(hidden, norm.gamma, norm.beta, model_.config.eps, n, H, hidden);
  }
}

void Session::run_add_norm(const BoundOp& b, size_t n) {
  const size_t H = model_.config.hidden;
  const float eps = model_.config.eps;
  const ScheduledOp& op = *b.op;
  float* hidden = reinterpret_cast<float*>(b.out[0]);
  auto add_norm = [&](size_t r0, size_t rows) {
    float* h = hidden + r0 * H;
    add_residual(h, b.in[1], r0, rows, H, op, b.scales);
    if (op.quant_for) {
      kernels::layernorm_quantize_s8(h, op.norm->gamma, op.norm->beta, eps, rows, H, b.inv_factors,
                                     op.quant_for->input_scale, op.quant_for->input_zero_point,
                                     reinterpret_cast<int8_t*>(b.out[1]) + r0 * H);
    } else {
      kernels::layernorm_f32(h, op.norm->gamma, op.norm->beta, eps, rows, H, h);
    }
  };
  parallel_rows(pool_, n, row_tile_, add_norm);
  if (hook_) call_hook(op.layer, op.stage, n, op.quant_for, b.inv_factors, op.quant_for ? b.out[1] : nullptr);
}

void Session::run_activation(const BoundOp& b, size_t n) {
  const LayerView& L = model_.layers[b.op->layer];
  const LayerTables& t = tables_[b.op->layer];
  const size_t I = model_.config.intermediate;
  auto act = [&](size_t r0, size_t rows) {
    const size_t o = r0 * I, cnt = rows * I;
    if (L.intermediate.int8 && L.output.int8) {
      kernels::apply_lut_s8(reinterpret_cast<int8_t*>(b.out[0]) + o, cnt, t.act_lut);
    } else if (L.intermediate.int8) {
      const int8_t* src = reinterpret_cast<const int8_t*>(b.in[0]) + o;
      float* dst = reinterpret_cast<float*>(b.out[0]) + o;
      for (size_t i = 0; i < cnt; ++i) dst[i] = t.act_lut_f32[src[i] + 128];
    } else {
      float* x = reinterpret_cast<float*>(b.in[0]) + o;
      kernels::activation_f32(static_cast<kernels::ActivationKind>(model_.config.activation), x, cnt);
      if (L.output.int8)
        kernels::quantize_s8(x, cnt, L.output.input_scale, L.output.input_zero_point,
                             reinterpret_cast<int8_t*>(b.out[0]) + o);
    }
  };
  parallel_rows(pool_, n, row_tile_, act);
}

eb_status Session::execute(const BoundOp& b, size_t n) {
  const ScheduledOp& op = *b.op;
  switch (op.type) {
    case OpType::kEmbeddings: run_embeddings_op(b, n); break;
    case OpType::kGemm: {
      if (!b.gemm->run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed (%s)", op.linear->name);
      if (op.post == PostOp::kNone) break;
      float* y = reinterpret_cast<float*>(b.out[0]);  // head GEMMs with a post op are one row, float
      for (int i = 0; i < op.linear->out; ++i) y[i] = op.post == PostOp::kTanh ? std::tanh(y[i]) : std::max(y[i], 0.f);
      break;
    }
    case OpType::kAttention: run_attention(b); break;
    case OpType::kConvertContext: {
      const LinearView& g = *op.linear;  // the GEMM that reads the converted context
      const size_t count = n * static_cast<size_t>(model_.config.hidden);
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
    case OpType::kActivation: run_activation(b, n); break;
    case OpType::kSpanLogits:
      if (!b.gemm->run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed (%s)", op.linear->name);
      kernels::split_span_logits(reinterpret_cast<const float*>(b.out[0]), n, reinterpret_cast<float*>(b.out[1]),
                                 reinterpret_cast<float*>(b.out[2]));
      break;
    case OpType::kSentencePooling:
      kernels::sentence_pool_f32(reinterpret_cast<const float*>(b.in[0]), n, static_cast<size_t>(model_.config.hidden),
                                 key_mask_.data(), static_cast<kernels::PoolingKind>(model_.pooling), model_.normalize,
                                 reinterpret_cast<float*>(b.out[0]));
      break;
    case OpType::kCount: break;
  }
  return EB_OK;
}

eb_status Session::forward(size_t n, size_t first) {
  const ModelConfig& c = model_.config;
  row_tile_ = std::max<size_t>(1, (n + 2 * threads_ - 1) / (2 * threads_));
  if (n != cur_n_) {
    for (BoundOp& b : ops_) {
      if (!b.gemm || !b.op->per_token) continue;
      if (!b.gemm->setup(n, b.in[0], b.out[0], pool_)) {
        cur_n_ = 0;
        return fail(EB_ERROR_BACKEND, "XNNPACK setup failed for %zu rows", n);
      }
    }
    cur_n_ = n;
  }
  for (size_t i = first; i < ops_.size(); ++i) {
    const BoundOp& b = ops_[i];
    if (hook_ && i == 1) {  // after the embeddings (computed or given)
      const BoundOp& e = ops_[0];
      call_hook(-1, 0, n, e.op->quant_for, e.inv_factors, e.op->quant_for ? e.out[1] : nullptr);
    }
    const int layer = b.op->layer >= 0 ? b.op->layer : c.layers;
    OpTimer t(profiling_, &profile_[static_cast<size_t>(layer) * static_cast<size_t>(OpKind::kCount) +
                                    static_cast<size_t>(b.op->profile)]);
    const eb_status s = execute(b, n);
    if (s != EB_OK) return s;
  }
  seq_len_ = n;
  return EB_OK;
}

void Session::call_hook(int layer, int stage, size_t n, const LinearView* next, const float* next_inv_factors,
                        void* next_q) {
  if (!hook_(hook_ctx_, layer, stage, hidden_, n) || !next || !next->int8) return;
  kernels::quantize_s8_per_channel(hidden_, n, static_cast<size_t>(model_.config.hidden), next_inv_factors,
                                   next->input_scale, next->input_zero_point, static_cast<int8_t*>(next_q));
}

eb_status Session::run_gemms_only() {
  if (cur_n_ == 0) return fail(EB_ERROR_BAD_STATE, "run_gemms_only needs a previous successful run");
  for (const BoundOp& b : ops_)
    if (b.gemm && b.op->layer >= 0 && !b.gemm->run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed");
  return EB_OK;
}

namespace {
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

eb_status Session::run_ids(const int32_t* ids, const int32_t* token_types, const int32_t* mask, size_t n) {
  seq_len_ = 0;
  offsets_valid_ = false;
  pair_run_ = false;
  if (!ids) return fail(EB_ERROR_INVALID_ARGUMENT, "input_ids is NULL");
  if (n == 0) return fail(EB_ERROR_INVALID_ARGUMENT, "sequence length is 0");
  if (n > static_cast<size_t>(max_n_))
    return fail(EB_ERROR_SEQUENCE_TOO_LONG, "sequence length %zu exceeds the session maximum %d", n, max_n_);
  if (!model_.has_embeddings)
    return fail(EB_ERROR_UNSUPPORTED, "this model has no embedding tables; run it on precomputed embeddings");
  const ModelConfig& c = model_.config;
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= c.vocab)
      return fail(EB_ERROR_INVALID_ARGUMENT, "input_ids[%zu] = %d is outside the vocabulary [0, %d)", i, ids[i], c.vocab);
    const int32_t t = token_types && model_.has_token_types ? token_types[i] : 0;  // DistilBERT: ignored
    if (t < 0 || (t != 0 && t >= c.type_vocab))
      return fail(EB_ERROR_INVALID_ARGUMENT, "token_type_ids[%zu] = %d is outside [0, %d)", i, t, c.type_vocab);
  }
  size_t bad = 0;
  if (!set_mask(mask, n, key_mask_.data(), &any_padding_, &bad))
    return fail(EB_ERROR_INVALID_ARGUMENT, "attention_mask[%zu] = %d is not 0 or 1", bad, mask[bad]);
  if (ids != ids_.data()) std::memcpy(ids_.data(), ids, n * sizeof(int32_t));
  for (size_t i = 0; i < n; ++i) types_[i] = token_types && model_.has_token_types ? token_types[i] : 0;
  clear_error();
  return forward(n, 0);
}

eb_status Session::run_tokens(size_t n, bool pair) {
  const eb_status s = run_ids(ids_.data(), types_.data(), nullptr, n);
  offsets_valid_ = s == EB_OK;
  pair_run_ = pair && s == EB_OK;
  return s;
}

eb_status Session::run_text(const char* text) {
  seq_len_ = 0;
  offsets_valid_ = pair_run_ = false;
  if (!text) return fail(EB_ERROR_INVALID_ARGUMENT, "text is NULL");
  if (!model_.has_vocab) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  const size_t total =
      model_.tokenizer.encode(text, ids_.data(), spans_.data(), ids_.size(), true, split_special_tokens_);
  if (total > ids_.size())
    return fail(EB_ERROR_SEQUENCE_TOO_LONG, "text is %zu tokens long, the session maximum is %d", total, max_n_);
  for (size_t i = 0; i < total; ++i) {
    types_[i] = 0;
    begin_[i] = spans_[i].begin;
    end_[i] = spans_[i].end;
    segment_[i] = i == 0 || i + 1 == total ? -1 : 0;  // the added [CLS] and [SEP]
  }
  return run_tokens(total, false);
}

eb_status Session::run_text_pair(const char* a, const char* b) {
  seq_len_ = 0;
  offsets_valid_ = pair_run_ = false;
  if (!a || !b) return fail(EB_ERROR_INVALID_ARGUMENT, "text_a and text_b must not be NULL");
  if (!model_.has_vocab) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  const size_t cap = ids_.size();
  if (cap < 3) return fail(EB_ERROR_SEQUENCE_TOO_LONG, "a text pair needs at least 3 tokens, the session maximum is %d", max_n_);
  const WordPieceTokenizer& tok = model_.tokenizer;
  const size_t na = tok.encode(a, ids_.data() + 1, spans_.data() + 1, cap - 1, false, split_special_tokens_);
  if (na + 3 > cap)
    return fail(EB_ERROR_SEQUENCE_TOO_LONG, "text pair is more than %zu tokens long (the first text alone is %zu), the session maximum is %d",
                na + 2, na, max_n_);
  const size_t nb = tok.encode(b, ids_.data() + na + 2, spans_.data() + na + 2, cap - na - 2, false, split_special_tokens_);
  const size_t total = na + nb + 3;
  if (total > cap)
    return fail(EB_ERROR_SEQUENCE_TOO_LONG, "text pair is %zu tokens long, the session maximum is %d", total, max_n_);
  ids_[0] = tok.cls_id();
  ids_[na + 1] = ids_[total - 1] = tok.sep_id();
  spans_[0] = spans_[na + 1] = spans_[total - 1] = TokenSpan{0, 0};
  for (size_t i = 0; i < total; ++i) {
    const bool special = i == 0 || i == na + 1 || i + 1 == total;
    const int32_t seg = i <= na + 1 ? 0 : 1;
    types_[i] = seg;  // [CLS] a [SEP]: 0, b [SEP]: 1
    begin_[i] = spans_[i].begin;
    end_[i] = spans_[i].end;
    segment_[i] = special ? -1 : seg;
  }
  return run_tokens(total, true);
}

eb_status Session::best_span(int max_tokens, eb_span* out) {
  if (!out) return fail(EB_ERROR_INVALID_ARGUMENT, "out_span is NULL");
  if (model_.task != Task::kQuestionAnswering || !start_logits_)
    return fail(EB_ERROR_UNSUPPORTED, "best_span needs a question-answering model");
  if (!has_output() || !pair_run_)
    return fail(EB_ERROR_BAD_STATE, "best_span needs a successful run_text_pair(question, context) first");
  const size_t n = seq_len_, len = max_tokens <= 0 ? 30 : static_cast<size_t>(max_tokens);
  bool found = false;
  for (size_t s = 0; s < n; ++s) {
    if (segment_[s] != 1) continue;
    for (size_t e = s; e < n && e - s < len && segment_[e] == 1; ++e) {
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
  if (!found) return fail(EB_ERROR_BAD_STATE, "the context of the last run has no tokens");
  clear_error();
  return EB_OK;
}

eb_status Session::run_embeddings(const float* embeddings, const int32_t* mask, size_t n) {
  seq_len_ = 0;
  if (!embeddings) return fail(EB_ERROR_INVALID_ARGUMENT, "embeddings is NULL");
  if (n == 0) return fail(EB_ERROR_INVALID_ARGUMENT, "sequence length is 0");
  if (n > static_cast<size_t>(max_n_))
    return fail(EB_ERROR_SEQUENCE_TOO_LONG, "sequence length %zu exceeds the session maximum %d", n, max_n_);
  size_t bad = 0;
  if (!set_mask(mask, n, key_mask_.data(), &any_padding_, &bad))
    return fail(EB_ERROR_INVALID_ARGUMENT, "attention_mask[%zu] = %d is not 0 or 1", bad, mask[bad]);
  const size_t H = model_.config.hidden;
  for (size_t i = 0; i < n * H; ++i)
    if (!std::isfinite(embeddings[i]))
      return fail(EB_ERROR_INVALID_ARGUMENT, "embeddings[%zu] is not a finite number", i);
  clear_error();
  std::memset(ids_.data(), 0, n * sizeof(int32_t));
  std::memcpy(hidden_, embeddings, n * H * sizeof(float));
  const BoundOp& e = ops_[0];  // the embeddings op: its outputs are the layers' inputs
  if (const LinearView* q = e.op->quant_for)
    kernels::quantize_s8_per_channel(hidden_, n, H, e.inv_factors, q->input_scale, q->input_zero_point,
                                     reinterpret_cast<int8_t*>(e.out[1]));
  return forward(n, 1);
}

}  // namespace edgebert
