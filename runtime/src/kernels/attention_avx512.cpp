// SPDX-License-Identifier: Apache-2.0
// Attention core for one head (int8), AVX-512 (F/BW/DQ/VL + VNNI): the recipe of attention.h on
// 512-bit vectors, with the same bytes as attention_head_s8_portable (int32 dot products are
// exact; the float steps are the portable operations lane by lane, see simd_avx512.h).
//
// Layout (pack step, once per head, into `packed`): valid keys only, compacted.
//   * V in groups of 4 keys as [group][d][4 keys] (a partial last group zero-padded), then 128
//     zero bytes (read, and discarded, by the last channel tile);
//   * K in blocks of 16 keys: 16 int32 corrections (-128 * sum_d k[j,d]) then [quad][16 keys][4]
//     (the last quad and a partial last block zero-padded).
// Rows step: query rows in blocks of 4, fused as in attention_avx2.cpp: scores (4 rows x 32 keys
// per micro-kernel: vpdpbusd of a broadcast query channel quad, offset to unsigned (q + 128),
// against 16 keys, starting from the key's correction, so the int32 sum is exactly q.k) ->
// softmax -> uint8 probabilities -> P.V (4 rows x 32 channels per micro-kernel: vpdpbusd of 4
// broadcast probabilities against 4 keys x 16 channels). Stack use: about 4.5 KB.
#include "kernels/avx512_intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/attention_pack_x86.h"
#include "kernels/attention_window.h"
#include "kernels/attention_window_impl.h"
#include "kernels/numerics.h"
#include "kernels/simd_avx512.h"

namespace edgebert {
namespace kernels {

namespace {

constexpr int kMaxHd = kAttentionMaxHeadDimAvx2;
constexpr size_t kVPad = 128;

// Packs 16 key rows r[0..15] (nullptr = zero row) of hd bytes: 16 int32 corrections, then
// [quad][row][4] (the last quad zero-padded).
void pack_kblock16(const int8_t* const r[16], int hd, int8_t* dst) {
  int32_t corr[16];
  for (int t = 0; t < 16; ++t) {
    int32_t sum = 0;
    if (r[t] != nullptr)
      for (int d = 0; d < hd; ++d) sum += r[t][d];
    corr[t] = -128 * sum;
  }
  std::memcpy(dst, corr, sizeof corr);
  int8_t* body = dst + 64;
  const int nquads = (hd + 3) / 4;
  for (int c = 0; 4 * c < nquads; ++c) {
    __m128i a[16];
    x86pack::load_rows16(r, 16, hd, 16 * c, a);
    const int nq = nquads - 4 * c < 4 ? nquads - 4 * c : 4;
    for (int h = 0; h < 4; ++h) {  // 4x4 transposes of 32-bit elements (one channel quad of one key)
      const __m128i* x = a + 4 * h;
      const __m128i t0 = _mm_unpacklo_epi32(x[0], x[1]), t1 = _mm_unpackhi_epi32(x[0], x[1]);
      const __m128i t2 = _mm_unpacklo_epi32(x[2], x[3]), t3 = _mm_unpackhi_epi32(x[2], x[3]);
      const __m128i o[4] = {_mm_unpacklo_epi64(t0, t2), _mm_unpackhi_epi64(t0, t2), _mm_unpacklo_epi64(t1, t3),
                            _mm_unpackhi_epi64(t1, t3)};
      for (int q = 0; q < nq; ++q)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(body + 64 * (4 * c + q) + 16 * h), o[q]);
    }
  }
}

inline size_t kblock_bytes(int hd) { return 64 + 64 * static_cast<size_t>((hd + 3) / 4); }

struct PackedKv {
  int ngroups, vrem, nblocks;
  int8_t* v;
  int8_t* k;
  size_t kbb;  // bytes per K block
};

PackedKv packed_layout(const AttentionHeadS8& a, int nvalid) {
  PackedKv p;
  p.ngroups = nvalid / 4;
  p.vrem = nvalid % 4;
  p.nblocks = (nvalid + 15) / 16;
  p.v = a.packed;
  const size_t vbytes = static_cast<size_t>((nvalid + 3) / 4) * 4 * static_cast<size_t>(a.head_dim) + kVPad;
  p.k = a.packed + ((vbytes + 63) & ~static_cast<size_t>(63));
  p.kbb = kblock_bytes(a.head_dim);
  return p;
}

void pack_s8(const AttentionHeadS8& a) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || hd > kMaxHd) return;  // larger heads: the portable rows read K, V in place
  const int nvalid = attention_valid_keys(a.key_mask, n);
  if (nvalid == 0) return;
  const PackedKv p = packed_layout(a, nvalid);
  const size_t stride = a.qkv_stride, gbytes = 4 * static_cast<size_t>(hd);
  const int8_t* vg[4] = {};
  const int8_t* kg[16] = {};
  int nv = 0, nk = 0, g = 0, kb = 0;
  for (int j = 0; j < n; ++j) {
    if (a.key_mask != nullptr && a.key_mask[j] == 0) continue;
    vg[nv++] = a.v + static_cast<size_t>(j) * stride;
    kg[nk++] = a.k + static_cast<size_t>(j) * stride;
    if (nv == 4) {
      x86pack::pack_group4(vg, hd, p.v + static_cast<size_t>(g++) * gbytes);
      nv = 0;
      for (auto& r : vg) r = nullptr;
    }
    if (nk == 16) {
      pack_kblock16(kg, hd, p.k + static_cast<size_t>(kb++) * p.kbb);
      nk = 0;
      for (auto& r : kg) r = nullptr;
    }
  }
  if (nv > 0) x86pack::pack_group4(vg, hd, p.v + static_cast<size_t>(g++) * gbytes);
  std::memset(p.v + static_cast<size_t>(g) * gbytes, 0, kVPad);
  if (nk > 0) pack_kblock16(kg, hd, p.k + static_cast<size_t>(kb) * p.kbb);
}

