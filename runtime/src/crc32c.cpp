// SPDX-License-Identifier: Apache-2.0
// crc32c.cpp: CRC32C (see crc32c.h). Every path computes the raw register update (no pre/post
// inversion), so the paths can hand over to each other in the middle of a range.
//
// The folding path (x86-64 with AVX-512 and VPCLMULQDQ) treats the range as a polynomial over
// GF(2): for a CRC, any shorter polynomial congruent to it modulo the CRC polynomial P will do.
// Four 512-bit accumulators (sixteen 128-bit lanes) hold 256 bytes; each step multiplies every
// lane's two 64-bit halves by x^(2048+64-1) and x^(2048-1) mod P and adds the next 256 bytes. At
// the end the lanes are folded into one 128-bit value by the same rule over shorter distances, and
// the crc32 instruction reduces those 16 bytes (then any tail) to the CRC: the CRC of a value
// congruent to the range is the range's CRC. This is the method of Intel's paper "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ Instruction" (Gopal et al., 2009), with its
// final Barrett reduction replaced by the crc32 instruction. It runs at 90 GB/s on data in L2
// against 21-22 GB/s for the three crc32 streams; on the weight cache's payload, read from memory,
// the gain is smaller: BERT-base's verified warm start 0.16-0.27 ms shorter (docs/weight-cache.md).
#if defined(__x86_64__)
#include "kernels/avx512_intrinsics.h"  // first: <immintrin.h> without GCC 12.2's false warnings
#endif
#include "crc32c.h"

#include <cstring>

#include "kernels/cpu_features.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#endif

namespace edgebert {
namespace {

constexpr uint32_t kCrcPoly = 0x82F63B78u;  // Castagnoli, reflected

struct CrcTables {
  uint32_t t[8][256];
  CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ kCrcPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};
const CrcTables& crc_tables() {
  static const CrcTables t;
  return t;
}

// The raw register update (no pre/post inversion), portable: slicing by 8.
uint32_t crc_raw_portable(uint32_t c, const uint8_t* p, size_t n) {
  const CrcTables& T = crc_tables();
  for (; n >= 8; p += 8, n -= 8) {
    const uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    c = T.t[7][lo & 0xff] ^ T.t[6][(lo >> 8) & 0xff] ^ T.t[5][(lo >> 16) & 0xff] ^ T.t[4][lo >> 24] ^ T.t[3][p[4]] ^
        T.t[2][p[5]] ^ T.t[1][p[6]] ^ T.t[0][p[7]];
  }
  for (; n > 0; --n) c = (c >> 8) ^ T.t[0][(c ^ *p++) & 0xff];
  return c;
}

#if defined(__x86_64__) || (defined(__aarch64__) && defined(__ARM_FEATURE_CRC32))
// a * b modulo the polynomial (reflected: bit 31 is x^0).
uint32_t crc_mul(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) p ^= b;
    b = b & 1 ? (b >> 1) ^ kCrcPoly : b >> 1;
  }
  return p;
}
// x^n modulo the polynomial (n in bits): shifting a register over b zero bytes multiplies it by
// x^(8 b); the folding path's constants are such powers too.
uint32_t crc_x_pow(uint64_t n) {
  uint32_t result = 1u << 31, square = 1u << 30;  // x^0, x^1
  for (; n != 0; n >>= 1) {
    if (n & 1) result = crc_mul(result, square);
    square = crc_mul(square, square);
  }
  return result;
}

// Three streams of kLane bytes per block; their registers are joined by multiplication with
// x^(8 kLane) and x^(16 kLane), through tables: the product is linear in the register, so it is
// the XOR of one entry per register byte. 16 KiB lanes: 4 KiB ones checked 88 MB of mapped page
// cache at 11.5 GB/s, 16 KiB ones at 15.8 (on an AVX2 EPYC; each lane restarts the hardware
// prefetcher, which stops at page boundaries).
constexpr size_t kLane = 16384;
// How far ahead within each lane the loop asks for lines (never past the lane): on a Zen 5 EPYC
// (453 MB of Qwen3-Embedding's weight cache from memory, a throwaway loop of this shape) 2 KiB
// ahead took one thread from 22.6-23.0 to 17.0-17.2 ms and two from 12.0-12.7 to 8.7-10.5 ms;
// 1 and 3 KiB gained less, and so did asking past the lane (4 KiB ahead).
constexpr size_t kLanePrefetch = 2048;
struct ShiftTable {
  uint32_t t[4][256];
  explicit ShiftTable(uint32_t factor) {
    for (uint32_t k = 0; k < 4; ++k)
      for (uint32_t v = 0; v < 256; ++v) t[k][v] = crc_mul(v << (8 * k), factor);
  }
  uint32_t operator()(uint32_t c) const {
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
  }
};
struct LaneShifts {
  ShiftTable one{crc_x_pow(8 * kLane)}, two{crc_x_pow(16 * kLane)};
};
const LaneShifts& lane_shifts() {
  static const LaneShifts s;
  return s;
}

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
#endif

