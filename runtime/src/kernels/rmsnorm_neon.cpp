// SPDX-License-Identifier: Apache-2.0
// RMSNorm's sum of squares (8 double lanes in rmsnorm.h's order: four float64x2 accumulators)
// and the per-head RMSNorm of int8 heads (the exact integer sum of squares, then the portable
// float steps per channel, nothing fused), NEON (aarch64): the same values and bytes as the
// portable code. Tails run the portable steps.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/numerics.h"
#include "kernels/rmsnorm.h"

namespace edgebert {
namespace kernels {

double sum_squares_f64_neon(const float* x, size_t n) {
  float64x2_t acc[4] = {vdupq_n_f64(0), vdupq_n_f64(0), vdupq_n_f64(0), vdupq_n_f64(0)};  // lanes 0-1, 2-3, 4-5, 6-7
  size_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const float32x4_t a = vld1q_f32(x + c), b = vld1q_f32(x + c + 4);
    const float64x2_t v[4] = {vcvt_f64_f32(vget_low_f32(a)), vcvt_high_f64_f32(a), vcvt_f64_f32(vget_low_f32(b)),
                              vcvt_high_f64_f32(b)};
    for (int k = 0; k < 4; ++k) acc[k] = vaddq_f64(acc[k], vmulq_f64(v[k], v[k]));  // exact square, then the add
  }
  double lane[8];
  for (int k = 0; k < 4; ++k) vst1q_f64(lane + 2 * k, acc[k]);
  return sum_squares_finish(lane, x, c, n);
}

void rmsnorm_heads_s8_neon(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                           const float* gamma, float eps, const float* in_scales, const float* out_scales) {
  const size_t d = static_cast<size_t>(head_dim);
  const float32x4_t lo = vdupq_n_f32(-128.0f), hi = vdupq_n_f32(127.0f);
  rmsnorm_for_each_head(x, rows, stride, first, heads, d, [&](int8_t* v, int h) {
    int32x4_t sq = vdupq_n_s32(0);
    size_t c = 0;
    for (; c + 16 <= d; c += 16) {  // (-128)^2 fits int16; pairs summed into int32
      const int8x16_t q = vld1q_s8(v + c);
      sq = vpadalq_s16(sq, vmull_s8(vget_low_s8(q), vget_low_s8(q)));
      sq = vpadalq_s16(sq, vmull_high_s8(q, q));
    }
    const HeadNorm hn = head_norm_of(v, c, d, vaddvq_s32(sq), in_scales[h], out_scales[h], eps);
    const float32x4_t vin = vdupq_n_f32(hn.in), vinv = vdupq_n_f32(hn.inv_rms), vout = vdupq_n_f32(hn.inv_out);
    c = 0;
    for (; c + 8 <= d; c += 8) {
      const int16x8_t w = vmovl_s8(vld1_s8(v + c));
      int32x4_t q[2];
      for (int k = 0; k < 2; ++k) {
        const float32x4_t f = vcvtq_f32_s32(vmovl_s16(k == 0 ? vget_low_s16(w) : vget_high_s16(w)));
        const float32x4_t y = vmulq_f32(vmulq_f32(vmulq_f32(f, vin), vinv), vld1q_f32(gamma + c + 4 * k));
        q[k] = vcvtnq_s32_f32(vminq_f32(vmaxq_f32(vmulq_f32(y, vout), lo), hi));
      }
      vst1_s8(v + c, vmovn_s16(vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]))));
    }
    for (; c < d; ++c) v[c] = rmsnorm_head_value(v[c], hn.in, hn.inv_rms, gamma[c], hn.inv_out);
  });
}

}  // namespace kernels
}  // namespace edgebert

#endif  // __aarch64__
