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
void add_residual(float* h, const void* y, size_t r0, size_t rows, size_t H, const LinearView& gemm,
                  const float* scales) {
  if (gemm.int8) {
    kernels::residual_dequant_add_s8(h, static_cast<const int8_t*>(y) + r0 * H, rows, H, scales,
                                     gemm.output_zero_point);
  } else {
    const float* yf = static_cast<const float*>(y) + r0 * H;
    for (size_t i = 0; i < rows * H; ++i) h[i] += yf[i];
  }
}

struct WaveContext {
  Session* session;
  size_t base;
};

}  // namespace

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kEmbeddings: return "embeddings";
    case OpKind::kQkvGemm: return "qkv_gemm";
    case OpKind::kAttention: return "attention_core";
    case OpKind::kAttentionOutputGemm: return "attention_output_gemm";
    case OpKind::kAddNorm1: return "add_layernorm_1";
    case OpKind::kIntermediateGemm: return "ffn_up_gemm";
    case OpKind::kGelu: return "gelu";
    case OpKind::kOutputGemm: return "ffn_down_gemm";
    case OpKind::kAddNorm2: return "add_layernorm_2";
    case OpKind::kPoolerClassifier: return "pooler_classifier";
    case OpKind::kCount: break;
  }
  return "?";
}

Session::~Session() {
  layers_.clear();  // operators first
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
    if (!s->build(o, error)) return EB_ERROR_BACKEND;
  } catch (const std::bad_alloc&) {
    if (error) *error = "out of memory while creating the session";
    return EB_ERROR_OUT_OF_MEMORY;
  }
  *out = std::move(s);
  return EB_OK;
}

