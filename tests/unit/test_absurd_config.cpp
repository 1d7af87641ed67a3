// SPDX-License-Identifier: Apache-2.0
// test_absurd_config.cpp: a model whose config asks for absurd sizes (hidden 65536, a million
// positions, a 2^31 vocabulary, thousands of layers, ...) is refused with a message naming the
// field, before anything sized by it is allocated: the largest single allocation made during the
// refused load stays small (counted by tools/alloc_counter.cpp). Models are mutated in place with
// FlatBuffers' mutable API, as test_bad_input does.
#include <catch2/catch.hpp>

#include <climits>
#include <functional>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "edgebert_generated.h"
#include "test_support.h"

using namespace edgebert::test;
namespace fb = edgebert::fb;

namespace {

struct Refusal {
  eb_status status;
  std::string message;
  size_t largest_allocation;
};

Refusal load_mutated(const char* kind, const std::function<void(fb::Config*)>& mutate) {
  std::vector<uint8_t> bytes = read_bytes(ebm_path("tiny_f16", kind));
  REQUIRE(bytes.size() > 1000);
  mutate(fb::GetMutableModel(bytes.data())->mutable_config());
  AlignedBuffer memory(bytes);
  eb_model* m = nullptr;
  char err[512] = "";
  edgebert::tools::alloc_counter_start();
  const eb_status s = eb_model_load_memory(memory.data, memory.size, &m, err, sizeof err);
  edgebert::tools::alloc_counter_stop();
  eb_model_free(m);
  return {s, err, edgebert::tools::alloc_counter_largest()};
}

}  // namespace

TEST_CASE("absurd config sizes are refused by name before any large allocation", "[bad-model][fault]") {
  struct Case {
    const char* field;
    std::function<void(fb::Config*)> mutate;
  };
  const std::vector<Case> cases = {
      {"hidden_size", [](fb::Config* c) { c->mutate_hidden_size(65536); }},
      {"hidden_size", [](fb::Config* c) { c->mutate_hidden_size(INT_MAX); }},
      {"max_position_embeddings", [](fb::Config* c) { c->mutate_max_position_embeddings(1000000); }},
      {"vocab_size", [](fb::Config* c) { c->mutate_vocab_size(INT_MAX); }},  // 2^31 - 1
      {"vocab_size", [](fb::Config* c) { c->mutate_vocab_size(INT_MIN); }},
      {"num_hidden_layers", [](fb::Config* c) { c->mutate_num_hidden_layers(5000); }},
      {"num_hidden_layers", [](fb::Config* c) { c->mutate_num_hidden_layers(0); }},
      {"intermediate_size", [](fb::Config* c) { c->mutate_intermediate_size(1 << 24); }},
      {"num_attention_heads", [](fb::Config* c) { c->mutate_num_attention_heads(1 << 20); }},
      {"type_vocab_size", [](fb::Config* c) { c->mutate_type_vocab_size(1 << 30); }},
      {"num_labels", [](fb::Config* c) { c->mutate_num_labels(1 << 30); }},
  };
  for (const char* kind : {"fp32", "int8"}) {
    for (const Case& c : cases) {
      const Refusal r = load_mutated(kind, c.mutate);
      INFO(kind << " " << c.field << ": " << r.message);
      CHECK(r.status == EB_ERROR_INVALID_MODEL);
      CHECK(r.message.find(c.field) != std::string::npos);
      CHECK(r.largest_allocation < 4096);
    }
  }
}

TEST_CASE("sizes that do not match each other are refused with both numbers", "[bad-model]") {
  const Refusal r = load_mutated("fp32", [](fb::Config* c) { c->mutate_num_attention_heads(5); });
  CHECK(r.status == EB_ERROR_INVALID_MODEL);
  CHECK(r.message.find("not divisible") != std::string::npos);
}
