// SPDX-License-Identifier: Apache-2.0
// attention.cpp: the attention core of one layer, every head of every sequence of the run:
// softmax(Q K^T / sqrt(d)) V per head on that sequence's rows only (int8 with packed K/V, or
// float), full, sliding-window and/or causal, any query:KV head ratio. Scheduling over the session's workers: one sequence is split
// into (head, row tile) items so that a few heads still keep every thread busy; several sequences
// are (sequence, head) items, each packing K/V into its worker's own slot. Every row's result is
// the same whichever schedule computes it.
#include <algorithm>
#include <atomic>

#include "exec/op_kernels.h"
#include "kernels/kernels.h"
#include "program/program.h"

namespace edgebert::exec {
namespace {

size_t element_bytes(const Op& op) { return op.linear->int8 ? 1 : 4; }
// Bytes of one context element: int8, or float (fp32 attention, or an int8 one that writes float).
size_t context_bytes(const Op& op) { return op.linear->int8 && !op.float_output ? 1 : 4; }

// The QKV row layout of an attention op: Q of `heads` heads, then K and V of `kv_heads` heads
// each (grouped-query attention: query head h reads KV head h / (heads / kv_heads)), head_dim
// channels per head; the context row has heads x head_dim channels (op.width).
struct QkvLayout {
  size_t q_width, kv_width, stride, group;
  explicit QkvLayout(const Op& op) {
    const size_t d = static_cast<size_t>(op.head_dim), heads = static_cast<size_t>(op.heads);
    const size_t kv = static_cast<size_t>(op.kv_heads > 0 ? op.kv_heads : op.heads);
    q_width = heads * d;
    kv_width = kv * d;
    stride = q_width + 2 * kv_width;
    group = heads / kv;
  }
  size_t q(size_t h, size_t d) const { return h * d; }
  size_t k(size_t h, size_t d) const { return q_width + (h / group) * d; }
  size_t v(size_t h, size_t d) const { return q_width + kv_width + (h / group) * d; }
};

// The keys each query row attends (kernels/attention_window.h) for a sequence of n rows: the
// op's sliding window (keys with |i - j| <= window / 2) and/or causal mask (keys j <= i).
kernels::KeyWindow key_window(const Op& op, size_t n) {
  const int all = static_cast<int>(n);
  const int half = op.window > 0 ? op.window / 2 : all;
  return {half, op.causal ? 0 : half};
}
bool windowed(const Op& op) { return op.window > 0 || op.causal; }

// Points the kernel arguments `a` at head h of the QKV rows (QkvLayout) and of the context rows
// [n, heads x head_dim].
template <typename Args, typename T>
void point_at_head(Args& a, const T* qkv, T* context, const Op& op, size_t h, size_t n, const uint8_t* mask) {
  const QkvLayout l(op);
  const size_t d = static_cast<size_t>(op.head_dim);
  a.q = qkv + l.q(h, d);
  a.k = qkv + l.k(h, d);
  a.v = qkv + l.v(h, d);
  a.qkv_stride = l.stride;
  a.n = static_cast<int>(n);
  a.head_dim = static_cast<int>(d);
  a.key_mask = mask;
  a.context = context + h * d;
  a.context_stride = l.q_width;
}

// Head h's arguments for the int8 kernel (scratch pointers left for the caller).
kernels::AttentionHeadS8 head_args_s8(const Op& op, const uint8_t* qkv_buf, uint8_t* context, uint8_t* packed, size_t h,
                                      size_t n, const uint8_t* mask) {
  const QkvLayout l(op);
  const size_t d = static_cast<size_t>(op.head_dim);
  kernels::AttentionHeadS8 a;
  a.context_f32 = nullptr;
  point_at_head(a, reinterpret_cast<const int8_t*>(qkv_buf), reinterpret_cast<int8_t*>(context), op, h, n, mask);
  if (op.float_output) {  // the float context rows, each quantized later with its own scale
    a.context_f32 = reinterpret_cast<float*>(context) + h * d;
    a.context = nullptr;
  }
  a.q_scale = op.qkv_scale(static_cast<int>(l.q(h, d)));
  a.k_scale = op.qkv_scale(static_cast<int>(l.k(h, d)));
  a.v_scale = op.qkv_scale(static_cast<int>(l.v(h, d)));
  a.scores = nullptr;
  a.probs = nullptr;
  a.packed = reinterpret_cast<int8_t*>(packed);
  a.context_scale = op.float_output ? 1.f : op.quant_for->input_scale;  // float: the value itself
  a.context_zero_point = op.float_output ? 0 : op.quant_for->input_zero_point;
  return a;
}

// One attention op's execution. Buffers (blocks::attention): out[0] context; int8: out[1] packed
// K/V (one slot per head with several workers, one reused slot with one), out[2] scores and out[3]
// probabilities per worker; float: out[1] scores per worker.
struct AttentionJob {
  const BoundOp& b;
  const RunContext& ctx;
  size_t row0 = 0, n = 0;                    // the sequence of the single-sequence schedule
  size_t tile = 1, tiles_per_head = 1;
  std::atomic<size_t> next{0};

