// SPDX-License-Identifier: Apache-2.0
// Gated FFN activations (GeGLU, SwiGLU, GLU) of nomic-bert and ModernBERT (exec/activations.cpp):
// the FFN-up GEMM writes [rows, 2I] int8 (gate in columns [0, I), up in [I, 2I)), and the
// down GEMM reads y[r, c] = quantize(act(gate[r, c]) * up[r, c]), [rows, I] int8.
// act of an int8 gate takes 256 values: gate_table[uint8_t(q)] = act((q - gate_zp) * gate_scale)
// is computed once per layer in double and stored as float; per element the kernel computes
//   y = quantize((gate_table[g] * (float(u - up_zp) * up_scale)) * (1 / out_scale)) + out_zp
// (two products, no fused multiply-add, round half to even, clamped), so every variant gives the
// same bytes. Two inputs per output: a 256-entry int8 table (as for GELU) cannot do it.
// With row_scales (dynamic per-row quantization, for a down GEMM that takes each row's input
// scale at run time: XNNPACK's qd8 GEMMs), each row r is quantized symmetrically with its own
// scale s_r = dynamic_row_scale(max_c |p[r, c]|) of its products p, written to row_scales[r]:
//   y = quantize(p * (1 / s_r)) with zero point 0
// (out_scale and out_zp are then unused). The maximum is exact in any order, so every variant
// still gives the same bytes and scales.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quantize.h"  // dynamic_row_scale

namespace edgebert {
namespace kernels {

enum class GateKind : int { kGeglu = 0, kSwiglu = 1, kGegluTanh = 2, kGlu = 3 };

// act(x): GeGLU = x * Phi(x) (erf GELU), SwiGLU = x * sigmoid(x) (SiLU), GeGLU-tanh = tanh GELU,
// GLU = sigmoid(x) (nomic-bert's "glu").
double gate_activation_ref(GateKind kind, double x);
void build_gate_table_f32(GateKind kind, float gate_scale, int32_t gate_zp, float gate_table[256]);

struct GatedArgs {
  const int8_t* x;   // rows of x_stride bytes: gate at [0, inter), up at [inter, 2 * inter)
  size_t x_stride;   // >= 2 * inter
  size_t rows;
  size_t inter;      // I
  const float* gate_table;  // build_gate_table_f32
  float up_scale;
  int32_t up_zp;
  float out_scale;
  int32_t out_zp;
  int8_t* y;         // rows of y_stride bytes, inter of them written
  size_t y_stride;
  float* row_scales = nullptr;  // rows entries: dynamic per-row quantization (above); nullptr: static
};

// One column's product gate_table[g[c]] * ((u[c] - up_zp) * up_scale) in the portable order: the
// portable kernel and every variant's tails. (Static: see attention.h on inline helpers in
// headers that AVX2 / AVX-512 files include.)
static inline float gated_product(const GatedArgs& a, const int8_t* g, const int8_t* u, size_t c) {
  return a.gate_table[static_cast<uint8_t>(g[c])] * (static_cast<float>(static_cast<int32_t>(u[c]) - a.up_zp) * a.up_scale);
}

void gated_s8(const GatedArgs& args);
void gated_s8_portable(const GatedArgs& args);
#if defined(__x86_64__) || defined(__i386__)
void gated_s8_avx2(const GatedArgs& args);    // cpu_has_avx2_fma()
void gated_s8_avx512(const GatedArgs& args);  // cpu_has_avx512()
#endif

}  // namespace kernels
}  // namespace edgebert
