// SPDX-License-Identifier: Apache-2.0
// int4_weights.cpp: quantization, dequantization and int8 unpacking of the int4 weight format.
#include "backend/int4_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace edgebert::int4 {

uint16_t bf16_from_float(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float float_from_bf16(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

bool valid_block(int cols, int block) {
  if (block == 0) return cols > 0;
  return block >= kMinBlock && block <= kMaxBlock && block % kMinBlock == 0 && cols > 0 && cols % block == 0;
}

int fit_block(int cols, int wanted) {
  if (wanted <= 0) return 0;
  for (int b = std::min(wanted, kMaxBlock) / kMinBlock * kMinBlock; b >= kMinBlock; b -= kMinBlock)
    if (valid_block(cols, b)) return b;
  return 0;
}

namespace {

// The clipping search's ratios of the block's absmax (float32 constants: no expression a compiler
// could contract into a fused multiply-add, so every platform picks the same scales).
constexpr float kClipRatios[] = {1.0f, 0.95f, 0.9f, 0.85f, 0.8f, 0.75f};

}  // namespace

int quantize_value(float w, float s) {
  const float t = std::nearbyint(w / s);  // round half to even
  return static_cast<int>(std::min(std::max(t, -8.f), 7.f));
}

float block_scale(const float* w, int n) {
  float amax = 0.f;
  for (int c = 0; c < n; ++c) amax = std::max(amax, std::fabs(w[c]));
  if (!(amax > 1e-30f)) return 1.f;
  float best_s = 1.f;
  double best_err = INFINITY;
  for (float ratio : kClipRatios) {
    const float s = float_from_bf16(bf16_from_float(amax * ratio / 7.f));
    if (!(s > 0.f) || !std::isfinite(s)) continue;
    double err = 0;
    for (int c = 0; c < n; ++c) {
      const double d = static_cast<double>(quantize_value(w[c], s)) * s - w[c];
      err += d * d;
    }
    if (err < best_err) {
      best_err = err;
      best_s = s;
    }
  }
  return best_s;
}

void set_value(uint8_t* row, int c, int q) {
  row[c >> 1] = static_cast<uint8_t>((row[c >> 1] & (c & 1 ? 0x0f : 0xf0)) | ((q + kZeroNibble) << ((c & 1) * 4)));
}

Quantized quantize(const float* w, size_t rows, int cols, int block) {
  Quantized q;
  q.block = block;
  const int width = block_width(cols, block), nb = blocks_per_row(cols, block);
  const size_t rb = row_bytes(cols);
  q.packed.assign(rows * rb, 0);
  q.scales.assign(rows * static_cast<size_t>(nb), 0);
  for (size_t r = 0; r < rows; ++r) {
    const float* row = w + r * static_cast<size_t>(cols);
    uint8_t* out = q.packed.data() + r * rb;
    for (int b = 0; b < nb; ++b) {
      const int c0 = b * width, c1 = std::min(cols, c0 + width);
      const float s = block_scale(row + c0, c1 - c0);
      q.scales[r * nb + b] = bf16_from_float(s);
      for (int c = c0; c < c1; ++c) set_value(out, c, quantize_value(row[c], s));
    }
    if (cols % 2) set_value(out, cols, 0);
  }
  return q;
}

void dequantize(const uint8_t* packed, const uint16_t* scales, size_t rows, int cols, int block, float* out) {
  const int width = block_width(cols, block), nb = blocks_per_row(cols, block);
  const size_t rb = row_bytes(cols);
  for (size_t r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      out[r * cols + c] = static_cast<float>(value_at(packed + r * rb, c)) * float_from_bf16(scales[r * nb + c / width]);
}

void int8_per_channel(const uint8_t* packed, const uint16_t* scales, size_t rows, int cols, int block, int8_t* q8,
                      float* channel_scales) {
  const int width = block_width(cols, block), nb = blocks_per_row(cols, block);
  const size_t rb = row_bytes(cols);
  for (size_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * rb;
    const uint16_t* s = scales + r * nb;
    int8_t* out = q8 + r * static_cast<size_t>(cols);
    if (std::all_of(s, s + nb, [&](uint16_t v) { return v == s[0]; })) {  // one scale: exact
      channel_scales[r] = float_from_bf16(s[0]);
      for (int c = 0; c < cols; ++c) out[c] = static_cast<int8_t>(value_at(row, c));
      continue;
    }
    float amax = 0.f;
    for (int c = 0; c < cols; ++c)
      amax = std::max(amax, std::fabs(static_cast<float>(value_at(row, c)) * float_from_bf16(s[c / width])));
    const float S = amax > 0.f ? amax / 127.f : 1.f;
    channel_scales[r] = S;
    for (int c = 0; c < cols; ++c) {
      const float t = std::nearbyint(static_cast<float>(value_at(row, c)) * float_from_bf16(s[c / width]) / S);
      out[c] = static_cast<int8_t>(std::min(std::max(t, -127.f), 127.f));
    }
  }
}

}  // namespace edgebert::int4
