// SPDX-License-Identifier: Apache-2.0
// activation_params.cpp: per-GEMM choice of activation quantization, SmoothQuant factors and
// int8 weights (see activation_params.h for the schemes).
#include "converter/activation_params.h"
#include "converter/target_clones.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "converter/quantization.h"
#include "converter/reference_bert.h"

namespace edgebert::convert {
namespace {

// Bounds of the calibration work, so BERT-base converts in seconds.
constexpr size_t kRangeSamples = size_t(1) << 16;  // values per MSE range search
constexpr size_t kSmoothRows = 160;                // calibration rows in the alpha search
constexpr size_t kSmoothOutputs = 384;             // output channels in the alpha search
const float kAlphas[] = {0.35f, 0.5f, 0.65f, 0.8f};
// A smoothing candidate must beat "no factors" by this much (relative output error) to be used.
constexpr double kSmoothingGain = 0.98;
// Rows (tokens) with the largest values, protected by the clipping search, and the factor by which
// their worst relative error may grow over the min/max range.
constexpr size_t kGuardRows = 32;
constexpr double kGuardFactor = 2.0;
// Residual-writing output channels cover |mean| + kTailSigmas * std of their calibration values.
constexpr double kTailSigmas = 8.0;

struct Rng {  // xorshift64*, deterministic everywhere
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
};

// Up to kRangeSamples element indices of a tensor of `count` values, pseudo-random (a stride
// would alias with the channel count and see only some channels).
std::vector<size_t> sample_indices(size_t count) {
  std::vector<size_t> idx;
  if (count <= kRangeSamples) {
    idx.resize(count);
    for (size_t i = 0; i < count; ++i) idx[i] = i;
    return idx;
  }
  idx.resize(kRangeSamples);
  Rng rng(count);
  for (size_t& i : idx) i = static_cast<size_t>(rng.next() % count);
  std::sort(idx.begin(), idx.end());  // memory order
  return idx;
}

// Sum of squared errors of affine fake quantization (exactly the runtime's rounding: round half to
// even, saturate to int8) over v.
EB_CLONES_AVX2 double affine_sq_error(const float* v, size_t n, float scale,
                                                                          int32_t zp) {
  const float inv = 1.f / scale;
  const float qlo = static_cast<float>(-128 - zp), qhi = static_cast<float>(127 - zp);
  const float magic = 12582912.f;  // 1.5 * 2^23: adding and subtracting rounds half to even
  double total = 0;
  for (size_t b = 0; b < n; b += 1024) {
    const size_t e = std::min(n, b + 1024);
    float acc = 0.f;
#pragma omp simd reduction(+ : acc)
    for (size_t i = b; i < e; ++i) {
      const float t = std::min(std::max(v[i] * inv, qlo), qhi);
      const float r = (t + magic) - magic;
      const float d = r * scale - v[i];
      acc += d * d;
    }
    total += acc;
  }
  return total;
}

// Coordinate search over clipping ranges inside [lo, hi]: both ends shrunk together, then each
// end alone. `err` maps candidate parameters to the total error; `guard` to the worst relative
// error of the guarded rows. The full range is the first candidate; another is admissible only if
// its guard error is at most kGuardFactor times the full range's (special tokens must not pay).
template <class Err, class Guard>
ActivationQuant search_range(float lo, float hi, Err err, Guard guard, bool lower_only = false) {
  lo = std::min(lo, 0.f);
  hi = std::max(hi, 0.f);
  ActivationQuant best = affine_from_range(lo, hi);
  double best_err = err(best);
  const double guard_limit = kGuardFactor * guard(best) + 1e-12;
  float best_lo = lo, best_hi = hi;
  auto consider = [&](float a, float b) {
    const ActivationQuant q = affine_from_range(a, b);
    const double e = err(q);
    if (e < best_err && guard(q) <= guard_limit) {
      best_err = e;
      best = q;
      best_lo = a;
      best_hi = b;
    }
  };
  if (lower_only) {
    for (int k = 1; k <= 32; ++k) consider(lo * (1.f - 0.025f * k), hi);
    best.mse = !(best_lo == lo && best_hi == hi);
    return best;
  }
  for (int k = 1; k <= 32; ++k) {
    const float t = 1.f - 0.025f * k;  // 0.975 .. 0.2
    consider(lo * t, hi * t);
  }
  const float jl = best_lo, jh = best_hi;
  for (int k = -4; k <= 12; ++k) {
    if (k == 0) continue;
    const float t = 1.f - 0.025f * k;
    if (jl * t >= lo) consider(jl * t, best_hi);
  }
  for (int k = -4; k <= 12; ++k) {
    if (k == 0) continue;
    const float t = 1.f - 0.025f * k;
    if (jh * t <= hi) consider(best_lo, jh * t);
  }
  best.mse = !(best_lo == lo && best_hi == hi);
  return best;
}

EB_CLONES_AVX2 void observed_range(const float* x, size_t n, float* lo, float* hi) {
  float mn = n ? x[0] : 0.f, mx = mn;
  for (size_t i = 0; i < n; ++i) {
    mn = x[i] < mn ? x[i] : mn;
    mx = x[i] > mx ? x[i] : mx;
  }
  *lo = mn;
  *hi = mx;
}

ActivationQuant minmax_params(const float* x, size_t n) {
  float lo, hi;
  observed_range(x, n, &lo, &hi);
  return affine_from_range(lo, hi);
}

// The kGuardRows rows of x [rows, cols] with the largest absolute value (positive_only: the
// largest value, for GELU's input, whose negative side GELU flattens), copied out.
std::vector<float> guard_rows(const float* x, size_t rows, size_t cols, bool positive_only = false) {
  std::vector<std::pair<float, size_t>> peak(rows);
  for (size_t r = 0; r < rows; ++r) {
    float m = 0.f;
    for (size_t c = 0; c < cols; ++c) m = std::max(m, positive_only ? x[r * cols + c] : std::fabs(x[r * cols + c]));
    peak[r] = {m, r};
  }
  const size_t k = std::min(rows, kGuardRows);
  std::partial_sort(peak.begin(), peak.begin() + k, peak.end(), [](auto a, auto b) { return a.first > b.first; });
  std::vector<float> g(k * cols);
  for (size_t i = 0; i < k; ++i) std::copy(x + peak[i].second * cols, x + (peak[i].second + 1) * cols, g.begin() + i * cols);
  return g;
}

ActivationQuant mse_params_of(const float* x, size_t rows, size_t cols) {
  const size_t n = rows * cols;
  float lo, hi;
  observed_range(x, n, &lo, &hi);
  const std::vector<size_t> idx = sample_indices(n);
  std::vector<float> v(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) v[i] = x[idx[i]];
  ActivationQuant q = mse_affine_params(v, lo, hi, guard_rows(x, rows, cols), cols);
  q.observed_min = lo;
  q.observed_max = hi;
  return q;
}

EB_CLONES_AVX2 float dot(const float* a, const float* b, size_t n) {
  float acc = 0.f;
#pragma omp simd reduction(+ : acc)
  for (size_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

// Mean square of every input channel of x / f (f empty: 1) over the rows.
std::vector<float> mean_squares(const float* x, size_t rows, size_t cols, const std::vector<float>& f) {
  std::vector<double> acc(cols, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) acc[c] += double(x[r * cols + c]) * x[r * cols + c];
  std::vector<float> ms(cols);
  for (size_t c = 0; c < cols; ++c) {
    const double fc = f.empty() ? 1.0 : f[c];
    ms[c] = static_cast<float>(acc[c] / std::max<size_t>(rows, 1) / (fc * fc));
  }
  return ms;
}

// Evenly spread picks of k out of n (all when k >= n).
std::vector<size_t> spread(size_t n, size_t k) {
  std::vector<size_t> r;
  if (k >= n) {
    for (size_t i = 0; i < n; ++i) r.push_back(i);
    return r;
  }
  for (size_t i = 0; i < k; ++i) r.push_back((2 * i + 1) * n / (2 * k));
  return r;
}

// SmoothQuant alpha search for a GEMM whose input our own LayerNorm quantizes (qkv,
// intermediate): sets c.input, c.input_factors, c.smoothing_alpha and c.weight.
void choose_smoothing(const float* x, size_t rows, ConvertedLinear& c) {
  const FloatLinear& l = *c.source;
  const size_t in = static_cast<size_t>(l.in), out = static_cast<size_t>(l.out);
  std::vector<float> act_absmax(in, 0.f), w_absmax(in, 0.f);
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < in; ++i) act_absmax[i] = std::max(act_absmax[i], std::fabs(x[r * in + i]));
  for (size_t o = 0; o < out; ++o)
    for (size_t i = 0; i < in; ++i) w_absmax[i] = std::max(w_absmax[i], std::fabs(l.weight[o * in + i]));

  // Output error of the int8 GEMM on sampled rows and output channels (bias left out: it is
  // exact up to int32 rounding), plus the rows with the largest values (special tokens), which
  // a spread sample may miss.
  std::vector<size_t> rs = spread(rows, kSmoothRows);
  const std::vector<size_t> os = spread(out, kSmoothOutputs);
  {
    std::vector<std::pair<float, size_t>> peak(rows);
    for (size_t r = 0; r < rows; ++r) {
      float m = 0.f;
      for (size_t i = 0; i < in; ++i) m = std::max(m, std::fabs(x[r * in + i]));
      peak[r] = {m, r};
    }
    const size_t k = std::min(rows, kGuardRows / 2);
    std::partial_sort(peak.begin(), peak.begin() + k, peak.end(), [](auto a, auto b) { return a.first > b.first; });
    for (size_t i = 0; i < k; ++i) rs.push_back(peak[i].second);
    std::sort(rs.begin(), rs.end());
    rs.erase(std::unique(rs.begin(), rs.end()), rs.end());
  }
  std::vector<float> y_ref(rs.size() * os.size());
  double ref_energy = 0;
  for (size_t a = 0; a < rs.size(); ++a)
    for (size_t b = 0; b < os.size(); ++b) {
      const float v = dot(x + rs[a] * in, l.weight.data() + os[b] * in, in);
      y_ref[a * os.size() + b] = v;
      ref_energy += double(v) * v;
    }
  if (!(ref_energy > 0)) ref_energy = 1;

  const std::vector<size_t> idx = sample_indices(rows * in);
  std::vector<float> xs(rows * in), sample(idx.size()), xq(rs.size() * in), wrow(in), wq(os.size() * in),
      y_q(rs.size() * os.size());
  FloatLinear sampled;  // the sampled output channels, weights filled per candidate
  sampled.in = l.in;
  sampled.out = static_cast<int>(os.size());
  sampled.bias.assign(os.size(), 0.f);
  auto evaluate = [&](const std::vector<float>& f, ActivationQuant* q_out) {
    // input x / f: full range, MSE clipping on a sample (guarding the largest rows)
    for (size_t r = 0; r < rows; ++r)
      for (size_t i = 0; i < in; ++i) xs[r * in + i] = f.empty() ? x[r * in + i] : x[r * in + i] / f[i];
    float lo, hi;
    observed_range(xs.data(), xs.size(), &lo, &hi);
    for (size_t i = 0; i < idx.size(); ++i) sample[i] = xs[idx[i]];
    ActivationQuant q = mse_affine_params(sample, lo, hi, guard_rows(xs.data(), rows, in), in);
    q.observed_min = lo;
    q.observed_max = hi;
    for (size_t a = 0; a < rs.size(); ++a) {
      std::copy(xs.begin() + rs[a] * in, xs.begin() + (rs[a] + 1) * in, xq.begin() + a * in);
      fake_quantize(xq.data() + a * in, in, q);
    }
    for (size_t b = 0; b < os.size(); ++b) {
      const float* w = l.weight.data() + os[b] * in;
      for (size_t i = 0; i < in; ++i) wrow[i] = f.empty() ? w[i] : w[i] * f[i];
      const RowQuantized rq = quantize_rows_symmetric(wrow.data(), 1, in);
      for (size_t i = 0; i < in; ++i) wq[b * in + i] = rq.q[i] * rq.scales[0];
    }
    sampled.weight.swap(wq);
    linear_forward(sampled, xq.data(), rs.size(), y_q.data());  // multithreaded
    sampled.weight.swap(wq);
    double e = 0;
    for (size_t i = 0; i < y_q.size(); ++i) {
      const double d = double(y_q[i]) - y_ref[i];
      e += d * d;
    }
    *q_out = q;
    return e / ref_energy;
  };

  std::vector<float> best_f;
  ActivationQuant best_q;
  double best_err = evaluate(best_f, &best_q) * kSmoothingGain;
  float best_alpha = 0.f;
  for (float alpha : kAlphas) {
    std::vector<float> f = smoothing_factors(act_absmax, w_absmax, alpha);
    ActivationQuant q;
    const double e = evaluate(f, &q);
    if (e < best_err) {
      best_err = e;
      best_f = std::move(f);
      best_q = q;
      best_alpha = alpha;
    }
  }
  c.input = best_q;
  c.input_factors = best_f;
  c.smoothing_alpha = best_f.empty() ? 0.f : best_alpha;
  std::vector<float> ms = mean_squares(x, rows, in, best_f);
  if (best_f.empty()) {
    c.weight = quantize_rows_weighted(l.weight.data(), out, in, ms.data());
  } else {
    std::vector<float> w(l.weight);
    for (size_t o = 0; o < out; ++o)
      for (size_t i = 0; i < in; ++i) w[o * in + i] *= best_f[i];
    c.weight = quantize_rows_weighted(w.data(), out, in, ms.data());
  }
}

}  // namespace

bool parse_scheme(const std::string& t, Scheme* out) {
  if (t == "auto" || t == "shipped") *out = Scheme::kAuto;
  else if (t == "minmax") *out = Scheme::kMinMax;
  else if (t == "per-tensor") *out = Scheme::kPerTensor;
  else return false;
  return true;
}

const char* scheme_name(Scheme s) {
  switch (s) {
    case Scheme::kAuto: return "auto";
    case Scheme::kMinMax: return "minmax";
    case Scheme::kPerTensor: return "per-tensor";
  }
  return "?";
}

const char* scheme_method_name(Scheme s) {
  switch (s) {
    case Scheme::kAuto: return "smoothquant+mse";
    case Scheme::kMinMax: return "minmax";
    case Scheme::kPerTensor: return "per-tensor";
  }
  return "?";
}

ActivationQuant mse_affine_params(const std::vector<float>& v, float lo, float hi, const std::vector<float>& guard,
                                  size_t cols) {
  const size_t grows = cols ? guard.size() / cols : 0;
  std::vector<double> energy(grows, 0.0);
  for (size_t r = 0; r < grows; ++r)
    for (size_t c = 0; c < cols; ++c) energy[r] += double(guard[r * cols + c]) * guard[r * cols + c];
  return search_range(
      lo, hi, [&](const ActivationQuant& q) { return affine_sq_error(v.data(), v.size(), q.scale, q.zero_point); },
      [&](const ActivationQuant& q) {
        double worst = 0;
        for (size_t r = 0; r < grows; ++r)
          if (energy[r] > 0)
            worst = std::max(worst, affine_sq_error(guard.data() + r * cols, cols, q.scale, q.zero_point) / energy[r]);
        return worst;
      });
}

ActivationQuant mse_affine_params_gelu(const std::vector<float>& v, float lo, float hi, const std::vector<float>& guard,
                                       size_t cols, HiddenAct act) {
  auto gelu = [act](float x) { return ffn_activation(act, x); };
  std::vector<float> g(v.size()), gg(guard.size());
  for (size_t i = 0; i < v.size(); ++i) g[i] = gelu(v[i]);
  for (size_t i = 0; i < guard.size(); ++i) gg[i] = gelu(guard[i]);
  const size_t grows = cols ? guard.size() / cols : 0;
  std::vector<double> energy(grows, 0.0);
  for (size_t r = 0; r < grows; ++r)
    for (size_t c = 0; c < cols; ++c) energy[r] += double(gg[r * cols + c]) * gg[r * cols + c];
  float lut[256];
  auto sq_err = [&](const ActivationQuant& q, const float* x, const float* gx, size_t n) {
    const float inv = 1.f / q.scale;
    double e = 0;
    for (size_t i = 0; i < n; ++i) {
      const int k = quantize_one(x[i], inv, q.zero_point);
      const float d = lut[k + 128] - gx[i];
      e += double(d) * d;
    }
    return e;
  };
  return search_range(
      lo, hi,
      [&](const ActivationQuant& q) {
        for (int k = -128; k < 128; ++k) lut[k + 128] = gelu((k - q.zero_point) * q.scale);
        return sq_err(q, v.data(), g.data(), v.size());
      },
      [&](const ActivationQuant& q) {  // called right after the error, with the same table
        double worst = 0;
        for (size_t r = 0; r < grows; ++r)
          if (energy[r] > 0) worst = std::max(worst, sq_err(q, guard.data() + r * cols, gg.data() + r * cols, cols) / energy[r]);
        return worst;
      },
      /*lower_only=*/true);
}

std::vector<float> smoothing_factors(const std::vector<float>& a, const std::vector<float>& w, float alpha) {
  const size_t n = a.size();
  float amax = 0.f, wmax = 0.f;
  for (size_t i = 0; i < n; ++i) amax = std::max(amax, a[i]), wmax = std::max(wmax, w[i]);
  std::vector<float> f(n);
  double log_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const double ai = std::max<double>(a[i], 1e-6 * amax + 1e-30), wi = std::max<double>(w[i], 1e-6 * wmax + 1e-30);
    const double lf = alpha * std::log(ai) - (1.0 - alpha) * std::log(wi);
    f[i] = static_cast<float>(lf);
    log_sum += lf;
  }
  const double mean = n ? log_sum / n : 0;
  const double lim = 12 * std::log(2.0);
  for (float& v : f) v = static_cast<float>(std::exp(std::clamp(v - mean, -lim, lim)));
  return f;
}

void choose_gemm_params(const FloatBert& m, GemmKind kind, Scheme scheme, const float* x, const float* y, size_t rows,
                        ConvertedLinear& c) {
  const FloatLinear& l = *c.source;
  const size_t in = static_cast<size_t>(l.in), out = static_cast<size_t>(l.out);
  c.input_factors.clear();
  c.smoothing_alpha = 0.f;
  // ---- input
  const bool smoothable = scheme == Scheme::kAuto && c.int8 && (kind == GemmKind::kQkv || kind == GemmKind::kIntermediate);
  if (smoothable) {
    choose_smoothing(x, rows, c);
  } else {
    if (scheme == Scheme::kAuto) {
      c.input = mse_params_of(x, rows, in);
    } else {
      c.input = minmax_params(x, rows * in);
    }
    if (c.int8) {
      std::vector<float> ms = mean_squares(x, rows, in, {});
      c.weight = quantize_rows_weighted(l.weight.data(), out, in, scheme == Scheme::kAuto ? ms.data() : nullptr);
    }
  }
  if (!c.int8) c.weight = RowQuantized{};

  // ---- output
  float ylo, yhi;
  observed_range(y, rows * out, &ylo, &yhi);
  std::vector<float> ch_absmax(out, 0.f);
  for (size_t r = 0; r < rows; ++r)
    for (size_t o = 0; o < out; ++o) ch_absmax[o] = std::max(ch_absmax[o], std::fabs(y[r * out + o]));
  switch (kind) {
    case GemmKind::kQkv: {
      // Symmetric; one scale per head within each of the Q, K, V sections (the attention core
      // needs a single scale per head slice; the per-channel vector folds into XNNPACK's
      // multipliers). Per-tensor scheme: one scale for all.
      const int d = m.head_dim();
      const int section_start[3] = {0, m.q_width(), m.q_width() + m.kv_width()};
      const int section_heads[3] = {m.config.num_attention_heads, m.kv_heads(), m.kv_heads()};
      c.output = ActivationQuant{};
      c.output.channel_scales.assign(out, 1.f);
      if (scheme == Scheme::kPerTensor) {
        const float a = *std::max_element(ch_absmax.begin(), ch_absmax.end());
        std::fill(c.output.channel_scales.begin(), c.output.channel_scales.end(), symmetric_scale(a));
        break;
      }
      for (int sec = 0; sec < 3; ++sec)
        for (int h = 0; h < section_heads[sec]; ++h) {
          const int first = section_start[sec] + h * d;
          float a = 0;
          for (int i = 0; i < d; ++i) a = std::max(a, ch_absmax[first + i]);
          for (int i = 0; i < d; ++i) c.output.channel_scales[first + i] = symmetric_scale(a);
        }
      break;
    }
    case GemmKind::kIntermediate:
      // Feeds the 256-entry GELU table: one affine scale. Gated FFNs (nomic-bert): both halves
      // (gate and up) through one scale, their observed range (the gated kernel's table reads
      // the gate, the up half is a plain factor: no activation-shaped clipping).
      if (m.gated_ffn) {
        c.output = affine_from_range(ylo, yhi);
      } else if (scheme == Scheme::kAuto) {
        const std::vector<size_t> idx = sample_indices(rows * out);
        std::vector<float> v(idx.size());
        for (size_t i = 0; i < idx.size(); ++i) v[i] = y[idx[i]];
        c.output = mse_affine_params_gelu(v, ylo, yhi, guard_rows(y, rows, out, true), out, m.activation());
      } else {
        c.output = affine_from_range(ylo, yhi);
      }
      break;
    case GemmKind::kAttentionOutput:
    case GemmKind::kOutput:
      // Dequantized into the float residual stream: one scale per output channel is free.
      if (scheme == Scheme::kPerTensor) {
        c.output = affine_from_range(ylo, yhi);
      } else {
        c.output = ActivationQuant{};
        c.output.channel_scales.resize(out);
        // auto: headroom (saturating a residual-stream channel is never harmless).
        const float in_abs = std::max(std::fabs((-128 - c.input.zero_point) * c.input.scale),
                                      std::fabs((127 - c.input.zero_point) * c.input.scale));
        for (size_t i = 0; i < out; ++i) {
          float a = ch_absmax[i];
          if (scheme == Scheme::kAuto) {
            // A channel's calibration maximum is an unstable statistic (new tokens exceed it);
            // its mean and standard deviation are not: cover |mean| + kTailSigmas * std too.
            double m = 0, v = 0;
            for (size_t r = 0; r < rows; ++r) m += y[r * out + i];
            m /= static_cast<double>(std::max<size_t>(rows, 1));
            for (size_t r = 0; r < rows; ++r) v += (y[r * out + i] - m) * (y[r * out + i] - m);
            const double tail = std::fabs(m) + kTailSigmas * std::sqrt(v / static_cast<double>(std::max<size_t>(rows, 1)));
            // ... and |bias| + (largest |weight|) x (input range): one input unit at full range,
            // e.g. a neuron that fires only for [CLS], which calibration inputs may never show.
            float wmax = 0.f;
            const float* w = l.weight.data() + i * in;
            for (size_t j = 0; j < in; ++j) wmax = std::max(wmax, std::fabs(w[j]));
            const float bound = std::max(static_cast<float>(tail), (l.bias.empty() ? 0.f : std::fabs(l.bias[i])) + wmax * in_abs);
            if (bound > a) {
              a = bound;
              c.output.headroom = true;
            }
          }
          c.output.channel_scales[i] = symmetric_scale(a);
        }
      }
      break;
  }
  c.output.observed_min = ylo;
  c.output.observed_max = yhi;
  if (!c.int8) return;
  // XNNPACK requires input_scale * kernel_scale / output_scale < 256 per channel.
  if (c.output.channel_scales.empty()) {
    float wmax = 0.f;
    for (float s : c.weight.scales) wmax = std::max(wmax, s);
    c.output.scale = std::max(c.output.scale, c.input.scale * wmax / 255.f);
  } else {
    for (size_t i = 0; i < out; ++i) {
      const float floor = c.input.scale * c.weight.scales[i] / 255.f;
      if (c.output.channel_scales[i] < floor) c.output.channel_scales[i] = floor;
    }
  }
}

}  // namespace edgebert::convert
