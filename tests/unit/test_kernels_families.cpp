// SPDX-License-Identifier: Apache-2.0
// Unit tests for the kernels the model families of issue 18 need (nothing calls them yet):
// rotary position embedding (both pairings, float and int8), gated FFN activations (GeGLU,
// SwiGLU) from an [n, 2I] int8 GEMM output, LayerNorm without bias, and int8 attention with a
// sliding-window mask. Each against a double-precision reference written here, and every vector
// variant against the portable bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/attention_window.h"
#include "kernels/kernels.h"
#include "kernels/rope.h"
#include "unit/kernel_cases.h"

namespace kn = edgebert::kernels;
using namespace kernel_cases;

namespace {

std::vector<const kn::KernelTable*> tables_here() {
  const kn::KernelTable* t[kn::kMaxKernelTables];
  return std::vector<const kn::KernelTable*>(t, t + kn::supported_kernel_tables(t));
}

// The scratch of one int8 head of n tokens: scores, probabilities and 64-byte aligned packed K/V.
struct HeadScratch {
  std::vector<float> scores;
  std::vector<uint8_t> probs;
  std::vector<int8_t> packed_kv;
  int8_t* packed;
  HeadScratch(size_t n, size_t hd) : scores(n * n), probs(n * n), packed_kv(kn::attention_s8_packed_bytes(n, hd) + 64) {
    packed = packed_kv.data() + (64 - reinterpret_cast<uintptr_t>(packed_kv.data()) % 64) % 64;
  }
  // Case c's head, its int8 context at `out` (head_dim per row) from the portable window kernel;
  // the arguments returned use this scratch.
  kn::AttentionHeadS8 run_portable_window(const S8Case& c, kn::KeyWindow window, int8_t* out) {
    kn::AttentionHeadS8 a = s8_args(c, packed, out, size_t(c.hd));
    a.scores = scores.data();
    a.probs = probs.data();
    kn::attention_s8_rows_window_portable(a, window, 0, c.n);
    return a;
  }
};

// Pair i of a head: the two channels (see rope.h).
std::pair<int, int> rope_pair(kn::RopeForm form, int i, int rotary_dim) {
  return form == kn::RopeForm::kRotateHalf ? std::make_pair(i, i + rotary_dim / 2) : std::make_pair(2 * i, 2 * i + 1);
}

}  // namespace

TEST_CASE("rope table: cos and sin of the library, to a float ulp, at every position", "[kernels][rope]") {
  // build_rope_table rotates between library values every 32 positions (kernels/rope.cpp)
  for (double base : {10000.0, 1000000.0, 160000.0})
    for (int dims : {256, 128, 34, 10}) {
      const int positions = 2100;  // past 64 seeds, and not a multiple of 32
      std::vector<float> table(kn::rope_table_floats(positions, dims));
      kn::build_rope_table(base, dims, positions, table.data());
      size_t differ = 0, beyond_ulp = 0;
      for (int p = 0; p < positions; ++p)
        for (int i = 0; i < dims / 2; ++i) {
          const double t = double(p) * std::pow(base, -2.0 * i / dims);
          const float want[2] = {float(std::cos(t)), float(std::sin(t))};
          for (int k = 0; k < 2; ++k) {
            const float got = table[size_t(p) * dims + 2 * i + k];
            differ += got != want[k];
            beyond_ulp += std::abs(got - want[k]) > std::nextafter(std::abs(want[k]), 2.f) - std::abs(want[k]);
          }
        }
      INFO("base " << base << " dims " << dims << ": " << differ << " entries one ulp off");
      CHECK(beyond_ulp == 0);
      CHECK(differ * 100000 <= size_t(positions) * dims);  // at most 1e-5 of them
    }
}

