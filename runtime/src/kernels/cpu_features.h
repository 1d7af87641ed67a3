// SPDX-License-Identifier: Apache-2.0
// Run-time CPU feature detection used by the kernel dispatchers (cached after the first call).
#pragma once

namespace edgebert {
namespace kernels {

// True when the CPU (and OS) support AVX2 and FMA, i.e. the *_avx2 kernels may run.
// Always false on non-x86 builds. Thread-safe; the answer is computed once.
bool cpu_has_avx2_fma();
// AVX2+FMA plus AVX512-VNNI with AVX512VL (EVEX vpdpbusd on 256-bit vectors): *_avx512vnni kernels.
bool cpu_has_avx512vnni();
// AVX2+FMA plus AVX-VNNI (VEX vpdpbusd): *_avxvnni kernels. Both false on non-x86 builds.
bool cpu_has_avxvnni();
// AVX-512 F, BW, DQ, VL and VNNI (with AVX2+FMA): the 512-bit *_avx512 kernels.
bool cpu_has_avx512();
// cpu_has_avx512() plus AVX512-VBMI (vpermb / vpermi2b): the *_avx512vbmi kernels.
bool cpu_has_avx512vbmi();
// AVX512F with VPCLMULQDQ, PCLMULQDQ and SSE4.2 (OS state checked): CRC32C's folding path
// (crc32c.cpp). Independent of the kernels' AVX2 / VNNI requirements.
bool cpu_has_avx512_vpclmulqdq();

// True on aarch64 cores with the dot-product instructions (sdot/udot, HWCAP_ASIMDDP), i.e. the
// *_neon_dot kernels may run. Always false elsewhere. Thread-safe; computed once.
bool cpu_has_neon_dot();

}  // namespace kernels
}  // namespace edgebert
