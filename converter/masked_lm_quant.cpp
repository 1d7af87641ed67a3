// SPDX-License-Identifier: Apache-2.0
// masked_lm_quant.cpp: see masked_lm_quant.h.
#include "converter/masked_lm_quant.h"

#include <algorithm>
#include <cmath>

#include "converter/quantization.h"
#include "converter/reference_bert.h"

namespace edgebert::convert {

ConvertedLinear choose_masked_lm_decoder_params(const FloatBert& m, const std::vector<float>& hidden, size_t rows,
                                                const RowQuantized& word) {
  const int V = m.config.vocab_size, E = m.mlm_transform.out;
  rows = std::min(rows, kMaskedLmCalibrationRows);
  const std::vector<float> x = reference_masked_lm_features(m, hidden.data(), rows);
  ConvertedLinear c;
  c.int8 = true;
  float lo = 0.f, hi = 0.f;
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  c.input = affine_from_range(lo, hi);
  c.input.observed_min = lo;
  c.input.observed_max = hi;
  // logits with the weights the runtime uses (the int8 table, dequantized), over blocks of the
  // vocabulary (bounded memory for 250k-entry tables)
  constexpr size_t kBlock = 4096;
  std::vector<float> absmax(static_cast<size_t>(V), 0.f), y;
  FloatLinear d;
  d.in = E;
  for (size_t v0 = 0; v0 < static_cast<size_t>(V); v0 += kBlock) {
    const size_t n = std::min(kBlock, static_cast<size_t>(V) - v0);
    d.name = "mlm.decoder";
    d.out = static_cast<int>(n);
    d.weight.resize(n * E);
    for (size_t r = 0; r < n; ++r)
      for (size_t i = 0; i < static_cast<size_t>(E); ++i)
        d.weight[r * E + i] = word.q[(v0 + r) * E + i] * word.scales[v0 + r];
    d.bias.assign(n, 0.f);
    if (!m.mlm_bias.empty()) std::copy(m.mlm_bias.begin() + v0, m.mlm_bias.begin() + v0 + n, d.bias.begin());
    y.resize(rows * n);
    linear_forward(d, x.data(), rows, y.data());
    for (size_t r = 0; r < rows; ++r)
      for (size_t v = 0; v < n; ++v) absmax[v0 + v] = std::max(absmax[v0 + v], std::fabs(y[r * n + v]));
  }
  float top = 0.f;
  for (float a : absmax) top = std::max(top, a);
  c.output.channel_scales.resize(static_cast<size_t>(V));
  for (size_t v = 0; v < absmax.size(); ++v)
    c.output.channel_scales[v] = symmetric_scale(std::max(1.25f * absmax[v], top / 8.f));
  c.output.observed_max = top;
  c.output.observed_min = -top;
  c.output.headroom = true;
  return c;
}

}  // namespace edgebert::convert
