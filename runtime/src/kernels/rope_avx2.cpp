// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding on int8 heads, AVX2: the portable recipe of rope.h on 8 pairs at a
// time, lane by lane the same IEEE operations (dequantize, two products, one add or subtract,
// requantize; nothing fused: -ffp-contract=off), so the same bytes. Rotate-half pairs are two
// contiguous runs and two permutes and two 128-bit shuffles split the table's {cos, sin}; interleaved pairs meet
// the table lane for lane (cos and sin duplicated by movldup / movhdup, the partner by an in-lane
// swap). Tails run the portable per-pair steps. (AVX2-only CPUs, e.g. Zen 2 / Zen 3 EPYC, ran
// the portable rotation before.)
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/numerics.h"
#include "kernels/rope.h"
#include "kernels/rope_impl.h"
#include "kernels/simd_avx2.h"

namespace edgebert {
namespace kernels {

namespace {

struct Scales {
  float in, inv;
  __m256 vin, vinv, lo, hi;
  __m256i zero;
};

inline __m256 load_dequant8(const int8_t* p, const Scales& s) {
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))),
                       s.vin);
}
inline void store_quant8(int8_t* p, __m256 v, const Scales& s) {
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), avx2::quantize8_ps(_mm256_mul_ps(v, s.vinv), s.lo, s.hi, s.zero));
}

void rotate_half(int8_t* hx, const float* cs, int half, const Scales& s) {
  // {c0 s0 c1 s1 c2 s2 c3 s3} -> {c0 c1 c2 c3 s0 s1 s2 s3}; two of them give 8 cos and 8 sin
  const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  int i = 0;
  for (; i + 8 <= half; i += 8) {
    const __m256 t0 = _mm256_permutevar8x32_ps(_mm256_loadu_ps(cs + 2 * i), split);
    const __m256 t1 = _mm256_permutevar8x32_ps(_mm256_loadu_ps(cs + 2 * i + 8), split);
    const __m256 c = _mm256_permute2f128_ps(t0, t1, 0x20), sn = _mm256_permute2f128_ps(t0, t1, 0x31);
    const __m256 va = load_dequant8(hx + i, s), vb = load_dequant8(hx + half + i, s);
    store_quant8(hx + i, _mm256_sub_ps(_mm256_mul_ps(va, c), _mm256_mul_ps(vb, sn)), s);
    store_quant8(hx + half + i, _mm256_add_ps(_mm256_mul_ps(vb, c), _mm256_mul_ps(va, sn)), s);
  }
  for (; i < half; ++i) rope_pair_s8(hx, i, half + i, cs[2 * i], cs[2 * i + 1], s.in, s.inv);
}

void interleaved(int8_t* hx, const float* cs, int rotary_dim, const Scales& s) {
  int d = 0;
  for (; d + 8 <= rotary_dim; d += 8) {
    const __m256 t = _mm256_loadu_ps(cs + d);  // c0 s0 c1 s1 ...
    const __m256 c = _mm256_moveldup_ps(t), sn = _mm256_movehdup_ps(t);
    const __m256 v = load_dequant8(hx + d, s);                     // a0 b0 a1 b1 ...
    const __m256 p = _mm256_mul_ps(v, c);                          // a c, b c
    const __m256 q = _mm256_mul_ps(_mm256_permute_ps(v, 0xB1), sn);  // b s, a s
    store_quant8(hx + d, _mm256_blend_ps(_mm256_sub_ps(p, q), _mm256_add_ps(p, q), 0xAA), s);
  }
  for (; d < rotary_dim; d += 2) rope_pair_s8(hx, d, d + 1, cs[d], cs[d + 1], s.in, s.inv);
}

// Channels past rotary_dim keep their value, requantized when the scales differ.
void pass_through(int8_t* hx, int from, int to, const Scales& s) {
  int d = from;
  for (; d + 8 <= to; d += 8) store_quant8(hx + d, load_dequant8(hx + d, s), s);
  for (; d < to; ++d) hx[d] = rope_pass_s8(hx[d], s.in, s.inv);
}

}  // namespace

void rope_s8_avx2(const RopeArgs& a, float in_scale, float out_scale, int8_t* x) {
  const float inv = 1.0f / out_scale;
  const Scales s{in_scale,           inv, _mm256_set1_ps(in_scale), _mm256_set1_ps(inv), _mm256_set1_ps(-128.0f),
                 _mm256_set1_ps(127.0f), _mm256_setzero_si256()};
  rope_s8_heads(a, in_scale, out_scale, x, s, rotate_half, interleaved, pass_through);
}

}  // namespace kernels
}  // namespace edgebert
