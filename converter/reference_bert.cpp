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

// LayerNorm of rows into `out` (x unchanged): the pre-norm sublayer input.
void layer_norm_copy(const float* x, size_t rows, int H, const FloatLayerNorm& ln, float eps, float* out) {
  std::copy(x, x + rows * H, out);
  layer_norm_rows(out, rows, H, ln, eps);
}

// Rotary embedding of Q and K of one sequence in place; qkv [n, 3H].
void apply_rotary(float* qkv, size_t n, int H, int heads, const RotaryParams& r, double theta) {
  const int d = H / heads, half = r.dims / 2;
  std::vector<float> cs(half), sn(half);
  for (size_t pos = 0; pos < n; ++pos) {
    for (int i = 0; i < half; ++i) {
      const double angle = static_cast<double>(pos) * std::pow(theta, -2.0 * i / r.dims);
      cs[i] = static_cast<float>(std::cos(angle));
      sn[i] = static_cast<float>(std::sin(angle));
    }
    for (int part = 0; part < 2; ++part) {  // Q, then K
      for (int h = 0; h < heads; ++h) {
        float* x = qkv + pos * 3 * H + part * H + h * d;
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

// softmax(Q K^T / sqrt(d)) V for every head of one sequence; qkv [n, 3H], ctx [n, H]. window > 0:
// query i sees keys j with |i - j| <= window / 2 only.
void attention(const float* qkv, size_t n, int H, int heads, int window, float* ctx) {
  const int d = H / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> p(n);
  for (int h = 0; h < heads; ++h) {
    for (size_t i = 0; i < n; ++i) {
      const float* q = qkv + i * 3 * H + h * d;
      float mx = -INFINITY;
      const size_t half = window > 0 ? static_cast<size_t>(window / 2) : n;
      const size_t lo = i > half ? i - half : 0, hi = std::min(n, i + half + 1);
      for (size_t j = lo; j < hi; ++j) {
        p[j] = dot(q, qkv + j * 3 * H + H + h * d, d) * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (size_t j = lo; j < hi; ++j) sum += (p[j] = std::exp(p[j] - mx));
      float* out = ctx + i * H + h * d;
      std::fill(out, out + d, 0.f);
      for (size_t j = lo; j < hi; ++j) {
        const float w = static_cast<float>(p[j] / sum);
        const float* v = qkv + j * 3 * H + 2 * H + h * d;
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
  std::string err;
  if (!xnn_ready(&err)) throw std::runtime_error(err);
  LinearView v;
  v.name = l.name.c_str();
  v.int8 = false;
  v.in = l.in;
  v.out = l.out;
  v.weight_f32 = l.weight.data();
  v.bias = l.bias.empty() ? nullptr : l.bias.data();
  XnnGemm gemm;
  if (!gemm.create(v, false, rows, &err) || !gemm.setup(rows, x, y, pool) || !gemm.run(pool))
    throw std::runtime_error(l.name + ": float reference GEMM failed " + err);
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
    layer_norm_rows(emb.data(), T, E, m.embedding_norm, eps);
    if (m.has_embedding_projection) {
      linear_forward(m.embedding_projection, emb.data(), T, hidden.data());
    } else {
      hidden.swap(emb);
    }
  }
  const size_t ffn_width = static_cast<size_t>(m.gated_ffn ? 2 * I : I);
  std::vector<float> qkv(T * 3 * H), ctx(T * H), tmp(T * H), normed(T * H), inter(T * ffn_width), gated(T * I);
  const HiddenAct act = m.activation();
  for (int li = 0; li < m.num_applied_layers(); ++li) {
    const FloatLayer& L = m.applied_layer(li);
    const int layer = m.stored_layer(li);  // a shared layer's GEMMs are observed at every use
    const bool local = !m.local_window.empty() && m.local_window[li] > 0;
    // attention sublayer: pre-norm reads norm(x) (or x where the layer has no attention norm)
    const float* attn_in = hidden.data();
    if (m.pre_norm && L.has_attention_norm) {
      layer_norm_copy(hidden.data(), T, H, L.attention_norm, eps, normed.data());
      attn_in = normed.data();
    }
    linear_forward(L.qkv, attn_in, T, qkv.data());
    if (observer) observer->observe(layer, GemmKind::kQkv, L.qkv, attn_in, qkv.data(), T);
    for (size_t s = 0; s < batch.num_sequences(); ++s) {
      const size_t b = batch.starts[s], n = batch.starts[s + 1] - b;
      if (m.rotary.dims > 0)
        apply_rotary(qkv.data() + b * 3 * H, n, H, heads, m.rotary, m.rotary.theta_at(static_cast<int>(n), local));
      attention(qkv.data() + b * 3 * H, n, H, heads, local ? m.local_window[li] : 0, ctx.data() + b * H);
    }
    linear_forward(L.attention_output, ctx.data(), T, tmp.data());
    if (observer) observer->observe(layer, GemmKind::kAttentionOutput, L.attention_output, ctx.data(), tmp.data(), T);
    for (size_t i = 0; i < T * H; ++i) hidden[i] += tmp[i];
    if (!m.pre_norm) layer_norm_rows(hidden.data(), T, H, L.attention_norm, eps);
    // FFN sublayer
    const float* ffn_in = hidden.data();
    if (m.pre_norm) {
      layer_norm_copy(hidden.data(), T, H, L.output_norm, eps, normed.data());
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
    // nomic-bert prenorm (contrastors' NomicBertBlock): the encoder returns the last layer's MLP
    // output; its residual add would happen in a next layer that does not exist
    if (m.pre_norm && m.family() == Family::kNomicBert && li == m.num_applied_layers() - 1)
      hidden.assign(tmp.begin(), tmp.end());
    else
      for (size_t i = 0; i < T * H; ++i) hidden[i] += tmp[i];
    if (!m.pre_norm) layer_norm_rows(hidden.data(), T, H, L.output_norm, eps);
  }
  if (m.has_final_norm) layer_norm_rows(hidden.data(), T, H, m.final_norm, eps);
  return hidden;
}

}  // namespace edgebert::convert