TEST_CASE("rope table: rows built from a seed position on are the bytes of a whole build", "[kernels][rope]") {
  // program/rope_table.h fills a table block by block (first_position a multiple of kRopeSeed)
  for (double base : {10000.0, 1000000.0})
    for (int dims : {256, 34}) {
      const int positions = 300;
      std::vector<float> whole(kn::rope_table_floats(positions, dims)), parts(whole.size(), -7.f);
      kn::build_rope_table(base, dims, positions, whole.data());
      for (int first = 0, end = kn::kRopeSeed; first < positions; first = end, end = std::min(positions, end + 2 * kn::kRopeSeed)) {
        kn::build_rope_table(base, dims, end, parts.data(), first);
        // nothing beyond `end` written yet
        if (end < positions) CHECK(parts[kn::rope_table_floats(end, dims)] == -7.f);
      }
      INFO("base " << base << " dims " << dims);
      CHECK(std::memcmp(whole.data(), parts.data(), whole.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("rope: both pairings, float and int8, against a double reference", "[kernels][rope]") {
  std::mt19937 rng(18);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  size_t s8_total = 0, s8_off = 0;
  double worst_f = 0, worst_pre = 0;
  struct Shape {
    int heads, head_dim, rotary_dim;
  };
  size_t variant_runs = 0;
  for (const Shape sh : {Shape{2, 64, 64}, Shape{3, 32, 16}, Shape{1, 10, 10}, Shape{2, 80, 20}, Shape{1, 256, 256},
                         Shape{2, 128, 128}, Shape{1, 40, 34}}) {
    for (kn::RopeForm form : {kn::RopeForm::kRotateHalf, kn::RopeForm::kInterleaved}) {
      const size_t rows = 1 + rng() % 40, hidden = size_t(sh.heads) * sh.head_dim, stride = 3 * hidden;
      const int max_pos = 600;
      const double base = 10000.0;
      std::vector<float> table(kn::rope_table_floats(max_pos, sh.rotary_dim));
      kn::build_rope_table(base, sh.rotary_dim, max_pos, table.data());
      std::vector<int32_t> pos(rows);
      for (auto& p : pos) p = int32_t(rng() % max_pos);
      kn::RopeArgs a{rows, stride, hidden, sh.heads, sh.head_dim, sh.rotary_dim, form, pos.data(), table.data()};
      INFO("heads=" << sh.heads << " hd=" << sh.head_dim << " rd=" << sh.rotary_dim << " form=" << int(form));
      // float: the key part of a QKV buffer; everything else untouched
      std::vector<float> x(rows * stride);
      for (auto& v : x) v = nd(rng);
      std::vector<float> y = x;
      kn::rope_f32(a, y.data());
      std::vector<double> ref(x.begin(), x.end());
      for (size_t r = 0; r < rows; ++r)
        for (int h = 0; h < sh.heads; ++h)
          for (int i = 0; i < sh.rotary_dim / 2; ++i) {
            const auto pr = rope_pair(form, i, sh.rotary_dim);
            const size_t o = r * stride + hidden + size_t(h) * sh.head_dim;
            const double t = double(pos[r]) * std::pow(base, -2.0 * i / sh.rotary_dim);
            ref[o + pr.first] = x[o + pr.first] * std::cos(t) - x[o + pr.second] * std::sin(t);
            ref[o + pr.second] = x[o + pr.second] * std::cos(t) + x[o + pr.first] * std::sin(t);
          }
      for (size_t k = 0; k < x.size(); ++k) worst_f = std::max(worst_f, std::abs(y[k] - ref[k]));
      CHECK(worst_f < 1e-5);
      // int8 (symmetric scales; out_scale a bit larger: rotation can grow a channel by sqrt 2)
      const float in_scale = 0.02f, out_scale = 0.025f;
      std::vector<int8_t> q(rows * stride);
      for (auto& v : q) v = int8_t(rng());
      std::vector<int8_t> qy = q;
      kn::rope_s8(a, in_scale, out_scale, qy.data());
      std::vector<int8_t> qp = q;
      kn::rope_s8_portable(a, in_scale, out_scale, qp.data());
      CHECK(qy == qp);
      for (const kn::KernelTable* t : tables_here()) {  // every variant: the portable bytes
        INFO(t->name);
        for (float out : {out_scale, in_scale}) {  // requantized, and kept at its scale (the runtime's use)
          std::vector<int8_t> want = q, got = q;
          kn::rope_s8_portable(a, in_scale, out, want.data());
          t->rope_s8(a, in_scale, out, got.data());
          CHECK(got == want);
          ++variant_runs;
        }
      }
      for (size_t r = 0; r < rows; ++r)
        for (size_t col = 0; col < stride; ++col) {
          const size_t k = r * stride + col;
          const bool in_keys = col >= hidden && col < 2 * hidden;
          if (!in_keys) {
            CHECK(qy[k] == q[k]);
            continue;
          }
          const int h = int((col - hidden) / sh.head_dim), d = int((col - hidden) % sh.head_dim);
          const size_t o = r * stride + hidden + size_t(h) * sh.head_dim;
          double v = q[k] * double(in_scale);
          for (int i = 0; i < sh.rotary_dim / 2; ++i) {
            const auto pr = rope_pair(form, i, sh.rotary_dim);
            const double t = double(pos[r]) * std::pow(base, -2.0 * i / sh.rotary_dim);
            const double va = q[o + pr.first] * double(in_scale), vb = q[o + pr.second] * double(in_scale);
            if (d == pr.first) v = va * std::cos(t) - vb * std::sin(t);
            if (d == pr.second) v = vb * std::cos(t) + va * std::sin(t);
          }
          const int e = std::abs(int(qy[k]) - int(ref_quant(v / out_scale, 0)));
          CHECK(e <= 1);
          s8_off += e != 0;
          ++s8_total;
          worst_pre = std::max(worst_pre, std::abs(v / out_scale - std::nearbyint(v / out_scale)));
        }
    }
  }
  std::cout << "[rope] float max abs error vs double " << worst_f << "; int8: " << s8_off << " of " << s8_total
            << " outputs off by one vs double (rounding ties); " << variant_runs << " int8 variant runs with the portable bytes\n";
  CHECK(s8_off * 1000 < s8_total);
}

TEST_CASE("gated activations (GeGLU, SwiGLU, GLU) from an [n, 2I] int8 GEMM output", "[kernels][gated]") {
  std::mt19937 rng(19);
  size_t total = 0, off = 0, variant_runs = 0, dyn_total = 0, dyn_off = 0;
  for (kn::GateKind kind : {kn::GateKind::kGeglu, kn::GateKind::kSwiglu, kn::GateKind::kGegluTanh, kn::GateKind::kGlu}) {
    for (size_t inter : {1, 15, 16, 17, 63, 64, 100, 257}) {
      const size_t rows = 1 + rng() % 6, x_stride = 2 * inter + rng() % 5, y_stride = inter + rng() % 3;
      std::vector<int8_t> x(rows * x_stride);
      for (auto& v : x) v = int8_t(rng());
      const float gate_scale = 0.03f, up_scale = 0.02f, out_scale = 0.015f;
      const int32_t gate_zp = -5, up_zp = 3, out_zp = 7;
      float table[256];
      kn::build_gate_table_f32(kind, gate_scale, gate_zp, table);
      kn::GatedArgs a{x.data(), x_stride, rows, inter, table, up_scale, up_zp, out_scale, out_zp, nullptr, y_stride};
      INFO("kind=" << int(kind) << " rows=" << rows << " inter=" << inter);
      std::vector<int8_t> yp(rows * y_stride, 99);
      a.y = yp.data();
      kn::gated_s8_portable(a);
      for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < y_stride; ++c) {
          const int8_t got = yp[r * y_stride + c];
          if (c >= inter) {
            CHECK(got == 99);
            continue;
          }
          const double g = (x[r * x_stride + c] - gate_zp) * double(gate_scale);
          const double u = (x[r * x_stride + inter + c] - up_zp) * double(up_scale);
          double act = 0.5 * g * std::erfc(-g / std::sqrt(2.0));
          if (kind == kn::GateKind::kSwiglu) act = g / (1.0 + std::exp(-g));
          if (kind == kn::GateKind::kGlu) act = 1.0 / (1.0 + std::exp(-g));
          if (kind == kn::GateKind::kGegluTanh)
            act = 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g)));
          const int e = std::abs(int(got) - int(ref_quant(act * u / out_scale, out_zp)));
          CHECK(e <= 1);
          off += e != 0;
          ++total;
        }
      for (const kn::KernelTable* t : tables_here()) {
        INFO(t->name);
        std::vector<int8_t> y(rows * y_stride, 99);
        a.y = y.data();
        t->gated_s8(a);
        CHECK(y == yp);
        ++variant_runs;
      }
      // dynamic per-row quantization: row r at scale max_c |act(g) u| / 127, zero point 0
      std::vector<float> sp(rows, -1.f);
      a.row_scales = sp.data();
      a.y = yp.data();
      kn::gated_s8_portable(a);
      for (size_t r = 0; r < rows; ++r) {
        std::vector<double> p(inter);
        double absmax = 0;
        for (size_t c = 0; c < inter; ++c) {
          const double u = (x[r * x_stride + inter + c] - up_zp) * double(up_scale);
          p[c] = double(table[static_cast<uint8_t>(x[r * x_stride + c])]) * u;  // act(gate) as the table holds it
          absmax = std::max(absmax, std::abs(p[c]));
        }
        const double scale = absmax > 0 ? absmax / 127 : 1;
        CHECK(std::abs(sp[r] - scale) <= 1e-6 * scale);
        for (size_t c = 0; c < inter; ++c) {
          const int e = std::abs(int(yp[r * y_stride + c]) - int(ref_quant(p[c] / scale, 0)));
          CHECK(e <= 1);
          dyn_off += e != 0;
          ++dyn_total;
        }
        if (absmax > 0) {  // the largest product reaches the edge of the range
          int edge = 0;
          for (size_t c = 0; c < inter; ++c) edge = std::max(edge, std::abs(int(yp[r * y_stride + c])));
          CHECK(edge == 127);
        }
        for (size_t c = inter; c < y_stride; ++c) CHECK(yp[r * y_stride + c] == 99);
      }
      for (const kn::KernelTable* t : tables_here()) {
        INFO(t->name << " (dynamic)");
        std::vector<int8_t> y(rows * y_stride, 99);
        std::vector<float> st(rows, -2.f);
        a.y = y.data();
        a.row_scales = st.data();
        t->gated_s8(a);
        CHECK(y == yp);
        CHECK(st == sp);
        ++variant_runs;
      }
      a.row_scales = nullptr;
    }
  }
  std::cout << "[gated] dynamic rows: " << dyn_off << " of " << dyn_total << " outputs off by one vs double\n";
  CHECK(dyn_off * 500 < dyn_total);
  std::cout << "[gated] " << off << " of " << total << " outputs off by one vs double; " << variant_runs
            << " variant runs with the portable bytes\n";
  CHECK(off * 500 < total);
}

