// SPDX-License-Identifier: Apache-2.0
// GELU (exact erf form): a 256-entry lookup table for int8 activations, and a float version.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {
namespace kernels {

// lut[uint8_t(q)] = quantize(gelu((q - in_zp) * in_scale)) for every int8 q, i.e. the table is
// indexed by the raw byte of the int8 input (entries 0..127 are q = 0..127, 128..255 are
// q = -128..-1). GELU and requantization are evaluated in double: round half to even, clamp.
void build_gelu_lut_s8(float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                       int8_t lut[256]);

// x[i] = lut[uint8_t(x[i])], in place.
void apply_lut_s8(int8_t* x, size_t count, const int8_t lut[256]);
void apply_lut_s8_portable(int8_t* x, size_t count, const int8_t lut[256]);

// x = x * Phi(x) in place (erf GELU), max relative error ~3e-7 where the result is a normal float.
void gelu_f32(float* x, size_t count);
void gelu_f32_portable(float* x, size_t count);

#if defined(__x86_64__) || defined(__i386__)
void apply_lut_s8_avx2(int8_t* x, size_t count, const int8_t lut[256]);
void gelu_f32_avx2(float* x, size_t count);
// AVX-512BW (cpu_has_avx512()): the vpshufb cascade on 64 bytes at a time.
void apply_lut_s8_avx512(int8_t* x, size_t count, const int8_t lut[256]);
// AVX512-VBMI (cpu_has_avx512vbmi()): two vpermi2b 128-entry lookups and a select by the top bit.
void apply_lut_s8_avx512vbmi(int8_t* x, size_t count, const int8_t lut[256]);
#endif
#if defined(__aarch64__)
void apply_lut_s8_neon(int8_t* x, size_t count, const int8_t lut[256]);
#endif

}  // namespace kernels
}  // namespace edgebert
