// SPDX-License-Identifier: Apache-2.0
// The int8 sliding-window attention rows (attention_window.h) as one inline body, compiled by the
// portable kernel (head_dim from the arguments) and by the AVX2 one (common head dims as
// compile-time constants, so the int8 dot products and P.V sums vectorize). Integer sums are exact
// in any order and every float operation is the same scalar one in the same order (-ffp-contract
// off), so both give the same bytes. Also the band bookkeeping of the blocked variants (AVX-512,
// NEON), below. Everything here is static (internal linkage): a copy compiled with AVX2 / AVX-512
// flags must never be what the linker keeps for the portable kernel (as numerics.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_window.h"
#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {

template <int kHeadDim>
static inline void attention_s8_rows_window_body(const AttentionHeadS8& a, int window, int row_begin, int row_end) {
  const int n = a.n, hd = kHeadDim > 0 ? kHeadDim : a.head_dim;  // a constant lets the compiler vectorize
  if (n <= 0 || hd <= 0 || row_begin >= row_end || window < 0) return;
  const size_t stride = a.qkv_stride;
  const int32_t zp = a.context_zero_point;
  const float score_scale = detail::attention_score_scale(a.q_scale, a.k_scale, hd);
  const float lo = -128.0f - static_cast<float>(zp), hi = 127.0f - static_cast<float>(zp);
  for (int i = row_begin; i < row_end; ++i) {
    float* s = a.scores + static_cast<size_t>(i - row_begin) * n;
    uint8_t* p = a.probs + static_cast<size_t>(i - row_begin) * n;
    int8_t* ctx = a.context + static_cast<size_t>(i) * a.context_stride;
    const int j0 = i - window > 0 ? i - window : 0;
    const int j1 = i + window + 1 < n ? i + window + 1 : n;  // keys [j0, j1)
    const int8_t* qi = a.q + static_cast<size_t>(i) * stride;
    float m = -__builtin_inff();
    int valid = 0;
    for (int j = j0; j < j1; ++j) {
      if (a.key_mask != nullptr && a.key_mask[j] == 0) {
        s[j - j0] = -__builtin_inff();
        continue;
      }
      const int8_t* kj = a.k + static_cast<size_t>(j) * stride;
      int32_t acc = 0;
      for (int d = 0; d < hd; ++d) acc += static_cast<int32_t>(qi[d]) * static_cast<int32_t>(kj[d]);
      s[j - j0] = static_cast<float>(acc) * score_scale;
      m = s[j - j0] > m ? s[j - j0] : m;
      ++valid;
    }
    if (valid == 0) {
      attention_s8_fill_zero_point(a, i, i + 1);
      continue;
    }
    int32_t prob_sum = 0;
    for (int j = 0; j < j1 - j0; ++j) {
      const float e = detail::exp_approx(s[j] - m);  // masked keys: exp(-inf) = 0
      const float v = detail::clamp_hi(e * detail::attention_prob_multiplier(), detail::kAttentionProbLevels);
      p[j] = static_cast<uint8_t>(static_cast<int32_t>(detail::round_half_even(v)));
      prob_sum += p[j];
    }
    const float out_mult = detail::attention_context_multiplier(a.v_scale, a.context_scale, prob_sum);
    constexpr int kChunk = 256;  // channels per pass: acc stays in registers / L1
    int32_t acc[kChunk];
    for (int d0 = 0; d0 < hd; d0 += kChunk) {
      const int cnt = hd - d0 < kChunk ? hd - d0 : kChunk;
      for (int d = 0; d < cnt; ++d) acc[d] = 0;
      for (int j = j0; j < j1; ++j) {  // V rows in order (auto-vectorized widening multiply-adds)
        const int32_t pj = p[j - j0];
        if (pj == 0) continue;
        const int8_t* vj = a.v + static_cast<size_t>(j) * stride + d0;
        for (int d = 0; d < cnt; ++d) acc[d] += pj * static_cast<int32_t>(vj[d]);
      }
      for (int d = 0; d < cnt; ++d)
        ctx[d0 + d] = detail::quantize_value_s8(static_cast<float>(acc[d]) * out_mult, lo, hi, zp);
    }
  }
}

