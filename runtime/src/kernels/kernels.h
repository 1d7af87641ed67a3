// The non-GEMM compute kernels of one inference (attention core, LayerNorm, quantization, GELU).
// Every kernel: namespace edgebert::kernels, no exceptions, no heap allocation (callers pass
// scratch). Each has a portable C++ version (`*_portable`), on x86 an AVX2+FMA version
// (`*_avx2`, only call it when cpu_has_avx2_fma()), and a dispatcher (plain name) that picks the
// AVX2 version at run time when the CPU supports it.
#pragma once

#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/cpu_features.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/pooling.h"
#include "kernels/quantize.h"
