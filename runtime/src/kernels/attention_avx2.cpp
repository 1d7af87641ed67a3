// SPDX-License-Identifier: Apache-2.0
// Attention core for one head, AVX2+FMA implementations (int8 and fp32).
//
// Int8 layout (pack step, once per head, into `packed`):
//   * valid keys are compacted (masked keys cost nothing). V in groups of 4 keys as
//     [group][d][4 keys] (4*head_dim bytes per group; a partial last group zero-padded), then 64
//     zero bytes; then K in blocks of 8 keys (a partial last block zero-padded):
//       AVX2:  [channel pair][8 keys][2] (an odd last channel as [8 keys]), 8*head_dim bytes;
//       VNNI:  8 int32 corrections (-128 * sum_d k[j,d]) then [channel quad][8 keys][4].
// Rows step: query rows in blocks of 4, fully fused: scores (4 rows x 16 keys per micro-kernel, no
// horizontal sums; AVX2: vpmaddwd of a broadcast query channel pair against 8 keys; VNNI: vpdpbusd
// of a broadcast query channel quad, offset to unsigned (q + 128), against 8 keys, starting from
// the key's correction, so the int32 sum is exactly q.k) -> softmax -> uint8 probabilities -> P.V
// (4 rows x 16 channels per micro-kernel), so a block's scores and probabilities stay in L1.
// P.V uses vpmaddubsw on (pq[j], pq[j+1]) x (v[j,d], v[j+1,d]); the pair sum cannot saturate
// because pq[j] <= 127 (see numerics.h), so |sum| <= 2 * 127 * 128 = 32512 < 32767.
// Stack use: about 8.3 KB in the rows step (the block's 4 query rows, each kMaxHd + 16 int16:
// 8320 bytes whatever the head size), under 200 bytes in the pack step.
// attention_avx512vnni.cpp / attention_avxvnni.cpp compile this file again with EB_DOT4 (acc + the
// dot product of 4 u8 x s8 byte pairs into int32, exact) as one vpdpbusd, EB_QK_DOT4 (use it for
// Q.K^T too) and their own kernel name; the float part is compiled only here.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/attention.h"
#include "kernels/attention_pack_x86.h"
#include "kernels/attention_window.h"
#include "kernels/attention_window_impl.h"
#include "kernels/numerics.h"
#include "kernels/simd_avx2.h"

namespace edgebert {
namespace kernels {

#ifndef EB_ATTENTION_S8_KERNEL
#define EB_ATTENTION_S8_KERNEL kAttentionS8Avx2
#define EB_ATTENTION_S8_KERNEL_NAME "avx2"
#define EB_ATTENTION_S8_WINDOW_PACK attention_s8_pack_window_avx2
#define EB_ATTENTION_S8_WINDOW_ROWS attention_s8_rows_window_avx2
#define EB_ATTENTION_WITH_F32 1
#endif
// acc + sum of 4 u8 x s8 products per int32 lane; exact (the int16 pair sums cannot saturate).
#ifndef EB_DOT4
#define EB_DOT4(acc, p, v) _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(p, v), _mm256_set1_epi16(1)))
#endif

namespace {

constexpr int kMaxHd = kAttentionMaxHeadDimAvx2;

// Packs 8 key rows r[0..7] (nullptr = zero row) of hd bytes as [pair][row][2] + odd channel [row].
static void pack_kblock8(const int8_t* const r[8], int hd, int8_t* dst) {
  const int npairs = hd / 2;
  for (int c = 0; 8 * c < npairs; ++c) {
    const int d = 16 * c;
    __m128i a[8];
    x86pack::load_rows16(r, 8, hd, d, a);
    // 8x8 transpose of 16-bit elements (one element = one channel pair of one key)
    const __m128i t0 = _mm_unpacklo_epi16(a[0], a[1]), t1 = _mm_unpackhi_epi16(a[0], a[1]);
    const __m128i t2 = _mm_unpacklo_epi16(a[2], a[3]), t3 = _mm_unpackhi_epi16(a[2], a[3]);
    const __m128i t4 = _mm_unpacklo_epi16(a[4], a[5]), t5 = _mm_unpackhi_epi16(a[4], a[5]);
    const __m128i t6 = _mm_unpacklo_epi16(a[6], a[7]), t7 = _mm_unpackhi_epi16(a[6], a[7]);
    const __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
    const __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
    const __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
    const __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
    const __m128i o[8] = {_mm_unpacklo_epi64(u0, u4), _mm_unpackhi_epi64(u0, u4), _mm_unpacklo_epi64(u1, u5),
                          _mm_unpackhi_epi64(u1, u5), _mm_unpacklo_epi64(u2, u6), _mm_unpackhi_epi64(u2, u6),
                          _mm_unpacklo_epi64(u3, u7), _mm_unpackhi_epi64(u3, u7)};
    const int np = npairs - 8 * c < 8 ? npairs - 8 * c : 8;
    for (int p = 0; p < np; ++p) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16 * (8 * c + p)), o[p]);
  }
  if (hd % 2 != 0)
    for (int t = 0; t < 8; ++t) dst[16 * npairs + t] = r[t] != nullptr ? r[t][hd - 1] : 0;
}


// Scaled scores of 4 rows x NB blocks of 8 keys: srow[r][j0 + 8b + t] = acc[r][b][t] * scale for
// the first `kc_last` keys of the last block (all 8 of the others); vmax[r] = running max of what
// was written. Rows >= `rows` are not stored.
template <int NB>
static inline void store_scores(const __m256i acc[4][2], float* const* srow, int rows, int j0, int kc_last,
                                __m256 scale, __m256* vmax) {
  const __m256i last_mask = avx2::tail_mask(static_cast<size_t>(kc_last));
  const __m256 neg_inf = _mm256_set1_ps(-__builtin_inff());
  for (int r = 0; r < rows; ++r) {
    __m256 m = vmax[r];
    for (int bb = 0; bb < NB; ++bb) {
      const __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][bb]), scale);
      float* dst = srow[r] + j0 + 8 * bb;
      if (bb < NB - 1 || kc_last == 8) {
        _mm256_storeu_ps(dst, f);
        m = _mm256_max_ps(m, f);
      } else {
        _mm256_maskstore_ps(dst, last_mask, f);
        m = _mm256_max_ps(m, _mm256_blendv_ps(neg_inf, f, _mm256_castsi256_ps(last_mask)));
      }
    }
    vmax[r] = m;
  }
}

