// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding on int8 heads, AVX-512 (F/BW/DQ/VL): the portable recipe of rope.h on
// 16 pairs at a time, lane by lane the same IEEE operations (dequantize, two products, one add or
// subtract, requantize), so the same bytes. Rotate-half pairs (x[i], x[i + half]) are two
// contiguous runs; the table's interleaved {cos, sin} are split with two permutes. Interleaved
// pairs (x[2i], x[2i + 1]) meet the table lane for lane: cos and sin are its even and odd lanes
// duplicated, the partner of each lane is its neighbour (an in-lane swap).
#include "kernels/avx512_intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/rope.h"
#include "kernels/rope_impl.h"
#include "kernels/simd_avx512.h"

namespace edgebert {
namespace kernels {

namespace {

struct Scales {
  __m512 in, inv, lo, hi;
  __m512i zero;
};

inline __m512 load_dequant16(const int8_t* p, __mmask16 m, const Scales& s) {
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, p))), s.in);
}
inline void store_quant16(int8_t* p, __mmask16 m, __m512 v, const Scales& s) {
  _mm_mask_storeu_epi8(p, m, avx512::quantize16_ps(_mm512_mul_ps(v, s.inv), s.lo, s.hi, s.zero));
}

void rotate_half(int8_t* hx, const float* cs, int half, const Scales& s) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int i = 0; i < half; i += 16) {
    const size_t pairs = static_cast<size_t>(half - i < 16 ? half - i : 16);
    const __mmask16 m = avx512::tail_mask16(pairs);
    const __m512 t0 = _mm512_maskz_loadu_ps(avx512::tail_mask16(2 * pairs), cs + 2 * i);
    const __m512 t1 = _mm512_maskz_loadu_ps(avx512::tail_mask16(pairs > 8 ? 2 * pairs - 16 : 0), cs + 2 * i + 16);
    const __m512 c = _mm512_permutex2var_ps(t0, even, t1), sn = _mm512_permutex2var_ps(t0, odd, t1);
    const __m512 va = load_dequant16(hx + i, m, s), vb = load_dequant16(hx + half + i, m, s);
    store_quant16(hx + i, m, _mm512_sub_ps(_mm512_mul_ps(va, c), _mm512_mul_ps(vb, sn)), s);
    store_quant16(hx + half + i, m, _mm512_add_ps(_mm512_mul_ps(vb, c), _mm512_mul_ps(va, sn)), s);
  }
}

void interleaved(int8_t* hx, const float* cs, int rotary_dim, const Scales& s) {
  const __mmask16 odd_lanes = 0xAAAA;
  for (int d = 0; d < rotary_dim; d += 16) {
    const __mmask16 m = avx512::tail_mask16(static_cast<size_t>(rotary_dim - d));
    const __m512 t = _mm512_maskz_loadu_ps(m, cs + d);  // {cos, sin} of pair d/2 + l/2 at lanes l, l + 1
    const __m512 c = _mm512_moveldup_ps(t), sn = _mm512_movehdup_ps(t);
    const __m512 v = load_dequant16(hx + d, m, s);                  // a, b, a, b, ...
    const __m512 p = _mm512_mul_ps(v, c);                           // a c, b c
    const __m512 q = _mm512_mul_ps(_mm512_permute_ps(v, 0xB1), sn);  // b s, a s
    store_quant16(hx + d, m, _mm512_mask_add_ps(_mm512_sub_ps(p, q), odd_lanes, p, q), s);
  }
}

// Channels past rotary_dim keep their value, requantized when the scales differ.
void pass_through(int8_t* hx, int from, int to, const Scales& s) {
  for (int d = from; d < to; d += 16) {
    const __mmask16 m = avx512::tail_mask16(static_cast<size_t>(to - d));
    store_quant16(hx + d, m, load_dequant16(hx + d, m, s), s);
  }
}

}  // namespace

void rope_s8_avx512(const RopeArgs& a, float in_scale, float out_scale, int8_t* x) {
  const Scales s{_mm512_set1_ps(in_scale), _mm512_set1_ps(1.0f / out_scale), _mm512_set1_ps(-128.0f),
                 _mm512_set1_ps(127.0f), _mm512_setzero_si512()};
  rope_s8_heads(a, in_scale, out_scale, x, s, rotate_half, interleaved, pass_through);
}

}  // namespace kernels
}  // namespace edgebert
