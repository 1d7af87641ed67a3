// SPDX-License-Identifier: Apache-2.0
// test_kernel_tables_model.cpp: every kernel table this CPU runs
// (kernels/dispatch.h: portable, AVX2, AVX-512, NEON, ...) computes the same
// bytes as the portable one, so a whole model (int8 and fp32) gives the same
// hidden states whichever table is active: each test model, with and without
// padding, one session per table (switched with the test override while nothing
// runs).
#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "kernels/dispatch.h"
#include "model.h"
#include "session.h"
#include "test_support.h"

using namespace edgebert;
using namespace edgebert::test;

TEST_CASE("every kernel table gives the portable table's bytes through int8 and fp32 models", "[session][kernels]") {
  const kernels::KernelTable* tables[kernels::kMaxKernelTables];
  const int count = kernels::supported_kernel_tables(tables);
  REQUIRE(count >= 1);
  std::mt19937 rng(77);
  size_t compared = 0;
  std::string err;
  for (const char* model : kModels) {
    for (const std::string& path : {ebm_path(model, "int8"), ebm_path(model, "fp32")}) {
      INFO(path);
      std::unique_ptr<Model> m;
      REQUIRE(Model::load_file(path.c_str()).move_to(&m, &err));
      const size_t hidden = static_cast<size_t>(m->config.hidden);
      for (bool padded : {false, true}) {
        const uint32_t seed = static_cast<uint32_t>(rng());  // the same ids for every table
        std::vector<float> portable;
        for (int t = 0; t < count; ++t) {
          INFO(tables[t]->name << " padded=" << padded);
          kernels::set_kernel_table_for_testing(tables[t]);
          SessionOptions o;
          o.threads = 1;
          std::unique_ptr<Session> s;
          REQUIRE(Session::create(*m, o).move_to(&s, &err));
          // 37 tokens: tails after blocks of 32, 16, 4 and 1 rows; 21 under qemu (CI time): after
          // 16, 4 and 1
          const size_t n = std::min<size_t>(emulated() ? 21 : 37, static_cast<size_t>(s->max_seq_len()));
          std::mt19937 ids_rng(seed);
          std::uniform_int_distribution<int32_t> tok(std::min(1000, m->config.vocab / 2), m->config.vocab - 1);
          std::vector<int32_t> ids(n), mask(n, 1);
          for (auto& v : ids) v = tok(ids_rng);
          if (padded && n > 2)
            for (size_t j = n - n / 3; j < n; ++j) mask[j] = 0;
          REQUIRE(s->run_ids(ids.data(), nullptr, mask.data(), n) == EB_OK);
          std::vector<float> out(s->last_hidden_state(), s->last_hidden_state() + n * hidden);
          if (t == 0) {
            portable = out;
          } else {
            CHECK(std::memcmp(out.data(), portable.data(), out.size() * sizeof(float)) == 0);
            ++compared;
          }
        }
      }
    }
  }
  kernels::set_kernel_table_for_testing(nullptr);
  CHECK(compared == (sizeof(kModels) / sizeof(kModels[0])) * 2 * 2 * static_cast<size_t>(count - 1));
}
