// SPDX-License-Identifier: Apache-2.0
// FFN activations by kind (GELU, ReLU, tanh-GELU): the float version and the 256-entry int8
// lookup table, dispatching to the GELU kernels for GELU so existing models stay bit-identical.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {
namespace kernels {

enum class ActivationKind : int { kGelu = 0, kRelu = 1, kGeluTanh = 2 };  // = schema Activation

// The activation of one value in double (the reference the tables are built from).
double activation_ref(ActivationKind kind, double x);

// lut[uint8_t(q)] = quantize(act((q - in_zp) * in_scale)), evaluated in double, round half to
// even, clamped (same layout as build_gelu_lut_s8).
void build_activation_lut_s8(ActivationKind kind, float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                             int8_t lut[256]);

// x = act(x) in place.
void activation_f32(ActivationKind kind, float* x, size_t count);

}  // namespace kernels
}  // namespace edgebert
