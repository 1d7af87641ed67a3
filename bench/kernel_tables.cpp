// SPDX-License-Identifier: Apache-2.0
// kernel_tables.cpp (edgebert-kernel-bench): the non-GEMM kernels of one BERT layer, timed with
// every kernel table this CPU runs (kernels/dispatch.h), at a model's shapes (default BERT-base,
// 128 tokens): the int8 attention core of one head, the residual dequantize-add and the LayerNorm
// with fused quantization of [n, hidden], the activation table on [n, intermediate] and a
// quantization of [n, hidden]. Prints microseconds per call (best of many short rounds: on a
// shared machine a short loop can still have a core to itself) and ms per run for a model of
// `layers` layers (attention x heads, add + LayerNorm x 2). Benchmark only, no checks.
//   edgebert-kernel-bench [--seq N] [--hidden H] [--heads A] [--intermediate I] [--layers L]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernels.h"

namespace kn = edgebert::kernels;

namespace {

template <typename F>
double best_us(F f) {
  double best = 1e30;
  for (int round = 0; round < 200; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) f();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 5;
    best = us < best ? us : best;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 128, H = 768, heads = 12, I = 3072, layers = 12;
  for (int i = 1; i + 1 < argc; i += 2) {
    const int v = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--seq") == 0) n = v;
    else if (std::strcmp(argv[i], "--hidden") == 0) H = v;
    else if (std::strcmp(argv[i], "--heads") == 0) heads = v;
    else if (std::strcmp(argv[i], "--intermediate") == 0) I = v;
    else if (std::strcmp(argv[i], "--layers") == 0) layers = v;
  }
  if (n <= 0 || H <= 0 || heads <= 0 || H % heads != 0 || I <= 0 || layers <= 0) {
    std::fprintf(stderr, "usage: edgebert-kernel-bench [--seq N] [--hidden H] [--heads A] [--intermediate I] [--layers L]\n");
    return 2;
  }
  const int hd = H / heads;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  std::vector<int8_t> qkv(size_t(n) * 3 * H), y(size_t(n) * H), act(size_t(n) * I), ctx(size_t(n) * H), lut(256);
  for (auto& v : qkv) v = int8_t(rng());
  for (auto& v : act) v = int8_t(rng());
  for (auto& v : lut) v = int8_t(rng());
  std::vector<float> hidden(size_t(n) * H), h(size_t(n) * H), g(H, 1.1f), b(H, 0.1f), sc(H, 0.01f);
  for (auto& v : hidden) v = nd(rng);
  std::vector<float> scores(size_t(n) * n);
  std::vector<uint8_t> probs(size_t(n) * n);
  std::vector<int8_t> packed(kn::attention_s8_packed_bytes(size_t(n), size_t(hd)) + 64);
  int8_t* packed64 = packed.data() + ((64 - reinterpret_cast<uintptr_t>(packed.data()) % 64) % 64);

  const kn::KernelTable* tables[kn::kMaxKernelTables];
  const int count = kn::supported_kernel_tables(tables);
  std::printf("seq %d, hidden %d, %d heads of %d, intermediate %d, %d layers; chosen table: %s\n", n, H, heads, hd, I,
              layers, kn::kernel_table().name);
  std::printf("%-14s %10s %10s %10s %10s %10s | ms per run: %9s %9s %9s\n", "table", "attn head", "res add",
              "LN+quant", "act table", "quantize", "attention", "add+LN", "act");
  for (int t = 0; t < count; ++t) {
    const kn::KernelTable& T = *tables[t];
    kn::AttentionHeadS8 a{};
    a.q = qkv.data();
    a.k = qkv.data() + H;
    a.v = qkv.data() + 2 * H;
    a.qkv_stride = size_t(3) * H;
    a.n = n;
    a.head_dim = hd;
    a.q_scale = a.k_scale = 0.01f;
    a.v_scale = 0.02f;
    a.scores = scores.data();
    a.probs = probs.data();
    a.packed = packed64;
    a.context = ctx.data();
    a.context_stride = size_t(H);
    a.context_scale = 0.01f;
    const double ta = best_us([&] {
      T.attention_s8->pack(a);
      T.attention_s8->rows(a, 0, n);
    });
    std::memcpy(h.data(), hidden.data(), h.size() * sizeof(float));
    const double tr = best_us([&] { T.residual_dequant_add_s8(h.data(), y.data(), n, H, sc.data(), 0); });
    const double tl = best_us([&] {
      T.layernorm_quantize_s8(h.data(), g.data(), b.data(), 1e-12f, n, H, sc.data(), 0.05f, 0, y.data());
    });
    const double tg = best_us([&] { T.apply_lut_s8(act.data(), act.size(), reinterpret_cast<const int8_t*>(lut.data())); });
    const double tq = best_us([&] { T.quantize_s8(hidden.data(), hidden.size(), 0.05f, 0, y.data()); });
    std::printf("%-14s %10.2f %10.2f %10.2f %10.2f %10.2f | %21.3f %9.3f %9.3f\n", T.name, ta, tr, tl, tg, tq,
                ta * heads * layers / 1000, (tr + tl) * 2 * layers / 1000, tg * layers / 1000);
  }
  return 0;
}
