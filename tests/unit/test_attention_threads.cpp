// SPDX-License-Identifier: Apache-2.0
// test_attention_threads.cpp: the attention core shares every head's query rows among the
// session's threads (row tiles taken from a common counter). Whatever the thread count, the tile
// size or the order in which tiles run, each row is computed alone, so every output must be the
// same bytes as with one thread: one head (where splitting by heads alone could not use a second
// thread) and twelve heads, int8 and fp32, with and without padding, at several lengths.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "model.h"
#include "session.h"
#include "test_support.h"

using namespace edgebert;
using namespace edgebert::test;

namespace {

std::vector<float> run_hidden(Session& s, const std::vector<int32_t>& ids, const std::vector<int32_t>& mask, size_t hidden) {
  REQUIRE(s.run_ids(ids.data(), nullptr, mask.data(), ids.size()) == EB_OK);
  return std::vector<float>(s.last_hidden_state(), s.last_hidden_state() + ids.size() * hidden);
}

}  // namespace

TEST_CASE("attention split across threads by query rows gives the one-thread bytes", "[session][threads]") {
  std::mt19937 rng(31);
  size_t compared = 0;
  for (const char* model : {"base2_h1", "base2_h12"}) {
    for (const char* kind : {"int8", "fp32"}) {
      INFO(model << " " << kind);
      std::unique_ptr<Model> m;
      std::string err;
      REQUIRE(Model::load_file(ebm_path(model, kind).c_str()).move_to(&m, &err));
      const size_t hidden = static_cast<size_t>(m->config.hidden);
      std::vector<std::unique_ptr<Session>> sessions;
      for (int threads : {1, 2, 3}) {  // 3 on a 2-core machine: uneven shares, preemption
        SessionOptions o;
        o.threads = threads;
        o.adaptive_threads = false;  // the split itself, even where 3 threads contend for 2 cores
        std::unique_ptr<Session> s;
        REQUIRE(Session::create(*m, o).move_to(&s, &err));
        sessions.push_back(std::move(s));
      }
      const size_t max_n = static_cast<size_t>(sessions[0]->max_seq_len());
      for (size_t n : {size_t(1), size_t(5), size_t(37), std::min<size_t>(70, max_n)}) {
        for (bool padded : {false, true}) {
          INFO("n=" << n << " padded=" << padded);
          std::vector<int32_t> ids(n), mask(n, 1);
          std::uniform_int_distribution<int32_t> tok(std::min(1000, m->config.vocab / 2), m->config.vocab - 1);
          for (auto& t : ids) t = tok(rng);
          if (padded && n > 2)
            for (size_t j = n - n / 3; j < n; ++j) mask[j] = 0;
          const std::vector<float> one = run_hidden(*sessions[0], ids, mask, hidden);
          for (size_t k = 1; k < sessions.size(); ++k) {
            INFO("threads=" << sessions[k]->threads());
            const std::vector<float> many = run_hidden(*sessions[k], ids, mask, hidden);
            CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0);
            ++compared;
          }
        }
      }
    }
  }
  CHECK(compared == 2 * 2 * 4 * 2 * 2);
}