#if defined(__x86_64__)
#define EB_CRC_TARGET __attribute__((target("sse4.2")))
#define EB_CRC64(c, v) static_cast<uint32_t>(__builtin_ia32_crc32di((c), (v)))
#define EB_CRC8(c, v) __builtin_ia32_crc32qi((c), (v))
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#define EB_CRC_TARGET
#define EB_CRC64(c, v) __crc32cd((c), (v))
#define EB_CRC8(c, v) __crc32cb((c), (v))
#endif

#ifdef EB_CRC_TARGET
EB_CRC_TARGET uint32_t crc_raw_hardware(uint32_t c, const uint8_t* p, size_t n) {
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --n) c = EB_CRC8(c, *p++);
  const LaneShifts& s = lane_shifts();
  for (; n >= 3 * kLane; p += 3 * kLane, n -= 3 * kLane) {
    uint32_t c1 = 0, c2 = 0;
    for (size_t line = 0; line < kLane; line += 64) {
      if (line + kLanePrefetch < kLane)
        for (size_t lane = 0; lane < 3; ++lane) __builtin_prefetch(p + lane * kLane + line + kLanePrefetch);
      for (size_t i = line; i < line + 64; i += 8) {
        c = EB_CRC64(c, load64(p + i));
        c1 = EB_CRC64(c1, load64(p + kLane + i));
        c2 = EB_CRC64(c2, load64(p + 2 * kLane + i));
      }
    }
    c = s.two(c) ^ s.one(c1) ^ c2;
  }
  for (; n >= 8; p += 8, n -= 8) c = EB_CRC64(c, load64(p));
  for (; n > 0; --n) c = EB_CRC8(c, *p++);
  return c;
}
#endif

bool cpu_has_crc32c() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
#elif defined(EB_CRC_TARGET)
  return true;  // compiled for a CPU with the CRC extension
#else
  return false;
#endif
}

#if defined(__x86_64__)
// One 128-bit lane's constants for folding it forward by `bytes`: its first 64 bits (the higher
// powers) are multiplied by x^(8 bytes + 63), its second by x^(8 bytes - 1) (the -1 makes up for
// the carry-less product of two reflected operands landing one bit up). As a carry-less
// multiplier a 32-bit reflected constant sits in the upper half of its 64-bit operand.
struct FoldPair {
  uint64_t first, second;
  explicit FoldPair(uint64_t bytes)
      : first(uint64_t(crc_x_pow(8 * bytes + 63)) << 32), second(uint64_t(crc_x_pow(8 * bytes - 1)) << 32) {}
};
struct FoldConstants {
  FoldPair by256{256}, by192{192}, by128{128}, by64{64}, by48{48}, by32{32}, by16{16};
};
const FoldConstants& fold_constants() {
  static const FoldConstants k;
  return k;
}

#define EB_FOLD_TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))
EB_FOLD_TARGET inline __m512i fold_pairs(const FoldPair& a, const FoldPair& b, const FoldPair& c, const FoldPair& d) {
  return _mm512_set_epi64(static_cast<long long>(d.second), static_cast<long long>(d.first),
                          static_cast<long long>(c.second), static_cast<long long>(c.first),
                          static_cast<long long>(b.second), static_cast<long long>(b.first),
                          static_cast<long long>(a.second), static_cast<long long>(a.first));
}
// x's lanes folded forward by the distance k names, added to d (a three-way XOR in one instruction).
EB_FOLD_TARGET inline __m512i fold(__m512i x, __m512i k, __m512i d) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), d, 0x96);
}

constexpr size_t kFoldBlock = 256;
// How far ahead of the loads the folding loop asks for lines: the hardware prefetcher stops at
// 4 KiB pages, and a payload mapped from the page cache is checked from memory. On a Zen 5 EPYC
// (453 MB of Qwen3-Embedding's weight cache, a throwaway loop) 4 KiB ahead took one thread from
// 12.8-14.0 to 11.3-11.9 ms and two from 6.4-8.3 to 6.0-6.5 ms; 1 and 2 KiB gained less, 8 KiB
// the same.
constexpr size_t kFoldPrefetch = 4096;

