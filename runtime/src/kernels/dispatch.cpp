// SPDX-License-Identifier: Apache-2.0
// The kernel tables of every instruction-set variant and the once-per-process choice among them
// (see dispatch.h).
#include "kernels/dispatch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu_features.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/quantize.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"

namespace edgebert {
namespace kernels {

namespace {

const KernelTable kPortable = {"portable",
                               layernorm_f32_portable,
                               layernorm_quantize_s8_portable,
                               quantize_s8_portable,
                               quantize_s8_per_channel_portable,
                               residual_dequant_add_s8_portable,
                               apply_lut_s8_portable,
                               gelu_f32_portable,
                               attention_rows_f32_portable,
                               &kAttentionS8Portable,
                               gated_s8_portable,
                               attention_s8_pack_window_in_place,
                               attention_s8_rows_window_portable,
                               rope_s8_portable,
                               rmsnorm_heads_s8_portable,
                               sum_squares_f64_portable};

#if defined(__x86_64__) || defined(__i386__)
// AVX2 element-wise kernels with one of the 256-bit int8 attention cores.
constexpr KernelTable avx2_table(const char* name, const AttentionS8Kernel* attention,
                                 void (*pack_window)(const AttentionHeadS8&),
                                 void (*rows_window)(const AttentionHeadS8&, KeyWindow, int, int)) {
  return {name,
          layernorm_f32_avx2,
          layernorm_quantize_s8_avx2,
          quantize_s8_avx2,
          quantize_s8_per_channel_avx2,
          residual_dequant_add_s8_avx2,
          apply_lut_s8_avx2,
          gelu_f32_avx2,
          attention_rows_f32_avx2,
          attention,
          gated_s8_avx2,
          pack_window,
          rows_window,
          rope_s8_avx2,
          rmsnorm_heads_s8_avx2,
          sum_squares_f64_avx2};
}
const KernelTable kAvx2 = avx2_table("avx2", &kAttentionS8Avx2, attention_s8_pack_window_avx2, attention_s8_rows_window_avx2);
const KernelTable kAvxVnni =
    avx2_table("avxvnni", &kAttentionS8AvxVnni, attention_s8_pack_window_avxvnni, attention_s8_rows_window_avxvnni);
const KernelTable kAvx512Vnni256 = avx2_table("avx512vnni256", &kAttentionS8Avx512Vnni,
                                              attention_s8_pack_window_avx512vnni256, attention_s8_rows_window_avx512vnni256);
// 512-bit kernels; the table lookup with vpermi2b where AVX512-VBMI exists.
constexpr KernelTable avx512_table(const char* name, void (*lut)(int8_t*, size_t, const int8_t*)) {
  return {name,
          layernorm_f32_avx512,
          layernorm_quantize_s8_avx512,
          quantize_s8_avx512,
          quantize_s8_per_channel_avx512,
          residual_dequant_add_s8_avx512,
          lut,
          gelu_f32_avx2,
          attention_rows_f32_avx2,
          &kAttentionS8Avx512,
          gated_s8_avx512,
          attention_s8_pack_window_avx512,
          attention_s8_rows_window_avx512,
          rope_s8_avx512,
          rmsnorm_heads_s8_avx512,
          sum_squares_f64_avx512};
}
const KernelTable kAvx512 = avx512_table("avx512", apply_lut_s8_avx512);
const KernelTable kAvx512Vbmi = avx512_table("avx512vbmi", apply_lut_s8_avx512vbmi);
#endif

#if defined(__aarch64__)
constexpr KernelTable neon_table(const char* name, const AttentionS8Kernel* attention,
                                 void (*rows_window)(const AttentionHeadS8&, KeyWindow, int, int)) {
  return {name,
          layernorm_f32_portable,
          layernorm_quantize_s8_portable,
          quantize_s8_portable,
          quantize_s8_per_channel_portable,
          residual_dequant_add_s8_portable,
          apply_lut_s8_neon,
          gelu_f32_portable,
          attention_rows_f32_portable,
          attention,
          gated_s8_portable,
          attention_s8_pack_window_neon,
          rows_window,
          rope_s8_neon,
          rmsnorm_heads_s8_neon,
          sum_squares_f64_neon};
}
const KernelTable kNeon = neon_table("neon", &kAttentionS8Neon, attention_s8_rows_window_neon);
const KernelTable kNeonDot = neon_table("neon_dot", &kAttentionS8NeonDot, attention_s8_rows_window_neon_dot);
#endif

// Supported tables in order of preference, best last.
struct TableList {
  const KernelTable* t[kMaxKernelTables];
  int count = 0;
  void add(const KernelTable* x) { t[count++] = x; }
};

TableList detect_tables() {
  TableList l;
  l.add(&kPortable);
#if defined(__x86_64__) || defined(__i386__)
  if (cpu_has_avx2_fma()) l.add(&kAvx2);
  if (cpu_has_avxvnni()) l.add(&kAvxVnni);
  if (cpu_has_avx512vnni()) l.add(&kAvx512Vnni256);
  if (cpu_has_avx512()) l.add(&kAvx512);
  if (cpu_has_avx512vbmi()) l.add(&kAvx512Vbmi);
#elif defined(__aarch64__)
  l.add(&kNeon);
  if (cpu_has_neon_dot()) l.add(&kNeonDot);
#endif
  return l;
}

const TableList& tables() {
  static const TableList list = detect_tables();  // thread-safe static init, no heap
  return list;
}

const KernelTable* choose() {
  const TableList& l = tables();
  const char* want = std::getenv("EDGEBERT_KERNELS");
  if (want != nullptr && *want != '\0') {
    const KernelTable* t = find_kernel_table(want);
    if (t != nullptr) return t;
  }
  return l.t[l.count - 1];
}

const KernelTable* chosen() {
  static const KernelTable* const c = choose();
  return c;
}

std::atomic<const KernelTable*> g_override{nullptr};

}  // namespace

const KernelTable& kernel_table() {
  const KernelTable* o = g_override.load(std::memory_order_acquire);
  return o != nullptr ? *o : *chosen();
}

int supported_kernel_tables(const KernelTable* out[kMaxKernelTables]) {
  const TableList& l = tables();
  for (int i = 0; i < l.count; ++i) out[i] = l.t[i];
  return l.count;
}

const KernelTable* find_kernel_table(const char* name) {
  const TableList& l = tables();
  for (int i = 0; i < l.count; ++i)
    if (std::strcmp(l.t[i]->name, name) == 0) return l.t[i];
  return nullptr;
}

void set_kernel_table_for_testing(const KernelTable* table) { g_override.store(table, std::memory_order_release); }

}  // namespace kernels
}  // namespace edgebert
