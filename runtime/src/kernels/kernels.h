// SPDX-License-Identifier: Apache-2.0
// The non-GEMM compute kernels of one inference (attention core, LayerNorm, quantization, GELU).
// Every kernel: namespace edgebert::kernels, no exceptions, no heap allocation (callers pass
// scratch). Each has a portable C++ version (`*_portable`), vector versions (`*_avx2`,
// `*_avx512`, `*_neon`, ...; call one only when cpu_features.h says the CPU runs it), and a
// dispatcher (plain name) that calls the variant of the table chosen once per process
// (dispatch.h). Every variant computes the same bytes as the portable version.
#pragma once

#include "kernels/activation.h"
#include "kernels/attention.h"
#include "kernels/attention_window.h"
#include "kernels/cpu_features.h"
#include "kernels/dispatch.h"
#include "kernels/gated.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/pooling.h"
#include "kernels/quantize.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