// Scores of 4 query rows (u8 q + 128, zero-padded to whole quads, row stride qs bytes) against
// NB (1 or 2) blocks of 16 keys: srow[r][j0 + 16b + t] = (q_r . k) * scale for the first
// `kc_last` keys of the last block (all 16 of the others); vmax[r] = running max of what was
// written. Rows >= `rows` are computed but not stored. noinline: keeps the 8 accumulators in
// registers (see attention_avx2.cpp).
template <int NB>
__attribute__((noinline)) void qk_block(const uint8_t* q, size_t qs, const int8_t* kb0, const int8_t* kb1,
                                        int nquads, float* const* srow, int rows, int j0, int kc_last, __m512 scale,
                                        __m512* vmax) {
  const __m512i corr0 = _mm512_loadu_si512(kb0);
  const __m512i corr1 = NB == 2 ? _mm512_loadu_si512(kb1) : corr0;
  __m512i c00 = corr0, c01 = corr1, c10 = corr0, c11 = corr1;
  __m512i c20 = corr0, c21 = corr1, c30 = corr0, c31 = corr1;
  const int8_t* k0 = kb0 + 64;
  const int8_t* k1 = kb1 + 64;
  const uint8_t* q0 = q;
  const uint8_t* q1 = q + qs;
  const uint8_t* q2 = q + 2 * qs;
  const uint8_t* q3 = q + 3 * qs;
  for (int p = 0; p < nquads; ++p) {
    const __m512i b0 = _mm512_loadu_si512(k0 + 64 * p);
    __m512i b1 = b0;
    if (NB == 2) b1 = _mm512_loadu_si512(k1 + 64 * p);
    __m512i a = _mm512_set1_epi32(x86pack::load_i32(q0 + 4 * p));
    c00 = _mm512_dpbusd_epi32(c00, a, b0);
    if (NB == 2) c01 = _mm512_dpbusd_epi32(c01, a, b1);
    a = _mm512_set1_epi32(x86pack::load_i32(q1 + 4 * p));
    c10 = _mm512_dpbusd_epi32(c10, a, b0);
    if (NB == 2) c11 = _mm512_dpbusd_epi32(c11, a, b1);
    a = _mm512_set1_epi32(x86pack::load_i32(q2 + 4 * p));
    c20 = _mm512_dpbusd_epi32(c20, a, b0);
    if (NB == 2) c21 = _mm512_dpbusd_epi32(c21, a, b1);
    a = _mm512_set1_epi32(x86pack::load_i32(q3 + 4 * p));
    c30 = _mm512_dpbusd_epi32(c30, a, b0);
    if (NB == 2) c31 = _mm512_dpbusd_epi32(c31, a, b1);
  }
  const __m512i acc[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
  const __mmask16 last = avx512::tail_mask16(static_cast<size_t>(kc_last));
  for (int r = 0; r < rows; ++r) {
    __m512 m = vmax[r];
    for (int bb = 0; bb < NB; ++bb) {
      const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][bb]), scale);
      const __mmask16 keep = bb < NB - 1 ? static_cast<__mmask16>(0xFFFF) : last;
      _mm512_mask_storeu_ps(srow[r] + j0 + 16 * bb, keep, f);
      m = _mm512_mask_max_ps(m, keep, m, f);
    }
    vmax[r] = m;
  }
}

