// Attention core for one head (int8) with AVX512-VNNI: the AVX2 kernel (attention_avx2.cpp)
// compiled with its P.V dot products as one EVEX vpdpbusd on 256-bit vectors (AVX512VL) instead of
// vpmaddubsw + vpmaddwd + vpaddd. Both sums are exact in int32, so results are bit-identical to
// the AVX2 kernel. Chosen at run time by attention_head_s8 (cpu_has_avx512vnni()).
#define EB_ATTENTION_S8_NAME attention_head_s8_avx512vnni
#define EB_DOT4(acc, p, v) _mm256_dpbusd_epi32(acc, p, v)
#include "kernels/attention_avx2.cpp"