bool Session::build(const SessionOptions& o, std::string* error) {
  const ModelConfig& c = model_.config;
  const size_t H = c.hidden, I = c.intermediate, d = c.head_dim();
  threads_ = std::max(1, o.threads);
  max_n_ = o.max_seq_len > 0 ? o.max_seq_len : c.max_position;
  const size_t n = static_cast<size_t>(max_n_);
  if (threads_ > 1) {
    pool_ = pthreadpool_create(static_cast<size_t>(threads_));
    if (!pool_) {
      if (error) *error = "cannot create a thread pool of " + std::to_string(threads_) + " threads";
      return false;
    }
  }

  // ---- schedule and buffer lifetimes (op indices), then the plan
  enum Slot { kInputQ, kQkv, kContext, kContextAlt, kAttnOut, kFfnInputQ, kInter, kGelu, kFfnOut, kSlots };
  struct Pending { int layer; int slot; int head_kind; int head; };  // head_kind: 0 none, 1 scores, 2 probs, 3 packed
  std::vector<Pending> owners;
  auto request = [&](std::string name, size_t bytes, int first, int last, Pending who) {
    buffers_.push_back({std::move(name), bytes, first, last});
    owners.push_back(who);
  };
  const int waves = (c.heads + threads_ - 1) / threads_;
  int op = 0;
  const int embed_op = op++;
  int prev_norm_op = embed_op;
  struct LayerOps { int qkv, wave0, ao, ln1, up, gelu, down, ln2; };
  std::vector<LayerOps> ops(c.layers);
  for (int l = 0; l < c.layers; ++l) {
    LayerOps& x = ops[l];
    x.qkv = op++;
    x.wave0 = op;
    op += waves;
    x.ao = op++;
    x.ln1 = op++;
    x.up = op++;
    x.gelu = op++;
    x.down = op++;
    x.ln2 = op++;
  }
  const int final_op = op++;
  request("hidden", n * H * 4, embed_op, final_op, {-1, -1, 0, 0});
  if (model_.has_pooler) request("pooler_output", H * 4, final_op, final_op, {-1, -2, 0, 0});
  if (model_.has_classifier) request("logits", static_cast<size_t>(c.num_labels) * 4, final_op, final_op, {-1, -3, 0, 0});
  for (int l = 0; l < c.layers; ++l) {
    const LayerView& L = model_.layers[l];
    const LayerOps& x = ops[l];
    const std::string p = "layer" + std::to_string(l) + ".";
    const size_t qkv_es = L.qkv.int8 ? 1 : 4, ctx_es = qkv_es, ao_in_es = L.attention_output.int8 ? 1 : 4;
    if (L.qkv.int8) request(p + "input_q", n * H, prev_norm_op, x.qkv, {l, kInputQ, 0, 0});
    request(p + "qkv", n * 3 * H * qkv_es, x.qkv, x.wave0 + waves - 1, {l, kQkv, 0, 0});
    for (int h = 0; h < c.heads; ++h) {
      const int wop = x.wave0 + h / threads_;
      const std::string hp = p + "head" + std::to_string(h) + ".";
      request(hp + "scores", n * n * 4, wop, wop, {l, -1, 1, h});
      if (L.qkv.int8) {
        request(hp + "probs", n * n, wop, wop, {l, -1, 2, h});
        request(hp + "packed_kv", 2 * n * d + 64, wop, wop, {l, -1, 3, h});
      }
    }
    request(p + "context", n * H * ctx_es, x.wave0, x.ao, {l, kContext, 0, 0});
    if (ctx_es != ao_in_es) request(p + "context_converted", n * H * ao_in_es, x.ao, x.ao, {l, kContextAlt, 0, 0});
    request(p + "attention_output", n * H * (L.attention_output.int8 ? 1 : 4), x.ao, x.ln1, {l, kAttnOut, 0, 0});
    if (L.intermediate.int8) request(p + "ffn_input_q", n * H, x.ln1, x.up, {l, kFfnInputQ, 0, 0});
    const size_t inter_es = L.intermediate.int8 ? 1 : 4, gelu_es = L.output.int8 ? 1 : 4;
    if (inter_es == gelu_es) {
      request(p + "intermediate", n * I * inter_es, x.up, x.down, {l, kInter, 0, 0});
    } else {
      request(p + "intermediate", n * I * inter_es, x.up, x.gelu, {l, kInter, 0, 0});
      request(p + "gelu", n * I * gelu_es, x.gelu, x.down, {l, kGelu, 0, 0});
    }
    request(p + "ffn_output", n * H * (L.output.int8 ? 1 : 4), x.down, x.ln2, {l, kFfnOut, 0, 0});
    prev_norm_op = x.ln2;
  }
  std::string perr;
  if (!plan_memory(buffers_, PlanStrategy::kGreedyBySize, kAlignment, &plan_, &perr)) {
    if (error) *error = "memory planning failed: " + perr;
    return false;
  }
  if (posix_memalign(reinterpret_cast<void**>(&arena_raw_), kAlignment, std::max<size_t>(plan_.arena_bytes, 64)) != 0) {
    arena_raw_ = nullptr;
    throw std::bad_alloc();  // create() reports EB_ERROR_OUT_OF_MEMORY
  }
  arena_ = arena_raw_;
  std::memset(arena_, 0, plan_.arena_bytes);

  layers_ = std::vector<LayerBuffers>(c.layers);
  for (LayerBuffers& lb : layers_) {
    lb.scores.assign(c.heads, nullptr);
    lb.probs.assign(c.heads, nullptr);
    lb.packed.assign(c.heads, nullptr);
  }
  for (size_t i = 0; i < buffers_.size(); ++i) {
    uint8_t* ptr = arena_ + plan_.offsets[i];
    const Pending& w = owners[i];
    if (w.layer < 0) {
      if (w.slot == -1) hidden_ = reinterpret_cast<float*>(ptr);
      if (w.slot == -2) pooled_ = reinterpret_cast<float*>(ptr);
      if (w.slot == -3) logits_ = reinterpret_cast<float*>(ptr);
      continue;
    }
    LayerBuffers& lb = layers_[w.layer];
    if (w.head_kind == 1) lb.scores[w.head] = reinterpret_cast<float*>(ptr);
    if (w.head_kind == 2) lb.probs[w.head] = ptr;
    if (w.head_kind == 3) lb.packed[w.head] = reinterpret_cast<int8_t*>(ptr);
    if (w.head_kind) continue;
    void** slots[kSlots] = {&lb.input_q, &lb.qkv, &lb.context, &lb.context_alt, &lb.attn_out,
                            &lb.ffn_input_q, &lb.inter, &lb.gelu, &lb.ffn_out};
    *slots[w.slot] = ptr;
  }

  // ---- operators and per-layer constants
  const size_t xnn_before = xnn_bytes_allocated();
  for (int l = 0; l < c.layers; ++l) {
    const LayerView& L = model_.layers[l];
    LayerBuffers& lb = layers_[l];
    if (!lb.gelu) lb.gelu = lb.inter;
    if (!lb.qkv_gemm.create(L.qkv, error) || !lb.ao_gemm.create(L.attention_output, error) ||
        !lb.up_gemm.create(L.intermediate, error) || !lb.down_gemm.create(L.output, error))
      return false;
    for (const LinearView* g : {&L.qkv, &L.attention_output, &L.intermediate, &L.output}) model_.release_weight_pages(*g);
    if (L.attention_output.int8) {
      lb.ao_scales.resize(H);
      for (size_t i = 0; i < H; ++i) lb.ao_scales[i] = L.attention_output.output_channel_scale(static_cast<int>(i));
    }
    if (L.output.int8) {
      lb.down_scales.resize(H);
      for (size_t i = 0; i < H; ++i) lb.down_scales[i] = L.output.output_channel_scale(static_cast<int>(i));
    }
    if (L.qkv.input_factors) {
      lb.qkv_inv_factors.resize(H);
      for (size_t i = 0; i < H; ++i) lb.qkv_inv_factors[i] = 1.f / L.qkv.input_factors[i];
    }
    if (L.intermediate.input_factors) {
      lb.up_inv_factors.resize(H);
      for (size_t i = 0; i < H; ++i) lb.up_inv_factors[i] = 1.f / L.intermediate.input_factors[i];
    }
    if (L.intermediate.int8) {
      if (L.output.int8) {
        kernels::build_gelu_lut_s8(L.intermediate.output_scale, L.intermediate.output_zero_point, L.output.input_scale,
                                   L.output.input_zero_point, lb.gelu_lut);
      }
      for (int q = -128; q < 128; ++q) {
        float x = (q - L.intermediate.output_zero_point) * L.intermediate.output_scale;
        kernels::gelu_f32(&x, 1);
        lb.gelu_lut_f32[q + 128] = x;
      }
    }
  }
  if (model_.has_pooler) {
    if (!pooler_gemm_.create(model_.pooler, error) || !pooler_gemm_.setup(1, hidden_, pooled_, pool_)) {
      if (error && error->empty()) *error = "pooler setup failed";
      return false;
    }
  }
  if (model_.has_classifier) {
    const float* in = model_.has_pooler ? pooled_ : hidden_;
    if (!classifier_gemm_.create(model_.classifier, error) || !classifier_gemm_.setup(1, in, logits_, pool_)) {
      if (error && error->empty()) *error = "classifier setup failed";
      return false;
    }
  }
  packed_bytes_ = xnn_bytes_allocated() - xnn_before;
  ids_.assign(n, 0);
  types_.assign(n, 0);
  key_mask_.assign(n, 1);
  profile_.assign(static_cast<size_t>(c.layers + 1) * static_cast<size_t>(OpKind::kCount), 0);
  return true;
}

