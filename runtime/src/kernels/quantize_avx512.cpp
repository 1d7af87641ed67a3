// SPDX-License-Identifier: Apache-2.0
// Float <-> int8 conversions around the GEMMs, AVX-512 implementations: the portable code's
// operations on 16 lanes (clamp in float, round half to even with vcvtps2dq, add the zero point;
// the dequantize-add as a multiply, then an add), so the same bytes.
#include "kernels/avx512_intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/quantize.h"
#include "kernels/simd_avx512.h"

namespace edgebert {
namespace kernels {

namespace {

// y[i] = quant((x[i] * f[i]) * inv) for i < count; f == nullptr means no factor.
void quantize_span(const float* x, const float* f, size_t count, float inv_f, int32_t zp_i, int8_t* y) {
  const __m512 inv = _mm512_set1_ps(inv_f);
  const __m512 lo = _mm512_set1_ps(-128.0f - static_cast<float>(zp_i));
  const __m512 hi = _mm512_set1_ps(127.0f - static_cast<float>(zp_i));
  const __m512i zp = _mm512_set1_epi32(zp_i);
  size_t i = 0;
  if (f == nullptr) {
    for (; i + 64 <= count; i += 64) {
      const __m512i a = avx512::quantize16_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i), inv), lo, hi, zp);
      const __m512i b = avx512::quantize16_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i + 16), inv), lo, hi, zp);
      const __m512i c = avx512::quantize16_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i + 32), inv), lo, hi, zp);
      const __m512i d = avx512::quantize16_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i + 48), inv), lo, hi, zp);
      _mm512_storeu_si512(y + i, avx512::pack64_epi32(a, b, c, d));
    }
    for (; i < count; i += 16) {
      const __mmask16 m = avx512::tail_mask16(count - i);
      const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), inv);
      _mm_mask_storeu_epi8(y + i, m, avx512::quantize16_ps(v, lo, hi, zp));
    }
  } else {
    for (; i + 64 <= count; i += 64) {
      __m512i q[4];
      for (int t = 0; t < 4; ++t) {
        const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i + 16 * t), _mm512_loadu_ps(f + i + 16 * t)), inv);
        q[t] = avx512::quantize16_epi32(v, lo, hi, zp);
      }
      _mm512_storeu_si512(y + i, avx512::pack64_epi32(q[0], q[1], q[2], q[3]));
    }
    for (; i < count; i += 16) {
      const __mmask16 m = avx512::tail_mask16(count - i);
      const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, f + i)), inv);
      _mm_mask_storeu_epi8(y + i, m, avx512::quantize16_ps(v, lo, hi, zp));
    }
  }
}

}  // namespace

void quantize_s8_avx512(const float* x, size_t count, float scale, int32_t zero_point, int8_t* y) {
  quantize_span(x, nullptr, count, 1.0f / scale, zero_point, y);
}

void quantize_s8_per_channel_avx512(const float* x, size_t rows, size_t cols, const float* inv_factors,
                                    float scale, int32_t zero_point, int8_t* y) {
  const float inv = 1.0f / scale;
  if (inv_factors == nullptr) {
    quantize_span(x, nullptr, rows * cols, inv, zero_point, y);
    return;
  }
  for (size_t r = 0; r < rows; ++r) quantize_span(x + r * cols, inv_factors, cols, inv, zero_point, y + r * cols);
}

void residual_dequant_add_s8_avx512(float* hidden, const int8_t* y, size_t rows, size_t cols, const float* scales,
                                    int32_t zero_point) {
  const __m512i zp = _mm512_set1_epi32(zero_point);
  for (size_t r = 0; r < rows; ++r) {
    float* h = hidden + r * cols;
    const int8_t* yr = y + r * cols;
    size_t c = 0;
    for (; c + 32 <= cols; c += 32) {
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yr + c));
      const __m512 v0 = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(b)), zp));
      const __m512 v1 = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(b, 1)), zp));
      _mm512_storeu_ps(h + c, avx512::madd(v0, _mm512_loadu_ps(scales + c), _mm512_loadu_ps(h + c)));
      _mm512_storeu_ps(h + c + 16, avx512::madd(v1, _mm512_loadu_ps(scales + c + 16), _mm512_loadu_ps(h + c + 16)));
    }
    for (; c < cols; c += 16) {
      const __mmask16 m = avx512::tail_mask16(cols - c);
      const __m512 v = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, yr + c)), zp));
      const __m512 sum = avx512::madd(v, _mm512_maskz_loadu_ps(m, scales + c), _mm512_maskz_loadu_ps(m, h + c));
      _mm512_mask_storeu_ps(h + c, m, sum);
    }
  }
}

}  // namespace kernels
}  // namespace edgebert
