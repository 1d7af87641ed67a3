// SPDX-License-Identifier: Apache-2.0
// qs8_params.h: the per-channel parameters of an int8-output (qs8) GEMM as XNNPACK takes them:
// kernel scales with the output scale folded in, and the float bias as int32 in accumulator units.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model.h"

namespace edgebert {

// nearbyint(x) (the current rounding mode: to nearest, ties to even) clamped to +-2147483520 as
// fmax(fmin(., hi), lo) does (NaN gives the upper bound): the same int32 for every x.
int32_t int32_bias(double x);

// kernel_scale[c] = weight_scale[c] / out_scale[c] (the output scale per channel, or the one for
// all), bias_out[c] = int32_bias(bias[c] / (input_scale * weight_scale[c])) (0 / ... without a
// bias), for l.out channels. False when a requantization scale (input_scale * kernel_scale[c]) is
// outside XNNPACK's range [1e-30, 256).
bool qs8_channel_params(const LinearView& l, float* kernel_scale, int32_t* bias_out);

}  // namespace edgebert
