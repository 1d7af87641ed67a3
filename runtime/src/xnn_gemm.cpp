// SPDX-License-Identifier: Apache-2.0
// xnn_gemm.cpp: XNNPACK operator creation/setup/run for edgebert's GEMMs, for both XNNPACK API
// generations (EDGEBERT_XNN_API, detected by cmake/xnnpack.cmake):
//   2022 (Debian 12): int8 GEMMs as qc8 1x1 convolutions; create + setup.
//   2024 (Debian 13, upstream): int8 GEMMs as fully-connected qs8_qc8w (int8 output) or
//        qd8_f32_qc8w (float output, for the GEMMs whose result is added to the residual); create
//        + reshape (only when the row count changes) + setup (only when a pointer changes). None
//        of these operators asks for a workspace, so nothing of XNNPACK's lives in the arena.
//        int4 weights of float-output GEMMs: qd8_f32_qb4w / qd8_f32_qc4w (same static per-row
//        input parameters as qd8_f32_qc8w).
//   Every other int4 GEMM is requantized to per-channel int8 here and created as int8.
#include "xnn_gemm.h"

#include <malloc.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <vector>

#include <cpuinfo.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "backend/int4_weights.h"
#include "qs8_params.h"

namespace edgebert {

namespace {
// Row quantization params the qd8 GEMMs get beyond their rows. XNNPACK asks for
// XNN_EXTRA_QUANTIZATION_PARAMS (10), but Debian 13's (2024-11) qd8_f32_qb4w kernels on
// AVX512-VNNI read a whole 14-row tile's params: with exactly rows + 10 the last row came out
// wrong whenever rows % 14 was 1..3 (rows > 1), reproduced with XNNPACK alone; 4 more sufficed
// (docs/int4.md). 32 covers tiles up to 23 rows over the 10.
#ifdef XNN_EXTRA_QUANTIZATION_PARAMS
constexpr size_t kRowParamsPadding = XNN_EXTRA_QUANTIZATION_PARAMS + 22;
#endif

std::atomic<size_t> g_xnn_bytes{0};
// The same balance for the calling thread alone: what one thread's operator creation packed,
// whatever other threads create or free meanwhile (frees on another thread count there).
thread_local long long t_xnn_bytes = 0;

void count(long long bytes) {
  g_xnn_bytes += static_cast<size_t>(bytes);  // two's complement: a negative count subtracts
  t_xnn_bytes += bytes;
}

void* count_alloc(void*, size_t size) {
  void* p = std::malloc(size);
  if (p) count(static_cast<long long>(malloc_usable_size(p)));
  return p;
}
void* count_realloc(void*, void* p, size_t size) {
  const size_t old = p ? malloc_usable_size(p) : 0;
  void* q = std::realloc(p, size);
  if (q) count(static_cast<long long>(malloc_usable_size(q)) - static_cast<long long>(old));
  return q;
}
void count_free(void*, void* p) {
  if (!p) return;
  count(-static_cast<long long>(malloc_usable_size(p)));
  std::free(p);
}
void* count_aligned_alloc(void*, size_t alignment, size_t size) {
  void* p = nullptr;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if (posix_memalign(&p, alignment, size) != 0) return nullptr;
  count(static_cast<long long>(malloc_usable_size(p)));
  return p;
}

const xnn_allocator kCountingAllocator = {nullptr, count_alloc, count_realloc, count_free, count_aligned_alloc,
                                          count_free};

const char* xnn_status_name(xnn_status s) {
  switch (s) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
    default: break;  // values added by later XNNPACK versions
  }
  return "unknown error";
}

}  // namespace

Status xnn_ready() {
  static std::once_flag once;
  static xnn_status status = xnn_status_uninitialized;
  std::call_once(once, [] { status = xnn_initialize(&kCountingAllocator); });
  if (status != xnn_status_success) {
    return Status(EB_ERROR_BACKEND, std::string("XNNPACK initialization failed: ") + xnn_status_name(status));
  }
  return Status::ok();
}