void Session::reset_profile() { std::fill(profile_.begin(), profile_.end(), 0); }

int64_t Session::profile_ns(int layer, OpKind kind) const {
  const size_t i = static_cast<size_t>(layer) * static_cast<size_t>(OpKind::kCount) + static_cast<size_t>(kind);
  return i < profile_.size() ? profile_[i] : 0;
}

void Session::attention_task(size_t head) {
  const ModelConfig& c = model_.config;
  const LayerView& L = model_.layers[cur_layer_];
  LayerBuffers& lb = layers_[cur_layer_];
  const size_t H = c.hidden, d = c.head_dim(), h = head;
  const uint8_t* mask = any_padding_ ? key_mask_.data() : nullptr;
  if (L.qkv.int8) {
    const int8_t* qkv = static_cast<const int8_t*>(lb.qkv);
    kernels::AttentionHeadS8 a;
    a.q = qkv + h * d;
    a.k = qkv + H + h * d;
    a.v = qkv + 2 * H + h * d;
    a.qkv_stride = 3 * H;
    a.n = static_cast<int>(cur_n_);
    a.head_dim = static_cast<int>(d);
    a.q_scale = L.qkv.output_channel_scale(static_cast<int>(h * d));
    a.k_scale = L.qkv.output_channel_scale(static_cast<int>(H + h * d));
    a.v_scale = L.qkv.output_channel_scale(static_cast<int>(2 * H + h * d));
    a.key_mask = mask;
    a.scores = lb.scores[h];
    a.probs = lb.probs[h];
    a.packed = lb.packed[h];
    a.context = static_cast<int8_t*>(lb.context) + h * d;
    a.context_stride = H;
    a.context_scale = L.attention_output.input_scale;
    a.context_zero_point = L.attention_output.input_zero_point;
    kernels::attention_head_s8(a);
  } else {
    const float* qkv = static_cast<const float*>(lb.qkv);
    kernels::AttentionHeadF32 a;
    a.q = qkv + h * d;
    a.k = qkv + H + h * d;
    a.v = qkv + 2 * H + h * d;
    a.qkv_stride = 3 * H;
    a.n = static_cast<int>(cur_n_);
    a.head_dim = static_cast<int>(d);
    a.key_mask = mask;
    a.scores = lb.scores[h];
    a.context = static_cast<float*>(lb.context) + h * d;
    a.context_stride = H;
    kernels::attention_head_f32(a);
  }
}