// Scores of 4 query rows against NB (1 or 2) blocks of 8 packed keys, written straight to the
// score rows: srow[r][j0 + 8b + t] = (q_r . k_(8b+t)) * scale for the first `kc_last` keys of the
// last block (all 8 of the others), and vmax[r] = running max of what was written.
// q: 4 rows of int16 (zero-padded to an even length), row stride qs; rows >= `rows` are computed but
// not stored. kOdd: head_dim is odd, the last channel is stored as [8 keys] after the pairs and
// pairs with (q_last, 0) = qodd[r]; a separate instantiation so the common case carries no extra
// code. noinline: compiled on its own GCC keeps all 8 accumulators in registers (inlined into the
// big caller, -O3 spills one and the loop becomes store-forwarding bound).
template <int NB, bool kOdd>
__attribute__((noinline)) static void qk_block(const int16_t* q, size_t qs, const int32_t* qodd, const int8_t* kb0,
                                               const int8_t* kb1, int npairs, float* const* srow, int rows, int j0,
                                               int kc_last, __m256 scale, __m256* vmax) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00;
  __m256i c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  if (kOdd) {  // first: after the loop it makes GCC spill an accumulator
    const __m256i b0 = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kb0 + 16 * npairs)));
    __m256i b1 = b0;
    if (NB == 2) b1 = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kb1 + 16 * npairs)));
    __m256i a = _mm256_set1_epi32(qodd[0]);
    c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(a, b0));
    c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(a, b1));
    a = _mm256_set1_epi32(qodd[1]);
    c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(a, b0));
    c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(a, b1));
    a = _mm256_set1_epi32(qodd[2]);
    c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(a, b0));
    c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(a, b1));
    a = _mm256_set1_epi32(qodd[3]);
    c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(a, b0));
    c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(a, b1));
  }
  const int16_t* q0 = q;
  const int16_t* q1 = q + qs;
  const int16_t* q2 = q + 2 * qs;
  const int16_t* q3 = q + 3 * qs;
  for (int p = 0; p < npairs; ++p) {
    const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kb0 + 16 * p)));
    __m256i b1 = b0;
    if (NB == 2) b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kb1 + 16 * p)));
    __m256i a = _mm256_set1_epi32(x86pack::load_i32(q0 + 2 * p));
    c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(a, b0));
    if (NB == 2) c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(a, b1));
    a = _mm256_set1_epi32(x86pack::load_i32(q1 + 2 * p));
    c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(a, b0));
    if (NB == 2) c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(a, b1));
    a = _mm256_set1_epi32(x86pack::load_i32(q2 + 2 * p));
    c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(a, b0));
    if (NB == 2) c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(a, b1));
    a = _mm256_set1_epi32(x86pack::load_i32(q3 + 2 * p));
    c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(a, b0));
    if (NB == 2) c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(a, b1));
  }
  const __m256i acc[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
  store_scores<NB>(acc, srow, rows, j0, kc_last, scale, vmax);
}

// Softmax pass 1: s[j] <- exp(s[j] - m) for j < len; returns the sum.
static float softmax_exp_pass(float* s, int len, float m) {
  const __m256 vm = _mm256_set1_ps(m);
  __m256 vsum0 = _mm256_setzero_ps(), vsum1 = vsum0;
  int j = 0;
  for (; j + 16 <= len; j += 16) {
    const __m256 e0 = avx2::exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
    const __m256 e1 = avx2::exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + j + 8), vm));
    _mm256_storeu_ps(s + j, e0);
    _mm256_storeu_ps(s + j + 8, e1);
    vsum0 = _mm256_add_ps(vsum0, e0);
    vsum1 = _mm256_add_ps(vsum1, e1);
  }
  for (; j < len; j += 8) {
    const __m256i mask = avx2::tail_mask(static_cast<size_t>(len - j < 8 ? len - j : 8));
    __m256 e = avx2::exp_ps(_mm256_sub_ps(_mm256_maskload_ps(s + j, mask), vm));
    e = _mm256_and_ps(e, _mm256_castsi256_ps(mask));
    _mm256_maskstore_ps(s + j, mask, e);
    vsum0 = _mm256_add_ps(vsum0, e);
  }
  return avx2::hsum_ps(_mm256_add_ps(vsum0, vsum1));
}

