// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding: the cos/sin table, the portable kernels and the int8 dispatcher.
#include "kernels/rope.h"

#include <cmath>

#include "kernels/dispatch.h"
#include "kernels/numerics.h"
#include "kernels/rope_impl.h"

namespace edgebert {
namespace kernels {

void build_rope_table(double base, int rotary_dim, int max_positions, float* table, int first_position) {
  // cos and sin of p * base^(-2i / rotary_dim) in double, rounded to float. Calling the library for
  // every entry took 15-20 ms of every EmbeddingGemma load (two tables of 2048 positions x 128
  // pairs) and runs inside runs for dynamic NTK; so the library gives every kSeed-th position and
  // the positions between are rotations of it by one position's angle (cos(t + f) = cos t cos f -
  // sin t sin f, ...). Over kSeed - 1 rotations the double's error stays below 1e-14, far under a
  // float's half ulp (3e-8): the float table differs from the library's in an entry or so per
  // million, by one ulp (tests/unit/test_kernels_families.cpp checks it).
  const int half = rotary_dim / 2;
  constexpr int kBlock = 64, kSeed = kRopeSeed;
  double freq[kBlock], step_c[kBlock], step_s[kBlock], c[kBlock], s[kBlock];
  for (int i0 = 0; i0 < half; i0 += kBlock) {
    const int n = half - i0 < kBlock ? half - i0 : kBlock;
    for (int i = 0; i < n; ++i) {
      freq[i] = std::pow(base, -2.0 * (i0 + i) / rotary_dim);
      step_c[i] = std::cos(freq[i]);
      step_s[i] = std::sin(freq[i]);
    }
    for (int p = first_position; p < max_positions; ++p) {
      if (p % kSeed == 0 || p == first_position) {
        for (int i = 0; i < n; ++i) {
          const double t = static_cast<double>(p) * freq[i];
          c[i] = std::cos(t);
          s[i] = std::sin(t);
        }
      } else {
        for (int i = 0; i < n; ++i) {
          const double cn = c[i] * step_c[i] - s[i] * step_s[i];
          s[i] = s[i] * step_c[i] + c[i] * step_s[i];
          c[i] = cn;
        }
      }
      float* row = table + static_cast<size_t>(p) * half * 2 + 2 * i0;
      for (int i = 0; i < n; ++i) {
        row[2 * i] = static_cast<float>(c[i]);
        row[2 * i + 1] = static_cast<float>(s[i]);
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
