// SPDX-License-Identifier: Apache-2.0
// test_xnn_gemm.cpp: the XNNPACK glue (XnnGemm) on whichever API generation this build detected
// (EDGEBERT_XNN_API: 2022 qc8 1x1 convolution, 2024 fully-connected qs8_qc8w with reshape):
// int8 and f32 GEMMs against a float64 reference while the row count and the buffers change
// between runs (7, 128, 1, 64, 33 rows, 1 and 2 threads), and zero heap allocations for those
// re-setups and runs once every row count has been seen.
#include <catch2/catch.hpp>

#include <pthreadpool.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "backend/packed_weights.h"
#include "qs8_params.h"
#include "xnn_gemm.h"

using edgebert::LinearView;
using edgebert::XnnGemm;

namespace {

constexpr int kIn = 96, kOut = 40;
const size_t kRows[] = {7, 128, 1, 64, 33};

struct Weights {
  std::vector<int8_t> w8;
  std::vector<float> w32, wscale, bias, out_scales;
};

Weights make_weights(std::mt19937& rng) {
  std::uniform_int_distribution<int> q(-127, 127);
  std::uniform_real_distribution<float> u(-1.f, 1.f), sc(0.002f, 0.01f), osc(0.05f, 0.4f);
  Weights w;
  for (int i = 0; i < kIn * kOut; ++i) {
    w.w8.push_back(static_cast<int8_t>(q(rng)));
    w.w32.push_back(u(rng));
  }
  for (int c = 0; c < kOut; ++c) {
    w.wscale.push_back(sc(rng));
    w.bias.push_back(u(rng));
    w.out_scales.push_back(osc(rng));
  }
  w.out_scales[3] *= 30.f;  // one outlier channel, as trained BERTs have
  return w;
}

LinearView int8_view(const Weights& w) {
  LinearView v;
  v.name = "test_int8";
  v.int8 = true;
  v.in = kIn;
  v.out = kOut;
  v.weight_s8 = w.w8.data();
  v.weight_scales = w.wscale.data();
  v.bias = w.bias.data();
  v.has_quant = true;
  v.input_scale = 0.05f;
  v.input_zero_point = 3;
  v.output_zero_point = -5;
  v.output_scales = w.out_scales.data();
  return v;
}

LinearView f32_view(const Weights& w, const char* name) {
  LinearView v;
  v.name = name;
  v.in = kIn;
  v.out = kOut;
  v.weight_f32 = w.w32.data();
  v.bias = w.bias.data();
  return v;
}

// int8 reference in float64: dequantize, multiply, add the bias, requantize per channel.
int8_t ref_int8(const LinearView& v, const int8_t* x, int c) {
  double acc = 0;
  for (int k = 0; k < kIn; ++k) acc += double(x[k] - v.input_zero_point) * v.weight_s8[size_t(c) * kIn + k];
  const double y = acc * v.input_scale * v.weight_scales[c] + v.bias[c];
  const double q = std::nearbyint(y / v.output_scales[c]) + v.output_zero_point;
  return static_cast<int8_t>(std::min(127.0, std::max(-128.0, q)));
}

// Largest error, relative to 1 + |reference|, of a float-output int8 GEMM's rows against
// float64: row r's input is (x - zero_point) * scale_of(r).
template <class RowScale>
double worst_float_output_error(const LinearView& v, const int8_t* x, const float* y, size_t rows, int32_t zero_point,
                                RowScale scale_of) {
  double worst = 0;
  for (size_t r = 0; r < rows; ++r)
    for (int c = 0; c < kOut; ++c) {
      double acc = 0;
      for (int k = 0; k < kIn; ++k) acc += double(x[r * kIn + k] - zero_point) * v.weight_s8[size_t(c) * kIn + k];
      const double ref = acc * scale_of(r) * v.weight_scales[c] + v.bias[c];
      worst = std::max(worst, std::fabs(ref - y[r * kOut + c]) / (1.0 + std::fabs(ref)));
    }
  return worst;
}

struct Pool {
  pthreadpool_t p = nullptr;
  explicit Pool(int threads) { p = threads > 1 ? pthreadpool_create(threads) : nullptr; }
  ~Pool() {
    if (p) pthreadpool_destroy(p);
  }
};

}  // namespace