// Softmax pass 2: out[j] = round_half_even(s[j] * pm) (s holds the exps, pm = 127, see
// numerics.h); returns the sum of the quantized values.
static int32_t softmax_quantize_pass(const float* s, int len, float pm, uint8_t* out) {
  const uint8_t* const begin = out;
  const __m256 vpm = _mm256_set1_ps(pm);
  int j = 0;
  for (; j + 32 <= len; j += 32) {
    const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(s + j), vpm));
    const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(s + j + 8), vpm));
    const __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(s + j + 16), vpm));
    const __m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(s + j + 24), vpm));
    const __m256i abcd = _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(c, d));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j),
                        _mm256_permutevar8x32_epi32(abcd, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  }
  for (; j + 8 <= len; j += 8) {
    const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(s + j), vpm));
    const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + j), _mm_packus_epi16(w, w));
  }
  for (; j < len; ++j) {
    const float v = detail::clamp_hi(s[j] * pm, detail::kAttentionProbLevels);
    out[j] = static_cast<uint8_t>(static_cast<int32_t>(detail::round_half_even(v)));
  }
  // Sum of the bytes: vpsadbw against zero adds 8 bytes into each 64-bit lane.
  __m256i acc = _mm256_setzero_si256();
  int k = 0;
  for (; k + 32 <= len; k += 32)
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(begin + k)),
                                                _mm256_setzero_si256()));
  int64_t total = _mm256_extract_epi64(acc, 0) + _mm256_extract_epi64(acc, 1) + _mm256_extract_epi64(acc, 2) +
                  _mm256_extract_epi64(acc, 3);
  for (; k < len; ++k) total += begin[k];
  return static_cast<int32_t>(total);
}

// 16 int32 accumulators -> 16 int8 outputs (requantized, in channel order).
static inline __m128i requant16(__m256i a, __m256i b, __m256 mult, __m256 lo, __m256 hi, __m256i zp) {
  const __m256 fa = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a), mult), lo), hi);
  const __m256 fb = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(b), mult), lo), hi);
  const __m256i qa = _mm256_add_epi32(_mm256_cvtps_epi32(fa), zp);
  const __m256i qb = _mm256_add_epi32(_mm256_cvtps_epi32(fb), zp);
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(qa, qb), 0xD8);
  return _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
}

// 16 int32 accumulators -> the first cnt of the 16 floats acc * mult (a float context's channels).
static inline void store_context16_f32(float* out, __m256i a, __m256i b, __m256 mult, int cnt) {
  alignas(32) float tmp[16];
  float* dst = cnt == 16 ? out : tmp;
  _mm256_storeu_ps(dst, _mm256_mul_ps(_mm256_cvtepi32_ps(a), mult));
  _mm256_storeu_ps(dst + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(b), mult));
  if (cnt < 16) std::memcpy(out, tmp, static_cast<size_t>(cnt) * sizeof(float));
}

#define EB_PV_STEP(r, pword)                                                              \
  {                                                                                       \
    const __m256i p = _mm256_set1_epi32(pword);                                           \
    acc##r##0 = EB_DOT4(acc##r##0, p, v0);                                                \
    acc##r##1 = EB_DOT4(acc##r##1, p, v1);                                                \
  }

// P.V for 4 rows x 16 channels over `ngroups` packed key groups (vp: first group at this channel
// tile, groups gstride bytes apart). Adds into acc. noinline for the same register-allocation
// reason as qk_4xNB.
__attribute__((noinline)) static void pv_4x16(const uint8_t* p0, const uint8_t* p1, const uint8_t* p2,
                                              const uint8_t* p3, const int8_t* vp, size_t gstride, int ngroups,
                                              __m256i acc[4][2]) {
  __m256i acc00 = acc[0][0], acc01 = acc[0][1], acc10 = acc[1][0], acc11 = acc[1][1];
  __m256i acc20 = acc[2][0], acc21 = acc[2][1], acc30 = acc[3][0], acc31 = acc[3][1];
  for (int g = 0; g < ngroups; ++g, vp += gstride) {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vp));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vp + 32));
    EB_PV_STEP(0, x86pack::load_i32(p0 + 4 * g))
    EB_PV_STEP(1, x86pack::load_i32(p1 + 4 * g))
    EB_PV_STEP(2, x86pack::load_i32(p2 + 4 * g))
    EB_PV_STEP(3, x86pack::load_i32(p3 + 4 * g))
  }
  acc[0][0] = acc00;
  acc[0][1] = acc01;
  acc[1][0] = acc10;
  acc[1][1] = acc11;
  acc[2][0] = acc20;
  acc[2][1] = acc21;
  acc[3][0] = acc30;
  acc[3][1] = acc31;
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

static void pv_block(const PvArgs& a, const float mult_rows[4], int32_t zp_i) {
  const __m256 lo = _mm256_set1_ps(-128.0f - static_cast<float>(zp_i));
  const __m256 hi = _mm256_set1_ps(127.0f - static_cast<float>(zp_i));
  const __m256i zp = _mm256_set1_epi32(zp_i);
  const size_t gstride = static_cast<size_t>(4) * a.hd;
  for (int d0 = 0; d0 < a.hd; d0 += 16) {
    __m256i acc[4][2];
    for (auto& row : acc) row[0] = row[1] = _mm256_setzero_si256();
    pv_4x16(a.prow[0], a.prow[1], a.prow[2], a.prow[3], a.vpack + 4 * d0, gstride, a.ngroups, acc);
    if (a.vtail != nullptr) {
      const int8_t* tp = a.vtail + 4 * d0;
      const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tp));
      const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tp + 32));
      for (int r = 0; r < 4; ++r) {
        const __m256i p = _mm256_set1_epi32(a.tail_word[r]);
        acc[r][0] = EB_DOT4(acc[r][0], p, v0);
        acc[r][1] = EB_DOT4(acc[r][1], p, v1);
      }
    }
    const int cnt = a.hd - d0 < 16 ? a.hd - d0 : 16;
    for (int r = 0; r < a.rows; ++r) {
      if (a.out_f32[r] != nullptr) {
        store_context16_f32(a.out_f32[r] + d0, acc[r][0], acc[r][1], _mm256_set1_ps(mult_rows[r]), cnt);
        continue;
      }
      const __m128i q = requant16(acc[r][0], acc[r][1], _mm256_set1_ps(mult_rows[r]), lo, hi, zp);
      if (cnt == 16) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(a.out[r] + d0), q);
      } else {
        alignas(16) int8_t tmp[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(tmp), q);
        std::memcpy(a.out[r] + d0, tmp, static_cast<size_t>(cnt));
      }
    }
  }
}
#undef EB_PV_STEP

