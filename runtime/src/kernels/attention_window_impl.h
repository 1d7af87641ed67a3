// SPDX-License-Identifier: Apache-2.0
// The band bookkeeping of the blocked sliding-window variants (attention_window.h: AVX2 family,
// AVX-512, NEON), shared so that each keeps only its micro-kernels. Everything here is static
// (internal linkage): a copy compiled with AVX2 / AVX-512 flags must never be what the linker
// keeps for another file (as numerics.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_window.h"
#include "kernels/numerics.h"

namespace edgebert {
namespace kernels {

// The pack step: the variant's full-attention pack of every key, padding keys included.
template <class Pack>
static inline void pack_window_all_keys(const AttentionHeadS8& a, Pack pack) {
  AttentionHeadS8 all = a;
  all.key_mask = nullptr;
  pack(all);
}

// True when rows_window has nothing to do, or when the head is wider than the variant packs
// (max_head_dim: its pack step skipped it), which the portable body then computes in place.
static inline bool window_rows_done_elsewhere(const AttentionHeadS8& a, KeyWindow window, int row_begin, int row_end,
                                              int max_head_dim) {
  if (a.n <= 0 || a.head_dim <= 0 || row_begin >= row_end || !window_valid(window)) return true;
  if (a.head_dim <= max_head_dim) return false;
  attention_s8_rows_window_portable(a, window, row_begin, row_end);
  return true;
}

struct WindowBand {
  int lo, hi, base, g_begin, g_end, plen;
  bool tail;
};

static inline WindowBand window_band(int i0, int rows, KeyWindow window, int n) {
  WindowBand b;
  b.lo = window_first_key(window, i0);
  b.hi = window_end_key(window, i0 + rows - 1, n);
  b.base = 4 * (b.lo / 4);
  b.g_begin = b.lo / 4;
  const int full_groups = n / 4;
  b.g_end = (b.hi + 3) / 4 < full_groups ? (b.hi + 3) / 4 : full_groups;
  if (b.g_end < b.g_begin) b.g_end = b.g_begin;
  b.tail = b.hi > 4 * full_groups;
  b.plen = (b.tail ? n : 4 * b.g_end) - b.base;
  return b;
}

// block(i0, rows, band) for the query blocks of 4 rows (the last one shorter) of [row_begin, row_end).
template <class Block>
static inline void for_each_band_block(int row_begin, int row_end, KeyWindow window, int n, Block block) {
  for (int i0 = row_begin; i0 < row_end; i0 += 4) {
    const int rows = row_end - i0 < 4 ? row_end - i0 : 4;
    block(i0, rows, window_band(i0, rows, window, n));
  }
}

// The P.V operands of a band block over V packed from key 0 in groups of 4 (v, 4 * hd bytes per
// group): the full groups [band.g_begin, band.g_end) from *vpack, the partial last group *vtail
// (nullptr: none in the band) with each row's probabilities of it as one little-endian word.
static inline void window_band_pv(const WindowBand& band, const int8_t* v, int n, int hd, const uint8_t* const prow[4],
                                  const int8_t** vpack, int* ngroups, const int8_t** vtail, int32_t tail_word[4]) {
  const size_t gbytes = 4 * static_cast<size_t>(hd);
  const int full_groups = n / 4, rem = n % 4;
  *vpack = v + static_cast<size_t>(band.g_begin) * gbytes;
  *ngroups = band.g_end - band.g_begin;
  *vtail = band.tail && rem > 0 ? v + static_cast<size_t>(full_groups) * gbytes : nullptr;
  for (int r = 0; r < 4; ++r) {
    uint32_t w = 0;
    if (*vtail != nullptr)
      for (int t = 0; t < rem; ++t) w |= static_cast<uint32_t>(prow[r][4 * full_groups - band.base + t]) << (8 * t);
    tail_word[r] = static_cast<int32_t>(w);
  }
}

// Row i of a band block: its scores s (at key index, written for [band.base or band.lo, band.hi))
// become the row's probabilities prow[j - band.base] (zero outside its window and at padding
// keys) through row_max(s, len) and softmax(s, len, max, out) -> sum, the variant's vector
// versions of the portable steps. Returns false when the window holds only padding (the caller
// writes attention_s8_fill_unattended's mean); else *out_mult is the row's context multiplier.
template <class RowMax, class Softmax>
static inline bool window_band_row(const AttentionHeadS8& a, KeyWindow window, int i, const WindowBand& band, float* s,
                            uint8_t* prow, RowMax row_max, Softmax softmax, float* out_mult) {
  const int j0 = window_first_key(window, i), j1 = window_end_key(window, i, a.n);  // keys [j0, j1)
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

// The x86 variants' whole block after its scores (Pv: the variant's P.V arguments, with prow,
// out, out_f32, vpack, ngroups, vtail, tail_word and rows; pv_block(pv, out_mult, zp) its P.V step): each
// row's window softmax, P.V over the band's groups, the unattended mean for rows without a valid key.
template <class Pv, class RowMax, class Softmax, class PvBlock>
static inline void window_band_block(const AttentionHeadS8& a, KeyWindow window, int i0, int rows, int row_begin,
                                     const WindowBand& band, float* const srow[4], const int8_t* v, Pv& pv,
                                     RowMax row_max, Softmax softmax, PvBlock pv_block) {
  float out_mult[4] = {0, 0, 0, 0};
  bool empty[4] = {false, false, false, false};
  for (int r = 0; r < 4; ++r) {
    const int rr = r < rows ? r : 0;  // missing rows repeat row 0 and are never stored
    uint8_t* prow = a.probs + static_cast<size_t>(i0 - row_begin + rr) * a.n;
    pv.prow[r] = prow;
    pv.out[r] = attention_context_row(a, i0 + rr);
    pv.out_f32[r] = attention_context_row_f32(a, i0 + rr);
    if (r < rows) empty[r] = !window_band_row(a, window, i0 + r, band, srow[r], prow, row_max, softmax, &out_mult[r]);
  }
  window_band_pv(band, v, a.n, a.head_dim, pv.prow, &pv.vpack, &pv.ngroups, &pv.vtail, pv.tail_word);
  pv.rows = rows;
  pv_block(pv, out_mult, a.context_zero_point);
  for (int r = 0; r < rows; ++r)
    if (empty[r]) attention_s8_fill_unattended(a, i0 + r, i0 + r + 1);
}

}  // namespace kernels
}  // namespace edgebert
