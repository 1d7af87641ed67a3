// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding on int8 heads, NEON (aarch64): the portable recipe of rope.h on 4
// pairs at a time, lane by lane the same IEEE operations (dequantize, two products, one add or
// subtract, requantize; nothing fused: -ffp-contract=off), so the same bytes. Rotate-half pairs
// are two contiguous runs and vld2q_f32 splits the table's {cos, sin}; interleaved pairs meet the
// table lane for lane (cos, sin duplicated by vtrn, the partner by vrev64). Tails run the
// portable per-pair steps.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/numerics.h"
#include "kernels/rope.h"
#include "kernels/rope_impl.h"

namespace edgebert {
namespace kernels {

namespace {

struct Scales {
  float in, inv;
  float32x4_t vin, vinv, lo, hi;
};

inline float32x4_t load_dequant4(const int8_t* p, const Scales& s) {
  int32_t word;
  std::memcpy(&word, p, 4);
  const int16x8_t w = vmovl_s8(vreinterpret_s8_s32(vdup_n_s32(word)));
  return vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(w))), s.vin);
}
inline void store_quant4(int8_t* p, float32x4_t v, const Scales& s) {
  const int32x4_t q = vcvtnq_s32_f32(vminq_f32(vmaxq_f32(vmulq_f32(v, s.vinv), s.lo), s.hi));
  const int8x8_t b = vmovn_s16(vcombine_s16(vmovn_s32(q), vdup_n_s16(0)));
  const int32_t word = vget_lane_s32(vreinterpret_s32_s8(b), 0);
  std::memcpy(p, &word, 4);
}

void rotate_half(int8_t* hx, const float* cs, int half, const Scales& s) {
  int i = 0;
  for (; i + 4 <= half; i += 4) {
    const float32x4x2_t t = vld2q_f32(cs + 2 * i);  // val[0] cos, val[1] sin of pairs i..i+3
    const float32x4_t va = load_dequant4(hx + i, s), vb = load_dequant4(hx + half + i, s);
    store_quant4(hx + i, vsubq_f32(vmulq_f32(va, t.val[0]), vmulq_f32(vb, t.val[1])), s);
    store_quant4(hx + half + i, vaddq_f32(vmulq_f32(vb, t.val[0]), vmulq_f32(va, t.val[1])), s);
  }
  for (; i < half; ++i) rope_pair_s8(hx, i, half + i, cs[2 * i], cs[2 * i + 1], s.in, s.inv);
}

void interleaved(int8_t* hx, const float* cs, int rotary_dim, const Scales& s) {
  const uint32x4_t odd = vreinterpretq_u32_u64(vdupq_n_u64(0xFFFFFFFF00000000ULL));  // lanes 1 and 3
  int d = 0;
  for (; d + 4 <= rotary_dim; d += 4) {
    const float32x4_t t = vld1q_f32(cs + d);  // c0 s0 c1 s1
    const float32x4_t c = vtrn1q_f32(t, t), sn = vtrn2q_f32(t, t);
    const float32x4_t v = load_dequant4(hx + d, s);        // a0 b0 a1 b1
    const float32x4_t p = vmulq_f32(v, c);                 // a c, b c
    const float32x4_t q = vmulq_f32(vrev64q_f32(v), sn);   // b s, a s
    store_quant4(hx + d, vbslq_f32(odd, vaddq_f32(p, q), vsubq_f32(p, q)), s);
  }
  for (; d < rotary_dim; d += 2) rope_pair_s8(hx, d, d + 1, cs[d], cs[d + 1], s.in, s.inv);
}

// Channels past rotary_dim keep their value, requantized when the scales differ.
void pass_through(int8_t* hx, int from, int to, const Scales& s) {
  for (int d = from; d < to; ++d) hx[d] = rope_pass_s8(hx[d], s.in, s.inv);
}

}  // namespace

void rope_s8_neon(const RopeArgs& a, float in_scale, float out_scale, int8_t* x) {
  const float inv = 1.0f / out_scale;
  const Scales s{in_scale, inv, vdupq_n_f32(in_scale), vdupq_n_f32(inv), vdupq_n_f32(-128.0f), vdupq_n_f32(127.0f)};
  rope_s8_heads(a, in_scale, out_scale, x, s, rotate_half, interleaved, pass_through);
}

}  // namespace kernels
}  // namespace edgebert

#endif  // __aarch64__
