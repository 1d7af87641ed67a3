// SPDX-License-Identifier: Apache-2.0
// int8_peak.cpp (edgebert-int8-peak): this CPU's int8 multiply-accumulate peak on one core, from
// a loop of independent dot-product instructions with no memory traffic: vpdpbusd on zmm
// (AVX512-VNNI) and on ymm (AVX-VNNI / AVX512VL-VNNI), and vpmaddubsw + vpmaddwd + vpaddd (AVX2,
// what kernels without VNNI use). GOPS counts a multiply and an add as two operations, as GEMM
// GOPS (2 x M x N x K / time) do. Run one copy per core for the all-core peak. Benchmark only.
#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace {

using Clock = std::chrono::steady_clock;
// Short timed loops (~0.5 ms), best of many: on a shared machine a short loop can still run on a
// core of its own for its whole duration, where a long one would measure the scheduler.
constexpr long kIters = 40000;

template <typename F>
double best_seconds(F&& f) {
  double best = 1e30;
  for (int r = 0; r < 400; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// One benchmark loop: 12 independent accumulators hide the instruction latency; the empty asm
// statements keep the compiler from folding the constant inputs or hoisting work out of the loop. Each function defines EB_VEC (vector type),
// EB_SET1_32 / EB_SET1_8 (broadcasts), EB_DOT (acc += a . b), EB_ADD32 and EB_LANE0.
#define EB_12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define EB_DECL(i) EB_VEC acc##i = EB_SET1_32(i);
#define EB_STEP(i) __asm__ volatile("" : "+v"(a)); acc##i = EB_DOT(acc##i, a, b); __asm__ volatile("" : "+v"(acc##i));
#define EB_SUM(i) s = EB_ADD32(s, acc##i);
#define EB_PEAK_LOOP                                \
  EB_12(EB_DECL)                                    \
  EB_VEC a = EB_SET1_8(3), b = EB_SET1_8(-2);       \
  for (long it = 0; it < kIters; ++it) {           \
    __asm__ volatile("" : "+v"(a), "+v"(b));        \
    EB_12(EB_STEP)                                  \
  }                                                 \
  EB_VEC s = acc0;                                  \
  EB_12(EB_SUM)                                     \
  return EB_LANE0(s);

#define EB_VEC __m512i
#define EB_SET1_32 _mm512_set1_epi32
#define EB_SET1_8 _mm512_set1_epi8
#define EB_ADD32 _mm512_add_epi32
#define EB_LANE0 _mm512_cvtsi512_si32
#define EB_DOT _mm512_dpbusd_epi32
__attribute__((target("avx512f,avx512vnni"))) int vnni512() { EB_PEAK_LOOP }
#undef EB_VEC
#undef EB_SET1_32
#undef EB_SET1_8
#undef EB_ADD32
#undef EB_LANE0
#undef EB_DOT

#define EB_VEC __m256i
#define EB_SET1_32 _mm256_set1_epi32
#define EB_SET1_8 _mm256_set1_epi8
#define EB_ADD32 _mm256_add_epi32
#define EB_LANE0 _mm256_cvtsi256_si32
#define EB_DOT _mm256_dpbusd_avx_epi32
__attribute__((target("avx2,avxvnni"))) int vnni256() { EB_PEAK_LOOP }
#undef EB_DOT

// AVX2 without VNNI: u8 x s8 pairs to int16 (vpmaddubsw), to int32 (vpmaddwd with ones), added.
__attribute__((target("avx2"))) inline __m256i avx2_dot(__m256i acc, __m256i a, __m256i b) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)));
}
#define EB_DOT avx2_dot
__attribute__((target("avx2"))) int avx2() { EB_PEAK_LOOP }

// AVX-VNNI: CPUID.(EAX=7, ECX=1):EAX bit 4, read directly (clang before 16 has no "avxvnni" for
// __builtin_cpu_supports; runtime/src/kernels/cpu_features.cpp does the same). Like the
// dispatchers, it is trusted only with AVX2, whose check covers the OS's AVX state support.
bool has_avxvnni() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__builtin_cpu_supports("avx2") || !__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  return (eax >> 4) & 1u;
}

void report(const char* name, int bytes_per_vector, double secs) {
  const double macs = double(kIters) * 12 * bytes_per_vector;  // one MAC per int8 pair
  std::printf("%-34s %8.1f GOPS (one core)\n", name, 2 * macs / secs * 1e-9);
}

}  // namespace

int main() {
  __builtin_cpu_init();
  volatile int sink = 0;
  if (__builtin_cpu_supports("avx512vnni")) report("vpdpbusd zmm (AVX512-VNNI)", 64, best_seconds([&] { sink = sink + vnni512(); }));
  if (has_avxvnni()) report("vpdpbusd ymm (AVX-VNNI)", 32, best_seconds([&] { sink = sink + vnni256(); }));
  if (__builtin_cpu_supports("avx2")) report("vpmaddubsw+vpmaddwd ymm (AVX2)", 32, best_seconds([&] { sink = sink + avx2(); }));
  return 0;
}