size_t xnn_bytes_allocated() { return g_xnn_bytes.load(); }
long long xnn_bytes_allocated_by_this_thread() { return t_xnn_bytes; }

XnnGemm::~XnnGemm() {
  for (Part& p : parts_)
    if (p.op) xnn_delete_operator(p.op);
  for (size_t i = 0; i < attached_; ++i) store_->detach();
}

bool XnnGemm::int8_float_output_supported() { return EDGEBERT_XNN_FLOAT_OUTPUT != 0; }
bool XnnGemm::int4_supported() { return EDGEBERT_XNN_INT4 != 0; }

namespace {
thread_local bool t_checking_int4 = false;  // int4_gives_exact_result's own GEMM runs natively
}  // namespace

bool XnnGemm::int4_native(bool block_wise) {
  if (!int4_supported()) return false;
  if (t_checking_int4) return true;
  static std::once_flag once[2];
  static bool exact[2] = {false, false};
  const int i = block_wise ? 1 : 0;
  std::call_once(once[i], [&] {
    t_checking_int4 = true;
    exact[i] = int4_gives_exact_result(block_wise);
    t_checking_int4 = false;
  });
  return exact[i];
}

// One int4 GEMM of 80 outputs x 128 inputs (block 32 or channel-wise) on 1 and 37 rows (the one-row
// kernel, full tiles and a short one, a full and a partial 64-column tile), against a float64 sum
// of the same int8 inputs and dequantized int4 weights. XNNPACK's result is exact up to float
// rounding (relative error about 1e-7; the broken kernels give about 1).
bool XnnGemm::int4_gives_exact_result(bool block_wise) {
  try {
    constexpr int K = 128, N = 80;
    std::vector<float> w(static_cast<size_t>(N) * K), bias(N);
    uint32_t seed = 0x1234567u;
    auto next = [&seed] {
      seed = seed * 1664525u + 1013904223u;
      return static_cast<int>(seed >> 8);
    };
    for (float& v : w) v = static_cast<float>(next() % 2001 - 1000) / 1000.f;
    for (float& b : bias) b = static_cast<float>(next() % 201 - 100) / 100.f;
    const int4::Quantized q = int4::quantize(w.data(), N, K, block_wise ? 32 : 0);
    std::vector<float> deq(w.size());
    int4::dequantize(q.packed.data(), q.scales.data(), N, K, q.block, deq.data());
    LinearView l;  // int8 inputs (scale 0.05, zero point -5), int4 weights, float output
    l.name = block_wise ? "int4 check (block-wise)" : "int4 check (channel-wise)";
    l.int8 = l.int4 = l.has_quant = true;
    l.in = K, l.out = N, l.block_size = q.block, l.input_scale = 0.05f, l.input_zero_point = -5;
    l.weight_s4 = q.packed.data(), l.weight_block_scales = q.scales.data(), l.bias = bias.data();
    for (size_t rows : {size_t{1}, size_t{37}}) {
      XnnGemm g;
      if (!g.create(l, true, rows, nullptr, 0, true)) return false;
      if (g.kind() != (block_wise ? Kind::kQd8F32Qb4w : Kind::kQd8F32Qc4w)) return false;
      std::vector<int8_t> x((rows + 16) * K + 256);  // kernels may read whole tiles past the last row
      for (int8_t& v : x) v = static_cast<int8_t>(next() % 256 - 128);
      std::vector<float> y(rows * N, 0.f);
      if (!g.setup(rows, x.data(), y.data(), nullptr) || !g.run(nullptr)) return false;
      for (size_t r = 0; r < rows; ++r) {
        double err = 0, norm = 0;
        for (int n = 0; n < N; ++n) {
          double acc = bias[static_cast<size_t>(n)];
          for (int k = 0; k < K; ++k)
            acc += (static_cast<double>(x[r * K + static_cast<size_t>(k)]) - l.input_zero_point) * l.input_scale *
                   deq[static_cast<size_t>(n) * K + static_cast<size_t>(k)];
          const double d = y[r * N + static_cast<size_t>(n)] - acc;
          err += d * d;
          norm += acc * acc;
        }
        if (!(err <= 1e-10 * norm)) return false;  // relative error over 1e-5 (NaN included)
      }
    }
    return true;
  } catch (...) {  // out of memory: the int8 route, which needs no check
    return false;
  }
}

