// SPDX-License-Identifier: Apache-2.0
// Rotary position embedding (RoPE) on the query and key parts of the QKV GEMM output, in place,
// for the rotary families (nomic-bert, ModernBERT; exec/rotary.cpp). Two pairings of the channels:
//   kRotateHalf  (GPT-NeoX, LLaMA, Qwen, ...):  (x[i], x[i + rotary_dim/2]) for i < rotary_dim/2;
//   kInterleaved (GPT-J, RoFormer):             (x[2i], x[2i + 1])          for i < rotary_dim/2;
// each pair (a, b) becomes (a cos t - b sin t, b cos t + a sin t), t = pos * base^(-2i/rotary_dim).
// Channels from rotary_dim to head_dim pass through. Precision (see docs/kernels.md): cos and sin
// are computed in double and stored as float; the rotation is two float products and one add or
// subtract per output, no fused multiply-add, so every variant gives the same bytes. On int8 the
// input is dequantized (symmetric, scale in_scale), rotated in float and requantized to out_scale
// (round half to even, clamped). int8 has AVX2, AVX-512 and NEON variants: with heads of 256
// (EmbeddingGemma) the portable rotation took more time than the attention itself.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {
namespace kernels {

enum class RopeForm : int { kRotateHalf = 0, kInterleaved = 1 };

// cos/sin table for positions [0, max_positions): table[(p * (rotary_dim / 2) + i) * 2 + {0, 1}]
// = {cos, sin}(p * base^(-2i / rotary_dim)); rotary_dim even. 2 * max_positions * (rotary_dim / 2)
// floats. With first_position > 0 only the rows [first_position, max_positions) are written: the
// same bytes as a whole build when first_position is a multiple of kRopeSeed (program/rope_table.h
// fills a table that way, block by block).
static constexpr size_t rope_table_floats(size_t max_positions, size_t rotary_dim) {
  return max_positions * (rotary_dim / 2) * 2;
}
constexpr int kRopeSeed = 32;  // positions between two library cos/sin (rope.cpp)
void build_rope_table(double base, int rotary_dim, int max_positions, float* table, int first_position = 0);

// Where the heads are: rows of `stride` elements; in each row, `heads` heads of head_dim channels
// at offsets first + h * head_dim (the query part of a QKV row: first = 0; the keys: hidden).
// positions[r] is row r's position (nullptr: r), each < the table's max_positions.
struct RopeArgs {
  size_t rows;
  size_t stride;
  size_t first;
  int heads;
  int head_dim;
  int rotary_dim;  // even, <= head_dim
  RopeForm form;
  const int32_t* positions;
  const float* table;  // build_rope_table(base, rotary_dim, >= max position + 1)
};

void rope_f32(const RopeArgs& args, float* x);
void rope_f32_portable(const RopeArgs& args, float* x);
// int8 in place: x = quantize(rotate(x * in_scale) / out_scale).
void rope_s8(const RopeArgs& args, float in_scale, float out_scale, int8_t* x);
void rope_s8_portable(const RopeArgs& args, float in_scale, float out_scale, int8_t* x);
#if defined(__x86_64__) || defined(__i386__)
void rope_s8_avx2(const RopeArgs& args, float in_scale, float out_scale, int8_t* x);
void rope_s8_avx512(const RopeArgs& args, float in_scale, float out_scale, int8_t* x);
#elif defined(__aarch64__)
void rope_s8_neon(const RopeArgs& args, float in_scale, float out_scale, int8_t* x);
#endif

}  // namespace kernels
}  // namespace edgebert