// out[j] = round_half_even(min(exp(s[j] - m) * pm, 127)) for j < len (pm = 127, see
// numerics.h), in one pass; returns the sum of the quantized values.
int32_t softmax_quantize_row(const float* s, int len, float m, float pm, uint8_t* out) {
  const __m512 vm = _mm512_set1_ps(m);
  const __m512 vpm = _mm512_set1_ps(pm);
  const __m512 top = _mm512_set1_ps(detail::kAttentionProbLevels);
  __m512i sum = _mm512_setzero_si512();
  int j = 0;
  for (; j + 16 <= len; j += 16) {
    const __m512 e = avx512::exp_ps(_mm512_sub_ps(_mm512_loadu_ps(s + j), vm));
    const __m512i q = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_mul_ps(e, vpm), top));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm512_cvtusepi32_epi8(q));
    sum = _mm512_add_epi32(sum, q);
  }
  if (j < len) {
    const __mmask16 k = avx512::tail_mask16(static_cast<size_t>(len - j));
    const __m512 e = avx512::exp_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j), vm));
    const __m512i q = _mm512_maskz_cvtps_epi32(k, _mm512_min_ps(_mm512_mul_ps(e, vpm), top));
    _mm_mask_storeu_epi8(out + j, k, _mm512_cvtusepi32_epi8(q));
    sum = _mm512_add_epi32(sum, q);
  }
  return _mm512_reduce_add_epi32(sum);
}

// P.V for 4 rows x 32 channels over `ngroups` packed key groups (vp: first group at this channel
// tile, groups gstride bytes apart). Adds into acc. noinline as qk_block.
__attribute__((noinline)) void pv_4x32(const uint8_t* const* prow, const int8_t* vp, size_t gstride, int ngroups,
                                       __m512i acc[4][2]) {
  __m512i a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
  __m512i a20 = acc[2][0], a21 = acc[2][1], a30 = acc[3][0], a31 = acc[3][1];
  const uint8_t* p0 = prow[0];
  const uint8_t* p1 = prow[1];
  const uint8_t* p2 = prow[2];
  const uint8_t* p3 = prow[3];
  for (int g = 0; g < ngroups; ++g, vp += gstride) {
    const __m512i v0 = _mm512_loadu_si512(vp);
    const __m512i v1 = _mm512_loadu_si512(vp + 64);
    __m512i p = _mm512_set1_epi32(x86pack::load_i32(p0 + 4 * g));
    a00 = _mm512_dpbusd_epi32(a00, p, v0);
    a01 = _mm512_dpbusd_epi32(a01, p, v1);
    p = _mm512_set1_epi32(x86pack::load_i32(p1 + 4 * g));
    a10 = _mm512_dpbusd_epi32(a10, p, v0);
    a11 = _mm512_dpbusd_epi32(a11, p, v1);
    p = _mm512_set1_epi32(x86pack::load_i32(p2 + 4 * g));
    a20 = _mm512_dpbusd_epi32(a20, p, v0);
    a21 = _mm512_dpbusd_epi32(a21, p, v1);
    p = _mm512_set1_epi32(x86pack::load_i32(p3 + 4 * g));
    a30 = _mm512_dpbusd_epi32(a30, p, v0);
    a31 = _mm512_dpbusd_epi32(a31, p, v1);
  }
  acc[0][0] = a00;
  acc[0][1] = a01;
  acc[1][0] = a10;
  acc[1][1] = a11;
  acc[2][0] = a20;
  acc[2][1] = a21;
  acc[3][0] = a30;
  acc[3][1] = a31;
}

