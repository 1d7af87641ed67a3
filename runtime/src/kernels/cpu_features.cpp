// SPDX-License-Identifier: Apache-2.0
// Run-time CPU feature detection for the kernel dispatchers.
#include "kernels/cpu_features.h"

#if defined(__aarch64__) && defined(__linux__)  // Linux and Android
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20)
#endif
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace edgebert {
namespace kernels {

namespace {
bool detect_avx2_fma() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}
// libgcc's / compiler-rt's CPU model also checks that the OS saves the AVX-512 register state.
bool detect_x86(const char* which) {
#if defined(__x86_64__) || defined(__i386__)
  if (!detect_avx2_fma()) return false;
  const bool avx512vnni = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl");
  if (which[0] == 'z') {  // "zmm": every AVX-512 subset the 512-bit kernels use
    return avx512vnni && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq");
  }
  if (which[0] == 'v') return detect_x86("zmm") && __builtin_cpu_supports("avx512vbmi");  // "vbmi"
  if (which[3] == '5') return avx512vnni;
  // AVX-VNNI: CPUID.(EAX=7, ECX=1):EAX bit 4 (read directly: clang before 16 has no "avxvnni"
  // for __builtin_cpu_supports; the OS's AVX state support is covered by the AVX2 check above).
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  return (eax >> 4) & 1u;
#else
  (void)which;
  return false;
#endif
}
bool detect_neon_dot() {
#if defined(__aarch64__) && defined(__linux__)
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#elif defined(__aarch64__) && defined(__APPLE__)
  int v = 0;
  size_t size = sizeof v;
  return sysctlbyname("hw.optional.arm.FEAT_DotProd", &v, &size, nullptr, 0) == 0 && v != 0;
#elif defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
  return true;  // built for a dotprod target
#else
  return false;
#endif
}
}  // namespace

bool cpu_has_avx2_fma() {
  static const bool has = detect_avx2_fma();  // thread-safe static init, no heap
  return has;
}

bool cpu_has_avx512vnni() {
  static const bool has = detect_x86("avx512vnni");
  return has;
}

bool cpu_has_avxvnni() {
  static const bool has = detect_x86("avxvnni");
  return has;
}

bool cpu_has_avx512() {
  static const bool has = detect_x86("zmm");
  return has;
}

bool cpu_has_avx512vbmi() {
  static const bool has = detect_x86("vbmi");
  return has;
}

bool cpu_has_avx512_vpclmulqdq() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
           __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.2");
  }();
  return has;
#else
  return false;
#endif
}

bool cpu_has_neon_dot() {
  static const bool has = detect_neon_dot();
  return has;
}

}  // namespace kernels
}  // namespace edgebert
