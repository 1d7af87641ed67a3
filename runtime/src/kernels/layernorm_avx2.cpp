// SPDX-License-Identifier: Apache-2.0
// LayerNorm (float) and LayerNorm fused with int8 quantization, AVX2 implementations. Same
// statistics order as the portable code (16 partial sums = two 8-lane accumulators) and the same
// operations (no fused multiply-add): the same bytes.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/layernorm.h"
#include "kernels/numerics.h"
#include "kernels/simd_avx2.h"

namespace edgebert {
namespace kernels {

namespace {

struct RowStats {
  __m256 mean;
  __m256 rstd;
};

static RowStats row_stats(const float* x, size_t cols, float eps) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  size_t c = 0;
  for (; c + 16 <= cols; c += 16) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + c));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + c + 8));
  }
  const size_t rem = cols - c;
  const __m256i m0 = avx2::tail_mask(rem < 8 ? rem : 8), m1 = avx2::tail_mask(rem > 8 ? rem - 8 : 0);
  if (rem > 0) {
    a0 = _mm256_add_ps(a0, _mm256_maskload_ps(x + c, m0));
    a1 = _mm256_add_ps(a1, _mm256_maskload_ps(x + c + 8, m1));
  }
  const float mean_f = avx2::hsum_ps(_mm256_add_ps(a0, a1)) / static_cast<float>(cols);
  const __m256 mean = _mm256_set1_ps(mean_f);
  a0 = _mm256_setzero_ps();
  a1 = a0;
  for (c = 0; c + 16 <= cols; c += 16) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + c), mean);
    const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(x + c + 8), mean);
    a0 = avx2::madd(d0, d0, a0);
    a1 = avx2::madd(d1, d1, a1);
  }
  if (rem > 0) {
    const __m256 d0 = _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(x + c, m0), mean), _mm256_castsi256_ps(m0));
    const __m256 d1 = _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(x + c + 8, m1), mean), _mm256_castsi256_ps(m1));
    a0 = avx2::madd(d0, d0, a0);
    a1 = avx2::madd(d1, d1, a1);
  }
  const float var = avx2::hsum_ps(_mm256_add_ps(a0, a1)) / static_cast<float>(cols);
  return {mean, _mm256_set1_ps(1.0f / __builtin_sqrtf(var + eps))};
}

// ((x - mean) * rstd) * gamma + beta (beta == nullptr: no bias).
static inline __m256 ln_apply(__m256 x, const RowStats& st, const float* gamma, const float* beta) {
  const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(x, st.mean), st.rstd), _mm256_loadu_ps(gamma));
  return beta != nullptr ? _mm256_add_ps(v, _mm256_loadu_ps(beta)) : v;
}
// The same on the lanes of m (x, gamma and beta read with maskload).
static inline __m256 ln_apply_masked(const float* x, __m256i m, const RowStats& st, const float* gamma,
                                     const float* beta) {
  const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(x, m), st.mean), st.rstd),
                                 _mm256_maskload_ps(gamma, m));
  return beta != nullptr ? _mm256_add_ps(v, _mm256_maskload_ps(beta, m)) : v;
}

}  // namespace

void layernorm_f32_avx2(const float* x, const float* gamma, const float* beta, float eps, size_t rows,
                        size_t cols, float* y) {
  if (cols == 0) return;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const RowStats st = row_stats(xr, cols, eps);
    size_t c = 0;
    for (; c + 8 <= cols; c += 8) _mm256_storeu_ps(yr + c, ln_apply(_mm256_loadu_ps(xr + c), st, gamma + c, beta != nullptr ? beta + c : nullptr));
    if (c < cols) {
      const __m256i m = avx2::tail_mask(cols - c);
      const __m256 v = ln_apply_masked(xr + c, m, st, gamma + c, beta != nullptr ? beta + c : nullptr);
      _mm256_maskstore_ps(yr + c, m, v);
    }
  }
}

void layernorm_quantize_s8_avx2(float* x_inout, const float* gamma, const float* beta, float eps, size_t rows,
                                size_t cols, const float* inv_factors, float scale, int32_t zero_point,
                                int8_t* y) {
  if (cols == 0) return;
  const __m256 inv = _mm256_set1_ps(1.0f / scale);
  const __m256 lo = _mm256_set1_ps(-128.0f - static_cast<float>(zero_point));
  const __m256 hi = _mm256_set1_ps(127.0f - static_cast<float>(zero_point));
  const __m256i zp = _mm256_set1_epi32(zero_point);
  const float* f = inv_factors;
  for (size_t r = 0; r < rows; ++r) {
    float* xr = x_inout + r * cols;
    int8_t* yr = y + r * cols;
    const RowStats st = row_stats(xr, cols, eps);
    size_t c = 0;
    for (; c + 32 <= cols; c += 32) {
      __m256 v[4];
      for (int t = 0; t < 4; ++t) {
        v[t] = ln_apply(_mm256_loadu_ps(xr + c + 8 * t), st, gamma + c + 8 * t, beta != nullptr ? beta + c + 8 * t : nullptr);
        _mm256_storeu_ps(xr + c + 8 * t, v[t]);
        v[t] = f != nullptr ? _mm256_mul_ps(_mm256_mul_ps(v[t], _mm256_loadu_ps(f + c + 8 * t)), inv)
                            : _mm256_mul_ps(v[t], inv);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(yr + c), avx2::quantize32_ps(v[0], v[1], v[2], v[3], lo, hi, zp));
    }
    for (; c + 8 <= cols; c += 8) {
      __m256 v = ln_apply(_mm256_loadu_ps(xr + c), st, gamma + c, beta != nullptr ? beta + c : nullptr);
      _mm256_storeu_ps(xr + c, v);
      v = f != nullptr ? _mm256_mul_ps(_mm256_mul_ps(v, _mm256_loadu_ps(f + c)), inv) : _mm256_mul_ps(v, inv);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(yr + c), avx2::quantize8_ps(v, lo, hi, zp));
    }
    if (c < cols) {
      const __m256i m = avx2::tail_mask(cols - c);
      __m256 v = ln_apply_masked(xr + c, m, st, gamma + c, beta != nullptr ? beta + c : nullptr);
      _mm256_maskstore_ps(xr + c, m, v);
      v = f != nullptr ? _mm256_mul_ps(_mm256_mul_ps(v, _mm256_maskload_ps(f + c, m)), inv) : _mm256_mul_ps(v, inv);
      alignas(16) int8_t tmp[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(tmp), avx2::quantize8_ps(v, lo, hi, zp));
      std::memcpy(yr + c, tmp, cols - c);
    }
  }
}

}  // namespace kernels
}  // namespace edgebert