namespace {
// True on an x86 CPU with AMX-INT8 (CPUID leaf 7, EDX bit 25), where XNNPACK's int8 GEMMs run on
// AMX tiles and column slabs were measured to help (docs/xnnpack.md); false elsewhere.
bool cpu_has_amx_int8() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (d >> 25) & 1u;
#else
  return false;
#endif
}

// Bytes of packed weights per column slab: on CPUs with AMX-INT8 half this core's L2 cache (the
// other half holds the activation rows and the output tile); 0 (never cut) elsewhere, where it was
// not measured to help (2-5 % on AVX512-VNNI, and each slab is one more operator to run: 5-15 %
// slower at 8-16 rows on the AMX Xeon). On a Zen 5 EPYC (AVX512-VNNI) slabs gained 2.6-7.6 % on
// packed batches but cost the start, 4x the operators to create and pack (BERT-base without a
// cache 32-35 -> 43-47 ms, warm 3.8 -> 4.8 ms): left off there (docs/xnnpack.md).
// EDGEBERT_GEMM_SLAB_BYTES overrides (0: never cut).
size_t slab_budget_bytes() {
  static const size_t budget = [] {
    if (const char* e = std::getenv("EDGEBERT_GEMM_SLAB_BYTES")) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(e, &end, 10);
      if (end != e && *end == '\0') return static_cast<size_t>(v);
    }
    if (EDGEBERT_XNN_API < 2024 || !cpu_has_amx_int8()) return size_t(0);  // 2022's kernels: no AMX
    size_t l2 = 0;
    if (cpuinfo_initialize())
      if (const cpuinfo_cache* c = cpuinfo_get_l2_cache(0)) l2 = c->size;
    if (l2 == 0) l2 = 2u << 20;  // unknown: what the AMX Xeons have
    return l2 / 2;
  }();
  return budget;
}
}  // namespace

size_t XnnGemm::column_slab_width(const LinearView& l) {
  const size_t budget = slab_budget_bytes();
  const size_t out = l.out > 0 ? static_cast<size_t>(l.out) : 0, in = l.in > 0 ? static_cast<size_t>(l.in) : 0;
  // int8 bytes per output channel (int4 weights too: requantized, or half that when native, which
  // the cut then leaves with room to spare), four times that for fp32
  const size_t per_column = (l.int8 ? in : 4 * in) + 16;  // + bias and scales
  constexpr size_t kChannels = 64;  // XNNPACK's widest column tile (AMX, AVX-512: 16..64)
  if (budget == 0 || out < 2 * kChannels || per_column * out <= budget) return out;
  size_t width = budget / per_column / kChannels * kChannels;
  if (width < kChannels) width = kChannels;
  // as even as multiples of 64 allow: ceil(out / width) slabs, each that share rounded up
  const size_t slabs = (out + width - 1) / width;
  width = ((out + slabs - 1) / slabs + kChannels - 1) / kChannels * kChannels;
  return width < out ? width : out;
}

