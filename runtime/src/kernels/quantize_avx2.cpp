// SPDX-License-Identifier: Apache-2.0
// Float <-> int8 conversions around the GEMMs, AVX2 implementations (same rounding as portable:
// clamp in float, then round half to even with cvtps2dq, then add the zero point).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/numerics.h"
#include "kernels/quantize.h"
#include "kernels/simd_avx2.h"

namespace edgebert {
namespace kernels {

namespace {

// y[i] = quant(x[i] * f[i] * inv) for i < count; f == nullptr means factor 1.
static void quantize_span(const float* x, const float* f, size_t count, float inv_f, int32_t zp_i, int8_t* y) {
  const __m256 inv = _mm256_set1_ps(inv_f);
  const __m256 lo = _mm256_set1_ps(-128.0f - static_cast<float>(zp_i));
  const __m256 hi = _mm256_set1_ps(127.0f - static_cast<float>(zp_i));
  const __m256i zp = _mm256_set1_epi32(zp_i);
  size_t i = 0;
  if (f == nullptr) {
    for (; i + 32 <= count; i += 32) {
      const __m256i q = avx2::quantize32_ps(
          _mm256_mul_ps(_mm256_loadu_ps(x + i), inv), _mm256_mul_ps(_mm256_loadu_ps(x + i + 8), inv),
          _mm256_mul_ps(_mm256_loadu_ps(x + i + 16), inv), _mm256_mul_ps(_mm256_loadu_ps(x + i + 24), inv), lo, hi, zp);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), q);
    }
    for (; i + 8 <= count; i += 8)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i),
                       avx2::quantize8_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), inv), lo, hi, zp));
  } else {
    for (; i + 32 <= count; i += 32) {
      const __m256 a = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(f + i)), inv);
      const __m256 b = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(f + i + 8)), inv);
      const __m256 c = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(f + i + 16)), inv);
      const __m256 d = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(f + i + 24)), inv);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), avx2::quantize32_ps(a, b, c, d, lo, hi, zp));
    }
    for (; i + 8 <= count; i += 8) {
      const __m256 a = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(f + i)), inv);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), avx2::quantize8_ps(a, lo, hi, zp));
    }
  }
  if (i < count) {
    const __m256i m = avx2::tail_mask(count - i);
    __m256 a = _mm256_maskload_ps(x + i, m);
    if (f != nullptr) a = _mm256_mul_ps(a, _mm256_maskload_ps(f + i, m));
    alignas(16) int8_t tmp[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(tmp), avx2::quantize8_ps(_mm256_mul_ps(a, inv), lo, hi, zp));
    std::memcpy(y + i, tmp, count - i);
  }
}

}  // namespace

void quantize_s8_avx2(const float* x, size_t count, float scale, int32_t zero_point, int8_t* y) {
  quantize_span(x, nullptr, count, 1.0f / scale, zero_point, y);
}

void quantize_s8_per_channel_avx2(const float* x, size_t rows, size_t cols, const float* inv_factors,
                                  float scale, int32_t zero_point, int8_t* y) {
  const float inv = 1.0f / scale;
  if (inv_factors == nullptr) {
    quantize_span(x, nullptr, rows * cols, inv, zero_point, y);
    return;
  }
  for (size_t r = 0; r < rows; ++r) quantize_span(x + r * cols, inv_factors, cols, inv, zero_point, y + r * cols);
}

void residual_dequant_add_s8_avx2(float* hidden, const int8_t* y, size_t rows, size_t cols, const float* scales,
                                  int32_t zero_point) {
  const __m256i zp = _mm256_set1_epi32(zero_point);
  for (size_t r = 0; r < rows; ++r) {
    float* h = hidden + r * cols;
    const int8_t* yr = y + r * cols;
    size_t c = 0;
    for (; c + 16 <= cols; c += 16) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(yr + c));
      const __m256 v0 = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi8_epi32(b), zp));
      const __m256 v1 = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)), zp));
      _mm256_storeu_ps(h + c, avx2::madd(v0, _mm256_loadu_ps(scales + c), _mm256_loadu_ps(h + c)));
      _mm256_storeu_ps(h + c + 8, avx2::madd(v1, _mm256_loadu_ps(scales + c + 8), _mm256_loadu_ps(h + c + 8)));
    }
    for (; c + 8 <= cols; c += 8) {
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(yr + c));
      const __m256 v = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepi8_epi32(b), zp));
      _mm256_storeu_ps(h + c, avx2::madd(v, _mm256_loadu_ps(scales + c), _mm256_loadu_ps(h + c)));
    }
    if (c < cols) {
      const size_t rem = cols - c;
      alignas(16) int8_t tmp[16] = {};
      std::memcpy(tmp, yr + c, rem);
      const __m256i m = avx2::tail_mask(rem);
      const __m256 v = _mm256_cvtepi32_ps(
          _mm256_sub_epi32(_mm256_cvtepi8_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(tmp))), zp));
      _mm256_maskstore_ps(h + c, m,
                          avx2::madd(v, _mm256_maskload_ps(scales + c, m), _mm256_maskload_ps(h + c, m)));
    }
  }
}

}  // namespace kernels
}  // namespace edgebert
