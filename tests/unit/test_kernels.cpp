// SPDX-License-Identifier: Apache-2.0
// Unit tests for the non-GEMM kernels (runtime/src/kernels): every kernel against an independent
// double-precision reference written here, AVX2 against portable, scratch/output bounds, zero
// heap allocation, and a timing print for the int8 attention core.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <new>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "unit/kernel_cases.h"

namespace kn = edgebert::kernels;
using namespace kernel_cases;

// ---------------------------------------------------------------------------------------------
// Global allocation counter (counts only while armed).
namespace {
std::atomic<long> g_alloc_count{0};
std::atomic<bool> g_alloc_armed{false};

void* counted_alloc(std::size_t n, std::size_t align) {
  if (g_alloc_armed.load(std::memory_order_relaxed)) g_alloc_count.fetch_add(1);
  if (n == 0) n = 1;
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n);
  } else {
    n = (n + align - 1) / align * align;
    p = std::aligned_alloc(align, n);
  }
  return p;
}

struct AllocWatch {
  long start;
  AllocWatch() : start(g_alloc_count.load()) { g_alloc_armed = true; }
  long stop() {
    g_alloc_armed = false;
    return g_alloc_count.load() - start;
  }
};
}  // namespace

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // the replacements below pair malloc/free
#endif
void* operator new(std::size_t n) {
  void* p = counted_alloc(n, 0);
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t n) {
  void* p = counted_alloc(n, 0);
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new(std::size_t n, std::align_val_t a) {
  void* p = counted_alloc(n, static_cast<std::size_t>(a));
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t n, std::align_val_t a) {
  void* p = counted_alloc(n, static_cast<std::size_t>(a));
  if (!p) throw std::bad_alloc();
  return p;
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

void warn_no_avx2() {
  static bool once = false;
  if (!once) {
    once = true;
    WARN("CPU lacks AVX2+FMA (or not x86): AVX2 comparisons skipped");
  }
}

[[maybe_unused]] bool have_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  if (kn::cpu_has_avx2_fma()) return true;
#endif
  warn_no_avx2();
  return false;
}


// 64-byte aligned buffer with a guard zone after the requested size.
template <typename T>
struct Buf {
  static constexpr size_t kGuard = 256;
  std::vector<unsigned char> raw;
  T* ptr = nullptr;
  size_t count = 0;
  explicit Buf(size_t n, unsigned char fill = 0xA5) : raw(n * sizeof(T) + kGuard + 64, fill), count(n) {
    uintptr_t a = reinterpret_cast<uintptr_t>(raw.data());
    a = (a + 63) & ~uintptr_t(63);
    ptr = reinterpret_cast<T*>(a);
  }
  bool guard_ok() const {
    const unsigned char* g = reinterpret_cast<const unsigned char*>(ptr + count);
    for (size_t i = 0; i < kGuard; ++i)
      if (g[i] != 0xA5) return false;
    return true;
  }
};

// ---------------------------------------------------------------------------------------------
// References (double precision, written independently of the kernels).

struct F32Case {
  int n, hd;
  int heads = 3, head = 2;
  std::vector<float> qkv;
  std::vector<uint8_t> mask;
  size_t hidden() const { return static_cast<size_t>(heads) * hd; }
  size_t stride() const { return 3 * hidden(); }
  const float* q() const { return qkv.data() + head * hd; }
  const float* k() const { return qkv.data() + hidden() + head * hd; }
  const float* v() const { return qkv.data() + 2 * hidden() + head * hd; }
};

std::vector<double> ref_attention_f32(const F32Case& c) {
  const int n = c.n, hd = c.hd;
  const size_t st = c.stride();
  std::vector<double> out(size_t(n) * hd, 0.0), s(n), p(n);
  for (int i = 0; i < n; ++i) {
    double mx = -std::numeric_limits<double>::infinity();
    bool any = false;
    for (int j = 0; j < n; ++j) {
      if (!c.mask.empty() && !c.mask[j]) continue;
      any = true;
      double acc = 0;
      for (int d = 0; d < hd; ++d) acc += double(c.q()[i * st + d]) * double(c.k()[j * st + d]);
      s[j] = acc / std::sqrt(double(hd));
      mx = std::max(mx, s[j]);
    }
    if (!any) {  // HF: a uniform softmax over all n keys, the mean value row
      for (int j = 0; j < n; ++j)
        for (int d = 0; d < hd; ++d) out[size_t(i) * hd + d] += double(c.v()[j * st + d]) / n;
      continue;
    }
    double sum = 0;
    for (int j = 0; j < n; ++j) {
      p[j] = (c.mask.empty() || c.mask[j]) ? std::exp(s[j] - mx) : 0.0;
      sum += p[j];
    }
    for (int j = 0; j < n; ++j)
      for (int d = 0; d < hd; ++d) out[size_t(i) * hd + d] += p[j] / sum * double(c.v()[j * st + d]);
  }
  return out;
}

void ref_layernorm(const float* x, const float* g, const float* b, double eps, size_t rows, size_t cols,
                   std::vector<double>& y) {
  y.assign(rows * cols, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    double mean = 0;
    for (size_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= double(cols);
    double var = 0;
    for (size_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    var /= double(cols);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (size_t c = 0; c < cols; ++c) y[r * cols + c] = (x[r * cols + c] - mean) * rstd * g[c] + b[c];
  }
}

double ref_gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double ref_gelu_tail(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }  // accurate for x << 0

}  // namespace

namespace {

using S8Fn = void (*)(const kn::AttentionHeadS8&);
using F32Fn = void (*)(const kn::AttentionHeadF32&);

// Runs an int8 attention kernel with exactly-sized scratch (plus guard zones) and returns the
// head's context [n, hd]; checks that nothing outside the head's slice / the scratch is written
// and that the kernel allocates nothing.
template <typename Fn>
std::vector<int8_t> run_s8(const S8Case& c, Fn fn, std::vector<uint8_t>* probs_out = nullptr) {
  const size_t n = size_t(c.n), hd = size_t(c.hd), hidden = c.hidden();
  Buf<float> scores(n * n);
  Buf<uint8_t> probs(n * n);
  Buf<int8_t> packed(kn::attention_s8_packed_bytes(n, hd));
  std::vector<int8_t> ctx(n * hidden + 64, int8_t(0x5A));
  kn::AttentionHeadS8 a = s8_args(c, packed.ptr, ctx.data() + c.head * hd, hidden);
  a.scores = scores.ptr;
  a.probs = probs.ptr;
  AllocWatch w;
  fn(a);
  CHECK(w.stop() == 0);
  CHECK(scores.guard_ok());
  CHECK(probs.guard_ok());
  CHECK(packed.guard_ok());
  std::vector<int8_t> out(n * hd);
  bool outside_ok = true;
  for (size_t i = 0; i < ctx.size(); ++i) {
    const size_t row = i / hidden, col = i % hidden;
    const bool inside = row < n && col >= c.head * hd && col < (c.head + 1) * hd;
    if (inside)
      out[row * hd + (col - c.head * hd)] = ctx[i];
    else if (ctx[i] != int8_t(0x5A))
      outside_ok = false;
  }
  CHECK(outside_ok);
  if (probs_out != nullptr) probs_out->assign(probs.ptr, probs.ptr + n * n);
  return out;
}

std::vector<float> run_f32(const F32Case& c, F32Fn fn) {
  const size_t n = size_t(c.n), hd = size_t(c.hd), hidden = c.hidden();
  Buf<float> scores(n * n);
  std::vector<float> ctx(n * hidden + 16, 777.0f);
  kn::AttentionHeadF32 a{};
  a.q = c.q();
  a.k = c.k();
  a.v = c.v();
  a.qkv_stride = c.stride();
  a.n = c.n;
  a.head_dim = c.hd;
  a.key_mask = c.mask.empty() ? nullptr : c.mask.data();
  a.scores = scores.ptr;
  a.context = ctx.data() + c.head * hd;
  a.context_stride = hidden;
  AllocWatch w;
  fn(a);
  CHECK(w.stop() == 0);
  CHECK(scores.guard_ok());
  std::vector<float> out(n * hd);
  bool outside_ok = true;
  for (size_t i = 0; i < ctx.size(); ++i) {
    const size_t row = i / hidden, col = i % hidden;
    const bool inside = row < n && col >= c.head * hd && col < (c.head + 1) * hd;
    if (inside)
      out[row * hd + (col - c.head * hd)] = ctx[i];
    else if (ctx[i] != 777.0f)
      outside_ok = false;
  }
  CHECK(outside_ok);
  return out;
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct DiffStats {
  int max_abs = 0;
  size_t differing = 0, total = 0;
};
DiffStats compare_s8(const std::vector<int8_t>& a, const std::vector<int8_t>& b) {
  DiffStats d;
  d.total = a.size();
  for (size_t i = 0; i < a.size(); ++i) {
    const int e = std::abs(int(a[i]) - int(b[i]));
    d.max_abs = std::max(d.max_abs, e);
    d.differing += e != 0;
  }
  return d;
}

struct Shape {
  int n, hd;
};

}  // namespace

// Every int8 implementation this CPU can run, as pack + rows steps.
std::vector<const kn::AttentionS8Kernel*> s8_kernels_here() {
  std::vector<const kn::AttentionS8Kernel*> v = {&kn::kAttentionS8Portable};
#if defined(__x86_64__) || defined(__i386__)
  if (kn::cpu_has_avx2_fma()) v.push_back(&kn::kAttentionS8Avx2);
  if (kn::cpu_has_avx512vnni()) v.push_back(&kn::kAttentionS8Avx512Vnni);
  if (kn::cpu_has_avxvnni()) v.push_back(&kn::kAttentionS8AvxVnni);
  if (kn::cpu_has_avx512()) v.push_back(&kn::kAttentionS8Avx512);
#endif
#if defined(__aarch64__)
  v.push_back(&kn::kAttentionS8Neon);
  if (kn::cpu_has_neon_dot()) v.push_back(&kn::kAttentionS8NeonDot);
#endif
  return v;
}

// Every kernel table this CPU can run (dispatch.h), portable first.
std::vector<const kn::KernelTable*> tables_here() {
  const kn::KernelTable* t[kn::kMaxKernelTables];
  const int count = kn::supported_kernel_tables(t);
  return std::vector<const kn::KernelTable*>(t, t + count);
}

// The whole head with one implementation.
struct WithKernel {
  const kn::AttentionS8Kernel* k;
  void operator()(const kn::AttentionHeadS8& a) const { kn::attention_head_s8_with(*k, a); }
};

// =============================================================================================
TEST_CASE("attention_head_s8 matches the reference and every variant gives the portable bytes", "[kernels][attention]") {
  std::mt19937 rng(1234);
  std::vector<Shape> shapes;
  for (int n : {1, 2, 7, 33, 128})
    for (int hd : {16, 32, 64}) shapes.push_back({n, hd});
  for (int n : {1, 2, 7}) shapes.push_back({n, 768});
  shapes.push_back({5, 24});   // channel tails (not a multiple of 16)
  shapes.push_back({9, 20});
  shapes.push_back({13, 72});
  shapes.push_back({6, 1000});
  shapes.push_back({10, 33});  // odd head_dim
  shapes.push_back({17, 63});
  shapes.push_back({4, 1});
  shapes.push_back({3, 1030});  // above kAttentionMaxHeadDimAvx2: AVX2 entry falls back to portable
  shapes.push_back({47, 80});   // 512-bit paths: a partial last channel tile of 32, key block tails
  shapes.push_back({31, 48});
  shapes.push_back({65, 96});
  for (int t = 0; t < 6; ++t) shapes.push_back({1 + int(rng() % 90), 1 + int(rng() % 130)});  // random
  const char* masks[] = {"none", "random", "trailing", "all_masked", "one_valid"};
  size_t ref_diff = 0, ref_total = 0, variant_runs = 0;
  int worst_ref = 0;
  std::set<std::string> names;
  for (const Shape& sh : shapes) {
    for (const char* mk : masks) {
      for (float score_std : {2.0f, 12.0f}) {
        const int32_t zp = (rng() % 2) ? 3 : -7;
        const S8Case c = make_s8_case(rng, sh.n, sh.hd, mk, score_std, zp);
        INFO("n=" << sh.n << " hd=" << sh.hd << " mask=" << mk << " score_std=" << score_std);
        const auto ref = ref_attention_s8(c);
        std::vector<uint8_t> port_probs;
        const auto port = run_s8(c, kn::attention_head_s8_portable, &port_probs);
        const DiffStats dr = compare_s8(port, ref);
        CHECK(dr.max_abs <= 1);
        ref_diff += dr.differing;
        ref_total += dr.total;
        worst_ref = std::max(worst_ref, dr.max_abs);
        const auto disp = run_s8(c, kn::attention_head_s8);
        CHECK(compare_s8(disp, ref).max_abs <= 1);
        if (std::string(mk) == "all_masked") {  // every row: the same mean of the value rows
          for (size_t i = 0; i < port.size(); ++i) CHECK(port[i] == port[i % size_t(sh.hd)]);
        }
        for (const kn::AttentionS8Kernel* k : s8_kernels_here()) {
          if (k == &kn::kAttentionS8Portable) continue;
          INFO(k->name);
          std::vector<uint8_t> probs;
          CHECK(run_s8(c, WithKernel{k}, &probs) == port);  // the same bytes
          if (c.mask.empty()) CHECK(probs == port_probs);   // both keep row i's probabilities at i*n
          ++variant_runs;
          names.insert(k->name);
        }
      }
    }
  }
  std::cout << "[attention_s8] portable vs double reference: " << ref_diff << " of " << ref_total
            << " outputs off by <= " << worst_ref << "; identical bytes from ";
  for (const auto& nm : names) std::cout << nm << " ";
  std::cout << "in " << variant_runs << " runs\n";
  // Off-by-one only at rounding ties: must be rare.
  CHECK(ref_diff * 200 < ref_total);
#if defined(__x86_64__) || defined(__i386__)
  if (kn::cpu_has_avx2_fma()) CHECK(names.count("avx2") == 1);
  if (kn::cpu_has_avx512()) CHECK(names.count("avx512") == 1);
#endif
#if defined(__aarch64__)
  CHECK(names.count("neon") == 1);
#endif
}

TEST_CASE("attention_head_s8 extreme inputs (-128 everywhere, saturation)", "[kernels][attention]") {
  std::mt19937 rng(7);
  for (int n : {2, 3, 4, 8, 64}) {
    for (int hd : {16, 64}) {
      S8Case c = make_s8_case(rng, n, hd, "none", 1.0f, 0);
      std::fill(c.qkv.begin(), c.qkv.end(), int8_t(-128));
      c.q_scale = c.k_scale = 0.001f;
      c.v_scale = 0.05f;
      c.ctx_scale = 0.05f;  // -128 * 0.05 / 0.05 = -128 exactly: saturates at the bottom
      INFO("n=" << n << " hd=" << hd);
      const auto ref = ref_attention_s8(c);
      const auto port = run_s8(c, kn::attention_head_s8_portable);
      CHECK(compare_s8(port, ref).max_abs <= 1);
      for (const kn::AttentionS8Kernel* k : s8_kernels_here()) {
        INFO(k->name);
        CHECK(run_s8(c, WithKernel{k}) == port);
      }
      // huge context scale: everything rounds to the zero point; tiny: saturates
      for (float cs : {1e6f, 1e-6f}) {
        c.ctx_scale = cs;
        c.ctx_zp = 5;
        const auto r2 = ref_attention_s8(c);
        CHECK(compare_s8(run_s8(c, kn::attention_head_s8), r2).max_abs == 0);
      }
    }
  }
}

// The query-row split: one pack, then rows in tiles of random sizes in random order, each tile
// with scratch for its own rows only (guarded), must give the whole head's bytes; rows() must not
// write `packed` (threads share it) and must not allocate.
TEST_CASE("attention_s8 rows in tiles equal the whole head, for every implementation", "[kernels][attention]") {
  std::mt19937 rng(4242);
  const Shape shapes[] = {{1, 64}, {5, 24}, {33, 64}, {128, 64}, {70, 33}, {19, 1030}};
  const char* masks[] = {"none", "random", "trailing", "all_masked"};
  size_t tiles_run = 0;
  for (const kn::AttentionS8Kernel* k : s8_kernels_here()) {
    for (const Shape& sh : shapes) {
      for (const char* mk : masks) {
        const S8Case c = make_s8_case(rng, sh.n, sh.hd, mk, 6.0f, 3);
        INFO(k->name << " n=" << sh.n << " hd=" << sh.hd << " mask=" << mk);
        const size_t n = size_t(c.n), hd = size_t(c.hd);
        Buf<int8_t> packed(kn::attention_s8_packed_bytes(n, hd));
        // whole head
        std::vector<int8_t> whole(n * hd, 0x5A);
        {
          Buf<float> scores(n * n);
          Buf<uint8_t> probs(n * n);
          kn::AttentionHeadS8 a = s8_args(c, packed.ptr, whole.data(), hd);
          a.scores = scores.ptr;
          a.probs = probs.ptr;
          kn::attention_head_s8_with(*k, a);
        }
        // tiles: pack again, then random tiles in random order
        std::vector<std::pair<int, int>> tiles;
        for (int r0 = 0; r0 < c.n;) {
          const int len = 1 + int(rng() % 9);
          tiles.push_back({r0, std::min(c.n, r0 + len)});
          r0 += len;
        }
        std::shuffle(tiles.begin(), tiles.end(), rng);
        std::vector<int8_t> split(n * hd, 0x5A);
        kn::AttentionHeadS8 a = s8_args(c, packed.ptr, split.data(), hd);
        k->pack(a);
        const std::vector<int8_t> packed_before(packed.ptr, packed.ptr + packed.count);
        std::vector<Buf<float>> scores;  // exactly each tile's rows, guarded
        std::vector<Buf<uint8_t>> probs;
        scores.reserve(tiles.size());
        probs.reserve(tiles.size());
        for (const auto& t : tiles) {
          scores.emplace_back(size_t(t.second - t.first) * n);
          probs.emplace_back(size_t(t.second - t.first) * n);
        }
        AllocWatch w;
        for (size_t i = 0; i < tiles.size(); ++i) {
          a.scores = scores[i].ptr;
          a.probs = probs[i].ptr;
          k->rows(a, tiles[i].first, tiles[i].second);
        }
        CHECK(w.stop() == 0);
        for (size_t i = 0; i < tiles.size(); ++i) {
          CHECK(scores[i].guard_ok());
          CHECK(probs[i].guard_ok());
        }
        tiles_run += tiles.size();
        CHECK(split == whole);
        CHECK(std::equal(packed_before.begin(), packed_before.end(), packed.ptr));
        CHECK(packed.guard_ok());
      }
    }
  }
  std::cout << "[attention_s8] " << s8_kernels_here().size() << " implementations: " << tiles_run
            << " row tiles equal to the whole head\n";
}

TEST_CASE("attention_rows_f32 in tiles equals the whole head", "[kernels][attention]") {
  std::mt19937 rng(77);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int n : {1, 9, 40}) {
    for (int hd : {8, 64}) {
      const size_t stride = 3 * size_t(hd);
      std::vector<float> qkv(size_t(n) * stride);
      for (auto& x : qkv) x = nd(rng);
      std::vector<uint8_t> mask(size_t(n), 1);
      if (n > 2) mask[size_t(n) - 1] = 0;
      using RowsFn = void (*)(const kn::AttentionHeadF32&, int, int);
      std::vector<RowsFn> fns = {kn::attention_rows_f32_portable, kn::attention_rows_f32};
      for (RowsFn fn : fns) {
        kn::AttentionHeadF32 a{};
        a.q = qkv.data();
        a.k = qkv.data() + hd;
        a.v = qkv.data() + 2 * hd;
        a.qkv_stride = stride;
        a.n = n;
        a.head_dim = hd;
        a.key_mask = mask.data();
        a.context_stride = size_t(hd);
        std::vector<float> whole(size_t(n) * hd), split(size_t(n) * hd, 777.0f);
        std::vector<float> scores(size_t(n) * n);
        a.scores = scores.data();
        a.context = whole.data();
        fn(a, 0, n);
        a.context = split.data();
        for (int r0 = n - 1; r0 >= 0; r0 -= 3) {  // backwards, tiles of up to 3 rows
          const int b0 = std::max(0, r0 - 2);
          Buf<float> tile_scores(size_t(r0 + 1 - b0) * n);
          a.scores = tile_scores.ptr;
          fn(a, b0, r0 + 1);
          CHECK(tile_scores.guard_ok());
        }
        CHECK(split == whole);
      }
    }
  }
}

TEST_CASE("attention_head_f32 matches a double reference", "[kernels][attention]") {
  std::mt19937 rng(99);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<Shape> shapes;
  for (int n : {1, 2, 7, 33, 128})
    for (int hd : {16, 32, 64}) shapes.push_back({n, hd});
  for (int n : {1, 2, 7}) shapes.push_back({n, 768});
  shapes.push_back({5, 24});
  shapes.push_back({9, 13});
  shapes.push_back({11, 70});
  const char* masks[] = {"none", "random", "all_masked", "one_valid"};
  double worst = 0, worst_avx = 0;
  for (const Shape& sh : shapes) {
    for (const char* mk : masks) {
      F32Case c;
      c.n = sh.n;
      c.hd = sh.hd;
      c.qkv.resize(size_t(c.n) * c.stride());
      for (auto& x : c.qkv) x = nd(rng) * 1.5f;
      const S8Case m = make_s8_case(rng, sh.n, 16, mk, 1.0f, 0);
      c.mask = m.mask;
      INFO("n=" << sh.n << " hd=" << sh.hd << " mask=" << mk);
      const auto ref = ref_attention_f32(c);
      const auto port = run_f32(c, kn::attention_head_f32_portable);
      const auto disp = run_f32(c, kn::attention_head_f32);
      double err = 0, err_d = 0;
      for (size_t i = 0; i < ref.size(); ++i) {
        err = std::max(err, std::abs(port[i] - ref[i]) / (1.0 + std::abs(ref[i])));
        err_d = std::max(err_d, std::abs(disp[i] - ref[i]) / (1.0 + std::abs(ref[i])));
      }
      CHECK(err < 1e-5);
      CHECK(err_d < 1e-5);
      worst = std::max(worst, err);
#if defined(__x86_64__) || defined(__i386__)
      if (have_avx2()) {
        const auto avx = run_f32(c, kn::attention_head_f32_avx2);
        double ea = 0;
        for (size_t i = 0; i < ref.size(); ++i) ea = std::max(ea, std::abs(avx[i] - ref[i]) / (1.0 + std::abs(ref[i])));
        CHECK(ea < 1e-5);
        worst_avx = std::max(worst_avx, ea);
        CHECK(same_bytes(avx, port));  // the same operations in the same order
      }
#endif
      if (std::string(mk) == "all_masked")  // every row: the same mean of the value rows
        for (size_t i = 0; i < port.size(); ++i) CHECK(port[i] == port[i % size_t(sh.hd)]);
    }
  }
  std::cout << "[attention_f32] max error vs double: portable " << worst << ", avx2 " << worst_avx << "\n";
}

// =============================================================================================
namespace {
// Column counts with every tail length of 8- and 16-lane vectors, plus random ones.
std::vector<size_t> col_counts(std::mt19937& rng) {
  std::vector<size_t> v = {1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 768};
  for (int t = 0; t < 6; ++t) v.push_back(1 + rng() % 1100);
  return v;
}
}  // namespace

TEST_CASE("layernorm_f32 and layernorm_quantize_s8: reference, and every variant gives the portable bytes",
          "[kernels][layernorm]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  double worst_f = 0;
  size_t variant_runs = 0;
  for (size_t cols : col_counts(rng)) {
    const size_t rows = 1 + rng() % 5;
    std::vector<float> x(rows * cols), g(cols), b(cols), f(cols);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 3.0f + nd(rng);
    for (size_t c = 0; c < cols; c += 37) x[c] *= 60.0f;  // outlier channels, nonzero mean
    for (size_t c = 0; c < cols; ++c) {
      g[c] = 1.0f + 0.3f * nd(rng);
      b[c] = 0.2f * nd(rng);
      f[c] = std::exp(0.5f * nd(rng));
    }
    const float eps = 1e-12f;
    std::vector<double> ref;
    ref_layernorm(x.data(), g.data(), b.data(), eps, rows, cols, ref);
    INFO("rows=" << rows << " cols=" << cols);

    auto check_float = [&](const std::vector<float>& y) {
      double e = 0;
      for (size_t i = 0; i < y.size(); ++i) e = std::max(e, std::abs(y[i] - ref[i]) / (1.0 + std::abs(ref[i])));
      CHECK(e < 1e-5);
      worst_f = std::max(worst_f, e);
    };
    // portable against the double reference
    std::vector<float> yp(rows * cols);
    kn::layernorm_f32_portable(x.data(), g.data(), b.data(), eps, rows, cols, yp.data());
    check_float(yp);
    std::vector<std::vector<float>> xq_port;
    std::vector<std::vector<int8_t>> q_port;
    const float scale = 0.03f;
    const int32_t zp = -3;
    for (const float* fac : {static_cast<const float*>(nullptr), static_cast<const float*>(f.data())}) {
      std::vector<float> xx = x;
      std::vector<int8_t> q(rows * cols);
      kn::layernorm_quantize_s8_portable(xx.data(), g.data(), b.data(), eps, rows, cols, fac, scale, zp, q.data());
      CHECK(same_bytes(xx, yp));
      int worst_q = 0;
      for (size_t i = 0; i < rows * cols; ++i) {
        const double v = ref[i] * (fac ? fac[i % cols] : 1.0) / scale;
        worst_q = std::max(worst_q, std::abs(int(q[i]) - int(ref_quant(v, zp))));
      }
      CHECK(worst_q <= 1);
      xq_port.push_back(xx);
      q_port.push_back(q);
    }
    // every variant (and the dispatcher): the portable bytes, in place too, nothing past the end
    for (const kn::KernelTable* t : tables_here()) {
      INFO(t->name);
      std::vector<float> y(rows * cols + 16, 555.0f);
      AllocWatch w;
      t->layernorm_f32(x.data(), g.data(), b.data(), eps, rows, cols, y.data());
      CHECK(w.stop() == 0);
      for (size_t i = rows * cols; i < y.size(); ++i) CHECK(y[i] == 555.0f);
      y.resize(rows * cols);
      CHECK(same_bytes(y, yp));
      std::vector<float> inplace = x;
      t->layernorm_f32(inplace.data(), g.data(), b.data(), eps, rows, cols, inplace.data());
      CHECK(same_bytes(inplace, yp));
      int k = 0;
      for (const float* fac : {static_cast<const float*>(nullptr), static_cast<const float*>(f.data())}) {
        std::vector<float> xx = x;
        std::vector<int8_t> q(rows * cols + 16, 99);
        AllocWatch w2;
        t->layernorm_quantize_s8(xx.data(), g.data(), b.data(), eps, rows, cols, fac, scale, zp, q.data());
        CHECK(w2.stop() == 0);
        for (size_t i = rows * cols; i < q.size(); ++i) CHECK(q[i] == 99);
        q.resize(rows * cols);
        CHECK(same_bytes(xx, xq_port[k]));
        CHECK(q == q_port[k]);
        ++k;
      }
      ++variant_runs;
    }
    std::vector<float> yd(rows * cols);
    kn::layernorm_f32(x.data(), g.data(), b.data(), eps, rows, cols, yd.data());
    CHECK(same_bytes(yd, yp));
  }
  std::cout << "[layernorm] max error vs double: " << worst_f << "; " << variant_runs
            << " variant runs with the portable bytes\n";
}

// =============================================================================================
TEST_CASE("quantize_s8, quantize_s8_per_channel, residual_dequant_add_s8", "[kernels][quantize]") {
  // exact ties and saturation, round half to even
  {
    const float x[] = {0.25f, 0.75f, -0.25f, -0.75f, 1.25f, 1e6f, -1e6f, std::nanf(""), 63.5f, -64.0f, 0.0f};
    const int8_t expect[] = {0, 2, 0, -2, 2, 127, -128, -128, 127, -128, 0};
    // scale 0.5: 0.25 -> 0.5 -> 0 (even), 0.75 -> 1.5 -> 2, 1.25 -> 2.5 -> 2, 63.5 -> 127, -64 -> -128
    const size_t cnt = sizeof(x) / sizeof(x[0]);
    int8_t y[cnt];
    for (const kn::KernelTable* t : tables_here()) {
      INFO(t->name);
      t->quantize_s8(x, cnt, 0.5f, 0, y);
      for (size_t i = 0; i < cnt; ++i) CHECK(int(y[i]) == int(expect[i]));
    }
    kn::quantize_s8(x, cnt, 0.5f, 0, y);
    for (size_t i = 0; i < cnt; ++i) CHECK(int(y[i]) == int(expect[i]));
    // zero point shifts after rounding and clamps: 1.5 + 10 -> 12, 1e6 -> 127
    kn::quantize_s8_portable(x, cnt, 0.5f, 10, y);
    CHECK(int(y[1]) == 12);
    CHECK(int(y[5]) == 127);
    CHECK(int(y[6]) == -128);
  }
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (size_t cols : col_counts(rng)) {
    const size_t rows = 1 + rng() % 4;
    std::vector<float> x(rows * cols), f(cols), s(cols);
    for (auto& v : x) v = 2.0f * nd(rng);
    for (size_t c = 0; c < cols; ++c) {
      f[c] = std::exp(0.7f * nd(rng));
      s[c] = 0.01f * std::exp(0.5f * nd(rng));
    }
    INFO("rows=" << rows << " cols=" << cols);
    const float scale = 0.021f;
    const int32_t zp = 4;
    // portable against the reference
    std::vector<int8_t> yp(rows * cols), cp(rows * cols);
    kn::quantize_s8_portable(x.data(), x.size(), scale, zp, yp.data());
    kn::quantize_s8_per_channel_portable(x.data(), rows, cols, f.data(), scale, zp, cp.data());
    for (size_t i = 0; i < x.size(); ++i) {
      CHECK(std::abs(int(yp[i]) - int(ref_quant(double(x[i]) / scale, zp))) <= 1);
      CHECK(std::abs(int(cp[i]) - int(ref_quant(double(x[i]) * f[i % cols] / scale, zp))) <= 1);
    }
    std::vector<int8_t> q(rows * cols);
    std::uniform_int_distribution<int> u8(-128, 127);
    for (auto& v : q) v = int8_t(u8(rng));
    std::vector<float> hp = x;
    kn::residual_dequant_add_s8_portable(hp.data(), q.data(), rows, cols, s.data(), -2);
    for (size_t i = 0; i < x.size(); ++i) {
      const double r = double(x[i]) + (int(q[i]) + 2) * double(s[i % cols]);
      CHECK(std::abs(hp[i] - r) <= 1e-6 * (1 + std::abs(r)));
    }
    // every variant: the portable bytes, nothing written past the end, no allocation
    for (const kn::KernelTable* t : tables_here()) {
      INFO(t->name);
      std::vector<int8_t> y(rows * cols + 80, 99), c(rows * cols + 80, 99), cn(rows * cols + 80, 99);
      std::vector<float> h = x;
      h.resize(rows * cols + 16, 555.0f);
      AllocWatch w;
      t->quantize_s8(x.data(), x.size(), scale, zp, y.data());
      t->quantize_s8_per_channel(x.data(), rows, cols, f.data(), scale, zp, c.data());
      t->quantize_s8_per_channel(x.data(), rows, cols, nullptr, scale, zp, cn.data());
      t->residual_dequant_add_s8(h.data(), q.data(), rows, cols, s.data(), -2);
      CHECK(w.stop() == 0);
      for (size_t i = rows * cols; i < y.size(); ++i) CHECK((y[i] == 99 && c[i] == 99 && cn[i] == 99));
      for (size_t i = rows * cols; i < h.size(); ++i) CHECK(h[i] == 555.0f);
      y.resize(rows * cols);
      c.resize(rows * cols);
      cn.resize(rows * cols);
      h.resize(rows * cols);
      CHECK(y == yp);
      CHECK(c == cp);
      CHECK(cn == yp);
      CHECK(same_bytes(h, hp));
    }
    std::vector<int8_t> yd(rows * cols);
    kn::quantize_s8(x.data(), x.size(), scale, zp, yd.data());
    CHECK(yd == yp);
  }
}

// =============================================================================================
TEST_CASE("quantize_s8_row_dynamic: the row's absmax / 127, NaN skipped, the portable bytes", "[kernels][quantize]") {
  // the per-row quantization of the QKV and gated down GEMMs' inputs (XNNPACK qd8), against its
  // definition: scale = max |x| / 127 (std::fmax skips NaN; 1 for a zero or non-finite maximum),
  // bytes = quantize_s8_portable at that scale, zero point 0
  auto check_row = [](const std::vector<float>& x) {
    float absmax = 0.f;
    for (float v : x) absmax = std::fmax(absmax, std::fabs(v));
    const float want_scale = absmax > 0.f && std::isfinite(absmax) ? absmax / 127.f : 1.f;
    std::vector<int8_t> want(x.size()), got(x.size() + 16, 99);
    kn::quantize_s8_portable(x.data(), x.size(), want_scale, 0, want.data());
    const float scale = kn::quantize_s8_row_dynamic(x.data(), x.size(), got.data());
    CHECK(scale == want_scale);
    for (size_t i = x.size(); i < got.size(); ++i) CHECK(got[i] == 99);  // nothing past the row
    got.resize(x.size());
    CHECK(got == want);
  };
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (size_t n : {size_t(1), size_t(7), size_t(8), size_t(9), size_t(63), size_t(768), size_t(1027)}) {
    INFO("n=" << n);
    std::vector<float> x(n);
    for (auto& v : x) v = 3.0f * nd(rng);
    check_row(x);
    x[n / 2] = -40.0f;  // the maximum in any lane, negative
    check_row(x);
    x[n - 1] = std::nanf("");  // skipped, in the tail or a lane
    check_row(x);
    x[0] = std::numeric_limits<float>::infinity();  // no finite scale: 1, the row saturates
    check_row(x);
    std::fill(x.begin(), x.end(), 0.0f);
    check_row(x);
  }
}

TEST_CASE("GELU lookup table is exact and apply_lut_s8 matches", "[kernels][gelu]") {
  struct P {
    float in_scale;
    int32_t in_zp;
    float out_scale;
    int32_t out_zp;
  };
  const P params[] = {{0.05f, 0, 0.04f, -20}, {0.1f, 10, 0.05f, -100}, {0.013f, -37, 0.011f, 0}, {1.0f, 0, 1.0f, 0},
                      {0.5f, 3, 0.001f, 5}};
  for (const P& p : params) {
    int8_t lut[256];
    kn::build_gelu_lut_s8(p.in_scale, p.in_zp, p.out_scale, p.out_zp, lut);
    for (int q = -128; q < 128; ++q) {
      const double x = double(q - p.in_zp) * double(p.in_scale);
      const int8_t expect = ref_quant(ref_gelu(x) / double(p.out_scale), p.out_zp);
      INFO("q=" << q << " x=" << x);
      CHECK(int(lut[uint8_t(int8_t(q))]) == int(expect));
    }
  }
  // apply: random table, every byte value, odd lengths; every variant and both AVX-512 lookups
  using LutFn = void (*)(int8_t*, size_t, const int8_t*);
  std::vector<std::pair<std::string, LutFn>> fns = {{"dispatch", kn::apply_lut_s8}};
  for (const kn::KernelTable* t : tables_here()) fns.push_back({t->name, t->apply_lut_s8});
#if defined(__x86_64__) || defined(__i386__)
  if (kn::cpu_has_avx512()) fns.push_back({"avx512 (vpshufb)", kn::apply_lut_s8_avx512});
  if (kn::cpu_has_avx512vbmi()) fns.push_back({"avx512vbmi", kn::apply_lut_s8_avx512vbmi});
#endif
#if defined(__aarch64__)
  fns.push_back({"neon", kn::apply_lut_s8_neon});
#endif
  std::mt19937 rng(3);
  int8_t lut[256];
  for (auto& v : lut) v = int8_t(rng());
  for (size_t len : {0, 1, 15, 31, 32, 33, 63, 64, 65, 127, 128, 129, 256, 1000, 3071}) {
    std::vector<int8_t> x(len);
    for (size_t i = 0; i < len; ++i) x[i] = int8_t(len == 256 ? i : rng());
    std::vector<int8_t> a = x;
    kn::apply_lut_s8_portable(a.data(), len, lut);
    for (size_t i = 0; i < len; ++i) CHECK(a[i] == lut[uint8_t(x[i])]);
    for (const auto& fn : fns) {
      INFO(fn.first << " len=" << len);
      std::vector<int8_t> b = x;
      b.resize(len + 80, 99);
      AllocWatch w;
      fn.second(b.data(), len, lut);
      CHECK(w.stop() == 0);
      for (size_t i = len; i < b.size(); ++i) CHECK(b[i] == 99);
      b.resize(len);
      CHECK(b == a);
    }
  }
}

TEST_CASE("gelu_f32 accuracy", "[kernels][gelu]") {
  std::vector<float> xs;
  for (double v = -14.0; v <= 14.0; v += 0.0007) xs.push_back(float(v));
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, -1e-7f, 0.75f * 1.41421356f, -0.75f * 1.41421356f, 30.0f,
                  -30.0f, 100.0f, -100.0f, 1e30f, -1e30f})
    xs.push_back(v);
  auto check = [&](const std::vector<float>& y, const char* what) {
    double worst_rel = 0, worst_abs_tiny = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double r = ref_gelu_tail(double(xs[i]));
      if (std::abs(r) > 1e-30) {
        worst_rel = std::max(worst_rel, std::abs(y[i] - r) / std::abs(r));
      } else {
        worst_abs_tiny = std::max(worst_abs_tiny, std::abs(y[i] - r));
      }
    }
    INFO(what);
    CHECK(worst_rel < 1e-6);
    CHECK(worst_abs_tiny < 1e-36);
    std::cout << "[gelu_f32] " << what << " max rel error " << worst_rel << "\n";
  };
  std::vector<float> yp = xs, yd = xs;
  AllocWatch w;
  kn::gelu_f32_portable(yp.data(), yp.size());
  kn::gelu_f32(yd.data(), yd.size());
  CHECK(w.stop() == 0);
  check(yp, "portable");
  CHECK(same_bytes(yd, yp));
  for (const kn::KernelTable* t : tables_here()) {  // the portable bytes; odd length: tails
    INFO(t->name);
    std::vector<float> y = xs;
    t->gelu_f32(y.data(), y.size() - 3);
    for (size_t i = y.size() - 3; i < y.size(); ++i) CHECK(y[i] == xs[i]);
    for (size_t i = y.size() - 3; i < y.size(); ++i) y[i] = yp[i];
    CHECK(same_bytes(y, yp));
  }
}