TEST_CASE("XnnGemm int8 matches a float64 reference while rows and buffers change", "[xnn]") {
  REQUIRE(edgebert::xnn_ready().is_ok());
  std::mt19937 rng(7);
  const Weights w = make_weights(rng);
  const LinearView v = int8_view(w);
  std::uniform_int_distribution<int> q(-128, 127);
  for (int threads : {1, 2}) {
    INFO("XNNPACK API " << EDGEBERT_XNN_API << ", threads " << threads);
    Pool pool(threads);
    XnnGemm g;
    REQUIRE(g.create(v, false, 128).is_ok());
    REQUIRE(g.int8());
    // Two buffer pairs, alternated, so setup sees new pointers as well as new row counts.
    std::vector<int8_t> x[2], y[2];
    for (int b = 0; b < 2; ++b) {
      for (size_t i = 0; i < 128 * kIn; ++i) x[b].push_back(static_cast<int8_t>(q(rng)));
      y[b].assign(129 * kOut, 0);  // one guard row
    }
    for (int pass = 0; pass < 2; ++pass) {
      int b = 0;
      long allocations = 0;
      int worst = 0;
      for (size_t rows : kRows) {
        std::fill(y[b].begin(), y[b].end(), int8_t(0x55));
        edgebert::tools::alloc_counter_start();
        const bool ok = g.setup(rows, x[b].data(), y[b].data(), pool.p) && g.run(pool.p);
        allocations += edgebert::tools::alloc_counter_stop();
        REQUIRE(ok);
        for (size_t r = 0; r < rows; ++r)
          for (int c = 0; c < kOut; ++c)
            worst = std::max(worst, std::abs(int(y[b][r * kOut + c]) - int(ref_int8(v, &x[b][r * kIn], c))));
        CHECK(y[b][rows * kOut] == int8_t(0x55));  // nothing written past the rows asked for
        b ^= 1;
      }
      CHECK(worst <= 1);
      if (pass == 1) CHECK(allocations == 0);
    }
  }
}