#ifdef EB_QK_DOT4
constexpr bool kQkDot4 = true;

// Packs 8 key rows r[0..7] (nullptr = zero row) of hd bytes as 8 int32 corrections
// (-128 * sum_d r[t][d]) followed by [quad][row][4] (the last quad zero-padded).
static void pack_kblock8_dot4(const int8_t* const r[8], int hd, int8_t* dst) {
  int32_t corr[8];
  for (int t = 0; t < 8; ++t) {
    int32_t sum = 0;
    if (r[t] != nullptr)
      for (int d = 0; d < hd; ++d) sum += r[t][d];
    corr[t] = -128 * sum;
  }
  std::memcpy(dst, corr, sizeof corr);
  int8_t* body = dst + 32;
  const int nquads = (hd + 3) / 4;
  for (int c = 0; 4 * c < nquads; ++c) {
    const int d = 16 * c;
    __m128i a[8];
    x86pack::load_rows16(r, 8, hd, d, a);
    // 4x4 transposes of 32-bit elements (one element = one channel quad of one key)
    __m128i o[2][4];
    for (int h = 0; h < 2; ++h) {
      const __m128i* x = a + 4 * h;
      const __m128i t0 = _mm_unpacklo_epi32(x[0], x[1]), t1 = _mm_unpackhi_epi32(x[0], x[1]);
      const __m128i t2 = _mm_unpacklo_epi32(x[2], x[3]), t3 = _mm_unpackhi_epi32(x[2], x[3]);
      o[h][0] = _mm_unpacklo_epi64(t0, t2);
      o[h][1] = _mm_unpackhi_epi64(t0, t2);
      o[h][2] = _mm_unpacklo_epi64(t1, t3);
      o[h][3] = _mm_unpackhi_epi64(t1, t3);
    }
    const int nq = nquads - 4 * c < 4 ? nquads - 4 * c : 4;
    for (int q = 0; q < nq; ++q) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(body + 32 * (4 * c + q)), o[0][q]);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(body + 32 * (4 * c + q) + 16), o[1][q]);
    }
  }
}

// Scores of 4 query rows (unsigned, q + 128, zero-padded to whole quads, row stride qs bytes)
// against NB (1 or 2) blocks of 8 keys packed by pack_kblock8_dot4; stores like qk_block.
template <int NB>
__attribute__((noinline)) static void qk_block_dot4(const uint8_t* q, size_t qs, const int8_t* kb0,
                                                    const int8_t* kb1, int nquads, float* const* srow, int rows,
                                                    int j0, int kc_last, __m256 scale, __m256* vmax) {
  const __m256i corr0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kb0));
  const __m256i corr1 = NB == 2 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kb1)) : corr0;
  __m256i c00 = corr0, c01 = corr1, c10 = corr0, c11 = corr1;
  __m256i c20 = corr0, c21 = corr1, c30 = corr0, c31 = corr1;
  const int8_t* k0 = kb0 + 32;
  const int8_t* k1 = kb1 + 32;
  const uint8_t* q0 = q;
  const uint8_t* q1 = q + qs;
  const uint8_t* q2 = q + 2 * qs;
  const uint8_t* q3 = q + 3 * qs;
  for (int p = 0; p < nquads; ++p) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k0 + 32 * p));
    __m256i b1 = b0;
    if (NB == 2) b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k1 + 32 * p));
    __m256i a = _mm256_set1_epi32(x86pack::load_i32(q0 + 4 * p));
    c00 = EB_QK_DOT4(c00, a, b0);
    if (NB == 2) c01 = EB_QK_DOT4(c01, a, b1);
    a = _mm256_set1_epi32(x86pack::load_i32(q1 + 4 * p));
    c10 = EB_QK_DOT4(c10, a, b0);
    if (NB == 2) c11 = EB_QK_DOT4(c11, a, b1);
    a = _mm256_set1_epi32(x86pack::load_i32(q2 + 4 * p));
    c20 = EB_QK_DOT4(c20, a, b0);
    if (NB == 2) c21 = EB_QK_DOT4(c21, a, b1);
    a = _mm256_set1_epi32(x86pack::load_i32(q3 + 4 * p));
    c30 = EB_QK_DOT4(c30, a, b0);
    if (NB == 2) c31 = EB_QK_DOT4(c31, a, b1);
  }
  const __m256i acc[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
  store_scores<NB>(acc, srow, rows, j0, kc_last, scale, vmax);
}
#else
constexpr bool kQkDot4 = false;
#endif

// Bytes of one packed block of 8 keys.
static inline size_t kblock_bytes(int hd) {
  return kQkDot4 ? 32 + 32 * static_cast<size_t>((hd + 3) / 4) : 8 * static_cast<size_t>(hd);
}

// Where pack() put V (groups of 4 keys, the last one partial) and K (blocks of 8 keys).
struct PackedKv {
  int nvalid, ngroups, vrem, nblocks;
  int8_t* v;
  int8_t* k;
  size_t kbb;  // bytes per K block
};

