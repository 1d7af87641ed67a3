// SPDX-License-Identifier: Apache-2.0
// gptq.h: int4 rounding with error feedback on the calibration inputs (GPTQ, Frantar et al. 2022):
// the columns of W are quantized in order, and each column's rounding error is spread over the
// columns not yet quantized along the inverse Hessian of the layer's inputs (H = X^T X), so the
// GEMM's output error on those inputs, trace((W - Q) H (W - Q)^T), is what gets minimised rather
// than the weights' own squared error. Each block's scale is chosen (backend/int4_weights.h's
// clipping search) from the error-updated weights when the block starts.
#pragma once

#include <cstddef>
#include <vector>

#include "backend/int4_weights.h"

namespace edgebert::convert {

// w [rows, cols] (row-major), hessian [cols, cols] = X^T X of the GEMM's inputs (symmetric; only
// the lower triangle is read). `damp` (relative to the mean diagonal) is added to the diagonal;
// input channels that never saw a value (zero diagonal) get weight 0. Returns the same format as
// int4::quantize (valid_block(cols, block)). Falls back to int4::quantize when the damped Hessian
// is not positive definite.
int4::Quantized gptq_quantize(const float* w, size_t rows, int cols, int block, std::vector<double> hessian,
                              double damp = 0.01);

}  // namespace edgebert::convert
