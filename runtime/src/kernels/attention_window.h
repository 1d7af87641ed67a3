// SPDX-License-Identifier: Apache-2.0
// Int8 attention with a key-window mask, for the model families of issue 18 (Longformer /
// BigBird-style local attention, Mistral-style windows; ModernBERT's local layers) and the causal
// decoders of issue 24 (Qwen3: keys j <= i): query row i attends only to the keys j in
// [i - window.before, i + window.after] (and, of those, the ones key_mask keeps), with the
// numerics of attention.h, so a window covering [0, n) gives attention_head_s8's bytes. The
// work grows with n x (before + after + 1), not n^2: each row reads only its window's keys (in place for
// the portable variant; packed once per head for the x86 and NEON ones). Scratch as attention.h's rows(): row i's scores and probabilities at offset
// (i - row_begin) * n (only the window's 2 window + 1 entries are used). Rows are independent, so
// threads may compute different rows of a head at once.
#pragma once

#include "kernels/attention.h"

namespace edgebert {
namespace kernels {

// The keys row i attends: [i - before, i + after] within [0, n). Symmetric sliding window w:
// {w, w}; causal: {n, 0} (or {w, 0}: causal with a window); full: {n, n}. Both non-negative.
struct KeyWindow {
  int before = 0;
  int after = 0;
};
static inline bool window_valid(KeyWindow w) { return w.before >= 0 && w.after >= 0; }
static inline KeyWindow symmetric_window(int w) { return {w, w}; }
// First key and end (exclusive) of row i's keys in a head of n tokens (no int overflow for any
// non-negative window).
static inline int window_first_key(KeyWindow w, int i) { return i > w.before ? i - w.before : 0; }
static inline int window_end_key(KeyWindow w, int i, int n) { return n - i - 1 > w.after ? i + w.after + 1 : n; }

// Two steps, as attention.h's pack/rows: pack_window(args) once per head (into args.packed,
// attention_s8_packed_bytes(n, head_dim) bytes, 64-byte aligned; a no-op for the variants that read
// K and V in place), then rows_window(args, ...) on any row ranges, from any number of threads.
// The active kernel table's variants (kernels/dispatch.h).
void attention_s8_pack_window(const AttentionHeadS8& args);
void attention_s8_rows_window(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end);
void attention_s8_pack_window_in_place(const AttentionHeadS8& args);  // the no-op pack step
void attention_s8_rows_window_portable(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end);
#if defined(__x86_64__) || defined(__i386__)
// Blocked: every key packed once with the full kernel's pack, 4 query rows at a time over the key
// blocks of their band with the full kernel's micro-kernels, so the work is n x (2 window + ~20 to
// 36). AVX2 / AVX-VNNI / AVX512-VNNI at 256 bits (attention_avx2.cpp and the files that compile
// it again), AVX-512 VNNI (attention_avx512.cpp).
void attention_s8_pack_window_avx2(const AttentionHeadS8& args);
void attention_s8_rows_window_avx2(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end);
void attention_s8_pack_window_avxvnni(const AttentionHeadS8& args);
void attention_s8_rows_window_avxvnni(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end);
void attention_s8_pack_window_avx512vnni256(const AttentionHeadS8& args);
void attention_s8_rows_window_avx512vnni256(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end);
void attention_s8_pack_window_avx512(const AttentionHeadS8& args);
void attention_s8_rows_window_avx512(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end);
#endif
#if defined(__aarch64__)
// NEON, blocked the same way (attention_neon.cpp: V packed once, K read in place); without and
// with the dot-product instructions.
void attention_s8_pack_window_neon(const AttentionHeadS8& args);
void attention_s8_rows_window_neon(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end);
void attention_s8_rows_window_neon_dot(const AttentionHeadS8& args, KeyWindow window, int row_begin, int row_end);
#endif
// fp32 (kernels/attention.cpp): attention_rows_f32_portable's numerics over the window's keys, so
// window >= n gives its bytes; a row whose window holds only padding gets HF's uniform mean of all
// values (attention_f32_fill_unattended). Portable
// only (the fp32 path serves the fp32 family models; the int8 window kernel is the fast one).
void attention_rows_window_f32(const AttentionHeadF32& args, KeyWindow window, int row_begin, int row_end);

}  // namespace kernels
}  // namespace edgebert
