// SPDX-License-Identifier: Apache-2.0
// int4_policy.cpp: per-GEMM int4 cost on the calibration outputs and the budgeted choice.
#include "converter/int4_policy.h"

#include <map>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "converter/gptq.h"

namespace edgebert::convert {
namespace {

// Per-token cosine statistics of `h` against `ref` (both [tokens, H]); the lowest cosine is taken
// over the tokens `floored` marks.
struct CosineStats {
  double mean_cost = 0;  // mean 1 - cosine
  double min_cosine = 1;
  size_t worst_token = 0;            // where min_cosine is
  std::vector<double> token_costs;  // 1 - cosine per token
};

CosineStats compare(const std::vector<float>& h, const std::vector<float>& ref, int H, const std::vector<char>& floored) {
  CosineStats s;
  const size_t tokens = ref.size() / static_cast<size_t>(H);
  for (size_t t = 0; t < tokens; ++t) {
    double dot = 0, a = 0, b = 0;
    for (int c = 0; c < H; ++c) {
      const double x = h[t * H + c], y = ref[t * H + c];
      dot += x * y;
      a += x * x;
      b += y * y;
    }
    const double cosine = a > 0 && b > 0 ? dot / std::sqrt(a * b) : (a == b ? 1.0 : 0.0);
    s.mean_cost += 1.0 - cosine;
    s.token_costs.push_back(1.0 - cosine);
    if (floored[t] && cosine < s.min_cosine) {
      s.min_cosine = cosine;
      s.worst_token = t;
    }
  }
  if (tokens) s.mean_cost /= static_cast<double>(tokens);
  return s;
}

// W[:, i] * f[i] when the GEMM has SmoothQuant factors (what the file stores), else W.
std::vector<float> stored_weights(const FloatLinear& l, const ConvertedLinear& c) {
  std::vector<float> w = l.weight;
  const std::vector<float>& f = c.input_factors;
  if (!f.empty())
    for (int o = 0; o < l.out; ++o)
      for (int i = 0; i < l.in; ++i) w[static_cast<size_t>(o) * l.in + i] *= f[i];
  return w;
}

// Collects each int8 GEMM's input Hessian H = X^T X (of x / f with SmoothQuant factors: the
// inputs of the stored W * f) and GPTQ-rounds its weights right away, so only one Hessian exists
// at a time. The float reference calls each GEMM once per batch.
class GptqObserver : public GemmObserver {
 public:
  GptqObserver(const std::vector<std::array<ConvertedLinear, kGemmsPerLayer>>& layers, const Int4Options& o)
      : layers_(layers), options_(o) {}
  void observe(int layer, GemmKind kind, const FloatLinear& l, const float* x, const float*, size_t rows) override {
    const ConvertedLinear& c = layers_[layer][static_cast<int>(kind)];
    if (!c.int8 || rows == 0) return;
    const std::vector<float>& f = c.input_factors;
    // H = Xs^T Xs through the float GEMM: y[in, in] = Xs^T (Xs^T)^T.
    FloatLinear t;
    t.in = static_cast<int>(rows);
    t.out = l.in;
    t.weight.resize(rows * static_cast<size_t>(l.in));
    for (size_t r = 0; r < rows; ++r)
      for (int i = 0; i < l.in; ++i)
        t.weight[static_cast<size_t>(i) * rows + r] = x[r * l.in + i] / (f.empty() ? 1.f : f[i]);
    std::vector<float> hf(static_cast<size_t>(l.in) * l.in);
    linear_forward(t, t.weight.data(), static_cast<size_t>(l.in), hf.data());
    std::vector<double> h(hf.begin(), hf.end());
    const std::vector<float> w = stored_weights(l, c);
    quantized_[{layer, static_cast<int>(kind)}] =
        gptq_quantize(w.data(), static_cast<size_t>(l.out), l.in, int4::fit_block(l.in, options_.block), std::move(h));
  }
  std::map<std::pair<int, int>, int4::Quantized>& quantized() { return quantized_; }