// Column slabs packed into a shared store (XnnGemm::create_slabs): one entry per slab under
// consecutive GEMM keys, the outputs are the whole GEMM's bytes (each output element is the same
// dot product), a second operator finds the packings instead of packing again, and everything is
// freed once (ASan in CI). The model-level suites run the same cut with EDGEBERT_GEMM_SLAB_BYTES.
// Without a shared store (2022 API) each operator packs its own slab: the bytes are still checked.
TEST_CASE("XnnGemm column slabs in a shared store give the whole GEMM's bytes and are packed once", "[xnn]") {
  REQUIRE(edgebert::xnn_ready().is_ok());
  const bool shared = edgebert::PackedWeights::supported();
  std::mt19937 rng(11);
  const Weights w = make_weights(rng);
  for (bool float_output : {false, true}) {
    if (float_output && !XnnGemm::int8_float_output_supported()) continue;
    INFO("float output " << float_output);
    const LinearView v = int8_view(w);
    const LinearView slabs[3] = {edgebert::linear_columns(v, 0, 16), edgebert::linear_columns(v, 16, 16),
                                 edgebert::linear_columns(v, 32, kOut - 32)};
    auto made = edgebert::PackedWeights::create(5);
    REQUIRE(made.is_ok());
    std::unique_ptr<edgebert::PackedWeights> store = made.take();
    edgebert::PackedWeights* const st = shared ? store.get() : nullptr;
    constexpr size_t kRowsRun = 17;
    std::uniform_int_distribution<int> q(-128, 127);
    std::vector<int8_t> x(kRowsRun * kIn);
    for (auto& e : x) e = static_cast<int8_t>(q(rng));
    const size_t out_bytes = kRowsRun * kOut * (float_output ? sizeof(float) : 1);
    std::vector<uint8_t> whole_y(out_bytes), cut_y(out_bytes, 0x55), again_y(out_bytes, 0x55);
    XnnGemm whole;
    REQUIRE(whole.create(v, float_output, kRowsRun).is_ok());
    REQUIRE((whole.setup(kRowsRun, x.data(), whole_y.data(), nullptr) && whole.run(nullptr)));
    {
      XnnGemm cut;
      REQUIRE(cut.create_slabs(slabs, 3, float_output, kRowsRun, st, 1).is_ok());
      if (shared) {
        const std::vector<edgebert::PackedWeights::Entry> entries = store->entries();
        REQUIRE(entries.size() == 3);
        for (size_t k = 0; k < 3; ++k) CHECK(entries[k].gemm == 1 + k);
      }
      REQUIRE((cut.setup(kRowsRun, x.data(), cut_y.data(), nullptr) && cut.run(nullptr)));
      CHECK(cut_y == whole_y);
      XnnGemm again;
      REQUIRE(again.create_slabs(slabs, 3, float_output, kRowsRun, st, 1).is_ok());
      if (shared) {
        CHECK(store->packs() == 3);
        CHECK(store->hits() == 3);
      }
      REQUIRE((again.setup(kRowsRun, x.data(), again_y.data(), nullptr) && again.run(nullptr)));
      CHECK(again_y == whole_y);
    }
    CHECK(store->users() == 0);
  }
}

// f32 against float64 while the row count changes; and one row, given room for more, gives exactly
// the bytes its row gets among several rows (2 to 33, 1 and 2 threads) and writes nothing past the
// room: a 1-token sequence run alone equals the same sequence in a packed run. Without the room,
// XNNPACK 2024-11 on arm64 ran its one-row micro-kernel, whose sums differ in their last bits (34 of
// these 40 outputs, under qemu).
TEST_CASE("XnnGemm f32 matches a float64 reference while rows change, one row as several", "[xnn]") {
  REQUIRE(edgebert::xnn_ready().is_ok());
  std::mt19937 rng(11);
  const Weights w = make_weights(rng);
  const LinearView v = f32_view(w, "test_f32");
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<float> x(128 * kIn), y(128 * kOut), one(3 * kOut);
  for (float& f : x) f = u(rng);
  for (int threads : {1, 2}) {
    INFO("XNNPACK API " << EDGEBERT_XNN_API << ", threads " << threads);
    Pool pool(threads);
    XnnGemm g;
    REQUIRE(g.create(v, false, 128).is_ok());
    REQUIRE_FALSE(g.int8());
    std::fill(one.begin(), one.end(), 1234.5f);
    REQUIRE((g.setup(1, x.data(), one.data(), pool.p, 2) && g.run(pool.p)));
    CHECK(one[2 * kOut] == 1234.5f);  // the room is two rows: nothing past them
    for (size_t rows : kRows) {
      INFO(rows << " rows");
      REQUIRE((g.setup(rows, x.data(), y.data(), pool.p) && g.run(pool.p)));
      double worst = 0;
      for (size_t r = 0; r < rows; ++r)
        for (int c = 0; c < kOut; ++c) {
          double ref = w.bias[c];
          for (int k = 0; k < kIn; ++k) ref += double(x[r * kIn + k]) * w.w32[size_t(c) * kIn + k];
          worst = std::max(worst, std::fabs(ref - y[r * kOut + c]));
        }
      CHECK(worst < 1e-3);
      if (rows > 1) CHECK(std::equal(one.begin(), one.begin() + kOut, y.begin()));
    }
  }
}