LinearView linear_columns(const LinearView& l, int col0, int width) {
  LinearView v = l;
  const size_t c = static_cast<size_t>(col0), in = static_cast<size_t>(l.in);
  v.out = width;
  if (l.weight_s8) v.weight_s8 = l.weight_s8 + c * in;
  if (l.weight_f32) v.weight_f32 = l.weight_f32 + c * in;
  if (l.weight_s4) v.weight_s4 = l.weight_s4 + c * int4::row_bytes(l.in);
  if (l.weight_block_scales)
    v.weight_block_scales = l.weight_block_scales + c * static_cast<size_t>(int4::blocks_per_row(l.in, l.block_size));
  if (l.weight_scales) v.weight_scales = l.weight_scales + c;
  if (l.bias) v.bias = l.bias + c;
  if (l.output_scales) v.output_scales = l.output_scales + c;
  return v;
}

bool XnnGemm::runs_as_int4(const LinearView& l, bool float_output, bool block_int4_native) {
  return l.int4 && EDGEBERT_XNN_INT4 && l.int8 && float_output && (l.block_size == 0 || block_int4_native) &&
         int4_native(l.block_size != 0);
}

Status XnnGemm::create_int8_from_int4(const LinearView& l, size_t out_stride, size_t col0, size_t max_rows,
                                    PackedWeights* store, size_t gemm_key) {
  // A temporary per-channel int8 copy that XNNPACK packs (and then no longer reads).
  std::vector<int8_t> q8;
  std::vector<float> scales;
  try {
    q8.resize(static_cast<size_t>(l.out) * static_cast<size_t>(l.in));
    scales.resize(static_cast<size_t>(l.out));
  } catch (const std::bad_alloc&) {
    return Status(EB_ERROR_OUT_OF_MEMORY, std::string(l.name) + ": out of memory for its int8 copy of the int4 weights");
  }
  int4::int8_per_channel(l.weight_s4, l.weight_block_scales, static_cast<size_t>(l.out), l.in, l.block_size, q8.data(),
                         scales.data());
  LinearView v = l;
  v.int4 = false;
  v.weight_s4 = nullptr;
  v.weight_block_scales = nullptr;
  v.weight_s8 = q8.data();
  v.weight_scales = scales.data();
  return create_part(v, out_stride, col0, max_rows, store, gemm_key);
}

Status XnnGemm::create(const LinearView& l, bool float_output, size_t max_rows,
                     PackedWeights* store, size_t gemm_key, bool block_int4_native) {
  return create_slabs(&l, 1, float_output, max_rows, store, gemm_key, block_int4_native);
}

Status XnnGemm::create_slabs(const LinearView* slabs, size_t count, bool float_output, size_t max_rows,
                           PackedWeights* store, size_t first_key, bool block_int4_native) {
  if (!parts_.empty()) return Status(EB_ERROR_BACKEND, std::string(slabs[0].name) + ": XnnGemm created twice");
  if (count == 0) return Status(EB_ERROR_BACKEND, "XnnGemm: no slabs");
  int8_ = slabs[0].int8;
  float_output_ = slabs[0].int8 && float_output;
  size_t out_stride = 0;
  for (size_t i = 0; i < count; ++i) out_stride += static_cast<size_t>(slabs[i].out);
  parts_.reserve(count);
  size_t col0 = 0;
  for (size_t i = 0; i < count; ++i) {
    const LinearView& l = slabs[i];
    if (l.int8 != slabs[0].int8 || l.in != slabs[0].in)
      return Status(EB_ERROR_BACKEND, std::string(l.name) + ": column slabs of different kinds");
    const Status made = l.int4 && !runs_as_int4(l, float_output, block_int4_native)
                            ? create_int8_from_int4(l, out_stride, col0, max_rows, store, first_key + i)
                            : create_part(l, out_stride, col0, max_rows, store, first_key + i);
    if (!made.is_ok()) return made;  // the parts made so far go with this object
    col0 += static_cast<size_t>(l.out);
  }
  return Status::ok();
}

