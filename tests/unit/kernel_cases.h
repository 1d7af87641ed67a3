// SPDX-License-Identifier: Apache-2.0
// Shared by the kernel tests: the int8 attention test case (a head inside a QKV buffer), its
// double-precision reference (written independently of the kernels), the reference int8
// quantization, and the kernels' argument block for a case.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/attention.h"

namespace kernel_cases {
namespace kn = edgebert::kernels;

inline int8_t ref_quant(double v, int32_t zp) {  // v already divided by the scale
  if (std::isnan(v)) return -128;
  double r = std::nearbyint(std::min(std::max(v, -1e9), 1e9)) + zp;  // half to even
  r = std::min(127.0, std::max(-128.0, r));
  return static_cast<int8_t>(r);
}

struct S8Case {
  int n, hd;
  int heads = 3, head = 1;  // layout: rows of 3*hidden, hidden = heads*hd
  std::vector<int8_t> qkv;
  std::vector<uint8_t> mask;  // empty = no mask
  float q_scale, k_scale, v_scale, ctx_scale;
  int32_t ctx_zp;
  size_t hidden() const { return static_cast<size_t>(heads) * hd; }
  size_t stride() const { return 3 * hidden(); }
  const int8_t* q() const { return qkv.data() + head * hd; }
  const int8_t* k() const { return qkv.data() + hidden() + head * hd; }
  const int8_t* v() const { return qkv.data() + 2 * hidden() + head * hd; }
};

// window >= 0: row i attends only to keys [i - window, i + window] (and the mask). A row that
// attends no key gets HF's result (its additive mask is finfo.min everywhere): the mean of all n
// value rows.
// Keys j of row i with i - j <= before and j - i <= after (-1: no bound on that side).
inline std::vector<int8_t> ref_attention_s8(const S8Case& c, int before = -1, int after = -1) {
  const int n = c.n, hd = c.hd;
  std::vector<int8_t> out(static_cast<size_t>(n) * hd);
  const size_t st = c.stride();
  const double sscale = double(c.q_scale) * double(c.k_scale) / std::sqrt(double(hd));
  std::vector<double> s(n);
  std::vector<int> pq(n);
  for (int i = 0; i < n; ++i) {
    bool any = false;
    double mx = -std::numeric_limits<double>::infinity();
    auto attends = [&](int j) {
      return (c.mask.empty() || c.mask[j]) && (before < 0 || i - j <= before) && (after < 0 || j - i <= after);
    };
    for (int j = 0; j < n; ++j) {
      if (!attends(j)) continue;
      any = true;
      long long acc = 0;
      for (int d = 0; d < hd; ++d) acc += int(c.q()[i * st + d]) * int(c.k()[j * st + d]);
      s[j] = double(acc) * sscale;
      mx = std::max(mx, s[j]);
    }
    if (!any) {  // HF: every score finfo.min, a uniform softmax over all n keys: the mean value row
      for (int d = 0; d < hd; ++d) {
        long long acc = 0;
        for (int j = 0; j < n; ++j) acc += int(c.v()[j * st + d]);
        out[size_t(i) * hd + d] = ref_quant(double(acc) * double(c.v_scale) / n / c.ctx_scale, c.ctx_zp);
      }
      continue;
    }
    // unnormalized exponentials in units of 1/127 of the row maximum, normalized by their sum
    long long prob_sum = 0;
    for (int j = 0; j < n; ++j) {
      pq[j] = attends(j) ? int(std::nearbyint(std::exp(s[j] - mx) * 127.0)) : 0;
      prob_sum += pq[j];
    }
    for (int d = 0; d < hd; ++d) {
      long long acc = 0;
      for (int j = 0; j < n; ++j) acc += pq[j] * int(c.v()[j * st + d]);
      const double x = double(acc) * double(c.v_scale) / double(prob_sum);
      out[size_t(i) * hd + d] = ref_quant(x / c.ctx_scale, c.ctx_zp);
    }
  }
  return out;
}

inline S8Case make_s8_case(std::mt19937& rng, int n, int hd, const char* mask_kind, float score_std, int32_t zp) {
  S8Case c;
  c.n = n;
  c.hd = hd;
  c.qkv.resize(size_t(n) * c.stride());
  std::uniform_int_distribution<int> u8(-128, 127);
  for (auto& x : c.qkv) x = static_cast<int8_t>(u8(rng));
  // std of an int8 dot product over hd uniform entries ~ sqrt(hd) * 5461; the 1/sqrt(hd) in the
  // score scale cancels the sqrt(hd).
  const float qk = std::sqrt(score_std / 5461.0f);
  c.q_scale = qk;
  c.k_scale = qk * 1.3f;
  c.v_scale = 0.02f;
  c.ctx_scale = 0.02f * 0.35f;
  c.ctx_zp = zp;
  std::string mk = mask_kind;
  if (mk == "random") {
    c.mask.resize(n);
    std::bernoulli_distribution keep(0.7);
    for (auto& m : c.mask) m = keep(rng) ? 1 : 0;
    c.mask[rng() % n] = 1;
  } else if (mk == "trailing") {
    c.mask.assign(n, 1);
    for (int j = (n * 2) / 3 + 1; j < n; ++j) c.mask[j] = 0;
  } else if (mk == "all_masked") {
    c.mask.assign(n, 0);
  } else if (mk == "one_valid") {
    c.mask.assign(n, 0);
    c.mask[n / 2] = 1;
  }
  return c;
}

// A head of case c: context row i at ctx + i * ctx_stride; scratch left for the caller.
inline kn::AttentionHeadS8 s8_args(const S8Case& c, int8_t* packed, int8_t* ctx, size_t ctx_stride) {
  kn::AttentionHeadS8 a{};
  a.q = c.q();
  a.k = c.k();
  a.v = c.v();
  a.qkv_stride = c.stride();
  a.n = c.n;
  a.head_dim = c.hd;
  a.q_scale = c.q_scale;
  a.k_scale = c.k_scale;
  a.v_scale = c.v_scale;
  a.key_mask = c.mask.empty() ? nullptr : c.mask.data();
  a.packed = packed;
  a.context = ctx;
  a.context_stride = ctx_stride;
  a.context_scale = c.ctx_scale;
  a.context_zero_point = c.ctx_zp;
  return a;
}

}  // namespace kernel_cases