static PackedKv packed_layout(const AttentionHeadS8& a, int nvalid) {
  PackedKv p;
  p.nvalid = nvalid;
  p.ngroups = nvalid / 4;
  p.vrem = nvalid % 4;
  p.nblocks = (nvalid + 7) / 8;
  p.v = a.packed;
  const size_t vbytes = static_cast<size_t>((nvalid + 3) / 4) * 4 * static_cast<size_t>(a.head_dim) + 64;
  p.k = a.packed + ((vbytes + 31) & ~static_cast<size_t>(31));
  p.kbb = kblock_bytes(a.head_dim);
  return p;
}

static void pack_s8(const AttentionHeadS8& a) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || hd > kMaxHd) return;  // larger heads: the portable rows read K, V in place
  const int nvalid = attention_valid_keys(a.key_mask, a.n);
  if (nvalid == 0) return;
  const PackedKv p = packed_layout(a, nvalid);
  const size_t stride = a.qkv_stride, gbytes = 4 * static_cast<size_t>(hd);
  const int8_t* vg[4] = {nullptr, nullptr, nullptr, nullptr};
  const int8_t* kg[8] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  int nv = 0, nk = 0, g = 0, kb = 0;
  auto flush_k = [&]() {
    if (kQkDot4) {
#ifdef EB_QK_DOT4
      pack_kblock8_dot4(kg, hd, p.k + static_cast<size_t>(kb) * p.kbb);
#endif
    } else {
      pack_kblock8(kg, hd, p.k + static_cast<size_t>(kb) * p.kbb);
    }
    ++kb;
    nk = 0;
    for (auto& r : kg) r = nullptr;
  };
  for (int j = 0; j < n; ++j) {
    if (a.key_mask != nullptr && a.key_mask[j] == 0) continue;
    vg[nv++] = a.v + static_cast<size_t>(j) * stride;
    kg[nk++] = a.k + static_cast<size_t>(j) * stride;
    if (nv == 4) {
      x86pack::pack_group4(vg, hd, p.v + static_cast<size_t>(g++) * gbytes);
      nv = 0;
      for (auto& r : vg) r = nullptr;
    }
    if (nk == 8) flush_k();
  }
  if (nv > 0) x86pack::pack_group4(vg, hd, p.v + static_cast<size_t>(g++) * gbytes);
  std::memset(p.v + static_cast<size_t>(g) * gbytes, 0, 64);  // read (and discarded) by the last channel tile
  if (nk > 0) flush_k();
}

constexpr size_t kQs = kMaxHd + 16;  // int16 per query row in a block: keeps every row 32-byte aligned

// Query rows [i0, i0 + rows) (rows <= 4) of a block into qbuf (4 rows of kQs int16; missing rows
// zero): AVX2 widened to int16 and zero-padded to an even length (qodd[r]: the odd last channel
// as an int16 pair); VNNI as u8 (q + 128) zero-padded to whole quads. srow[r] = row r's scores
// (row 0's for missing rows).
static void load_query_block(const AttentionHeadS8& a, int i0, int rows, int row_begin, int16_t* qbuf,
                             int32_t qodd[4], float* srow[4]) {
  const int hd = a.head_dim;
  for (int r = 0; r < 4; ++r) {
    const int8_t* src = r < rows ? a.q + static_cast<size_t>(i0 + r) * a.qkv_stride : nullptr;
    if (kQkDot4) {
      uint8_t* qb = reinterpret_cast<uint8_t*>(qbuf + r * kQs);
      const int padded = 4 * ((hd + 3) / 4);
      int d = 0;
      if (src != nullptr) {
        const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
        for (; d + 32 <= hd; d += 32)
          _mm256_store_si256(reinterpret_cast<__m256i*>(qb + d),
                             _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + d)), bias));
        for (; d < hd; ++d) qb[d] = static_cast<uint8_t>(src[d] ^ 0x80);
      }
      for (; d < padded; ++d) qb[d] = 0;  // K is zero there
    } else {
      int16_t* qb = qbuf + r * kQs;
      if (src != nullptr) {
        int d = 0;
        for (; d + 16 <= hd; d += 16)
          _mm256_store_si256(reinterpret_cast<__m256i*>(qb + d),
                             _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + d))));
        for (; d < hd; ++d) qb[d] = src[d];
        qb[hd] = 0;
        qodd[r] = static_cast<uint16_t>(src[hd - 1]);  // (q_last, 0) as an int16 pair
      } else {
        std::memset(qb, 0, sizeof(int16_t) * static_cast<size_t>(hd + 1));
        qodd[r] = 0;
      }
    }
    srow[r] = a.scores + static_cast<size_t>(i0 - row_begin + (r < rows ? r : 0)) * a.n;
  }
}