// The residual-feeding GEMMs on the 2024 API: int8 input with its static scale and zero point,
// float output = the dequantized accumulator + bias (no output requantization).
TEST_CASE("XnnGemm int8 with float output matches a float64 reference while rows change", "[xnn]") {
  REQUIRE(edgebert::xnn_ready().is_ok());
  std::mt19937 rng(19);
  const Weights w = make_weights(rng);
  const LinearView v = int8_view(w);
  XnnGemm g;
  if (!XnnGemm::int8_float_output_supported()) {
    const edgebert::Status refused = g.create(v, true, 128);
    const std::string err = refused.message();
    CHECK_FALSE(refused.is_ok());  // a clear refusal, never a silent int8 output
    CHECK(err.find("test_int8") != std::string::npos);
    WARN("XNNPACK API " << EDGEBERT_XNN_API << " has no int8 GEMM with float output: refusal checked");
    return;
  }
  std::uniform_int_distribution<int> q(-128, 127);
  std::vector<int8_t> x(128 * kIn);
  for (auto& e : x) e = static_cast<int8_t>(q(rng));
  std::vector<float> y(129 * kOut);
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    Pool pool(threads);
    XnnGemm gf;
    REQUIRE(gf.create(v, true, 128).is_ok());
    REQUIRE(gf.float_output());
    long allocations = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t rows : kRows) {
        std::fill(y.begin(), y.end(), 777.0f);
        edgebert::tools::alloc_counter_start();
        const bool ok = gf.setup(rows, x.data(), y.data(), pool.p) && gf.run(pool.p);
        const long a = edgebert::tools::alloc_counter_stop();
        if (pass == 1) allocations += a;
        REQUIRE(ok);
        CHECK(worst_float_output_error(v, x.data(), y.data(), rows, v.input_zero_point,
                                       [&](size_t) { return double(v.input_scale); }) < 1e-5);
        CHECK(y[rows * kOut] == 777.0f);  // nothing written past the rows asked for
      }
    }
    CHECK(allocations == 0);
    // more rows than the quantization parameters were made for: refused, not read past the end
    CHECK_FALSE(gf.setup(129, x.data(), y.data(), pool.p));
  }
}

// Dynamic per-row input quantization (the gated FFN's down GEMM, xnn_gemm.h set_row_scales):
// every row at its own scale, zero point 0, for row counts that end a micro-kernel tile anywhere
// (XNNPACK stores a short tile's last row from the parameters past the end: all of them must be
// that row's), 1 and 2 threads, rows and scales changing between runs, no allocation.
TEST_CASE("XnnGemm int8 with float output takes per-row input scales", "[xnn]") {
  REQUIRE(edgebert::xnn_ready().is_ok());
  const float one = 1.f;
  XnnGemm none;
  CHECK_FALSE(none.set_row_scales(&one, 1));  // no operator (none with per-row parameters): refused
  std::mt19937 rng(23);
  const Weights w = make_weights(rng);
  const LinearView v = int8_view(w);
  if (!XnnGemm::int8_float_output_supported()) {
    WARN("XNNPACK API " << EDGEBERT_XNN_API << " has no int8 GEMM with float output: per-row scales not offered");
    return;
  }
  std::uniform_int_distribution<int> q(-127, 127);
  std::uniform_real_distribution<float> sc(0.001f, 0.5f);
  std::vector<int8_t> x(128 * kIn);
  std::vector<float> scales(128), y(129 * kOut);
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    Pool pool(threads);
    XnnGemm gf;
    REQUIRE(gf.create(v, true, 128).is_ok());
    CHECK_FALSE(gf.set_row_scales(scales.data(), 0));
    long allocations = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t rows : {1, 2, 3, 7, 9, 10, 11, 13, 14, 15, 20, 29, 33, 64, 127, 128}) {
        INFO("rows " << rows);
        for (auto& e : x) e = static_cast<int8_t>(q(rng));
        for (auto& s : scales) s = sc(rng);
        std::fill(y.begin(), y.end(), 777.0f);
        edgebert::tools::alloc_counter_start();
        const bool ok = gf.setup(rows, x.data(), y.data(), pool.p) && gf.set_row_scales(scales.data(), rows) &&
                        gf.run(pool.p);
        const long a = edgebert::tools::alloc_counter_stop();
        if (pass == 1) allocations += a;
        REQUIRE(ok);
        CHECK(worst_float_output_error(v, x.data(), y.data(), rows, 0, [&](size_t r) { return double(scales[r]); }) < 1e-5);
        CHECK(y[rows * kOut] == 777.0f);
      }
    }
    CHECK(allocations == 0);
    CHECK_FALSE(gf.set_row_scales(scales.data(), 129));  // more rows than the parameters were made for
  }
}

