// Attention core for one head (int8) with AVX-VNNI (VEX vpdpbusd, e.g. Intel cores without
// AVX-512): the AVX2 kernel (attention_avx2.cpp) compiled with its P.V dot products as one
// vpdpbusd. Bit-identical to the AVX2 kernel. Chosen at run time by attention_head_s8
// (cpu_has_avxvnni()) when AVX512-VNNI is absent.
#define EB_ATTENTION_S8_NAME attention_head_s8_avxvnni
#define EB_DOT4(acc, p, v) _mm256_dpbusd_avx_epi32(acc, p, v)
#include "kernels/attention_avx2.cpp"