// =============================================================================================
TEST_CASE("kernel dispatch: one table per process, the best this CPU runs; the test override",
          "[kernels][dispatch]") {
  const std::vector<const kn::KernelTable*> tables = tables_here();
  REQUIRE(!tables.empty());
  CHECK(std::string(tables.front()->name) == "portable");
  const char* env = std::getenv("EDGEBERT_KERNELS");
  const kn::KernelTable* forced = env != nullptr ? kn::find_kernel_table(env) : nullptr;
  CHECK(&kn::kernel_table() == (forced != nullptr ? forced : tables.back()));
  std::cout << "[dispatch] tables here:";
  for (const kn::KernelTable* t : tables) std::cout << " " << t->name;
  std::cout << "; chosen: " << kn::kernel_table().name << "\n";
#if defined(__x86_64__) || defined(__i386__)
  if (kn::cpu_has_avx512() && forced == nullptr) CHECK(kn::kernel_table().attention_s8 == &kn::kAttentionS8Avx512);
#endif
  CHECK(kn::find_kernel_table("no-such-variant") == nullptr);
  for (const kn::KernelTable* t : tables) {
    CHECK(kn::find_kernel_table(t->name) == t);
    kn::set_kernel_table_for_testing(t);
    CHECK(&kn::kernel_table() == t);
    CHECK(&kn::attention_s8_kernel() == t->attention_s8);
    // the dispatchers call the forced table's kernels
    int8_t lut[256];
    for (int b = 0; b < 256; ++b) lut[b] = int8_t(255 - b);
    int8_t v[70];
    for (int i = 0; i < 70; ++i) v[i] = int8_t(i * 3);
    kn::apply_lut_s8(v, 70, lut);
    for (int i = 0; i < 70; ++i) CHECK(v[i] == int8_t(255 - uint8_t(int8_t(i * 3))));
  }
  kn::set_kernel_table_for_testing(nullptr);
  CHECK(&kn::kernel_table() == (forced != nullptr ? forced : tables.back()));
}

