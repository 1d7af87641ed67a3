// SPDX-License-Identifier: Apache-2.0
// reference_bert.cpp: straightforward float32 forward of every family (post-LN or pre-norm; the
// config's FFN activation, plain or gated; token-type embeddings only when the model has them;
// RoBERTa positions; factorized embeddings + projection; ALBERT's shared layers; rotary q/k;
// sliding-window attention; ModernBERT's final norm) for calibration and the converter's tests.
#include "converter/reference_bert.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <pthreadpool.h>

#include "exec/parallel.h"
#include "xnn_gemm.h"

namespace edgebert::convert {
namespace {

inline float dot(const float* a, const float* b, int n) {
  float acc = 0.f;
#pragma omp simd reduction(+ : acc)
  for (int i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

void layer_norm_rows(float* x, size_t rows, int H, const FloatLayerNorm& ln, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    float* row = x + r * H;
    double mean = 0;
    for (int c = 0; c < H; ++c) mean += row[c];
    mean /= H;
    double var = 0;
    for (int c = 0; c < H; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= H;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int c = 0; c < H; ++c)
      row[c] = static_cast<float>((row[c] - mean) * inv) * ln.gamma[c] + (ln.beta.empty() ? 0.f : ln.beta[c]);
  }
}

// RMSNorm of rows in place: x / sqrt(mean(x^2) + eps) * gamma (Qwen3RMSNorm; Gemma's 1 + w is
// stored as gamma).
void rms_norm_rows(float* x, size_t rows, int H, const FloatLayerNorm& ln, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    float* row = x + r * H;
    double ss = 0;
    for (int c = 0; c < H; ++c) ss += static_cast<double>(row[c]) * row[c];
    const double inv = 1.0 / std::sqrt(ss / H + eps);
    for (int c = 0; c < H; ++c) row[c] = static_cast<float>(row[c] * inv) * ln.gamma[c];
  }
}

void norm_rows(float* x, size_t rows, int H, const FloatLayerNorm& ln, float eps, bool rms) {
  if (rms)
    rms_norm_rows(x, rows, H, ln, eps);
  else
    layer_norm_rows(x, rows, H, ln, eps);
}

// The norm of rows into `out` (x unchanged): the pre-norm sublayer input.
void norm_copy(const float* x, size_t rows, int H, const FloatLayerNorm& ln, float eps, bool rms, float* out) {
  std::copy(x, x + rows * H, out);
  norm_rows(out, rows, H, ln, eps, rms);
}

// Where Q, K and V are in a QKV row: Q of `heads` heads, then K and V of `kv` heads, d channels each.
struct Heads {
  int heads, kv, d;
  size_t stride() const { return static_cast<size_t>((heads + 2 * kv) * d); }
  size_t q(int h) const { return static_cast<size_t>(h * d); }
  size_t k(int h) const { return static_cast<size_t>((heads + h / (heads / kv)) * d); }
  size_t v(int h) const { return static_cast<size_t>((heads + kv + h / (heads / kv)) * d); }
  size_t ctx_width() const { return static_cast<size_t>(heads * d); }
};

// Per-head RMSNorm of Q and K of rows in place (Qwen3 q_norm / k_norm).
void qk_norm_rows(float* qkv, size_t rows, const Heads& g, const FloatLayerNorm& qn, const FloatLayerNorm& kn,
                  float eps) {
  for (size_t t = 0; t < rows; ++t) {
    float* row = qkv + t * g.stride();
    for (int h = 0; h < g.heads; ++h) rms_norm_rows(row + g.q(h), 1, g.d, qn, eps);
    for (int h = 0; h < g.kv; ++h) rms_norm_rows(row + static_cast<size_t>((g.heads + h) * g.d), 1, g.d, kn, eps);
  }
}

// Rotary embedding of Q and K of one sequence in place.
void apply_rotary(float* qkv, size_t n, const Heads& g, const RotaryParams& r, double theta) {
  const int half = r.dims / 2;
  std::vector<float> cs(half), sn(half);
  for (size_t pos = 0; pos < n; ++pos) {
    for (int i = 0; i < half; ++i) {
      const double angle = static_cast<double>(pos) * std::pow(theta, -2.0 * i / r.dims);
      cs[i] = static_cast<float>(std::cos(angle));
      sn[i] = static_cast<float>(std::sin(angle));
    }
    for (int part = 0; part < 2; ++part) {  // Q, then K
      for (int h = 0; h < (part == 0 ? g.heads : g.kv); ++h) {
        float* x = qkv + pos * g.stride() + static_cast<size_t>((part * g.heads + h) * g.d);
        for (int i = 0; i < half; ++i) {
          const int a = r.interleaved ? 2 * i : i, b = r.interleaved ? 2 * i + 1 : i + half;
          const float x1 = x[a], x2 = x[b];
          x[a] = x1 * cs[i] - x2 * sn[i];
          x[b] = x2 * cs[i] + x1 * sn[i];
        }
      }
    }
  }
}

// softmax(Q K^T / sqrt(d)) V for every head of one sequence; ctx [n, heads x d]. window > 0:
// query i sees keys j with |i - j| <= window / 2 only; causal: keys j <= i only.
void attention(const float* qkv, size_t n, const Heads& g, int window, bool causal, float* ctx) {
  const int d = g.d;
  const size_t S = g.stride(), C = g.ctx_width();
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> p(n);
  for (int h = 0; h < g.heads; ++h) {
    for (size_t i = 0; i < n; ++i) {
      const float* q = qkv + i * S + g.q(h);
      float mx = -INFINITY;
      const size_t half = window > 0 ? static_cast<size_t>(window / 2) : n;
      const size_t lo = i > half ? i - half : 0, hi = causal ? i + 1 : std::min(n, i + half + 1);
      for (size_t j = lo; j < hi; ++j) {
        p[j] = dot(q, qkv + j * S + g.k(h), d) * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (size_t j = lo; j < hi; ++j) sum += (p[j] = std::exp(p[j] - mx));
      float* out = ctx + i * C + g.q(h);
      std::fill(out, out + d, 0.f);
      for (size_t j = lo; j < hi; ++j) {
        const float w = static_cast<float>(p[j] / sum);
        const float* v = qkv + j * S + g.v(h);
        for (int c = 0; c < d; ++c) out[c] += w * v[c];
      }
    }
  }
}

}  // namespace

// The reference GEMMs run through XNNPACK's f32 fully-connected operator (the same library the
// runtime uses for fp32 models) on a process-wide pool with one thread per core.
void linear_forward(const FloatLinear& l, const float* x, size_t rows, float* y) {
  static std::once_flag once;
  static pthreadpool_t pool = nullptr;
  std::call_once(once, [] {
    const unsigned n = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    if (n > 1) pool = pthreadpool_create(n);
  });
  if (const Status ready = xnn_ready(); !ready) throw std::runtime_error(ready.message());
  LinearView v;
  v.name = l.name.c_str();
  v.int8 = false;
  v.in = l.in;
  v.out = l.out;
  v.weight_f32 = l.weight.data();
  v.bias = l.bias.empty() ? nullptr : l.bias.data();
  XnnGemm gemm;
  const Status made = gemm.create(v, false, rows);
  const bool ran = made && gemm.setup(rows, x, y, pool) && gemm.run(pool);
  edgebert::exec::yield_workers(pool);  // the serial reference work between GEMMs: workers asleep, not spinning
  if (!ran) throw std::runtime_error(l.name + ": float reference GEMM failed " + made.message());
}

std::vector<float> reference_masked_lm_features(const FloatBert& m, const float* hidden, size_t rows) {
  const int E = m.mlm_transform.out;
  std::vector<float> y(rows * static_cast<size_t>(E));
  linear_forward(m.mlm_transform, hidden, rows, y.data());
  for (float& v : y) v = ffn_activation(m.mlm_act, v);
  layer_norm_rows(y.data(), rows, E, m.mlm_norm, m.config.layer_norm_eps);
  return y;
}

std::vector<float> reference_encoder(const FloatBert& m, const TokenBatch& batch, GemmObserver* observer) {
  const int H = m.config.hidden_size, E = m.embedding_size > 0 ? m.embedding_size : H;
  const int I = m.config.intermediate_size, heads = m.config.num_attention_heads;
  const size_t T = batch.total_tokens();
  const float eps = m.config.layer_norm_eps;
  std::vector<float> hidden(T * H);
  if (!batch.embeddings.empty()) {
    std::copy(batch.embeddings.begin(), batch.embeddings.end(), hidden.begin());
  } else {
    std::vector<float> emb(T * E);
    for (size_t s = 0; s < batch.num_sequences(); ++s) {
      size_t real = 0;  // RoBERTa: position padding_idx + 1 + (non-pad tokens before), pads padding_idx
      for (size_t t = batch.starts[s]; t < batch.starts[s + 1]; ++t) {
        size_t pos = t - batch.starts[s];
        if (m.positions == PositionScheme::kPaddingOffset)
          pos = batch.ids[t] == m.padding_idx ? static_cast<size_t>(m.padding_idx) : m.padding_idx + 1 + real++;
        const float* we = m.word_embeddings.data() + static_cast<size_t>(batch.ids[t]) * E;
        float* h = emb.data() + t * E;
        for (int c = 0; c < E; ++c) h[c] = we[c];
        if (m.positions != PositionScheme::kNone) {
          const float* pe = m.position_embeddings.data() + pos * E;
          for (int c = 0; c < E; ++c) h[c] += pe[c];
        }
        if (!m.token_type_embeddings.empty()) {
          const float* te = m.token_type_embeddings.data() + static_cast<size_t>(batch.token_types[t]) * E;
          for (int c = 0; c < E; ++c) h[c] += te[c];
        }
      }
    }
    if (m.has_embedding_norm) layer_norm_rows(emb.data(), T, E, m.embedding_norm, eps);
    if (m.has_embedding_projection) {
      linear_forward(m.embedding_projection, emb.data(), T, hidden.data());
    } else {
      hidden.swap(emb);
    }
  }
  const size_t ffn_width = static_cast<size_t>(m.gated_ffn ? 2 * I : I);
  const Heads g{heads, m.kv_heads(), m.head_dim()};
  const bool rms = m.rms_norm;
  std::vector<float> qkv(T * g.stride()), ctx(T * g.ctx_width()), tmp(T * H), normed(T * H), inter(T * ffn_width),
      gated(T * I);
  const HiddenAct act = m.activation();
  for (int li = 0; li < m.num_applied_layers(); ++li) {
    const FloatLayer& L = m.applied_layer(li);
    const int layer = m.stored_layer(li);  // a shared layer's GEMMs are observed at every use
    const bool local = !m.local_window.empty() && m.local_window[li] > 0;
    // attention sublayer: pre-norm reads norm(x) (or x where the layer has no attention norm)
    const float* attn_in = hidden.data();
    if (m.pre_norm && L.has_attention_norm) {
      norm_copy(hidden.data(), T, H, L.attention_norm, eps, rms, normed.data());
      attn_in = normed.data();
    }
    linear_forward(L.qkv, attn_in, T, qkv.data());
    if (observer) observer->observe(layer, GemmKind::kQkv, L.qkv, attn_in, qkv.data(), T);
    if (L.has_qk_norm) qk_norm_rows(qkv.data(), T, g, L.q_norm, L.k_norm, eps);
    for (size_t s = 0; s < batch.num_sequences(); ++s) {
      const size_t b = batch.starts[s], n = batch.starts[s + 1] - b;
      if (m.rotary.dims > 0)
        apply_rotary(qkv.data() + b * g.stride(), n, g, m.rotary, m.rotary.theta_at(static_cast<int>(n), local));
    }
    if (observer && L.has_qk_norm) observer->observe_attention_input(layer, qkv.data(), T);
    for (size_t s = 0; s < batch.num_sequences(); ++s) {
      const size_t b = batch.starts[s], n = batch.starts[s + 1] - b;
      attention(qkv.data() + b * g.stride(), n, g, local ? m.local_window[li] : 0, m.causal,
                ctx.data() + b * g.ctx_width());
    }
    linear_forward(L.attention_output, ctx.data(), T, tmp.data());
    if (observer) observer->observe(layer, GemmKind::kAttentionOutput, L.attention_output, ctx.data(), tmp.data(), T);
    if (L.has_post_norms) rms_norm_rows(tmp.data(), T, H, L.attention_post_norm, eps);  // Gemma 3
    for (size_t i = 0; i < T * H; ++i) hidden[i] += tmp[i];
    if (!m.pre_norm) layer_norm_rows(hidden.data(), T, H, L.attention_norm, eps);
    // FFN sublayer
    const float* ffn_in = hidden.data();
    if (m.pre_norm) {
      norm_copy(hidden.data(), T, H, L.output_norm, eps, rms, normed.data());
      ffn_in = normed.data();
    }
    linear_forward(L.intermediate, ffn_in, T, inter.data());
    if (observer) observer->observe(layer, GemmKind::kIntermediate, L.intermediate, ffn_in, inter.data(), T);
    const float* out_in = inter.data();
    if (m.gated_ffn) {  // act(first half) * second half
      for (size_t t = 0; t < T; ++t) {
        const float* row = inter.data() + t * 2 * I;
        for (int c = 0; c < I; ++c) gated[t * I + c] = ffn_activation(act, row[c]) * row[I + c];
      }
      out_in = gated.data();
    } else {
      for (float& v : inter) v = ffn_activation(act, v);
    }
    linear_forward(L.output, out_in, T, tmp.data());
    if (observer) observer->observe(layer, GemmKind::kOutput, L.output, out_in, tmp.data(), T);
    if (L.has_post_norms) rms_norm_rows(tmp.data(), T, H, L.ffn_post_norm, eps);
    // nomic-bert prenorm (contrastors' NomicBertBlock): the encoder returns the last layer's MLP
    // output; its residual add would happen in a next layer that does not exist
    if (m.pre_norm && m.family() == Family::kNomicBert && li == m.num_applied_layers() - 1)
      hidden.assign(tmp.begin(), tmp.end());
    else
      for (size_t i = 0; i < T * H; ++i) hidden[i] += tmp[i];
    if (!m.pre_norm) layer_norm_rows(hidden.data(), T, H, L.output_norm, eps);
  }
  if (m.has_final_norm) norm_rows(hidden.data(), T, H, m.final_norm, eps, rms);
  return hidden;
}

}  // namespace edgebert::convert