// ---- The blocked band variants (AVX-512, NEON): every key's V packed once in groups of 4 keys
// from key 0 (padding keys too: the band is in token positions, the mask is applied per row).
// A block of query rows [i0, i0 + rows) reads the keys [lo, hi); each row's probabilities are laid
// out from `base` (the first key of lo's group), zero outside the row's window, so that P.V runs
// over the full groups [lo / 4, g_end) and, when `tail`, the partial last group (n % 4 keys).
// The pack step: the variant's full-attention pack of every key, padding keys included.
template <class Pack>
static inline void pack_window_all_keys(const AttentionHeadS8& a, Pack pack) {
  AttentionHeadS8 all = a;
  all.key_mask = nullptr;
  pack(all);
}

// True when rows_window has nothing to do, or when the head is wider than the variant packs
// (max_head_dim: its pack step skipped it), which the portable body then computes in place.
static inline bool window_rows_done_elsewhere(const AttentionHeadS8& a, int window, int row_begin, int row_end,
                                              int max_head_dim) {
  if (a.n <= 0 || a.head_dim <= 0 || row_begin >= row_end || window < 0) return true;
  if (a.head_dim <= max_head_dim) return false;
  attention_s8_rows_window_portable(a, window, row_begin, row_end);
  return true;
}

struct WindowBand {
  int lo, hi, base, g_begin, g_end, plen;
  bool tail;
};

static inline WindowBand window_band(int i0, int rows, int window, int n) {
  WindowBand b;
  b.lo = i0 - window > 0 ? i0 - window : 0;
  b.hi = i0 + rows + window < n ? i0 + rows + window : n;
  b.base = 4 * (b.lo / 4);
  b.g_begin = b.lo / 4;
  const int full_groups = n / 4;
  b.g_end = (b.hi + 3) / 4 < full_groups ? (b.hi + 3) / 4 : full_groups;
  if (b.g_end < b.g_begin) b.g_end = b.g_begin;
  b.tail = b.hi > 4 * full_groups;
  b.plen = (b.tail ? n : 4 * b.g_end) - b.base;
  return b;
}

// Row i of a band block: its scores s (at key index, written for [band.base or band.lo, band.hi))
// become the row's probabilities prow[j - band.base] (zero outside its window and at padding
// keys) through row_max(s, len) and softmax(s, len, max, out) -> sum, the variant's vector
// versions of the portable steps. Returns false when the window holds only padding (the caller
// writes the zero point); else *out_mult is the row's context multiplier.
template <class RowMax, class Softmax>
static inline bool window_band_row(const AttentionHeadS8& a, int window, int i, const WindowBand& band, float* s,
                            uint8_t* prow, RowMax row_max, Softmax softmax, float* out_mult) {
  const int j0 = i - window > 0 ? i - window : 0;
  const int j1 = i + window + 1 < a.n ? i + window + 1 : a.n;  // keys [j0, j1)
  int valid = j1 - j0;
  if (a.key_mask != nullptr)
    for (int j = j0; j < j1; ++j)
      if (a.key_mask[j] == 0) {
        s[j] = -__builtin_inff();  // exp gives 0: the key adds nothing
        --valid;
      }
  for (int t = 0; t < band.plen; ++t) prow[t] = 0;
  if (valid == 0) return false;
  const int32_t prob_sum = softmax(s + j0, j1 - j0, row_max(s + j0, j1 - j0), prow + (j0 - band.base));
  *out_mult = detail::attention_context_multiplier(a.v_scale, a.context_scale, prob_sum);
  return true;
}

}  // namespace kernels
}  // namespace edgebert