// =============================================================================================
TEST_CASE("kernel sources use no heap containers or allocation calls", "[kernels][alloc]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(EB_SOURCE_ROOT) / "runtime" / "src" / "kernels";
  if (!fs::is_directory(dir)) {
    WARN("kernel sources not found at " << dir.string() << "; source scan skipped");
    return;
  }
  const char* banned[] = {"std::vector", "std::string", "malloc", "calloc", "realloc", "make_unique",
                          "make_shared", "new ", "new[", "throw", "std::function"};
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 3) continue;
    const bool src = name.rfind(".cpp") == name.size() - 4 || name.rfind(".h") == name.size() - 2;
    if (!src) continue;
    ++files;
    // The CPU is tested once per process in dispatch.cpp: no other kernel file asks per call.
    const bool may_test_cpu = name == "dispatch.cpp" || name.rfind("cpu_features", 0) == 0;
    std::ifstream in(e.path());
    std::string line;
    int ln = 0;
    while (std::getline(in, line)) {
      ++ln;
      const size_t cm = line.find("//");
      if (cm != std::string::npos) line.resize(cm);
      INFO(name << ":" << ln << ": " << line);
      for (const char* b : banned) {
        const size_t pos = line.find(b);
        if (pos == std::string::npos) continue;
        const bool word_start = pos == 0 || !(std::isalnum(static_cast<unsigned char>(line[pos - 1])) || line[pos - 1] == '_');
        CHECK_FALSE(word_start);
      }
      if (!may_test_cpu) {
        CHECK(line.find("cpu_has_") == std::string::npos);
        CHECK(line.find("__builtin_cpu_supports") == std::string::npos);
      }
    }
  }
  CHECK(files >= 10);
}