  AttentionJob(const BoundOp& bound, const RunContext& c) : b(bound), ctx(c) {}
  const Op& op() const { return *b.op; }
  bool int8() const { return op().linear->int8; }
  const uint8_t* mask(size_t first_row) const { return ctx.any_padding ? ctx.key_mask + first_row : nullptr; }
  uint8_t* slot(size_t index) const {
    return b.out[1] + index * attention_packed_stride(ctx.res.max_seq_len, static_cast<size_t>(op().head_dim));
  }

  // Packs head h's K/V of the sequence [first, first + rows) into `dst`.
  void pack(size_t h, size_t first, size_t rows, uint8_t* dst) const {
    const QkvLayout l(op());
    const size_t e = element_bytes(op());
    const kernels::AttentionHeadS8 a = head_args_s8(op(), b.in[0] + first * l.stride * e,
                                                    b.out[0] + first * l.q_width * context_bytes(op()), dst, h, rows,
                                                    mask(first));
    if (windowed(op()))
      kernels::attention_s8_pack_window(a);  // a no-op where the window kernel reads keys in place
    else
      kernels::attention_s8_kernel().pack(a);
  }

  // Query rows [row_begin, row_end) of head h of the sequence [first, first + rows), worker w's scratch.
  void rows_of(size_t h, size_t first, size_t rows, uint8_t* packed, size_t row_begin, size_t row_end, size_t w) const {
    const size_t n_max = ctx.res.max_seq_len, max_tile = ctx.res.max_tile;
    const size_t scores_stride = attention_scratch_stride(max_tile * n_max * 4);
    const QkvLayout l(op());
    const size_t e = element_bytes(op());
    const uint8_t* qkv = b.in[0] + first * l.stride * e;
    uint8_t* context = b.out[0] + first * l.q_width * context_bytes(op());
    const kernels::KeyWindow keys = key_window(op(), rows);
    if (int8()) {
      kernels::AttentionHeadS8 a = head_args_s8(op(), qkv, context, packed, h, rows, mask(first));
      a.scores = reinterpret_cast<float*>(b.out[2] + w * scores_stride);
      a.probs = b.out[3] + w * attention_scratch_stride(max_tile * n_max);
      if (windowed(op()))  // cost n x (keys per row)
        kernels::attention_s8_rows_window(a, keys, static_cast<int>(row_begin), static_cast<int>(row_end));
      else
        kernels::attention_s8_kernel().rows(a, static_cast<int>(row_begin), static_cast<int>(row_end));
    } else {
      kernels::AttentionHeadF32 a;
      point_at_head(a, reinterpret_cast<const float*>(qkv), reinterpret_cast<float*>(context), op(), h, rows, mask(first));
      a.scores = reinterpret_cast<float*>(b.out[1] + w * scores_stride);
      if (windowed(op()))
        kernels::attention_rows_window_f32(a, keys, static_cast<int>(row_begin), static_cast<int>(row_end));
      else
        kernels::attention_rows_f32(a, static_cast<int>(row_begin), static_cast<int>(row_end));
    }
  }