Status XnnGemm::create_part(const LinearView& l, size_t out_stride, size_t col0, size_t max_rows,
                          PackedWeights* store, size_t gemm_key) {
  xnn_operator_t op = nullptr;
  // The shared store: creation of one GEMM key is serialized, so concurrent sessions pack it once.
  std::unique_lock<std::mutex> key_lock;
#if EDGEBERT_XNN_SHARED_WEIGHTS
  xnn_weights_cache_t cache = nullptr;
  if (store) {
    std::mutex* m = store->creation_mutex(gemm_key);
    if (!m) {
      return Status(EB_ERROR_BACKEND, std::string(l.name) + ": GEMM key " + std::to_string(gemm_key) + " outside the packed-weight store");
    }
    // the key must always name this GEMM: its name (a stable pointer into the model) and shape
    const uint64_t tag = (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(l.name)) * 0x9E3779B97F4A7C15ULL) ^
                         (uint64_t(l.in) << 40) ^ (uint64_t(l.out) << 16) ^ (l.int8 ? 2u : 0u) ^ (float_output_ ? 1u : 0u) ^ (l.int4 ? 4u : 0u);
    if (!store->claim_key(gemm_key, tag)) {
      return Status(EB_ERROR_BACKEND, std::string(l.name) + ": GEMM key " + std::to_string(gemm_key) + " belongs to another GEMM");
    }
    key_lock = std::unique_lock<std::mutex>(*m);
    cache = static_cast<xnn_weights_cache_t>(store->provider(gemm_key));
  }
#else
  (void)gemm_key;
  store = nullptr;  // no weights-cache provider (2022 API): the operator packs its own copy
#if EDGEBERT_XNN_API >= 2024
  xnn_weights_cache_t cache = nullptr;