// Scores of a query block against the packed K blocks [b_begin, b_end) of 8 keys (nkeys keys
// packed in all): srow[r][j] for the keys of those blocks; vmax[r] = running max of what was written.
static void score_blocks(const int16_t* qbuf, const int32_t qodd[4], const PackedKv& pk, int b_begin, int b_end, int nkeys,
                         int hd, float* const* srow, int rows, __m256 vscale, __m256* vmax) {
  [[maybe_unused]] const int npairs = hd / 2;
  [[maybe_unused]] const bool odd = (hd % 2) != 0;
  for (int b0 = b_begin; b0 < b_end; b0 += 2) {
    const int nb = b_end - b0 >= 2 ? 2 : 1;
    const int j_last = 8 * (b0 + nb - 1);
    const int kc_last = nkeys - j_last < 8 ? nkeys - j_last : 8;
    const int8_t* k0 = pk.k + static_cast<size_t>(b0) * pk.kbb;
    const int8_t* k1 = nb == 2 ? k0 + pk.kbb : k0;
#ifdef EB_QK_DOT4
    (void)qodd;
    const uint8_t* qu = reinterpret_cast<const uint8_t*>(qbuf);
    const int nquads = (hd + 3) / 4;
    if (nb == 2)
      qk_block_dot4<2>(qu, 2 * kQs, k0, k1, nquads, srow, rows, 8 * b0, kc_last, vscale, vmax);
    else
      qk_block_dot4<1>(qu, 2 * kQs, k0, k1, nquads, srow, rows, 8 * b0, kc_last, vscale, vmax);
#else
    if (nb == 2) {
      if (odd)
        qk_block<2, true>(qbuf, kQs, qodd, k0, k1, npairs, srow, rows, 8 * b0, kc_last, vscale, vmax);
      else
        qk_block<2, false>(qbuf, kQs, qodd, k0, k1, npairs, srow, rows, 8 * b0, kc_last, vscale, vmax);
    } else {
      if (odd)
        qk_block<1, true>(qbuf, kQs, qodd, k0, k1, npairs, srow, rows, 8 * b0, kc_last, vscale, vmax);
      else
        qk_block<1, false>(qbuf, kQs, qodd, k0, k1, npairs, srow, rows, 8 * b0, kc_last, vscale, vmax);
    }
#endif
  }
}

static void rows_s8(const AttentionHeadS8& a, int row_begin, int row_end) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || row_begin >= row_end) return;
  if (hd > kMaxHd) {
    kAttentionS8Portable.rows(a, row_begin, row_end);
    return;
  }
  const int32_t zp = a.context_zero_point;
  const size_t row_bytes = static_cast<size_t>(hd);
  const int nvalid = attention_valid_keys(a.key_mask, a.n);
  if (nvalid == 0) {
    attention_s8_fill_unattended(a, row_begin, row_end);
    return;
  }
  const PackedKv pk = packed_layout(a, nvalid);
  const int ngroups = pk.ngroups, vrem = pk.vrem, nblocks_total = pk.nblocks;

  alignas(32) int16_t qbuf[4 * kQs];
  int32_t qodd[4] = {0, 0, 0, 0};
  const float score_scale = detail::attention_score_scale(a.q_scale, a.k_scale, hd);
  const __m256 vscale = _mm256_set1_ps(score_scale);
  PvArgs pv;
  pv.vpack = pk.v;
  pv.ngroups = ngroups;
  pv.vtail = vrem > 0 ? pk.v + static_cast<size_t>(ngroups) * 4 * row_bytes : nullptr;
  pv.hd = hd;

  for (int i0 = row_begin; i0 < row_end; i0 += 4) {
    const int rows = row_end - i0 < 4 ? row_end - i0 : 4;
    float* srow[4];
    load_query_block(a, i0, rows, row_begin, qbuf, qodd, srow);

    // ---- scores (valid keys only, compacted order) and their row maxima
    __m256 vmax[4];
    for (auto& m : vmax) m = _mm256_set1_ps(-__builtin_inff());
    score_blocks(qbuf, qodd, pk, 0, nblocks_total, nvalid, hd, srow, rows, vscale, vmax);

    // ---- softmax -> uint8 probabilities (exp pass for all rows first, then quantization)
    for (int r = 0; r < rows; ++r) softmax_exp_pass(srow[r], nvalid, avx2::hmax_ps(vmax[r]));
    float out_mult[4] = {0, 0, 0, 0};
    for (int r = 0; r < 4; ++r) {
      const int rr = r < rows ? r : 0;
      uint8_t* prow = a.probs + static_cast<size_t>(i0 - row_begin + rr) * n;
      if (r < rows) {
        const int32_t prob_sum = softmax_quantize_pass(srow[r], nvalid, detail::attention_prob_multiplier(), prow);
        out_mult[r] = detail::attention_context_multiplier(a.v_scale, a.context_scale, prob_sum);
      }
      pv.prow[r] = prow;
      pv.out[r] = attention_context_row(a, i0 + rr);
      pv.out_f32[r] = attention_context_row_f32(a, i0 + rr);
    }
    for (int r = 0; r < 4; ++r) {
      uint32_t w = 0;
      for (int t = 0; t < vrem; ++t) w |= static_cast<uint32_t>(pv.prow[r][ngroups * 4 + t]) << (8 * t);
      pv.tail_word[r] = static_cast<int32_t>(w);
    }
    pv.rows = rows;

    // ---- context = P.V
    pv_block(pv, out_mult, zp);
  }
}

// ---- sliding window (attention_window.h), blocked as the AVX-512 variant: every key packed
// once (pack_window_s8), then per block of 4 query rows the scores of the 8-key blocks over the
// band, each row's window softmax (window_band_row: the full kernel's two passes) and P.V over the
// band's groups. The portable window body's bytes (exact int32 sums, the same float steps per key).
static void pack_window_s8(const AttentionHeadS8& a) { pack_window_all_keys(a, pack_s8); }

static float row_max8(const float* s, int len) {
  __m256 m = _mm256_set1_ps(-__builtin_inff());
  int j = 0;
  for (; j + 8 <= len; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + j));
  float r = avx2::hmax_ps(m);
  for (; j < len; ++j) r = s[j] > r ? s[j] : r;
  return r;
}