  size_t heads() const { return static_cast<size_t>(op().heads); }
  bool threaded() const { return ctx.res.pool && ctx.res.workers > 1; }

  // One sequence, [first, first + rows): (head, row tile) items over the workers.
  void run_sequence(size_t first, size_t rows) {
    row0 = first;
    n = rows;
    const size_t workers = ctx.res.workers, max_tile = ctx.res.max_tile;
    // Rows per item: the whole tile on one thread; with several, small enough for about 4 items
    // per worker, so that a few heads (or one) still keep every thread busy.
    tile = max_tile;
    if (threaded()) {
      const size_t per_head = (4 * workers + heads() - 1) / heads();
      tile = std::min(max_tile, std::max<size_t>(4, ((n + per_head - 1) / per_head + 3) & ~size_t{3}));
    }
    tiles_per_head = (n + tile - 1) / tile;
    if (!threaded()) {
      for (size_t h = 0; h < heads(); ++h) {  // head by head (one packed slot), its K and V stay in cache
        if (int8()) pack(h, row0, n, slot(0));
        for (size_t r0 = 0; r0 < n; r0 += tile) rows_of(h, row0, n, slot(0), r0, std::min(r0 + tile, n), 0);
      }
      return;
    }
    if (int8())
      pthreadpool_parallelize_1d(
          ctx.res.pool,
          [](void* p, size_t h) {
            auto* j = static_cast<AttentionJob*>(p);
            j->pack(h, j->row0, j->n, j->slot(h));
          },
          this, heads(), 0);
    next.store(0, std::memory_order_relaxed);
    pthreadpool_parallelize_1d(
        ctx.res.pool, [](void* p, size_t w) { static_cast<AttentionJob*>(p)->tile_worker(w); }, this, workers, 0);
  }

  void tile_worker(size_t w) {
    const size_t total = heads() * tiles_per_head;
    for (size_t item = next.fetch_add(1, std::memory_order_relaxed); item < total;
         item = next.fetch_add(1, std::memory_order_relaxed)) {
      const size_t h = item / tiles_per_head, r0 = (item % tiles_per_head) * tile;
      rows_of(h, row0, n, slot(h), r0, std::min(r0 + tile, n), w);
    }
  }

  // Several sequences: (sequence, head) items; each packs that head's K/V into the worker's own
  // slot (there is one per head, and workers <= heads) and computes all its rows.
  void sequence_worker(size_t w) {
    const size_t total = ctx.sequence_count * heads(), max_tile = ctx.res.max_tile;
    uint8_t* own = int8() ? slot(w) : nullptr;
    for (size_t item = next.fetch_add(1, std::memory_order_relaxed); item < total;
         item = next.fetch_add(1, std::memory_order_relaxed)) {
      const SequenceRows& q = ctx.sequences[item / heads()];
      const size_t h = item % heads();
      if (int8()) pack(h, q.first_row, q.rows, own);
      for (size_t r0 = 0; r0 < q.rows; r0 += max_tile)
        rows_of(h, q.first_row, q.rows, own, r0, std::min(r0 + max_tile, q.rows), w);
    }
  }
};

}  // namespace

Status run_attention(const BoundOp& b, const RunContext& ctx) {
  AttentionJob job(b, ctx);
  if (ctx.sequence_count == 1 || !job.threaded() || ctx.res.workers > job.heads()) {
    for (size_t s = 0; s < ctx.sequence_count; ++s) job.run_sequence(ctx.sequences[s].first_row, ctx.sequences[s].rows);
    return Status::ok();
  }
  job.next.store(0, std::memory_order_relaxed);
  pthreadpool_parallelize_1d(
      ctx.res.pool, [](void* p, size_t w) { static_cast<AttentionJob*>(p)->sequence_worker(w); }, &job,
      ctx.res.workers, 0);
  return Status::ok();
}

}  // namespace edgebert::exec