struct PvArgs {
  const uint8_t* prow[4];  // probabilities of the block's rows (row 0 repeated for missing rows)
  int32_t tail_word[4];    // probabilities of the partial key group, zero-padded
  int8_t* out[4];
  float* out_f32[4];  // the float context's rows (AttentionHeadS8::context_f32), else null
  int rows;
  const int8_t* vpack;  // full groups, 4*hd bytes each
  int ngroups;
  const int8_t* vtail;  // partial group (4*hd bytes) or nullptr
  int hd;
};

void pv_block(const PvArgs& a, const float mult_rows[4], int32_t zp_i) {
  const __m512 lo = _mm512_set1_ps(-128.0f - static_cast<float>(zp_i));
  const __m512 hi = _mm512_set1_ps(127.0f - static_cast<float>(zp_i));
  const __m512i zp = _mm512_set1_epi32(zp_i);
  const size_t gstride = static_cast<size_t>(4) * a.hd;
  for (int d0 = 0; d0 < a.hd; d0 += 32) {
    __m512i acc[4][2];
    for (auto& row : acc) row[0] = row[1] = _mm512_setzero_si512();
    pv_4x32(a.prow, a.vpack + 4 * d0, gstride, a.ngroups, acc);
    if (a.vtail != nullptr) {
      const int8_t* tp = a.vtail + 4 * d0;
      const __m512i v0 = _mm512_loadu_si512(tp);
      const __m512i v1 = _mm512_loadu_si512(tp + 64);
      for (int r = 0; r < 4; ++r) {
        const __m512i p = _mm512_set1_epi32(a.tail_word[r]);
        acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], p, v0);
        acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], p, v1);
      }
    }
    const int cnt = a.hd - d0 < 32 ? a.hd - d0 : 32;
    const __mmask16 m0 = avx512::tail_mask16(static_cast<size_t>(cnt));
    const __mmask16 m1 = avx512::tail_mask16(static_cast<size_t>(cnt > 16 ? cnt - 16 : 0));
    for (int r = 0; r < a.rows; ++r) {
      const __m512 mult = _mm512_set1_ps(mult_rows[r]);
      if (a.out_f32[r] != nullptr) {  // a float context: acc * mult, unrounded
        _mm512_mask_storeu_ps(a.out_f32[r] + d0, m0, _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][0]), mult));
        if (cnt > 16) _mm512_mask_storeu_ps(a.out_f32[r] + d0 + 16, m1, _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][1]), mult));
        continue;
      }
      _mm_mask_storeu_epi8(a.out[r] + d0, m0,
                           avx512::quantize16_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][0]), mult), lo, hi, zp));
      if (cnt > 16)
        _mm_mask_storeu_epi8(a.out[r] + d0 + 16, m1,
                             avx512::quantize16_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][1]), mult), lo, hi, zp));
    }
  }
}

constexpr size_t kQs = kMaxHd + 64;  // bytes per query row (u8) in a query block, keeps rows 64-byte aligned