// The raw register update over n >= kFoldBlock bytes.
EB_FOLD_TARGET uint32_t crc_raw_fold512(uint32_t c, const uint8_t* p, size_t n) {
  const FoldConstants& k = fold_constants();
  const __m512i by256 = fold_pairs(k.by256, k.by256, k.by256, k.by256);
  __m512i x0 = _mm512_loadu_si512(p), x1 = _mm512_loadu_si512(p + 64), x2 = _mm512_loadu_si512(p + 128),
          x3 = _mm512_loadu_si512(p + 192);
  // the register so far is added to the range's first 32 bits
  x0 = _mm512_xor_si512(x0, _mm512_castsi128_si512(_mm_cvtsi32_si128(static_cast<int>(c))));
  p += kFoldBlock;
  n -= kFoldBlock;
  for (; n >= kFoldBlock; p += kFoldBlock, n -= kFoldBlock) {
    if (n >= kFoldPrefetch + kFoldBlock)  // (never past the range)
      for (size_t line = 0; line < kFoldBlock; line += 64)
        _mm_prefetch(reinterpret_cast<const char*>(p + kFoldPrefetch + line), _MM_HINT_T0);
    x0 = fold(x0, by256, _mm512_loadu_si512(p));
    x1 = fold(x1, by256, _mm512_loadu_si512(p + 64));
    x2 = fold(x2, by256, _mm512_loadu_si512(p + 128));
    x3 = fold(x3, by256, _mm512_loadu_si512(p + 192));
  }
  // the four accumulators into x3 (192, 128 and 64 bytes before it), then its lanes into the last
  // one (48, 32 and 16 bytes before it; the last lane is kept as it is by the mask)
  x3 = fold(x0, fold_pairs(k.by192, k.by192, k.by192, k.by192), x3);
  x3 = fold(x1, fold_pairs(k.by128, k.by128, k.by128, k.by128), x3);
  x3 = fold(x2, fold_pairs(k.by64, k.by64, k.by64, k.by64), x3);
  const __m512i lanes = fold_pairs(k.by48, k.by32, k.by16, k.by16);
  const __m512i head = _mm512_maskz_mov_epi64(0x3F, x3);
  const __m512i folded = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(head, lanes, 0x00),
                                                   _mm512_clmulepi64_epi128(head, lanes, 0x11),
                                                   _mm512_maskz_mov_epi64(0xC0, x3), 0x96);
  const __m256i half = _mm256_xor_si256(_mm512_castsi512_si256(folded), _mm512_extracti64x4_epi64(folded, 1));
  const __m128i v = _mm_xor_si128(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
  // 16 bytes congruent to everything so far: their CRC from a zero register is its CRC
  uint32_t r = static_cast<uint32_t>(_mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(v))));
  r = static_cast<uint32_t>(_mm_crc32_u64(r, static_cast<uint64_t>(_mm_extract_epi64(v, 1))));
  for (; n >= 8; p += 8, n -= 8) r = static_cast<uint32_t>(_mm_crc32_u64(r, load64(p)));
  for (; n > 0; --n) r = _mm_crc32_u8(r, *p++);
  return r;
}

bool cpu_has_fold512() { return kernels::cpu_has_avx512_vpclmulqdq(); }
#endif  // __x86_64__

}  // namespace

bool crc32c_hardware() { return cpu_has_crc32c(); }

const char* crc32c_path() {
#if defined(__x86_64__)
  if (cpu_has_fold512()) return "vpclmulqdq folding (AVX-512)";
  if (cpu_has_crc32c()) return "crc32 instruction (SSE4.2)";
#elif defined(EB_CRC_TARGET)
  return "crc32 instruction (ARMv8)";
#endif
  return "table";
}

bool crc32c_with(Crc32cPath path, const void* data, size_t size, uint32_t crc, uint32_t* out) {
  const auto* p = static_cast<const uint8_t*>(data);
  const uint32_t c = ~crc;
  switch (path) {
    case Crc32cPath::kTable:
      *out = ~crc_raw_portable(c, p, size);
      return true;
    case Crc32cPath::kInstruction:
#ifdef EB_CRC_TARGET
      if (!cpu_has_crc32c()) return false;
      *out = ~crc_raw_hardware(c, p, size);
      return true;
#else
      return false;
#endif
    case Crc32cPath::kFold512:
#if defined(__x86_64__)
      if (!cpu_has_fold512()) return false;
      *out = ~(size >= kFoldBlock ? crc_raw_fold512(c, p, size) : crc_raw_hardware(c, p, size));
      return true;
#else
      return false;
#endif
  }
  return false;
}

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  const uint32_t c = ~crc;
#if defined(__x86_64__)
  if (size >= kFoldBlock && cpu_has_fold512()) return ~crc_raw_fold512(c, p, size);
#endif
#ifdef EB_CRC_TARGET
  if (cpu_has_crc32c()) return ~crc_raw_hardware(c, p, size);
#endif
  return ~crc_raw_portable(c, p, size);
}

}  // namespace edgebert