// s: the window's scores in this row's scratch; the exps replace them.
static int32_t softmax_two_pass(float* s, int len, float m, uint8_t* out) {
  softmax_exp_pass(s, len, m);
  return softmax_quantize_pass(s, len, detail::attention_prob_multiplier(), out);
}

static void rows_window_s8(const AttentionHeadS8& a, KeyWindow window, int row_begin, int row_end) {
  if (window_rows_done_elsewhere(a, window, row_begin, row_end, kMaxHd)) return;
  const int n = a.n, hd = a.head_dim;
  const PackedKv pk = packed_layout(a, n);
  alignas(32) int16_t qbuf[4 * kQs];
  int32_t qodd[4] = {0, 0, 0, 0};
  const __m256 vscale = _mm256_set1_ps(detail::attention_score_scale(a.q_scale, a.k_scale, hd));
  PvArgs pv;
  pv.hd = hd;
  for_each_band_block(row_begin, row_end, window, n, [&](int i0, int rows, const WindowBand& band) {
    float* srow[4];
    load_query_block(a, i0, rows, row_begin, qbuf, qodd, srow);
    __m256 vmax[4];  // unused: each row's maximum is taken over its own window
    for (auto& m : vmax) m = _mm256_set1_ps(-__builtin_inff());
    score_blocks(qbuf, qodd, pk, band.lo / 8, (band.hi + 7) / 8, n, hd, srow, rows, vscale, vmax);
    window_band_block(a, window, i0, rows, row_begin, band, srow, pk.v, pv, row_max8, softmax_two_pass, pv_block);
  });
}

}  // namespace

const AttentionS8Kernel EB_ATTENTION_S8_KERNEL = {EB_ATTENTION_S8_KERNEL_NAME, pack_s8, rows_s8};
void EB_ATTENTION_S8_WINDOW_PACK(const AttentionHeadS8& a) { pack_window_s8(a); }
void EB_ATTENTION_S8_WINDOW_ROWS(const AttentionHeadS8& a, KeyWindow window, int row_begin, int row_end) {
  rows_window_s8(a, window, row_begin, row_end);
}

// =============================================================================================
// fp32
#ifdef EB_ATTENTION_WITH_F32
namespace {

static inline __m256 loadf_masked(const float* p, int cnt, __m256i mask) {
  return cnt >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}

// 2 query rows x 4 keys, dot products over hd floats; returns [q0.k0..q0.k3 | q1.k0..q1.k3].
static inline __m256 qk_dot_f32_2x4(const float* q0, const float* q1, const float* k0, const float* k1,
                                    const float* k2, const float* k3, int hd, __m256i tail) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c03 = c00;
  __m256 c10 = c00, c11 = c00, c12 = c00, c13 = c00;
  int d = 0;
  for (; d + 8 <= hd; d += 8) {
    const __m256 a0 = _mm256_loadu_ps(q0 + d), a1 = _mm256_loadu_ps(q1 + d);
    __m256 b = _mm256_loadu_ps(k0 + d);
    c00 = avx2::madd(a0, b, c00);
    c10 = avx2::madd(a1, b, c10);
    b = _mm256_loadu_ps(k1 + d);
    c01 = avx2::madd(a0, b, c01);
    c11 = avx2::madd(a1, b, c11);
    b = _mm256_loadu_ps(k2 + d);
    c02 = avx2::madd(a0, b, c02);
    c12 = avx2::madd(a1, b, c12);
    b = _mm256_loadu_ps(k3 + d);
    c03 = avx2::madd(a0, b, c03);
    c13 = avx2::madd(a1, b, c13);
  }
  if (d < hd) {
    const __m256 a0 = _mm256_maskload_ps(q0 + d, tail), a1 = _mm256_maskload_ps(q1 + d, tail);
    __m256 b = _mm256_maskload_ps(k0 + d, tail);
    c00 = avx2::madd(a0, b, c00);
    c10 = avx2::madd(a1, b, c10);
    b = _mm256_maskload_ps(k1 + d, tail);
    c01 = avx2::madd(a0, b, c01);
    c11 = avx2::madd(a1, b, c11);
    b = _mm256_maskload_ps(k2 + d, tail);
    c02 = avx2::madd(a0, b, c02);
    c12 = avx2::madd(a1, b, c12);
    b = _mm256_maskload_ps(k3 + d, tail);
    c03 = avx2::madd(a0, b, c03);
    c13 = avx2::madd(a1, b, c13);
  }
  const __m256 g0 = _mm256_hadd_ps(_mm256_hadd_ps(c00, c01), _mm256_hadd_ps(c02, c03));
  const __m256 g1 = _mm256_hadd_ps(_mm256_hadd_ps(c10, c11), _mm256_hadd_ps(c12, c13));
  return _mm256_add_ps(_mm256_permute2f128_ps(g0, g1, 0x20), _mm256_permute2f128_ps(g0, g1, 0x31));
}

