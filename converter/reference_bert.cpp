// reference_bert.cpp: straightforward float32 BERT / DistilBERT forward (post-LN; the config's FFN
// activation; token-type embeddings only when the model has them) for calibration.
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
    for (int c = 0; c < H; ++c) row[c] = static_cast<float>((row[c] - mean) * inv) * ln.gamma[c] + ln.beta[c];
  }
}

// softmax(Q K^T / sqrt(d)) V for every head of one sequence; qkv [n, 3H], ctx [n, H].
void attention(const float* qkv, size_t n, int H, int heads, float* ctx) {
  const int d = H / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> p(n);
  for (int h = 0; h < heads; ++h) {
    for (size_t i = 0; i < n; ++i) {
      const float* q = qkv + i * 3 * H + h * d;
      float mx = -INFINITY;
      for (size_t j = 0; j < n; ++j) {
        p[j] = dot(q, qkv + j * 3 * H + H + h * d, d) * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (size_t j = 0; j < n; ++j) sum += (p[j] = std::exp(p[j] - mx));
      float* out = ctx + i * H + h * d;
      std::fill(out, out + d, 0.f);
      for (size_t j = 0; j < n; ++j) {
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
  v.bias = l.bias.data();
  XnnGemm gemm;
  if (!gemm.create(v, false, rows, &err) || !gemm.setup(rows, x, y, pool) || !gemm.run(pool))
    throw std::runtime_error(l.name + ": float reference GEMM failed " + err);
}

std::vector<float> reference_encoder(const FloatBert& m, const TokenBatch& batch, GemmObserver* observer) {
  const int H = m.config.hidden_size;
  const size_t T = batch.total_tokens();
  const float eps = m.config.layer_norm_eps;
  std::vector<float> hidden(T * H);
  if (!batch.embeddings.empty()) {
    std::copy(batch.embeddings.begin(), batch.embeddings.end(), hidden.begin());
  } else {
    for (size_t s = 0; s < batch.num_sequences(); ++s) {
      for (size_t t = batch.starts[s]; t < batch.starts[s + 1]; ++t) {
        const size_t pos = t - batch.starts[s];
        const float* we = m.word_embeddings.data() + static_cast<size_t>(batch.ids[t]) * H;
        const float* pe = m.position_embeddings.data() + pos * H;
        float* h = hidden.data() + t * H;
        for (int c = 0; c < H; ++c) h[c] = we[c] + pe[c];
        if (!m.token_type_embeddings.empty()) {
          const float* te = m.token_type_embeddings.data() + static_cast<size_t>(batch.token_types[t]) * H;
          for (int c = 0; c < H; ++c) h[c] += te[c];
        }
      }
    }
    layer_norm_rows(hidden.data(), T, H, m.embedding_norm, eps);
  }
  std::vector<float> qkv(T * 3 * H), ctx(T * H), tmp(T * H), inter(T * static_cast<size_t>(m.config.intermediate_size));
  for (size_t li = 0; li < m.layers.size(); ++li) {
    const FloatLayer& L = m.layers[li];
    const int layer = static_cast<int>(li);
    linear_forward(L.qkv, hidden.data(), T, qkv.data());
    if (observer) observer->observe(layer, GemmKind::kQkv, L.qkv, hidden.data(), qkv.data(), T);
    for (size_t s = 0; s < batch.num_sequences(); ++s) {
      const size_t b = batch.starts[s], n = batch.starts[s + 1] - b;
      attention(qkv.data() + b * 3 * H, n, H, m.config.num_attention_heads, ctx.data() + b * H);
    }
    linear_forward(L.attention_output, ctx.data(), T, tmp.data());
    if (observer) observer->observe(layer, GemmKind::kAttentionOutput, L.attention_output, ctx.data(), tmp.data(), T);
    for (size_t i = 0; i < T * H; ++i) hidden[i] += tmp[i];
    layer_norm_rows(hidden.data(), T, H, L.attention_norm, eps);
    linear_forward(L.intermediate, hidden.data(), T, inter.data());
    if (observer) observer->observe(layer, GemmKind::kIntermediate, L.intermediate, hidden.data(), inter.data(), T);
    const HiddenAct act = m.activation();
    for (float& v : inter) v = ffn_activation(act, v);
    linear_forward(L.output, inter.data(), T, tmp.data());
    if (observer) observer->observe(layer, GemmKind::kOutput, L.output, inter.data(), tmp.data(), T);
    for (size_t i = 0; i < T * H; ++i) hidden[i] += tmp[i];
    layer_norm_rows(hidden.data(), T, H, L.output_norm, eps);
  }
  return hidden;
}

}  // namespace edgebert::convert
