// SPDX-License-Identifier: Apache-2.0
// Attention core for one head (int8) with AVX-VNNI (VEX vpdpbusd, e.g. Intel cores without
// AVX-512): the AVX2 kernel (attention_avx2.cpp) compiled with its P.V and Q.K^T dot products
// as vpdpbusd (Q.K^T as in attention_avx512vnni.cpp). Bit-identical to the AVX2 kernel. Chosen
// at run time by attention_s8_kernel() (cpu_has_avxvnni()) when AVX512-VNNI is absent.
#define EB_ATTENTION_S8_KERNEL kAttentionS8AvxVnni
#define EB_ATTENTION_S8_KERNEL_NAME "avxvnni"
#define EB_DOT4(acc, p, v) _mm256_dpbusd_avx_epi32(acc, p, v)
#define EB_QK_DOT4(acc, q, k) _mm256_dpbusd_avx_epi32(acc, q, k)
#define EB_ATTENTION_S8_WINDOW_PACK attention_s8_pack_window_avxvnni
#define EB_ATTENTION_S8_WINDOW_ROWS attention_s8_rows_window_avxvnni
#include "kernels/attention_avx2.cpp"