 private:
  const std::vector<std::array<ConvertedLinear, kGemmsPerLayer>>& layers_;
  const Int4Options& options_;
  std::map<std::pair<int, int>, int4::Quantized> quantized_;
};

// The float weights int4 `q` stands for (dequantized, divided by the factors again).
std::vector<float> effective_weights(const FloatLinear& l, const ConvertedLinear& c, const int4::Quantized& q) {
  std::vector<float> w(l.weight.size());
  int4::dequantize(q.packed.data(), q.scales.data(), static_cast<size_t>(l.out), l.in, q.block, w.data());
  const std::vector<float>& f = c.input_factors;
  if (!f.empty())
    for (int o = 0; o < l.out; ++o)
      for (int i = 0; i < l.in; ++i) w[static_cast<size_t>(o) * l.in + i] /= f[i];
  return w;
}

}  // namespace

Int4Rounding effective_rounding(const Int4Options& o, const TokenBatch& probe) {
  // the real BERT-Tiny's lowest per-token cosine on its real inputs was 0.931 with GPTQ fitted to
  // synthetic embedding outputs, 0.991 rounded to nearest (docs/int4.md)
  return o.rounding == Int4Rounding::kBest && probe.ids.empty() ? Int4Rounding::kNearest : o.rounding;
}

Int4Policy choose_int4(const FloatBert& m, const TokenBatch& probe, const TokenBatch& hessian_inputs, const Int4Options& o,
                       ConvertedModel& cm) {
  std::vector<std::array<ConvertedLinear, kGemmsPerLayer>>& layers = cm.layers;
  if (o.block != 0 && (o.block < int4::kMinBlock || o.block > int4::kMaxBlock || o.block % int4::kMinBlock != 0))
    throw std::runtime_error("--int4-block " + std::to_string(o.block) + " must be 0 (channel-wise) or a multiple of " +
                             std::to_string(int4::kMinBlock) + " in " + std::to_string(int4::kMinBlock) + ".." +
                             std::to_string(int4::kMaxBlock));
  if (!(o.budget >= 0) || !std::isfinite(o.budget))
    throw std::runtime_error("--int4-budget must be a non-negative number");
  const int H = m.config.hidden_size;
  const int E = m.embedding_size > 0 ? m.embedding_size : H;
  const size_t V = static_cast<size_t>(m.config.vocab_size);
  Int4Policy policy;
  policy.probe_tokens = probe.total_tokens();
  policy.rounding = effective_rounding(o, probe);
  GptqObserver gptq(layers, o);
  if (policy.rounding != Int4Rounding::kNearest) {
    reference_encoder(m, hessian_inputs, &gptq);
    policy.hessian_tokens = hessian_inputs.total_tokens();
  }
  const std::vector<float> ref = reference_encoder(m, probe, nullptr);
  // The floor holds on the probe's sequences of 2 tokens or more: a tokenizer never makes fewer
  // (one special token at least, plus one for any text), while a lone token, with attention over
  // itself only, is the most sensitive input there is (BERT-base: 0.98972 with every tensor int4,
  // 0.99264 for the next sequence; docs/int4.md). Probes of single tokens only are all floored.
  const size_t T = probe.total_tokens();
  std::vector<char> floored(T, 0);
  for (size_t q = 0; q < probe.num_sequences(); ++q)
    if (probe.starts[q + 1] - probe.starts[q] >= 2)
      std::fill(floored.begin() + static_cast<std::ptrdiff_t>(probe.starts[q]),
                floored.begin() + static_cast<std::ptrdiff_t>(probe.starts[q + 1]), 1);
  if (std::find(floored.begin(), floored.end(), 1) == floored.end()) std::fill(floored.begin(), floored.end(), 1);
  FloatBert work = m;  // its weights are swapped for int4 ones while they are measured
  struct Candidate {
    size_t layer;  // SIZE_MAX: the word embedding table
    int kind;
    int4::Quantized q;
    std::vector<double> token_costs;  // 1 - cosine per probe token with this tensor alone int4
    double saved = 0;                 // int8 bytes - int4 bytes
  };
  std::vector<Candidate> cands;
  // `effective` (the float weights an int4 choice stands for) swapped into `target`, measured, and
  // swapped back.
  auto measure = [&](std::vector<float>& target, std::vector<float>& effective) {
    std::swap(target, effective);
    CosineStats s = compare(reference_encoder(work, probe, nullptr), ref, H, floored);
    std::swap(target, effective);
    return s;
  };
  auto add = [&](Candidate cand, Int4PolicyRow row, CosineStats s) {
    row.block = cand.q.block;
    row.int4_bytes = cand.q.packed.size() + cand.q.scales.size() * sizeof(uint16_t);
    row.cost = s.mean_cost;
    cand.token_costs = std::move(s.token_costs);
    cand.saved = row.int8_bytes > row.int4_bytes ? static_cast<double>(row.int8_bytes - row.int4_bytes) : 0.0;
    policy.rows.push_back(row);
    cands.push_back(std::move(cand));
  };
  cm.word_int4 = false;
  // The word table of a masked-LM model is also its tied decoder's weights, which stay int8.
  if (m.has_embeddings && !probe.ids.empty() && m.task != Task::kMaskedLm) {
    Candidate cand{SIZE_MAX, 0, int4::quantize(m.word_embeddings.data(), V, E, int4::fit_block(E, o.block)), {}, 0};
    std::vector<float> effective(m.word_embeddings.size());
    int4::dequantize(cand.q.packed.data(), cand.q.scales.data(), V, E, cand.q.block, effective.data());
    Int4PolicyRow row;
    row.name = "embeddings.word";
    row.rounding = "rtn";
    row.int8_bytes = V * static_cast<size_t>(E) + V * sizeof(float);
    add(std::move(cand), row, measure(work.word_embeddings, effective));
  }
  for (size_t l = 0; l < layers.size(); ++l)
    for (int k = 0; k < kGemmsPerLayer; ++k) {
      ConvertedLinear& c = layers[l][k];
      c.int4 = false;
      if (!c.int8) continue;
      const FloatLinear& src = *c.source;
      FloatLinear& target = work.layers[l].gemm(static_cast<GemmKind>(k));
      Int4PolicyRow row;
      row.name = src.name;
      row.int8_bytes = static_cast<size_t>(src.out) * src.in + src.out * sizeof(float);
      // The roundings this policy tries, each measured; the cheaper on the probe is kept.
      std::vector<std::pair<const char*, int4::Quantized>> tries;
      auto done = gptq.quantized().find({static_cast<int>(l), k});
      if (policy.rounding != Int4Rounding::kGptq || done == gptq.quantized().end()) {
        const std::vector<float> w = stored_weights(src, c);
        tries.emplace_back("rtn", int4::quantize(w.data(), static_cast<size_t>(src.out), src.in, int4::fit_block(src.in, o.block)));
      }
      if (done != gptq.quantized().end()) tries.emplace_back("gptq", std::move(done->second));
      CosineStats best;
      int best_i = -1;
      for (size_t t = 0; t < tries.size(); ++t) {
        std::vector<float> effective = effective_weights(src, c, tries[t].second);
        CosineStats s = measure(target.weight, effective);
        if (best_i < 0 || s.mean_cost < best.mean_cost) {
          best = std::move(s);
          best_i = static_cast<int>(t);
        }
      }
      row.rounding = tries[best_i].first;
      add(Candidate{l, k, std::move(tries[best_i].second), {}, 0}, row, std::move(best));
    }

  // The choice: most bytes saved per unit of cost first. A tensor is taken while the summed mean
  // cost stays within the budget and the predicted cost of every probe token (the sum of the
  // taken tensors' costs at that token) stays within 1 - min_cosine; one that does not fit is
  // skipped and cheaper ones are still tried.
  auto efficiency = [&](size_t i) { return policy.rows[i].cost / std::max(cands[i].saved, 1.0); };
  std::vector<size_t> order(cands.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return efficiency(a) < efficiency(b); });
  const double token_limit = o.min_cosine > 0 ? 1.0 - o.min_cosine : 2.0;
  std::vector<double> predicted(T, 0.0);
  double spent = 0;
  for (size_t i : order) {
    if (cands[i].saved <= 0 || spent + policy.rows[i].cost > o.budget) continue;
    bool fits = true;
    for (size_t t = 0; t < T && fits; ++t) fits = !floored[t] || predicted[t] + cands[i].token_costs[t] <= token_limit;
    if (!fits) continue;
    spent += policy.rows[i].cost;
    for (size_t t = 0; t < T; ++t) predicted[t] += cands[i].token_costs[t];
    policy.rows[i].int4 = true;
  }
  // The chosen tensors' effective weights into `work`, then the combination measured: while its
  // lowest per-token cosine is below the floor, the chosen tensor that costs the most at the worst
  // token per byte it saves goes back to int8.
  auto set_int4 = [&](size_t i, bool on) {
    Candidate& cand = cands[i];
    if (cand.layer == SIZE_MAX) {
      if (on)
        int4::dequantize(cand.q.packed.data(), cand.q.scales.data(), V, E, cand.q.block, work.word_embeddings.data());
      else
        work.word_embeddings = m.word_embeddings;
      return;
    }
    const ConvertedLinear& c = layers[cand.layer][cand.kind];
    work.layers[cand.layer].gemm(static_cast<GemmKind>(cand.kind)).weight =
        on ? effective_weights(*c.source, c, cand.q) : c.source->weight;
  };
  std::vector<size_t> chosen;
  for (size_t i : order)
    if (policy.rows[i].int4) {
      chosen.push_back(i);
      set_int4(i, true);
    }
  while (!chosen.empty()) {
    const CosineStats all = compare(reference_encoder(work, probe, nullptr), ref, H, floored);
    policy.combined_cost = all.mean_cost;
    policy.combined_min_cosine = all.min_cosine;
    if (all.min_cosine >= o.min_cosine) break;
    size_t back = 0;
    for (size_t j = 1; j < chosen.size(); ++j) {
      const size_t a = chosen[j], b = chosen[back];
      if (cands[a].token_costs[all.worst_token] / std::max(cands[a].saved, 1.0) >
          cands[b].token_costs[all.worst_token] / std::max(cands[b].saved, 1.0))
        back = j;
    }
    policy.rows[chosen[back]].int4 = false;
    set_int4(chosen[back], false);
    chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(back));
    ++policy.backed_off;
  }
  if (chosen.empty()) {
    policy.combined_cost = 0;
    policy.combined_min_cosine = 1;
  }
  for (size_t i : chosen) {
    Candidate& cand = cands[i];
    if (cand.layer == SIZE_MAX) {
      cm.word_int4 = true;
      cm.word_embeddings4 = std::move(cand.q);
      continue;
    }
    ConvertedLinear& c = layers[cand.layer][cand.kind];
    c.int4 = true;
    c.weight4 = std::move(cand.q);
  }
  return policy;
}