#endif
#endif
  xnn_status s;
  if (float_output_) {
#if EDGEBERT_XNN_FLOAT_OUTPUT
    // Dynamically-quantized-input kernel fed with our static quantization: every row's params
    // are the GEMM's input scale and zero point; kernel scale = weight scale, bias in float.
    row_params_.assign(max_rows + kRowParamsPadding, xnn_quantization_params{});
    for (auto& p : row_params_) {
      p.zero_point = l.input_zero_point;
      p.scale = l.input_scale;
    }
#if EDGEBERT_XNN_INT4
    if (l.int4 && l.block_size > 0) {
      // bf16 block scales and nibbles (q + 8, even column low) as the file stores them
      kind_ = Kind::kQd8F32Qb4w;
      s = xnn_create_fully_connected_nc_qd8_f32_qb4w(l.in, l.out, l.in, out_stride, static_cast<size_t>(l.block_size),
                                                     int4::kZeroNibble, l.weight_block_scales, l.weight_s4, l.bias,
                                                     -std::numeric_limits<float>::infinity(),
                                                     std::numeric_limits<float>::infinity(), 0, nullptr, cache, &op);
    } else if (l.int4) {
      std::vector<float> scales(static_cast<size_t>(l.out));
      for (int c = 0; c < l.out; ++c) scales[c] = int4::float_from_bf16(l.weight_block_scales[c]);
      kind_ = Kind::kQd8F32Qc4w;
      s = xnn_create_fully_connected_nc_qd8_f32_qc4w(l.in, l.out, l.in, out_stride, int4::kZeroNibble, scales.data(),
                                                     l.weight_s4, l.bias, -std::numeric_limits<float>::infinity(),
                                                     std::numeric_limits<float>::infinity(), 0, nullptr, cache, &op);
    } else
#endif
    {
    kind_ = Kind::kQd8F32Qc8w;
    s = xnn_create_fully_connected_nc_qd8_f32_qc8w(l.in, l.out, l.in, out_stride, l.weight_scales, l.weight_s8, l.bias,
                                                   -std::numeric_limits<float>::infinity(),
                                                   std::numeric_limits<float>::infinity(), 0, nullptr, cache, &op);
    }
#else
    (void)max_rows;
    return Status(EB_ERROR_BACKEND, std::string(l.name) + ": this XNNPACK has no int8 GEMM with float output");
#endif
  } else if (l.int8) {
    // requantization multiplier per channel = input_scale * kernel_scale'[c] / output_scale with
    // kernel_scale'[c] = weight_scale[c] / out_scale[c] and output_scale = 1, so a per-channel
    // output scale costs nothing. The int32 bias lives in accumulator units (input x weight scale).
    std::vector<float> kernel_scale(l.out);
    std::vector<int32_t> bias(l.out);
    if (!qs8_channel_params(l, kernel_scale.data(), bias.data()))
      return Status(EB_ERROR_BACKEND, std::string(l.name) + ": requantization scale out of XNNPACK's range");
    kind_ = Kind::kQs8;
#if EDGEBERT_XNN_API >= 2024
    s = xnn_create_fully_connected_nc_qs8_qc8w(l.in, l.out, l.in, out_stride, static_cast<int8_t>(l.input_zero_point),
                                               l.input_scale, kernel_scale.data(), l.weight_s8, bias.data(),
                                               static_cast<int8_t>(l.output_zero_point), 1.0f, -128, 127, 0, nullptr,
                                               cache, &op);
#else
    s = xnn_create_convolution2d_nhwc_qc8(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, l.in, l.out, l.in, out_stride,
                                          static_cast<int8_t>(l.input_zero_point), l.input_scale, kernel_scale.data(),
                                          l.weight_s8, bias.data(), static_cast<int8_t>(l.output_zero_point), 1.0f,
                                          -128, 127, 0, &op);
#endif
  } else {
    kind_ = Kind::kF32;
    s = xnn_create_fully_connected_nc_f32(l.in, l.out, l.in, out_stride, l.weight_f32, l.bias,
                                          -std::numeric_limits<float>::infinity(),
                                          std::numeric_limits<float>::infinity(), 0,
#if EDGEBERT_XNN_API >= 2024
                                          nullptr, cache,
#endif
                                          &op);
  }
  if (s != xnn_status_success) {
    kind_ = Kind::kNone;
    return Status(EB_ERROR_BACKEND, std::string(l.name) + ": XNNPACK operator creation failed: " + xnn_status_name(s));
  }
  if (store && !store->last_creation_ok(gemm_key)) {
    xnn_delete_operator(op);
    return Status(EB_ERROR_BACKEND, std::string(l.name) + ": no room for its packed weights in the shared store");
  }
  parts_.push_back(Part{op, col0});  // reserved by create_slabs: does not throw
  if (store) {
    store->attach();
    store_ = store;
    ++attached_;
  }
  return Status::ok();
}

