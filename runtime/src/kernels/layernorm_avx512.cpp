// SPDX-License-Identifier: Apache-2.0
// LayerNorm (float) and LayerNorm fused with int8 quantization, AVX-512 implementations. One
// 16-lane accumulator holds the portable code's 16 partial sums (the tail adds only its own
// lanes), combined in the same order, and every step is the portable code's operation (no fused
// multiply-add): the same bytes as layernorm_*_portable.
#include "kernels/avx512_intrinsics.h"  // first: see there

#include <cstddef>
#include <cstdint>

#include "kernels/layernorm.h"
#include "kernels/simd_avx512.h"

namespace edgebert {
namespace kernels {

namespace {

struct RowStats {
  __m512 mean;
  __m512 rstd;
};

RowStats row_stats(const float* x, size_t cols, float eps) {
  __m512 a = _mm512_setzero_ps();
  size_t c = 0;
  for (; c + 16 <= cols; c += 16) a = _mm512_add_ps(a, _mm512_loadu_ps(x + c));
  const __mmask16 m = avx512::tail_mask16(cols - c);
  if (c < cols) a = _mm512_mask_add_ps(a, m, a, _mm512_maskz_loadu_ps(m, x + c));
  const float mean_f = avx512::combine16_ps(a) / static_cast<float>(cols);
  const __m512 mean = _mm512_set1_ps(mean_f);
  a = _mm512_setzero_ps();
  for (c = 0; c + 16 <= cols; c += 16) {
    const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + c), mean);
    a = _mm512_add_ps(a, _mm512_mul_ps(d, d));
  }
  if (c < cols) {
    const __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + c), mean);
    a = _mm512_mask_add_ps(a, m, a, _mm512_mul_ps(d, d));
  }
  const float var = avx512::combine16_ps(a) / static_cast<float>(cols);
  return {mean, _mm512_set1_ps(1.0f / __builtin_sqrtf(var + eps))};
}

// ((x - mean) * rstd) * gamma + beta on the lanes of m (beta == nullptr: no bias).
inline __m512 ln_apply(const float* x, const float* gamma, const float* beta, __mmask16 m, const RowStats& st) {
  const bool full = m == 0xFFFF;
  const __m512 xv = full ? _mm512_loadu_ps(x) : _mm512_maskz_loadu_ps(m, x);
  const __m512 gv = full ? _mm512_loadu_ps(gamma) : _mm512_maskz_loadu_ps(m, gamma);
  const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_sub_ps(xv, st.mean), st.rstd), gv);
  if (beta == nullptr) return v;
  return _mm512_add_ps(v, full ? _mm512_loadu_ps(beta) : _mm512_maskz_loadu_ps(m, beta));
}

}  // namespace

void layernorm_f32_avx512(const float* x, const float* gamma, const float* beta, float eps, size_t rows,
                          size_t cols, float* y) {
  if (cols == 0) return;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const RowStats st = row_stats(xr, cols, eps);
    size_t c = 0;
    for (; c + 16 <= cols; c += 16)
      _mm512_storeu_ps(yr + c, ln_apply(xr + c, gamma + c, beta != nullptr ? beta + c : nullptr, 0xFFFF, st));
    if (c < cols) {
      const __mmask16 m = avx512::tail_mask16(cols - c);
      _mm512_mask_storeu_ps(yr + c, m, ln_apply(xr + c, gamma + c, beta != nullptr ? beta + c : nullptr, m, st));
    }
  }
}

void layernorm_quantize_s8_avx512(float* x_inout, const float* gamma, const float* beta, float eps, size_t rows,
                                  size_t cols, const float* inv_factors, float scale, int32_t zero_point,
                                  int8_t* y) {
  if (cols == 0) return;
  const __m512 inv = _mm512_set1_ps(1.0f / scale);
  const __m512 lo = _mm512_set1_ps(-128.0f - static_cast<float>(zero_point));
  const __m512 hi = _mm512_set1_ps(127.0f - static_cast<float>(zero_point));
  const __m512i zp = _mm512_set1_epi32(zero_point);
  for (size_t r = 0; r < rows; ++r) {
    float* xr = x_inout + r * cols;
    int8_t* yr = y + r * cols;
    const RowStats st = row_stats(xr, cols, eps);
    const float* be = beta;
    size_t c = 0;
    for (; c + 64 <= cols; c += 64) {  // full vectors, 64 bytes of output at a time
      __m512i q[4];
      for (int t = 0; t < 4; ++t) {
        const size_t cc = c + 16 * t;
        __m512 v = ln_apply(xr + cc, gamma + cc, be != nullptr ? be + cc : nullptr, 0xFFFF, st);
        _mm512_storeu_ps(xr + cc, v);
        if (inv_factors != nullptr) v = _mm512_mul_ps(v, _mm512_loadu_ps(inv_factors + cc));
        q[t] = avx512::quantize16_epi32(_mm512_mul_ps(v, inv), lo, hi, zp);
      }
      _mm512_storeu_si512(yr + c, avx512::pack64_epi32(q[0], q[1], q[2], q[3]));
    }
    for (; c < cols; c += 16) {
      const __mmask16 m = avx512::tail_mask16(cols - c);
      __m512 v = ln_apply(xr + c, gamma + c, be != nullptr ? be + c : nullptr, m, st);
      _mm512_mask_storeu_ps(xr + c, m, v);
      if (inv_factors != nullptr) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, inv_factors + c));
      _mm_mask_storeu_epi8(yr + c, m, avx512::quantize16_ps(_mm512_mul_ps(v, inv), lo, hi, zp));
    }
  }
}

}  // namespace kernels
}  // namespace edgebert
