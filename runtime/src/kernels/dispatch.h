// SPDX-License-Identifier: Apache-2.0
// Kernel dispatch, chosen once per process: one table of function pointers per instruction-set
// variant (portable, AVX2, AVX-VNNI, AVX-512, NEON, ...). kernel_table() resolves the best table
// this CPU runs on first use (thread-safe static initialization, no heap) and every dispatcher
// (layernorm_f32, quantize_s8, apply_lut_s8, attention_s8_kernel(), ...) calls through it, so no
// call tests the CPU. Every table computes the same bytes as the portable one (tested).
//
// Overrides: EDGEBERT_KERNELS=<name> in the environment, read once at the first kernel call,
// picks that table if this CPU runs it (an unknown or unsupported name keeps the best one);
// set_kernel_table_for_testing() switches the table while nothing runs (tests only: it is not
// synchronized with kernels running in other threads).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_window.h"
#include "kernels/gated.h"
#include "kernels/rope.h"

namespace edgebert {
namespace kernels {

struct KernelTable {
  const char* name;
  void (*layernorm_f32)(const float* x, const float* gamma, const float* beta, float eps, size_t rows, size_t cols,
                        float* y);
  void (*layernorm_quantize_s8)(float* x_inout, const float* gamma, const float* beta, float eps, size_t rows,
                                size_t cols, const float* inv_factors, float scale, int32_t zero_point, int8_t* y);
  void (*quantize_s8)(const float* x, size_t count, float scale, int32_t zero_point, int8_t* y);
  void (*quantize_s8_per_channel)(const float* x, size_t rows, size_t cols, const float* inv_factors, float scale,
                                  int32_t zero_point, int8_t* y);
  void (*residual_dequant_add_s8)(float* hidden, const int8_t* y, size_t rows, size_t cols, const float* scales,
                                  int32_t zero_point);
  void (*apply_lut_s8)(int8_t* x, size_t count, const int8_t lut[256]);
  void (*gelu_f32)(float* x, size_t count);
  void (*attention_rows_f32)(const AttentionHeadF32& args, int row_begin, int row_end);
  const AttentionS8Kernel* attention_s8;
  void (*gated_s8)(const GatedArgs& args);
  void (*attention_s8_pack_window)(const AttentionHeadS8& args);
  void (*attention_s8_rows_window)(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end);
  void (*rope_s8)(const RopeArgs& args, float in_scale, float out_scale, int8_t* x);
  void (*rmsnorm_heads_s8)(int8_t* x, size_t rows, size_t stride, size_t first, int heads, int head_dim,
                           const float* gamma, float eps, const float* in_scales, const float* out_scales);
  double (*sum_squares_f64)(const float* x, size_t n);
};

// The active table (the best this CPU runs, or the override).
const KernelTable& kernel_table();

// Every table this CPU can run, portable first; returns how many (at most kMaxKernelTables).
constexpr int kMaxKernelTables = 8;
int supported_kernel_tables(const KernelTable* out[kMaxKernelTables]);

// The table called `name` if this CPU runs it, else nullptr.
const KernelTable* find_kernel_table(const char* name);

// Tests: make `table` (one of supported_kernel_tables()) the active one; nullptr restores the
// process's choice. Not safe while kernels run in other threads.
void set_kernel_table_for_testing(const KernelTable* table);

}  // namespace kernels
}  // namespace edgebert
