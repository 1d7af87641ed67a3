// SPDX-License-Identifier: Apache-2.0
// masked_lm_quant.h: the int8 quantization of a masked-LM decoder tied to an int8 word table. The
// decoder GEMM reuses the word table's int8 rows and per-row scales as its weights (one row per
// vocabulary entry = one scale per output channel), so the file holds the table once; what the
// converter chooses is the decoder's input quantization (min/max of the head's features on the
// calibration tokens) and its per-channel output scales (the int8 logits of the 2022 XNNPACK,
// which has no int8-in / float-out GEMM).
#pragma once

#include <cstddef>
#include <vector>

#include "converter/float_bert.h"
#include "converter/model_writer.h"

namespace edgebert::convert {

// Rows of calibration features used for the output scales (the [rows x vocab] logits are computed
// in full: at most this many rows keeps BERT-base's 30,522-entry decoder within seconds).
constexpr size_t kMaskedLmCalibrationRows = 512;

// `hidden`: the encoder output of the calibration tokens [rows, H]; `word`: the int8 word table.
// Output scales: the absmax of each vocabulary entry's logit over the calibration rows (computed
// with the int8 table's weights), widened by 25% (new text reaches beyond calibration maxima),
// floored at 1/8 of the largest entry's so that rare entries keep a usable range.
ConvertedLinear choose_masked_lm_decoder_params(const FloatBert& model, const std::vector<float>& hidden, size_t rows,
                                                const RowQuantized& word);

}  // namespace edgebert::convert