// In place: s[0..n) -> probabilities (masked keys -> 0).
static void softmax_row_f32(float* s, int n, const uint8_t* mask) {
  if (mask != nullptr)
    for (int j = 0; j < n; ++j)
      if (mask[j] == 0) s[j] = -__builtin_inff();
  __m256 vm = _mm256_set1_ps(-__builtin_inff());
  int j = 0;
  for (; j + 8 <= n; j += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(s + j));
  float m = avx2::hmax_ps(vm);
  for (; j < n; ++j) m = s[j] > m ? s[j] : m;
  vm = _mm256_set1_ps(m);
  __m256 vsum = _mm256_setzero_ps();
  j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 e = avx2::exp_ps(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
    _mm256_storeu_ps(s + j, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  if (j < n) {
    const __m256i mask8 = avx2::tail_mask(static_cast<size_t>(n - j));
    __m256 e = avx2::exp_ps(_mm256_sub_ps(_mm256_maskload_ps(s + j, mask8), vm));
    e = _mm256_and_ps(e, _mm256_castsi256_ps(mask8));
    _mm256_maskstore_ps(s + j, mask8, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / avx2::hsum_ps(vsum));
  j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(s + j, _mm256_mul_ps(_mm256_loadu_ps(s + j), inv));
  if (j < n) {
    const __m256i mask8 = avx2::tail_mask(static_cast<size_t>(n - j));
    _mm256_maskstore_ps(s + j, mask8, _mm256_mul_ps(_mm256_maskload_ps(s + j, mask8), inv));
  }
}

}  // namespace

void attention_rows_f32_avx2(const AttentionHeadF32& a, int row_begin, int row_end) {
  const int n = a.n, hd = a.head_dim;
  if (n <= 0 || hd <= 0 || row_begin >= row_end) return;
  const size_t stride = a.qkv_stride;
  if (attention_valid_keys(a.key_mask, n) == 0) {  // no key attended: HF's uniform softmax
    attention_f32_fill_unattended(a, row_begin, row_end);
    return;
  }
  const __m256 vscale = _mm256_set1_ps(1.0f / __builtin_sqrtf(static_cast<float>(hd)));
  const __m256i qk_tail = avx2::tail_mask(static_cast<size_t>(hd % 8));

  for (int i0 = row_begin; i0 < row_end; i0 += 4) {
    const int rows = row_end - i0 < 4 ? row_end - i0 : 4;
    const float* qr[4];
    float* srow[4];
    float* out[4];
    for (int r = 0; r < 4; ++r) {
      const int rr = r < rows ? r : 0;
      qr[r] = a.q + static_cast<size_t>(i0 + rr) * stride;
      srow[r] = a.scores + static_cast<size_t>(i0 - row_begin + rr) * n;
      out[r] = a.context + static_cast<size_t>(i0 + rr) * a.context_stride;
    }
    // scores
    for (int j0 = 0; j0 < n; j0 += 4) {
      const int kc = n - j0 < 4 ? n - j0 : 4;
      const float* kp[4];
      for (int t = 0; t < 4; ++t) kp[t] = a.k + static_cast<size_t>(j0 + (t < kc ? t : 0)) * stride;
      for (int rp = 0; rp < rows; rp += 2) {
        const __m256 f = _mm256_mul_ps(
            qk_dot_f32_2x4(qr[rp], qr[rp + 1], kp[0], kp[1], kp[2], kp[3], hd, qk_tail), vscale);
        if (kc == 4) {
          _mm_storeu_ps(srow[rp] + j0, _mm256_castps256_ps128(f));
          if (rp + 1 < rows) _mm_storeu_ps(srow[rp + 1] + j0, _mm256_extractf128_ps(f, 1));
        } else {
          alignas(32) float tmp[8];
          _mm256_store_ps(tmp, f);
          for (int t = 0; t < kc; ++t) srow[rp][j0 + t] = tmp[t];
          if (rp + 1 < rows)
            for (int t = 0; t < kc; ++t) srow[rp + 1][j0 + t] = tmp[4 + t];
        }
      }
    }
    for (int r = 0; r < rows; ++r) softmax_row_f32(srow[r], n, a.key_mask);

    // context = P.V, 4 rows x 16 channels per step
    for (int d0 = 0; d0 < hd; d0 += 16) {
      const int cnt = hd - d0 < 16 ? hd - d0 : 16;
      const __m256i m0 = avx2::tail_mask(static_cast<size_t>(cnt < 8 ? cnt : 8));
      const __m256i m1 = avx2::tail_mask(static_cast<size_t>(cnt > 8 ? cnt - 8 : 0));
      __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00;
      __m256 a20 = a00, a21 = a00, a30 = a00, a31 = a00;
      const float* vp = a.v + d0;
      for (int j = 0; j < n; ++j, vp += stride) {
        if (a.key_mask != nullptr && a.key_mask[j] == 0) continue;
        const __m256 v0 = loadf_masked(vp, cnt, m0);
        const __m256 v1 = loadf_masked(vp + 8, cnt - 8, m1);
        __m256 p = _mm256_broadcast_ss(srow[0] + j);
        a00 = avx2::madd(p, v0, a00);
        a01 = avx2::madd(p, v1, a01);
        p = _mm256_broadcast_ss(srow[1] + j);
        a10 = avx2::madd(p, v0, a10);
        a11 = avx2::madd(p, v1, a11);
        p = _mm256_broadcast_ss(srow[2] + j);
        a20 = avx2::madd(p, v0, a20);
        a21 = avx2::madd(p, v1, a21);
        p = _mm256_broadcast_ss(srow[3] + j);
        a30 = avx2::madd(p, v0, a30);
        a31 = avx2::madd(p, v1, a31);
      }
      const __m256 res[4][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}};
      for (int r = 0; r < rows; ++r) {
        if (cnt == 16) {
          _mm256_storeu_ps(out[r] + d0, res[r][0]);
          _mm256_storeu_ps(out[r] + d0 + 8, res[r][1]);
        } else {
          _mm256_maskstore_ps(out[r] + d0, m0, res[r][0]);
          if (cnt > 8) _mm256_maskstore_ps(out[r] + d0 + 8, m1, res[r][1]);
        }
      }
    }
  }
}

#endif  // EB_ATTENTION_WITH_F32

}  // namespace kernels
}  // namespace edgebert
