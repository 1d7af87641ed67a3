// SPDX-License-Identifier: Apache-2.0
// activation_params.h: the int8 quantization scheme. Chooses, for one GEMM at a time and from
// the float activations it saw during calibration, its input quantization (per tensor, with
// optional SmoothQuant per-input-channel factors folded into the weight columns), its output
// quantization, and its int8 weights.
//
// Schemes (ConvertOptions::scheme, stored in the model as Calibration.method):
//   kAuto ("smoothquant+mse", the default):
//     - qkv and intermediate (inputs produced by our LayerNorm, which can divide channel c by
//       f[c] for free): f[c] = absmax_x[c]^alpha / absmax_w[c]^(1 - alpha) with the migration
//       strength alpha chosen per GEMM from {none, 0.35, 0.5, 0.65, 0.8} by the GEMM's output
//       error on a sample of the calibration rows and output channels (alpha 1 would size every
//       input channel exactly to its calibration maximum: measurably less robust);
//     - int8 weights per output channel, each row's clipping (76-100% of its absmax) chosen to
//       minimise the output error (weighted by the input channels' mean squares);
//     - every per-tensor activation range (GEMM inputs, the GELU table's input) is the clipping
//       range that minimises the quantization MSE on the calibration activations (the GELU
//       table's input is judged after GELU and only its flat negative side may be clipped); the
//       full observed range is one of the candidates, and a clipped range is refused when it
//       costs the calibration rows with the largest values (special tokens) more than twice
//       their min/max error, so min/max is kept where it is best (ActQuant.range_method);
//     - outputs that feed the float residual stream: one symmetric scale per output channel,
//       covering max(observed absmax, |mean| + 8 std, |bias| + largest |weight| x input range)
//       ("HEADROOM": a channel's calibration maximum is exceeded by new tokens, and a unit that
//       fires only for, e.g., [CLS] must not saturate a residual channel); the qkv output: one
//       symmetric scale per head and Q/K/V section (absmax).
//   kMinMax ("minmax", edgebert 0.1): the same output scales, inputs min/max, no factors.
//   kPerTensor ("per-tensor"): plain static W8A8 baseline for comparisons: every activation
//     (input and output) one min/max scale per tensor, no factors (weights stay per channel).
#pragma once

#include <string>
#include <vector>

#include "converter/float_bert.h"
#include "converter/model_writer.h"

namespace edgebert::convert {

enum class Scheme { kAuto = 0, kMinMax = 1, kPerTensor = 2 };

// "auto" | "minmax" | "per-tensor" (also accepts "shipped" for kAuto).
bool parse_scheme(const std::string& text, Scheme* out);
const char* scheme_name(Scheme s);         // "auto", "minmax", "per-tensor"
const char* scheme_method_name(Scheme s);  // Calibration.method: "smoothquant+mse", "minmax", "per-tensor"

// Fills c.input, c.output, c.input_factors / c.smoothing_alpha and (when c.int8) c.weight for the
// GEMM c.source of `kind`, from its calibration inputs x [rows, in] and float outputs y [rows,
// out] (bias included). For kOutput, x is the GELU output; for kIntermediate, y is GELU's input.
void choose_gemm_params(const FloatBert& model, GemmKind kind, Scheme scheme, const float* x, const float* y,
                        size_t rows, ConvertedLinear& c);

// Building blocks (exposed for tests).
// Affine parameters whose clipping range [lo', hi'] inside [lo, hi] minimises the squared
// quantization error over `values` (lo <= 0 <= hi is enforced); the full range is a candidate.
// `guard` holds whole rows (`cols` values each; the tokens with the largest values): a clipped
// range is only taken if no guard row's relative error exceeds twice the worst at the full range.
ActivationQuant mse_affine_params(const std::vector<float>& values, float lo, float hi,
                                  const std::vector<float>& guard = {}, size_t cols = 0);
// The same, with the error measured after the FFN activation (for the input of the 256-entry
// activation table: GELU, ReLU or tanh-GELU).
ActivationQuant mse_affine_params_gelu(const std::vector<float>& values, float lo, float hi,
                                       const std::vector<float>& guard = {}, size_t cols = 0,
                                       HiddenAct act = HiddenAct::kGelu);
// SmoothQuant factors f[c] = a[c]^alpha / w[c]^(1 - alpha), normalised to geometric mean 1 and
// kept within [2^-12, 2^12] of it; a: per-input-channel activation absmax, w: per-input-channel
// weight absmax.
std::vector<float> smoothing_factors(const std::vector<float>& act_absmax, const std::vector<float>& weight_absmax,
                                     float alpha);

}  // namespace edgebert::convert