// =============================================================================================
TEST_CASE("attention_head_s8 timing (informational)", "[kernels][timing]") {
  std::mt19937 rng(42);
  // best of 5 rounds of up to `iters` calls, each round capped at ~60 ms (slow builds stay quick)
  auto time_us = [](auto fn, const kn::AttentionHeadS8& a, int iters) {
    using clock = std::chrono::steady_clock;
    fn(a);  // warm up
    double best = 1e300;
    for (int round = 0; round < 5; ++round) {
      const auto t0 = clock::now();
      int done = 0;
      while (done < iters) {
        fn(a);
        ++done;
        if (std::chrono::duration<double>(clock::now() - t0).count() > 0.06) break;
      }
      best = std::min(best, std::chrono::duration<double, std::micro>(clock::now() - t0).count() / done);
    }
    return best;
  };
  for (Shape sh : {Shape{128, 64}, Shape{512, 64}}) {
    const S8Case c = make_s8_case(rng, sh.n, sh.hd, "none", 3.0f, 0);
    const size_t n = size_t(c.n), hd = size_t(c.hd);
    Buf<float> scores(n * n);
    Buf<uint8_t> probs(n * n);
    Buf<int8_t> packed(kn::attention_s8_packed_bytes(n, hd));
    std::vector<int8_t> ctx(n * c.hidden());
    kn::AttentionHeadS8 a = s8_args(c, packed.ptr, ctx.data() + c.head * hd, c.hidden());
    a.scores = scores.ptr;
    a.probs = probs.ptr;
    const int iters = sh.n <= 128 ? 200 : 20;
    const double tp = time_us(kn::attention_head_s8_portable, a, iters);
    std::ostringstream msg;
    msg << "attention_head_s8 n=" << sh.n << " head_dim=" << sh.hd << ": portable " << tp << " us";
    for (const kn::AttentionS8Kernel* k : s8_kernels_here()) {
      if (k == &kn::kAttentionS8Portable) continue;
      const double t = time_us(WithKernel{k}, a, iters * 5);
      msg << ", " << k->name << " " << t << " us (" << tp / t << "x)";
    }
    std::cout << "[timing] " << msg.str() << "\n";
    WARN(msg.str());
  }
}
