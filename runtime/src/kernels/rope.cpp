// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding: the cos/sin table, the portable kernels and the int8 dispatcher.
#include "kernels/rope.h"

#include <cmath>

#include "kernels/dispatch.h"
#include "kernels/numerics.h"
#include "kernels/rope_impl.h"

namespace edgebert {
namespace kernels {

void build_rope_table(double base, int rotary_dim, int max_positions, float* table) {
  // Each frequency base^(-2i / rotary_dim) once per block of pairs (on the stack: this also runs
  // inside runs, for dynamic NTK), not once per position: the same doubles, so the same table,
  // about twice as fast (EmbeddingGemma's two tables of 2048 positions took 20 ms of every load).
  const int half = rotary_dim / 2;
  constexpr int kBlock = 64;
  double freq[kBlock];
  for (int i0 = 0; i0 < half; i0 += kBlock) {
    const int i1 = half - i0 < kBlock ? half : i0 + kBlock;
    for (int i = i0; i < i1; ++i) freq[i - i0] = std::pow(base, -2.0 * i / rotary_dim);
    for (int p = 0; p < max_positions; ++p) {
      float* row = table + static_cast<size_t>(p) * half * 2;
      for (int i = i0; i < i1; ++i) {
        const double t = static_cast<double>(p) * freq[i - i0];
        row[2 * i] = static_cast<float>(std::cos(t));
        row[2 * i + 1] = static_cast<float>(std::sin(t));
      }
    }
  }
}

namespace {

// Channel of the first / second element of pair i.
inline int pair_a(RopeForm form, int i) { return form == RopeForm::kRotateHalf ? i : 2 * i; }
inline int pair_b(RopeForm form, int i, int half) { return form == RopeForm::kRotateHalf ? i + half : 2 * i + 1; }

}  // namespace

void rope_f32_portable(const RopeArgs& a, float* x) {
  const int half = a.rotary_dim / 2;
  rope_for_each_head(a, x, [&](float* hx, const float* cs) {
    for (int i = 0; i < half; ++i) {
      const int ia = pair_a(a.form, i), ib = pair_b(a.form, i, half);
      const float c = cs[2 * i], s = cs[2 * i + 1];
      const float va = hx[ia], vb = hx[ib];
      hx[ia] = va * c - vb * s;
      hx[ib] = vb * c + va * s;
    }
  });
}

void rope_s8_portable(const RopeArgs& a, float in_scale, float out_scale, int8_t* x) {
  const int half = a.rotary_dim / 2;
  const float inv = 1.0f / out_scale;
  rope_for_each_head(a, x, [&](int8_t* hx, const float* cs) {
    for (int i = 0; i < half; ++i)
      rope_pair_s8(hx, pair_a(a.form, i), pair_b(a.form, i, half), cs[2 * i], cs[2 * i + 1], in_scale, inv);
    // channels past rotary_dim keep their value: requantize them when the scales differ
    if (in_scale != out_scale)
      for (int d = a.rotary_dim; d < a.head_dim; ++d) hx[d] = rope_pass_s8(hx[d], in_scale, inv);
  });
}

void rope_f32(const RopeArgs& args, float* x) { rope_f32_portable(args, x); }
void rope_s8(const RopeArgs& args, float in_scale, float out_scale, int8_t* x) {
  kernel_table().rope_s8(args, in_scale, out_scale, x);
}

}  // namespace kernels
}  // namespace edgebert