TEST_CASE("layernorm without bias", "[kernels][layernorm]") {
  std::mt19937 rng(20);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (size_t cols : {1, 15, 16, 17, 64, 65, 130, 768}) {
    const size_t rows = 3;
    std::vector<float> x(rows * cols), g(cols), f(cols);
    for (auto& v : x) v = 1.0f + 2.0f * nd(rng);
    for (size_t c = 0; c < cols; ++c) {
      g[c] = 1.0f + 0.3f * nd(rng);
      f[c] = std::exp(0.3f * nd(rng));
    }
    INFO("cols=" << cols);
    std::vector<float> yp(rows * cols);
    kn::layernorm_f32_portable(x.data(), g.data(), nullptr, 1e-5f, rows, cols, yp.data());
    for (size_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (size_t c = 0; c < cols; ++c) mean += x[r * cols + c];
      mean /= double(cols);
      for (size_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
      var /= double(cols);
      for (size_t c = 0; c < cols; ++c) {
        const double ref = (x[r * cols + c] - mean) / std::sqrt(var + 1e-5) * g[c];
        CHECK(std::abs(yp[r * cols + c] - ref) < 1e-5 * (1 + std::abs(ref)));
      }
    }
    std::vector<float> xq = x;
    std::vector<int8_t> qp(rows * cols);
    kn::layernorm_quantize_s8_portable(xq.data(), g.data(), nullptr, 1e-5f, rows, cols, f.data(), 0.02f, 1, qp.data());
    CHECK(std::memcmp(xq.data(), yp.data(), yp.size() * sizeof(float)) == 0);
    for (size_t i = 0; i < qp.size(); ++i) CHECK(std::abs(int(qp[i]) - int(ref_quant(yp[i] * f[i % cols] / 0.02, 1))) <= 1);
    for (const kn::KernelTable* t : tables_here()) {
      INFO(t->name);
      std::vector<float> y(rows * cols), xx = x;
      std::vector<int8_t> q(rows * cols);
      t->layernorm_f32(x.data(), g.data(), nullptr, 1e-5f, rows, cols, y.data());
      t->layernorm_quantize_s8(xx.data(), g.data(), nullptr, 1e-5f, rows, cols, f.data(), 0.02f, 1, q.data());
      CHECK(std::memcmp(y.data(), yp.data(), yp.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(xx.data(), yp.data(), yp.size() * sizeof(float)) == 0);
      CHECK(q == qp);
    }
  }
}

TEST_CASE("int8 attention with a key window (sliding, causal): reference, full-window bytes, row tiles", "[kernels][attention]") {
  std::mt19937 rng(21);
  size_t total = 0, off = 0;
  struct Shape {
    int n, hd;
  };
  for (const Shape sh : {Shape{1, 16}, Shape{9, 24}, Shape{40, 64}, Shape{77, 33}, Shape{130, 64}, Shape{33, 32}, Shape{200, 64},
                         Shape{21, 128}}) {
    for (const char* mk : {"none", "random", "trailing", "one_valid"}) {
      const S8Case c = make_s8_case(rng, sh.n, sh.hd, mk, 6.0f, -3);
      const size_t n = size_t(c.n), hd = size_t(c.hd);
      HeadScratch scratch(n, hd);
      std::vector<float>& scores = scratch.scores;
      std::vector<uint8_t>& probs = scratch.probs;
      // symmetric windows, causal (before n, after 0), causal with a window, and lopsided ones
      const kn::KeyWindow windows[] = {{0, 0},  {1, 1},    {5, 5}, {16, 16}, {37, 37}, {sh.n, sh.n},
                                       {sh.n, 0}, {5, 0}, {0, 3}, {2, 9},   {sh.n + 7, 0}};
      for (const kn::KeyWindow window : windows) {
        INFO("n=" << sh.n << " hd=" << sh.hd << " mask=" << mk << " window=" << window.before << "," << window.after);
        std::vector<int8_t> out(n * hd, 0x5A);
        kn::AttentionHeadS8 a = scratch.run_portable_window(c, window, out.data());
        const std::vector<int8_t> ref = ref_attention_s8(c, window.before, window.after);
        for (const kn::KernelTable* t : tables_here()) {  // every variant: the portable bytes
          INFO(t->name);
          std::vector<int8_t> v(n * hd, 0x5A);
          a.context = v.data();
          std::fill(scores.begin(), scores.end(), 1e30f);  // no variant may read scratch it did not write
          std::fill(probs.begin(), probs.end(), uint8_t{0xEE});
          t->attention_s8_pack_window(a);
          t->attention_s8_rows_window(a, window, 0, c.n);
          CHECK(v == out);
          // row blocks that start anywhere (not only at multiples of 4) give the same bytes
          std::vector<int8_t> odd(n * hd, 0x5A);
          a.context = odd.data();
          for (int r0 = 0; r0 < c.n; r0 += 3) {
            std::vector<float> ts(size_t(3) * n);
            std::vector<uint8_t> tp(size_t(3) * n);
            a.scores = ts.data();
            a.probs = tp.data();
            t->attention_s8_rows_window(a, window, r0, std::min(c.n, r0 + 3));
          }
          a.scores = scores.data();
          a.probs = probs.data();
          CHECK(odd == out);
        }
        a.context = out.data();
        for (size_t i = 0; i < out.size(); ++i) {
          const int e = std::abs(int(out[i]) - int(ref[i]));
          CHECK(e <= 1);
          off += e != 0;
          ++total;
        }
        if (window.before >= sh.n && window.after >= sh.n) {  // the whole head: attention_head_s8's bytes
          std::vector<int8_t> full(n * hd);
          std::vector<int8_t> packed(kn::attention_s8_packed_bytes(n, hd) + 64);
          kn::AttentionHeadS8 f = s8_args(c, packed.data(), full.data(), hd);
          f.scores = scores.data();
          f.probs = probs.data();
          kn::attention_head_s8_portable(f);
          CHECK(full == out);
        }
        // row tiles with their own scratch give the same bytes
        std::vector<int8_t> tiled(n * hd, 0x5A);
        a.context = tiled.data();
        kn::attention_s8_pack_window(a);
        for (int r0 = 0; r0 < c.n; r0 += 7) {
          const int r1 = std::min(c.n, r0 + 7);
          std::vector<float> ts(size_t(r1 - r0) * n);
          std::vector<uint8_t> tp(size_t(r1 - r0) * n);
          a.scores = ts.data();
          a.probs = tp.data();
          kn::attention_s8_rows_window(a, window, r0, r1);
        }
        CHECK(tiled == out);
      }
    }
  }
  std::cout << "[attention_window] " << off << " of " << total << " outputs off by one vs double\n";
  CHECK(off * 200 < total);
}

TEST_CASE("fp32 attention with a key window (sliding, causal): double reference, full-window bytes", "[kernels][attention]") {
  std::mt19937 rng(22);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const int n : {1, 9, 40, 77}) {
    for (const int hd : {16, 24}) {
      for (const bool padded : {false, true}) {
        const size_t stride = size_t(3 * hd);
        std::vector<float> qkv(size_t(n) * stride);
        for (float& v : qkv) v = nd(rng);
        std::vector<uint8_t> mask(size_t(n), 1);
        if (padded)
          for (int j = n - n / 3; j < n; ++j) mask[size_t(j)] = 0;  // trailing pads
        std::vector<float> scores(size_t(n) * n);
        const kn::KeyWindow windows[] = {{0, 0}, {1, 1}, {4, 4}, {n, n}, {n, 0}, {4, 0}, {1, 5}};
        for (const kn::KeyWindow window : windows) {
          INFO("n=" << n << " hd=" << hd << " padded=" << padded << " window=" << window.before << "," << window.after);
          const auto j_first = [&](int i) { return std::max(0, i - window.before); };
          const auto j_last = [&](int i) { return std::min(n - 1, i + window.after); };
          std::vector<float> out(size_t(n) * hd, 7.f);
          kn::AttentionHeadF32 a{qkv.data(), qkv.data() + hd, qkv.data() + 2 * hd, stride, n, hd,
                                 padded ? mask.data() : nullptr, scores.data(), out.data(), size_t(hd)};
          kn::attention_rows_window_f32(a, window, 0, n);
          for (int i = 0; i < n; ++i) {  // double reference over the window's valid keys
            std::vector<double> w(size_t(n), 0.0);
            double m = -1e300, sum = 0;
            bool any = false;
            for (int j = j_first(i); j <= j_last(i); ++j) {
              if (padded && !mask[size_t(j)]) continue;
              double s = 0;
              for (int d = 0; d < hd; ++d) s += double(qkv[size_t(i) * stride + d]) * qkv[size_t(j) * stride + hd + d];
              w[size_t(j)] = s / std::sqrt(double(hd));
              m = any ? std::max(m, w[size_t(j)]) : w[size_t(j)];
              any = true;
            }
            for (int d = 0; d < hd; ++d) {
              double ref = 0;
              if (any) {
                sum = 0;
                for (int j = j_first(i); j <= j_last(i); ++j)
                  if (!padded || mask[size_t(j)]) sum += std::exp(w[size_t(j)] - m);
                for (int j = j_first(i); j <= j_last(i); ++j)
                  if (!padded || mask[size_t(j)])
                    ref += std::exp(w[size_t(j)] - m) / sum * qkv[size_t(j) * stride + 2 * hd + d];
              } else {  // HF: no key in the window, every score finfo.min: the mean of all n values
                for (int j = 0; j < n; ++j) ref += double(qkv[size_t(j) * stride + 2 * hd + d]) / n;
              }
              CHECK(std::fabs(out[size_t(i) * hd + d] - ref) < 1e-4);
            }
          }
          if (window.before >= n && window.after >= n) {  // the whole head: attention_rows_f32_portable's bytes
            std::vector<float> full(size_t(n) * hd);
            a.context = full.data();
            kn::attention_rows_f32_portable(a, 0, n);
            CHECK(std::memcmp(full.data(), out.data(), full.size() * sizeof(float)) == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("rmsnorm: double reference, int8 heads in place", "[kernels][rmsnorm]") {
  std::mt19937 rng(23);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (size_t cols : {1, 16, 64, 130, 1024}) {
    const size_t rows = 3;
    std::vector<float> x(rows * cols), g(cols), y(rows * cols);
    for (auto& v : x) v = 0.5f + 3.0f * nd(rng);
    for (auto& v : g) v = 1.0f + 0.3f * nd(rng);
    INFO("cols=" << cols);
    kn::rmsnorm_f32(x.data(), g.data(), 1e-6f, rows, cols, y.data());
    for (size_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (size_t c = 0; c < cols; ++c) ss += double(x[r * cols + c]) * x[r * cols + c];
      const double inv = 1.0 / std::sqrt(ss / double(cols) + 1e-6);
      for (size_t c = 0; c < cols; ++c) {
        const double ref = x[r * cols + c] * inv * g[c];
        CHECK(std::abs(y[r * cols + c] - ref) < 1e-5 * (1 + std::abs(ref)));
      }
    }
    std::vector<float> in_place = x;
    kn::rmsnorm_f32(in_place.data(), g.data(), 1e-6f, rows, cols, in_place.data());
    CHECK(in_place == y);
  }
  // the sum of squares: every variant gives the portable order's value exactly (0 to 1000 values)
  for (const kn::KernelTable* t : tables_here()) {
    INFO(t->name);
    for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 64, 255, 768, 1000}) {
      std::vector<float> v(n);
      for (auto& e : v) e = 100.0f * nd(rng);
      double seq = 0;
      for (float e : v) seq += double(e) * e;
      const double want = kn::sum_squares_f64_portable(v.data(), n);
      CHECK(t->sum_squares_f64(v.data(), n) == want);
      CHECK(std::abs(want - seq) <= 1e-12 * seq);
    }
  }
  // int8 heads: 3 heads of 16 channels at offset 8 of rows of 64; each dequantized at its own
  // scale, normalized, requantized at its own scale; the other channels untouched
  const int heads = 3, hd = 16;
  const size_t stride = 64, first = 8, rows = 5;
  std::vector<int8_t> q(rows * stride);
  std::uniform_int_distribution<int> u8(-128, 127);
  for (auto& v : q) v = static_cast<int8_t>(u8(rng));
  std::vector<float> g(hd);
  for (auto& v : g) v = 1.0f + 0.3f * nd(rng);
  const float in_s[heads] = {0.05f, 0.2f, 0.01f}, out_s[heads] = {0.02f, 0.03f, 0.015f};
  std::vector<int8_t> y = q;
  kn::rmsnorm_heads_s8(y.data(), rows, stride, first, heads, hd, g.data(), 1e-6f, in_s, out_s);
  // every variant gives the portable bytes, here and on the LLM head sizes (with tails)
  for (const kn::KernelTable* t : tables_here()) {
    INFO(t->name);
    std::vector<int8_t> got = q;
    t->rmsnorm_heads_s8(got.data(), rows, stride, first, heads, hd, g.data(), 1e-6f, in_s, out_s);
    CHECK(got == y);
    for (int big : {17, 128, 256, 1000}) {
      std::vector<int8_t> xb(3 * 2 * size_t(big)), want;
      for (auto& v : xb) v = static_cast<int8_t>(u8(rng));
      std::vector<float> gb(big);
      for (auto& v : gb) v = 1.0f + 0.3f * nd(rng);
      want = xb;
      got = xb;
      const float ib[2] = {0.03f, 0.3f}, ob[2] = {0.02f, 0.01f};
      kn::rmsnorm_heads_s8_portable(want.data(), 3, 2 * size_t(big), 0, 2, big, gb.data(), 1e-6f, ib, ob);
      t->rmsnorm_heads_s8(got.data(), 3, 2 * size_t(big), 0, 2, big, gb.data(), 1e-6f, ib, ob);
      CHECK(got == want);
    }
  }
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < stride; ++c) {
      const size_t i = r * stride + c;
      if (c < first || c >= first + heads * hd) {
        CHECK(y[i] == q[i]);
        continue;
      }
      const size_t h = (c - first) / hd, base = r * stride + first + h * hd;
      double ss = 0;
      for (int d = 0; d < hd; ++d) ss += std::pow(double(q[base + d]) * in_s[h], 2);
      const double ref = double(q[i]) * in_s[h] / std::sqrt(ss / hd + 1e-6) * g[(c - first) % hd] / out_s[h];
      CHECK(std::abs(int(y[i]) - int(ref_quant(std::max(-128.0, std::min(127.0, ref)), 0))) <= 1);
    }
}

// The int8 attention with a float context (AttentionHeadS8::context_f32, the q/k-norm families'
// per-row quantized output GEMM input): every kernel table, full and windowed heads, whole and in
// row blocks that start anywhere, gives the portable floats bit for bit, writes nothing outside
// its rows' channels and no int8 context; and the int8 context is exactly the rounding of those
// floats at its scale (where not clipped, within 1e-3 of a level for the order of the products).
TEST_CASE("int8 attention with a float context: every table's bytes, and the int8 context its rounding",
          "[kernels][attention]") {
  std::mt19937 rng(23);
  struct Shape {
    int n, hd;
  };
  for (const Shape sh : {Shape{1, 16}, Shape{9, 24}, Shape{40, 64}, Shape{77, 33}, Shape{130, 64}, Shape{21, 256}}) {
    for (const char* mk : {"none", "random", "trailing", "all_masked"}) {
      const S8Case c = make_s8_case(rng, sh.n, sh.hd, mk, 6.0f, -3);
      const size_t n = size_t(c.n), hd = size_t(c.hd), stride = hd + 5;  // 5 channels of other heads
      HeadScratch scratch(n, hd);
      for (const kn::KeyWindow window : {kn::KeyWindow{sh.n, sh.n}, kn::KeyWindow{5, 5}, kn::KeyWindow{sh.n, 0}}) {
        const bool full = window.before >= sh.n && window.after >= sh.n;
        INFO("n=" << sh.n << " hd=" << sh.hd << " mask=" << mk << " window=" << window.before << "," << window.after);
        // the int8 context, portable
        std::vector<int8_t> q8(n * hd, 0x5A);
        kn::AttentionHeadS8 a = scratch.run_portable_window(c, window, q8.data());
        // the float context, portable: context_scale 1 and zero point 0 (the value itself)
        std::vector<float> ref(n * stride, 777.f);
        a.context = nullptr;
        a.context_f32 = ref.data();
        a.context_stride = stride;
        a.context_scale = 1.f;
        a.context_zero_point = 0;
        kn::attention_s8_rows_window_portable(a, window, 0, c.n);
        double worst = 0;
        for (size_t i = 0; i < n; ++i)
          for (size_t d = 0; d < stride; ++d) {
            const float x = ref[i * stride + d];
            if (d >= hd) {
              CHECK(x == 777.f);  // another head's channel
              continue;
            }
            const double level = double(x) / c.ctx_scale + c.ctx_zp;
            const int got = q8[i * hd + d];
            if (level >= 127.5 || level <= -128.5)
              CHECK(got == (level > 0 ? 127 : -128));
            else
              worst = std::max(worst, std::fabs(level - got));
          }
        CHECK(worst <= 0.5 + 1e-3);
        for (const kn::KernelTable* t : tables_here()) {
          INFO(t->name);
          for (const int block : {c.n, 3}) {  // whole, and row blocks starting anywhere
            std::vector<float> v(n * stride, 777.f);
            a.context_f32 = v.data();
            if (full)
              t->attention_s8->pack(a);
            else
              t->attention_s8_pack_window(a);
            for (int r0 = 0; r0 < c.n; r0 += block) {
              const int r1 = std::min(c.n, r0 + block);
              std::vector<float> ts(size_t(r1 - r0) * n, 1e30f);
              std::vector<uint8_t> tp(size_t(r1 - r0) * n, uint8_t{0xEE});
              a.scores = ts.data();
              a.probs = tp.data();
              if (full)
                t->attention_s8->rows(a, r0, r1);
              else
                t->attention_s8_rows_window(a, window, r0, r1);
            }
            CHECK(std::memcmp(v.data(), ref.data(), v.size() * sizeof(float)) == 0);
          }
        }
      }
    }
  }
}