std::string format_int4_report(const Int4Policy& p, const Int4Options& o) {
  char line[320];
  const std::string gptq = "GPTQ rounding on " + std::to_string(p.hessian_tokens) + " calibration tokens";
  const std::string rounding_text =
      p.rounding == Int4Rounding::kNearest
          ? std::string(o.rounding == Int4Rounding::kBest ? "rounded to nearest (best: calibration is synthetic embedding outputs)"
                                                          : "rounded to nearest")
      : p.rounding == Int4Rounding::kGptq ? gptq
                                          : "the cheaper of round-to-nearest and " + gptq;
  std::snprintf(line, sizeof line,
                "int4 policy (budget %.4g of summed mean 1-cosine of the encoder output, weights alone, %zu probe tokens; "
                "block %d, %s; floor: lowest per-token cosine %.4g)\n",
                o.budget, p.probe_tokens, o.block,
                rounding_text.c_str(),
                o.min_cosine);
  std::string s = line;
  s += "GEMM or table                      block  cost(1-cos)  weights  int8 bytes  int4 bytes  rounding\n";
  size_t b8 = 0, b_out = 0;
  int n4 = 0;
  for (const auto& r : p.rows) {
    std::snprintf(line, sizeof line, "%-34s %5d  %11.3e  %-7s  %10zu  %10zu  %s\n", r.name.c_str(), r.block, r.cost,
                  r.int4 ? "int4" : "int8", r.int8_bytes, r.int4_bytes, r.rounding);
    s += line;
    b8 += r.int8_bytes;
    b_out += r.int4 ? r.int4_bytes : r.int8_bytes;
    n4 += r.int4 ? 1 : 0;
  }
  std::snprintf(line, sizeof line,
                "int4: %d of %zu candidates; their weights %zu -> %zu bytes; all chosen together: mean 1-cosine "
                "%.3e, lowest per-token cosine %.5f (weights alone)\n",
                n4, p.rows.size(), b8, b_out, p.combined_cost, p.combined_min_cosine);
  s += line;
  if (p.backed_off) {
    std::snprintf(line, sizeof line,
                  "int4: %d tensor(s) chosen within the budget went back to int8 to keep the measured lowest per-token cosine >= %.4g\n",
                  p.backed_off, o.min_cosine);
    s += line;
  }
  return s;
}

}  // namespace edgebert::convert
