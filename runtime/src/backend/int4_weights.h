// SPDX-License-Identifier: Apache-2.0
// int4_weights.h: the 4-bit GEMM weight format of .ebm files (schemas/edgebert.fbs, Tensor dtype
// I4): packed nibbles (q + 8, even column in the low nibble) with one bfloat16 scale per block of
// columns (or per row: block 0, "channel-wise"). The converter quantizes with it; the XNNPACK glue
// either hands the nibbles to XNNPACK's qd8_f32_qb4w / qc4w operators or, where the XNNPACK has
// no int4 GEMM (or for a GEMM with int8 output), requantizes them to per-channel int8 at operator
// creation (int8_per_channel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgebert::int4 {

constexpr int kMinBlock = 32;   // XNNPACK's qb4w needs blocks of at least 32 (multiples of 32)
constexpr int kMaxBlock = 256;
constexpr int kZeroNibble = 8;  // nibble u stands for q = u - 8

// bfloat16 <-> float32 (round to nearest even; NaN stays NaN).
uint16_t bf16_from_float(float v);
float float_from_bf16(uint16_t b);

inline size_t row_bytes(int cols) { return (static_cast<size_t>(cols) + 1) / 2; }
// Columns per block (block 0: the whole row) and blocks per row.
inline int block_width(int cols, int block) { return block > 0 ? block : cols; }
inline int blocks_per_row(int cols, int block) { return block > 0 ? (cols + block - 1) / block : 1; }
// A block size the format and XNNPACK accept for `cols` columns: 0, or a multiple of kMinBlock in
// [kMinBlock, kMaxBlock] dividing cols.
bool valid_block(int cols, int block);
// The block the converter uses for `cols` columns when `wanted` was asked for: wanted when valid,
// else the largest valid block below it, else 0 (channel-wise).
int fit_block(int cols, int wanted);

inline int value_at(const uint8_t* row, int c) {
  return ((row[c >> 1] >> ((c & 1) * 4)) & 15) - kZeroNibble;
}

// The clipping search's scale for one block of n weights: bf16(a * r / 7) for the block's absmax a
// and r = 1.00, 0.95, ..., 0.75, the candidate with the least squared error (first on ties); 1 for
// an all-zero block.
float block_scale(const float* w, int n);
// q = clamp(rint(w / s), -8, 7) (round half to even).
int quantize_value(float w, float s);
// Stores q (in [-8, 7]) as column c's nibble of a packed row.
void set_value(uint8_t* row, int c, int q);

struct Quantized {
  std::vector<uint8_t> packed;   // rows * row_bytes(cols)
  std::vector<uint16_t> scales;  // bf16, rows * blocks_per_row(cols, block)
  int block = 0;
};

// Symmetric int4 per block: for each block with absmax a, candidate scales bf16(a * r / 7), r =
// 1.00, 0.95, ..., 0.75 (clipping search), q = clamp(rint(w / s), -8, 7); the candidate with the
// smallest sum of squared errors (first on ties) is kept. An all-zero block gets scale 1.
// `block` must be valid_block(cols, block).
Quantized quantize(const float* w, size_t rows, int cols, int block);
// w[r, c] = q[r, c] * scale[r, c / block] into out [rows, cols].
void dequantize(const uint8_t* packed, const uint16_t* scales, size_t rows, int cols, int block, float* out);
// Per-output-channel int8 for a GEMM without int4 kernels: channel scale S = max_c |q s| / 127,
// q8 = clamp(rint(q * s / S), -127, 127). Exact (q8 = q, S = s) when a row has a single scale.
void int8_per_channel(const uint8_t* packed, const uint16_t* scales, size_t rows, int cols, int block, int8_t* q8,
                      float* channel_scales);

}  // namespace edgebert::int4