// Query rows [i0, i0 + rows) (rows <= 4) as q + 128 in u8, zero-padded to whole quads (K is zero
// there), into qbuf (4 rows of kQs bytes; missing rows all zero); srow[r] = row r's scores
// (row 0's for missing rows).
void load_query_block(const AttentionHeadS8& a, int i0, int rows, int row_begin, int nquads, uint8_t* qbuf,
                      float* srow[4]) {
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int r = 0; r < 4; ++r) {
    uint8_t* qb = qbuf + r * kQs;
    if (r < rows) {
      const int8_t* src = a.q + static_cast<size_t>(i0 + r) * a.qkv_stride;
      for (int d = 0; d < 4 * nquads; d += 64) {
        const __mmask64 k = avx512::tail_mask64(static_cast<size_t>(a.head_dim - d));
        const __m512i u = _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, src + d), bias);
        _mm512_store_si512(qb + d, _mm512_maskz_mov_epi8(k, u));
      }
    } else {
      std::memset(qb, 0, static_cast<size_t>(4 * nquads));
    }
    srow[r] = a.scores + static_cast<size_t>(i0 - row_begin + (r < rows ? r : 0)) * a.n;
  }
}

void rows_s8(const AttentionHeadS8& a, int row_begin, int row_end) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || row_begin >= row_end) return;
  if (hd > kMaxHd) {
    kAttentionS8Portable.rows(a, row_begin, row_end);
    return;
  }
  const int32_t zp = a.context_zero_point;
  const int nvalid = attention_valid_keys(a.key_mask, n);
  if (nvalid == 0) {
    attention_s8_fill_unattended(a, row_begin, row_end);
    return;
  }
  const PackedKv pk = packed_layout(a, nvalid);
  const int nquads = (hd + 3) / 4;
  alignas(64) uint8_t qbuf[4 * kQs];
  const __m512 vscale = _mm512_set1_ps(detail::attention_score_scale(a.q_scale, a.k_scale, hd));
  PvArgs pv;
  pv.vpack = pk.v;
  pv.ngroups = pk.ngroups;
  pv.vtail = pk.vrem > 0 ? pk.v + static_cast<size_t>(pk.ngroups) * 4 * static_cast<size_t>(hd) : nullptr;
  pv.hd = hd;

  for (int i0 = row_begin; i0 < row_end; i0 += 4) {
    const int rows = row_end - i0 < 4 ? row_end - i0 : 4;
    float* srow[4];
    load_query_block(a, i0, rows, row_begin, nquads, qbuf, srow);

    // ---- scores (valid keys only, compacted order) and their row maxima
    __m512 vmax[4];
    for (auto& m : vmax) m = _mm512_set1_ps(-__builtin_inff());
    for (int b0 = 0; b0 < pk.nblocks; b0 += 2) {
      const int nb = pk.nblocks - b0 >= 2 ? 2 : 1;
      const int j_last = 16 * (b0 + nb - 1);
      const int kc_last = nvalid - j_last < 16 ? nvalid - j_last : 16;
      const int8_t* k0 = pk.k + static_cast<size_t>(b0) * pk.kbb;
      const int8_t* k1 = nb == 2 ? k0 + pk.kbb : k0;
      if (nb == 2)
        qk_block<2>(qbuf, kQs, k0, k1, nquads, srow, rows, 16 * b0, kc_last, vscale, vmax);
      else
        qk_block<1>(qbuf, kQs, k0, k1, nquads, srow, rows, 16 * b0, kc_last, vscale, vmax);
    }

    // ---- softmax -> uint8 probabilities
    float out_mult[4] = {0, 0, 0, 0};
    for (int r = 0; r < 4; ++r) {
      const int rr = r < rows ? r : 0;
      uint8_t* prow = a.probs + static_cast<size_t>(i0 - row_begin + rr) * n;
      if (r < rows) {
        const int32_t prob_sum = softmax_quantize_row(srow[r], nvalid, _mm512_reduce_max_ps(vmax[r]),
                                                      detail::attention_prob_multiplier(), prow);
        out_mult[r] = detail::attention_context_multiplier(a.v_scale, a.context_scale, prob_sum);
      }
      pv.prow[r] = prow;
      pv.out[r] = attention_context_row(a, i0 + rr);
      pv.out_f32[r] = attention_context_row_f32(a, i0 + rr);
    }
    for (int r = 0; r < 4; ++r) {
      uint32_t w = 0;
      for (int t = 0; t < pk.vrem; ++t) w |= static_cast<uint32_t>(pv.prow[r][pk.ngroups * 4 + t]) << (8 * t);
      pv.tail_word[r] = static_cast<int32_t>(w);
    }
    pv.rows = rows;

    // ---- context = P.V
    pv_block(pv, out_mult, zp);
  }
}

