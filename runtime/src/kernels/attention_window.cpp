// SPDX-License-Identifier: Apache-2.0
// Int8 attention with a sliding-window mask (see attention_window.h): portable implementation.
// Per row: scores of the window's valid keys, max, exp, the uint8 probabilities and P.V, each
// step the operation attention_s8_rows_portable performs, so window >= n gives its bytes.
#include "kernels/attention_window.h"

#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/dispatch.h"
#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {

void attention_s8_rows_window_portable(const AttentionHeadS8& a, KeyWindow window, int row_begin, int row_end) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || row_begin >= row_end || !window_valid(window)) return;
  const size_t stride = a.qkv_stride;
  const auto [score_scale, lo, hi, zp] = attention_s8_scalars(a);
  for (int i = row_begin; i < row_end; ++i) {
    float* s = a.scores + static_cast<size_t>(i - row_begin) * n;
    uint8_t* p = a.probs + static_cast<size_t>(i - row_begin) * n;
    int8_t* ctx = attention_context_row(a, i);
    float* ctx_f32 = attention_context_row_f32(a, i);
    const int j0 = window_first_key(window, i), j1 = window_end_key(window, i, n);  // keys [j0, j1)
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
      attention_s8_fill_unattended(a, i, i + 1);
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
      if (ctx_f32)
        for (int d = 0; d < cnt; ++d) ctx_f32[d0 + d] = static_cast<float>(acc[d]) * out_mult;
      else
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

void attention_s8_pack_window_in_place(const AttentionHeadS8&) {}

void attention_s8_pack_window(const AttentionHeadS8& args) { kernel_table().attention_s8_pack_window(args); }

void attention_s8_rows_window(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end) {
  kernel_table().attention_s8_rows_window(args, window, row_begin, row_end);
}

}  // namespace kernels
}  // namespace edgebert