eb_status Session::forward(size_t n) {
  const ModelConfig& c = model_.config;
  const size_t H = c.hidden, I = c.intermediate;
  const float eps = c.eps;
  const size_t row_tile = std::max<size_t>(1, (n + 2 * threads_ - 1) / (2 * threads_));
  auto slot = [&](int layer, OpKind k) {
    return &profile_[static_cast<size_t>(layer) * static_cast<size_t>(OpKind::kCount) + static_cast<size_t>(k)];
  };
  if (n != cur_n_) {
    for (LayerBuffers& lb : layers_) {
      const int l = static_cast<int>(&lb - layers_.data());
      const LayerView& L = model_.layers[l];
      const void* qkv_in = L.qkv.int8 ? lb.input_q : static_cast<const void*>(hidden_);
      const void* ao_in = lb.context_alt ? lb.context_alt : lb.context;
      const void* up_in = L.intermediate.int8 ? lb.ffn_input_q : static_cast<const void*>(hidden_);
      if (!lb.qkv_gemm.setup(n, qkv_in, lb.qkv, pool_) || !lb.ao_gemm.setup(n, ao_in, lb.attn_out, pool_) ||
          !lb.up_gemm.setup(n, up_in, lb.inter, pool_) || !lb.down_gemm.setup(n, lb.gelu, lb.ffn_out, pool_)) {
        cur_n_ = 0;
        return fail(EB_ERROR_BACKEND, "XNNPACK setup failed for %zu rows", n);
      }
    }
    cur_n_ = n;
  }
  const int num_layers = c.layers;
  if (hook_)
    call_hook(-1, 0, n, &model_.layers[0].qkv, layers_[0].qkv_inv_factors.empty() ? nullptr : layers_[0].qkv_inv_factors.data(),
              layers_[0].input_q);
  for (int l = 0; l < num_layers; ++l) {
    const LayerView& L = model_.layers[l];
    LayerBuffers& lb = layers_[l];
    cur_layer_ = l;
    {
      OpTimer t(profiling_, slot(l, OpKind::kQkvGemm));
      if (!lb.qkv_gemm.run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed (%s)", L.qkv.name);
    }
    {
      OpTimer t(profiling_, slot(l, OpKind::kAttention));
      if (!pool_) {
        for (int h = 0; h < c.heads; ++h) attention_task(static_cast<size_t>(h));
      } else {
        for (int base = 0; base < c.heads; base += threads_) {
          WaveContext w{this, static_cast<size_t>(base)};
          const size_t count = static_cast<size_t>(std::min(threads_, c.heads - base));
          pthreadpool_parallelize_1d(
              pool_,
              [](void* ctx, size_t i) {
                auto* wc = static_cast<WaveContext*>(ctx);
                wc->session->attention_task(wc->base + i);
              },
              &w, count, 0);
        }
      }
    }
    {
      OpTimer t(profiling_, slot(l, OpKind::kAttentionOutputGemm));
      if (lb.context_alt) {  // attention and attention_output disagree on precision
        if (L.qkv.int8) {
          const int8_t* src = static_cast<const int8_t*>(lb.context);
          float* dst = static_cast<float*>(lb.context_alt);
          const float s = L.attention_output.input_scale;
          const int32_t zp = L.attention_output.input_zero_point;
          for (size_t i = 0; i < n * H; ++i) dst[i] = (src[i] - zp) * s;
        } else {
          kernels::quantize_s8(static_cast<const float*>(lb.context), n * H, L.attention_output.input_scale,
                               L.attention_output.input_zero_point, static_cast<int8_t*>(lb.context_alt));
        }
      }
      if (!lb.ao_gemm.run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed (%s)", L.attention_output.name);
    }
    {
      OpTimer t(profiling_, slot(l, OpKind::kAddNorm1));
      auto add_norm = [&](size_t r0, size_t rows) {
        float* h = hidden_ + r0 * H;
        add_residual(h, lb.attn_out, r0, rows, H, L.attention_output, lb.ao_scales.data());
        if (L.intermediate.int8) {
          kernels::layernorm_quantize_s8(h, L.attention_norm.gamma, L.attention_norm.beta, eps, rows, H,
                                         lb.up_inv_factors.empty() ? nullptr : lb.up_inv_factors.data(),
                                         L.intermediate.input_scale, L.intermediate.input_zero_point,
                                         static_cast<int8_t*>(lb.ffn_input_q) + r0 * H);
        } else {
          kernels::layernorm_f32(h, L.attention_norm.gamma, L.attention_norm.beta, eps, rows, H, h);
        }
      };
      parallel_rows(pool_, n, row_tile, add_norm);
      if (hook_)
        call_hook(l, 0, n, &L.intermediate, lb.up_inv_factors.empty() ? nullptr : lb.up_inv_factors.data(),
                  lb.ffn_input_q);
    }
    {
      OpTimer t(profiling_, slot(l, OpKind::kIntermediateGemm));
      if (!lb.up_gemm.run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed (%s)", L.intermediate.name);
    }
    {
      OpTimer t(profiling_, slot(l, OpKind::kGelu));
      auto gelu = [&](size_t r0, size_t rows) {
        const size_t b = r0 * I, cnt = rows * I;
        if (L.intermediate.int8 && L.output.int8) {
          kernels::apply_lut_s8(static_cast<int8_t*>(lb.inter) + b, cnt, lb.gelu_lut);
        } else if (L.intermediate.int8) {
          const int8_t* src = static_cast<const int8_t*>(lb.inter) + b;
          float* dst = static_cast<float*>(lb.gelu) + b;
          for (size_t i = 0; i < cnt; ++i) dst[i] = lb.gelu_lut_f32[src[i] + 128];
        } else {
          float* x = static_cast<float*>(lb.inter) + b;
          kernels::gelu_f32(x, cnt);
          if (L.output.int8)
            kernels::quantize_s8(x, cnt, L.output.input_scale, L.output.input_zero_point,
                                 static_cast<int8_t*>(lb.gelu) + b);
        }
      };
      parallel_rows(pool_, n, row_tile, gelu);
    }
    {
      OpTimer t(profiling_, slot(l, OpKind::kOutputGemm));
      if (!lb.down_gemm.run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed (%s)", L.output.name);
    }
    {
      OpTimer t(profiling_, slot(l, OpKind::kAddNorm2));
      const LayerView* next = l + 1 < num_layers ? &model_.layers[l + 1] : nullptr;
      LayerBuffers* next_lb = next ? &layers_[l + 1] : nullptr;
      auto add_norm = [&](size_t r0, size_t rows) {
        float* h = hidden_ + r0 * H;
        add_residual(h, lb.ffn_out, r0, rows, H, L.output, lb.down_scales.data());
        if (next && next->qkv.int8) {
          kernels::layernorm_quantize_s8(h, L.output_norm.gamma, L.output_norm.beta, eps, rows, H,
                                         next_lb->qkv_inv_factors.empty() ? nullptr : next_lb->qkv_inv_factors.data(),
                                         next->qkv.input_scale, next->qkv.input_zero_point,
                                         static_cast<int8_t*>(next_lb->input_q) + r0 * H);
        } else {
          kernels::layernorm_f32(h, L.output_norm.gamma, L.output_norm.beta, eps, rows, H, h);
        }
      };
      parallel_rows(pool_, n, row_tile, add_norm);
      if (hook_)
        call_hook(l, 1, n, next ? &next->qkv : nullptr,
                  next_lb && !next_lb->qkv_inv_factors.empty() ? next_lb->qkv_inv_factors.data() : nullptr,
                  next_lb ? next_lb->input_q : nullptr);
    }
  }
  {
    OpTimer t(profiling_, slot(num_layers, OpKind::kPoolerClassifier));
    if (model_.has_pooler) {
      if (!pooler_gemm_.run(pool_)) return fail(EB_ERROR_BACKEND, "XNNPACK run failed (pooler)");
      for (size_t i = 0; i < H; ++i) pooled_[i] = std::tanh(pooled_[i]);
    }
    if (model_.has_classifier && !classifier_gemm_.run(pool_))
      return fail(EB_ERROR_BACKEND, "XNNPACK run failed (classifier)");
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
  for (LayerBuffers& lb : layers_) {
    if (!lb.qkv_gemm.run(pool_) || !lb.ao_gemm.run(pool_) || !lb.up_gemm.run(pool_) || !lb.down_gemm.run(pool_))
      return fail(EB_ERROR_BACKEND, "XNNPACK run failed");
  }
  return EB_OK;
}

void Session::embed(const int32_t* ids, const int32_t* types, size_t n) {
  const ModelConfig& c = model_.config;
  const size_t H = c.hidden;
  for (size_t t = 0; t < n; ++t) {
    float* row = hidden_ + t * H;
    const float* pos = model_.position + t * H;
    const float* typ = model_.token_type + static_cast<size_t>(types[t]) * H;
    if (model_.word_s8) {
      const int8_t* w = model_.word_s8 + static_cast<size_t>(ids[t]) * H;
      const float s = model_.word_scales[ids[t]];
      for (size_t i = 0; i < H; ++i) row[i] = w[i] * s + pos[i] + typ[i];
    } else {
      const float* w = model_.word_f32 + static_cast<size_t>(ids[t]) * H;
      for (size_t i = 0; i < H; ++i) row[i] = w[i] + pos[i] + typ[i];
    }
  }
  const LayerView& L0 = model_.layers[0];
  if (L0.qkv.int8) {
    kernels::layernorm_quantize_s8(hidden_, model_.embedding_norm.gamma, model_.embedding_norm.beta, c.eps, n, H,
                                   layers_[0].qkv_inv_factors.empty() ? nullptr : layers_[0].qkv_inv_factors.data(),
                                   L0.qkv.input_scale, L0.qkv.input_zero_point, static_cast<int8_t*>(layers_[0].input_q));
  } else {
    kernels::layernorm_f32(hidden_, model_.embedding_norm.gamma, model_.embedding_norm.beta, c.eps, n, H, hidden_);
  }
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
    const int32_t t = token_types ? token_types[i] : 0;
    if (t < 0 || t >= c.type_vocab)
      return fail(EB_ERROR_INVALID_ARGUMENT, "token_type_ids[%zu] = %d is outside [0, %d)", i, t, c.type_vocab);
  }
  size_t bad = 0;
  if (!set_mask(mask, n, key_mask_.data(), &any_padding_, &bad))
    return fail(EB_ERROR_INVALID_ARGUMENT, "attention_mask[%zu] = %d is not 0 or 1", bad, mask[bad]);
  if (ids != ids_.data()) std::memcpy(ids_.data(), ids, n * sizeof(int32_t));
  for (size_t i = 0; i < n; ++i) types_[i] = token_types ? token_types[i] : 0;
  clear_error();
  {
    OpTimer t(profiling_, &profile_[static_cast<size_t>(c.layers) * static_cast<size_t>(OpKind::kCount)]);
    embed(ids_.data(), types_.data(), n);
  }
  return forward(n);
}

eb_status Session::run_text(const char* text) {
  seq_len_ = 0;
  if (!text) return fail(EB_ERROR_INVALID_ARGUMENT, "text is NULL");
  if (!model_.has_vocab) return fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  const size_t total = model_.tokenizer.encode(text, ids_.data(), ids_.size(), true);
  if (total > ids_.size())
    return fail(EB_ERROR_SEQUENCE_TOO_LONG, "text is %zu tokens long, the session maximum is %d", total, max_n_);
  return run_ids(ids_.data(), nullptr, nullptr, total);
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
  const LayerView& L0 = model_.layers[0];
  if (L0.qkv.int8)
    kernels::quantize_s8_per_channel(hidden_, n, H,
                                     layers_[0].qkv_inv_factors.empty() ? nullptr : layers_[0].qkv_inv_factors.data(),
                                     L0.qkv.input_scale, L0.qkv.input_zero_point, static_cast<int8_t*>(layers_[0].input_q));
  return forward(n);
}

}  // namespace edgebert