// ---- sliding window (attention_window.h), blocked: every key of the head packed once in order
// (padding keys too: the mask is applied per row, the band is in token positions), then per
// block of 4 query rows the scores of the 16-key blocks that cover the rows' band
// [i0 - w, i0 + 3 + w], softmax over each row's own keys [i - w, i + w] (padding excluded),
// probabilities laid out from the band's first 4-key group with zeros outside the row's window,
// and P.V over the band's groups. The same values as the portable window body: exact int32 sums,
// the same float operations per key, and zero probabilities add nothing.

float row_max16(const float* s, int len) {
  __m512 m = _mm512_set1_ps(-__builtin_inff());
  int j = 0;
  for (; j + 16 <= len; j += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(s + j));
  if (j < len) {
    const __mmask16 k = avx512::tail_mask16(static_cast<size_t>(len - j));
    m = _mm512_mask_max_ps(m, k, m, _mm512_maskz_loadu_ps(k, s + j));
  }
  return _mm512_reduce_max_ps(m);
}

int32_t softmax_pm(const float* s, int len, float m, uint8_t* out) {
  return softmax_quantize_row(s, len, m, detail::attention_prob_multiplier(), out);
}

void pack_window_s8(const AttentionHeadS8& a) {
  pack_window_all_keys(a, pack_s8);
}

void rows_window_s8(const AttentionHeadS8& a, KeyWindow window, int row_begin, int row_end) {
  if (window_rows_done_elsewhere(a, window, row_begin, row_end, kMaxHd)) return;
  const int n = a.n, hd = a.head_dim;
  const PackedKv pk = packed_layout(a, n);
  const int nquads = (hd + 3) / 4;
  alignas(64) uint8_t qbuf[4 * kQs];
  const __m512 vscale = _mm512_set1_ps(detail::attention_score_scale(a.q_scale, a.k_scale, hd));
  const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
  PvArgs pv;
  pv.hd = hd;
  for_each_band_block(row_begin, row_end, window, n, [&](int i0, int rows, const WindowBand& band) {
    float* srow[4];
    load_query_block(a, i0, rows, row_begin, nquads, qbuf, srow);

    // ---- scores of the 16-key blocks over [lo, hi) (at their key index in each row's scratch)
    __m512 vmax[4] = {ninf, ninf, ninf, ninf};  // unused: each row's maximum is taken over its own window
    for (int b = band.lo / 16, b_end = (band.hi + 15) / 16; b < b_end; b += 2) {
      const int nb = b_end - b >= 2 ? 2 : 1;
      const int j_last = 16 * (b + nb - 1);
      const int kc_last = n - j_last < 16 ? n - j_last : 16;
      const int8_t* k0 = pk.k + static_cast<size_t>(b) * pk.kbb;
      if (nb == 2)
        qk_block<2>(qbuf, kQs, k0, k0 + pk.kbb, nquads, srow, rows, 16 * b, kc_last, vscale, vmax);
      else
        qk_block<1>(qbuf, kQs, k0, k0, nquads, srow, rows, 16 * b, kc_last, vscale, vmax);
    }

    // ---- per row: padding keys out, max and softmax over its window; P.V over the band's groups
    window_band_block(a, window, i0, rows, row_begin, band, srow, pk.v, pv, row_max16, softmax_pm, pv_block);
  });
}

}  // namespace

const AttentionS8Kernel kAttentionS8Avx512 = {"avx512", pack_s8, rows_s8};

void attention_s8_pack_window_avx512(const AttentionHeadS8& a) { pack_window_s8(a); }
void attention_s8_rows_window_avx512(const AttentionHeadS8& a, KeyWindow window, int row_begin, int row_end) {
  rows_window_s8(a, window, row_begin, row_end);
}

}  // namespace kernels
}  // namespace edgebert
