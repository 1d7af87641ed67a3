// SPDX-License-Identifier: Apache-2.0
// gemm_kinds.cpp (edgebert-gemm-kinds): times BERT's four GEMM shapes through the XNNPACK glue
// (XnnGemm) in both of its int8 kinds: int8 output (qc8 1x1 convolution on the 2022 API,
// fully_connected_nc_qs8_qc8w on 2024) and, where XNNPACK has it, float output
// (fully_connected_nc_qd8_f32_qc8w, the static input quantization given as per-row parameters),
// which the runtime uses for the GEMMs that feed the residual (attention_output, ffn_down).
// Prints ms per GEMM and GOPS (2 x rows x in x out / time), min over runs. Benchmark only.
//   usage: edgebert-gemm-kinds [--rows 8,128,384] [--threads N] [--runs N] [--hidden 768] [--ffn 3072]
//                              [--col-slab C] [--cold]
// --col-slab C also times each int8-output GEMM as operators over C output channels each (every
// one over all rows: its weights stay in L2), the candidate of issue 27; --cold evicts the caches
// before every timed run.
#include <pthreadpool.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <random>
#include <string>
#include <memory>
#include <vector>

#include "xnn_gemm.h"

namespace {

using Clock = std::chrono::steady_clock;

// --cold: every timed run starts with the caches full of other data (as in a model's run, where
// each GEMM's weights were last read a whole layer stack ago).
bool g_cold = false;
void evict_caches() {
  static std::vector<uint8_t> junk(size_t(128) << 20);
  for (size_t i = 0; i < junk.size(); i += 64) junk[i] = static_cast<uint8_t>(junk[i] + 1);
}

template <typename F>
double min_ms(int runs, F&& f) {
  f();
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    if (g_cold) evict_caches();
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    p = std::strchr(p, ',');
    if (!p) break;
    ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> rows_list = {8, 128, 384};
  int threads = 1, runs = 20, hidden = 768, ffn = 3072, col_slab = 0;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--cold") == 0) {
      g_cold = true;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rows") rows_list = parse_list(argv[i + 1]);
    else if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else if (a == "--runs") runs = std::atoi(argv[i + 1]);
    else if (a == "--hidden") hidden = std::atoi(argv[i + 1]);
    else if (a == "--ffn") ffn = std::atoi(argv[i + 1]);
    else if (a == "--col-slab") col_slab = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--rows 8,128,384] [--threads N] [--runs N] [--hidden 768] [--ffn 3072] [--col-slab C] [--cold]\n", argv[0]);
      return 2;
    }
  }
  if (const edgebert::Status ready = edgebert::xnn_ready(); !ready) {
    std::fprintf(stderr, "%s\n", ready.message().c_str());
    return 1;
  }
  pthreadpool_t pool = threads > 1 ? pthreadpool_create(threads) : nullptr;
  struct Kind {
    const char* name;
    int in, out;
  } kinds[] = {{"qkv", hidden, 3 * hidden}, {"attention_output", hidden, hidden},
               {"ffn_up", hidden, ffn}, {"ffn_down", ffn, hidden}};
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> q(-127, 127);
  std::printf("XNNPACK API %d, %d thread(s), min of %d runs\n", EDGEBERT_XNN_API, threads, runs);
  std::printf("%-17s %5s %12s %8s %14s %8s  %s\n", "gemm", "rows", "int8-out ms", "GOPS", "float-out ms", "GOPS",
              "runtime uses");
  double total_static = 0, total_qd8 = 0;
  for (int rows : rows_list) {
    for (const Kind& k : kinds) {
      std::vector<int8_t> w(size_t(k.in) * k.out), x(size_t(rows) * k.in), y(size_t(rows) * k.out);
      for (auto& v : w) v = static_cast<int8_t>(q(rng));
      for (auto& v : x) v = static_cast<int8_t>(q(rng));
      std::vector<float> scales(k.out, 0.003f), bias(k.out, 0.1f), yf(size_t(rows) * k.out);
      edgebert::LinearView l;
      l.name = k.name;
      l.int8 = true;
      l.in = k.in;
      l.out = k.out;
      l.weight_s8 = w.data();
      l.weight_scales = scales.data();
      l.bias = bias.data();
      l.input_scale = 0.05f;
      l.output_scale = 0.2f;
      edgebert::XnnGemm g;
      if (const edgebert::Status made = g.create(l, false, size_t(rows)); !made || !g.setup(rows, x.data(), y.data(), pool)) {
        std::fprintf(stderr, "%s\n", made ? "XNNPACK setup failed" : made.message().c_str());
        return 1;
      }
      const double ops = 2.0 * rows * k.in * k.out;
      double t_static = min_ms(runs, [&] { g.run(pool); });
      if (col_slab > 0 && col_slab < k.out) {
        std::vector<std::unique_ptr<edgebert::XnnGemm>> slabs;
        std::vector<std::vector<int8_t>> ys;
        for (int c0 = 0; c0 < k.out; c0 += col_slab) {
          edgebert::LinearView ls = l;
          ls.out = std::min(col_slab, k.out - c0);
          ls.weight_s8 = w.data() + size_t(c0) * k.in;
          ls.weight_scales = scales.data() + c0;
          ls.bias = bias.data() + c0;
          ys.emplace_back(size_t(rows) * ls.out);
          slabs.push_back(std::make_unique<edgebert::XnnGemm>());
          if (!slabs.back()->create(ls, false, size_t(rows)) || !slabs.back()->setup(rows, x.data(), ys.back().data(), pool)) return 1;
        }
        const double t_slab = min_ms(runs, [&] { for (auto& sg : slabs) sg->run(pool); });
        std::printf("  %s rows %d: whole %.3f ms, %d-column slabs %.3f ms (%.1f GOPS)\n", k.name, rows, t_static, col_slab,
                    t_slab, ops / t_slab * 1e-6);
      }
      total_static += t_static;
      double t_qd8 = -1;
      const bool residual = std::strcmp(k.name, "attention_output") == 0 || std::strcmp(k.name, "ffn_down") == 0;
      if (edgebert::XnnGemm::int8_float_output_supported()) {
        edgebert::XnnGemm gf;
        if (const edgebert::Status made = gf.create(l, true, size_t(rows)); !made || !gf.setup(rows, x.data(), yf.data(), pool)) {
          std::fprintf(stderr, "%s\n", made ? "XNNPACK setup failed" : made.message().c_str());
          return 1;
        }
        t_qd8 = min_ms(runs, [&] { gf.run(pool); });
        total_qd8 += t_qd8;
      }
      const char* used = residual && t_qd8 > 0 ? "float out" : "int8 out";
      std::printf("%-17s %5d %12.3f %8.1f %14.3f %8.1f  %s\n", k.name, rows, t_static, ops / t_static * 1e-6, t_qd8,
                  t_qd8 > 0 ? ops / t_qd8 * 1e-6 : 0.0, used);
    }
  }
  std::printf("sum of the GEMMs above: int8 out %.3f ms, float out %.3f ms (x12 for BERT-base's 12 layers)\n",
              total_static, total_qd8);
  if (pool) pthreadpool_destroy(pool);
  return 0;
}