bool XnnGemm::setup(size_t requested_rows, const void* input, void* output, pthreadpool_t pool, size_t room_rows) {
  const size_t rows = kind_ == Kind::kF32 && requested_rows == 1 && room_rows >= 2 ? 2 : requested_rows;
  if (parts_.empty()) return false;
  if (rows == rows_ && input == input_ && output == output_ && pool == pool_) return true;
#if EDGEBERT_XNN_FLOAT_OUTPUT
  if (float_output_ && rows + kRowParamsPadding > row_params_.size()) return false;  // params made for fewer rows
#endif
  // the parts write their channels of each output row: byte offset col0 x the element size
  const size_t elem = float_output_ || kind_ == Kind::kF32 ? sizeof(float) : 1;
  xnn_status s = xnn_status_success;
  for (const Part& p : parts_) {
    void* out = static_cast<uint8_t*>(output) + p.col0 * elem;
#if EDGEBERT_XNN_API >= 2024
    if (rows != rows_ || pool != pool_) {  // the reshape tiles the work for the pool's threads
#if EDGEBERT_XNN_FLOAT_OUTPUT
      if (float_output_) {
#if EDGEBERT_XNN_INT4
        if (kind_ == Kind::kQd8F32Qb4w)
          s = xnn_reshape_fully_connected_nc_qd8_f32_qb4w(p.op, rows, pool);
        else if (kind_ == Kind::kQd8F32Qc4w)
          s = xnn_reshape_fully_connected_nc_qd8_f32_qc4w(p.op, rows, pool);
        else
#endif
          s = xnn_reshape_fully_connected_nc_qd8_f32_qc8w(p.op, rows, pool);
      } else
#endif
        s = int8_ ? xnn_reshape_fully_connected_nc_qs8_qc8w(p.op, rows, pool)
                  : xnn_reshape_fully_connected_nc_f32(p.op, rows, pool);
    }
    if (s == xnn_status_success) {
#if EDGEBERT_XNN_INT4
      if (kind_ == Kind::kQd8F32Qb4w)
        s = xnn_setup_fully_connected_nc_qd8_f32_qb4w(p.op, static_cast<const int8_t*>(input), static_cast<float*>(out),
                                                      row_params_.data());
      else if (kind_ == Kind::kQd8F32Qc4w)
        s = xnn_setup_fully_connected_nc_qd8_f32_qc4w(p.op, static_cast<const int8_t*>(input), static_cast<float*>(out),
                                                      row_params_.data());
      else
#endif
#if EDGEBERT_XNN_FLOAT_OUTPUT
      if (float_output_)
        s = xnn_setup_fully_connected_nc_qd8_f32_qc8w(p.op, static_cast<const int8_t*>(input), static_cast<float*>(out),
                                                      row_params_.data());
      else
#endif
        s = int8_ ? xnn_setup_fully_connected_nc_qs8_qc8w(p.op, static_cast<const int8_t*>(input), static_cast<int8_t*>(out))
                  : xnn_setup_fully_connected_nc_f32(p.op, static_cast<const float*>(input), static_cast<float*>(out));
    }
#else
    if (int8_) {
      s = xnn_setup_convolution2d_nhwc_qc8(p.op, rows, 1, 1, static_cast<const int8_t*>(input), static_cast<int8_t*>(out),
                                           pool);
    } else {
      s = xnn_setup_fully_connected_nc_f32(p.op, rows, static_cast<const float*>(input), static_cast<float*>(out), pool);
    }
#endif
    if (s != xnn_status_success) break;
  }
  if (s != xnn_status_success) {
    rows_ = 0;
    input_ = nullptr;
    output_ = nullptr;
    pool_ = nullptr;
    return false;
  }
  rows_ = rows;
  input_ = input;
  output_ = output;
  pool_ = pool;
  return true;
}

bool XnnGemm::set_row_scales(const float* scales, size_t rows) {
#if EDGEBERT_XNN_FLOAT_OUTPUT
  if (!float_output_ || rows == 0 || rows + kRowParamsPadding > row_params_.size()) return false;
  for (size_t r = 0; r < rows; ++r) {
    row_params_[r].zero_point = 0;
    row_params_[r].scale = scales[r];
  }
  // The rows past the end get the last row's parameters: XNNPACK's qd8 micro-kernels point the
  // rows of a short tile past the end at the last row's data but read those rows' own parameters
  // (index tile start + mr - 1), and store that row last, over the last row's output. Debian 13's
  // 2024-11 qd8_f32_qc8w with mr 10 on AVX512-VNNI: row rows - 1 came out with the parameters of
  // index 9, 19, ..., whichever ended its tile (tests/unit/test_xnn_gemm.cpp, "per-row input scales"). Static
  // parameters hid it, being equal for every row.
  for (size_t r = rows; r < rows + kRowParamsPadding; ++r) row_params_[r] = row_params_[rows - 1];  // all a tile can read
  return true;
#else
  (void)scales;
  (void)rows;
  return false;
#endif
}

bool XnnGemm::run(pthreadpool_t pool) {
  for (const Part& p : parts_)
    if (xnn_run_operator(p.op, pool) != xnn_status_success) return false;
  return !parts_.empty();
}

}  // namespace edgebert