TEST_CASE("XnnGemm rejects requantization scales XNNPACK cannot represent", "[xnn]") {
  REQUIRE(edgebert::xnn_ready().is_ok());
  std::mt19937 rng(3);
  Weights w = make_weights(rng);
  w.out_scales[5] = 1e-9f;  // multiplier input_scale * weight_scale / out_scale far above 256
  XnnGemm g;
  const edgebert::Status refused = g.create(int8_view(w), false, 128);
  const std::string err = refused.message();
  CHECK_FALSE(refused.is_ok());
  CHECK(err.find("test_int8") != std::string::npos);
}

// The vectorized channel loops (qs8_params.cpp, built with -fno-trapping-math) give exactly what
// one scalar loop with std::nearbyint and fmin / fmax gives, edge values included.
TEST_CASE("qs8 channel parameters equal the scalar nearbyint reference, edge values included", "[xnn]") {
  auto reference_bias = [](double x) {
    const double r = std::fmax(std::fmin(std::nearbyint(x), 2147483520.0), -2147483520.0);
    return static_cast<int32_t>(std::isnan(x) ? 2147483520.0 : r);
  };
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double x : {0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 1e-300, -1e-300, 2147483519.5,
                   2147483520.0, 2147483521.0, -2147483521.0, 3e9, -3e9, 4503599627370495.5, 4503599627370496.0,
                   9007199254740993.0, -4503599627370497.0, 1e300, -1e300, inf, -inf, nan})
    CHECK(edgebert::int32_bias(x) == reference_bias(x));

  std::mt19937 rng(11);
  std::uniform_real_distribution<float> scale(1e-4f, 0.05f), value(-3.f, 3.f);
  for (int out : {1, 3, 16, 17, 768, 2305}) {
    std::vector<float> ws(out), os(out), bias(out), ks(out);
    std::vector<int32_t> qb(out);
    for (int c = 0; c < out; ++c) {
      ws[c] = scale(rng);
      os[c] = 0.5f + scale(rng) * 10.f;
      bias[c] = value(rng) * (c % 7 == 0 ? 1e6f : 1.f);  // some biases far beyond int32 after scaling
    }
    edgebert::LinearView l{};
    l.out = out;
    l.input_scale = 0.0123f;
    l.weight_scales = ws.data();
    for (int variant = 0; variant < 3; ++variant) {
      l.output_scales = variant == 0 ? os.data() : nullptr;
      l.output_scale = 1.25f;
      l.bias = variant == 2 ? nullptr : bias.data();
      REQUIRE(edgebert::qs8_channel_params(l, ks.data(), qb.data()));
      for (int c = 0; c < out; ++c) {
        const float k = ws[c] / (variant == 0 ? os[c] : 1.25f);
        const double b = variant == 2 ? 0.0 : static_cast<double>(bias[c]);
        INFO("out " << out << " variant " << variant << " channel " << c);
        CHECK(ks[c] == k);
        CHECK(qb[c] == reference_bias(b / (double(l.input_scale) * ws[c])));
      }
    }
    ws[out / 2] = 0.f;  // a zero weight scale: out of range, refused
    l.output_scales = nullptr;
    CHECK_FALSE(edgebert::qs8_channel_params(l, ks.data(), qb.data()));
  }
}
