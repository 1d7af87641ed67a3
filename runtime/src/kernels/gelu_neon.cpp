// SPDX-License-Identifier: Apache-2.0
// GELU on int8, NEON (aarch64): the 256-entry table lookup as four 64-byte table lookups
// (vqtbl4q_s8 for bytes 0..63, then vqtbx4q_s8 for 64..127, 128..191, 192..255: an index
// outside a table's 64 entries leaves the lane as it is). Exact, like every LUT path.
#if defined(__aarch64__)

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gelu.h"

namespace edgebert {
namespace kernels {

void apply_lut_s8_neon(int8_t* x, size_t count, const int8_t lut[256]) {
  int8x16x4_t t[4];
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 4; ++l) t[k].val[l] = vld1q_s8(lut + 64 * k + 16 * l);
  const uint8x16_t step = vdupq_n_u8(64);
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    uint8x16_t idx = vreinterpretq_u8_s8(vld1q_s8(x + i));
    int8x16_t r = vqtbl4q_s8(t[0], idx);
    idx = vsubq_u8(idx, step);
    r = vqtbx4q_s8(r, t[1], idx);
    idx = vsubq_u8(idx, step);
    r = vqtbx4q_s8(r, t[2], idx);
    idx = vsubq_u8(idx, step);
    r = vqtbx4q_s8(r, t[3], idx);
    vst1q_s8(x + i, r);
  }
  for (; i < count; ++i) x[i] = lut[static_cast<uint8_t>(x[i])];
}

}  // namespace kernels
}  // namespace edgebert

#endif  // __aarch64__
