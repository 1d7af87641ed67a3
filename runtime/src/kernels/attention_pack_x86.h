// SPDX-License-Identifier: Apache-2.0
// Packing helpers of the x86 int8 attention cores (attention_avx2.cpp and its VNNI builds,
// attention_avx512.cpp): V in groups of 4 keys as [d][4 keys], and loading 16 channels of up to
// 16 key rows for the K transposes. SSE2 only; static inline (each kernel file compiles its own
// copy with its own flags, see numerics.h).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace edgebert {
namespace kernels {
namespace x86pack {

static inline __m128i load16_or_zero(const int8_t* p) {
  return p != nullptr ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)) : _mm_setzero_si128();
}

static inline int32_t load_i32(const void* p) {
  int32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// Interleaves 16 channels of 4 rows into 64 bytes [d][row].
static inline void interleave4x16(__m128i a, __m128i b, __m128i c, __m128i d, int8_t* dst) {
  const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
  const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 0), _mm_unpacklo_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 16), _mm_unpackhi_epi16(ab_lo, cd_lo));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 32), _mm_unpacklo_epi16(ab_hi, cd_hi));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 48), _mm_unpackhi_epi16(ab_hi, cd_hi));
}

// Packs rows r[0..3] (nullptr = zero row) of `len` bytes into dst[d*4 + t] = r[t][d].
static inline void pack_group4(const int8_t* const r[4], int len, int8_t* dst) {
  int d = 0;
  for (; d + 16 <= len; d += 16) {
    interleave4x16(load16_or_zero(r[0] ? r[0] + d : nullptr), load16_or_zero(r[1] ? r[1] + d : nullptr),
                   load16_or_zero(r[2] ? r[2] + d : nullptr), load16_or_zero(r[3] ? r[3] + d : nullptr),
                   dst + 4 * d);
  }
  if (d < len) {
    const int rem = len - d;
    alignas(16) int8_t tmp[4][16];
    std::memset(tmp, 0, sizeof tmp);
    for (int t = 0; t < 4; ++t)
      if (r[t] != nullptr) std::memcpy(tmp[t], r[t] + d, static_cast<size_t>(rem));
    alignas(16) int8_t out[64];
    interleave4x16(_mm_load_si128(reinterpret_cast<const __m128i*>(tmp[0])),
                   _mm_load_si128(reinterpret_cast<const __m128i*>(tmp[1])),
                   _mm_load_si128(reinterpret_cast<const __m128i*>(tmp[2])),
                   _mm_load_si128(reinterpret_cast<const __m128i*>(tmp[3])), out);
    std::memcpy(dst + 4 * d, out, static_cast<size_t>(4 * rem));
  }
}

// Channels [d, d + 16) of `count` (<= 16) rows (nullptr = zero row; channels >= hd read as zero).
static inline void load_rows16(const int8_t* const* r, int count, int hd, int d, __m128i* a) {
  const bool full = d + 16 <= hd;
  for (int t = 0; t < count; ++t) {
    if (full || r[t] == nullptr) {
      a[t] = load16_or_zero(r[t] ? r[t] + d : nullptr);
    } else {
      alignas(16) int8_t tmp[16] = {};
      std::memcpy(tmp, r[t] + d, static_cast<size_t>(hd - d));
      a[t] = _mm_load_si128(reinterpret_cast<const __m128i*>(tmp));
    }
  }
}

}  // namespace x86pack
}  // namespace kernels
}  // namespace edgebert
