// SPDX-License-Identifier: Apache-2.0
// Attention core for one head (int8) with AVX512-VNNI: the AVX2 kernel (attention_avx2.cpp)
// compiled with its P.V dot products as one EVEX vpdpbusd on 256-bit vectors (AVX512VL) instead of
// vpmaddubsw + vpmaddwd + vpaddd, and Q.K^T as vpdpbusd of the query offset to unsigned (q + 128)
// against K in channel quads, started from -128 * sum(k). All sums are exact in int32, so results
// are bit-identical to the AVX2 kernel. Chosen at run time by
// attention_s8_kernel() (cpu_has_avx512vnni()).
#define EB_ATTENTION_S8_KERNEL kAttentionS8Avx512Vnni
#define EB_ATTENTION_S8_KERNEL_NAME "avx512vnni"
#define EB_DOT4(acc, p, v) _mm256_dpbusd_epi32(acc, p, v)
#define EB_QK_DOT4(acc, q, k) _mm256_dpbusd_epi32(acc, q, k)
#define EB_ATTENTION_S8_WINDOW_PACK attention_s8_pack_window_avx512vnni256
#define EB_ATTENTION_S8_WINDOW_ROWS attention_s8_rows_window_avx512vnni256
#include "kernels/attention_avx2.cpp"
