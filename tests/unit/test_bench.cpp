// SPDX-License-Identifier: Apache-2.0
// test_bench.cpp: edgebert-bench's pieces: latency statistics on known samples, the JSON it
// writes (parsed back and checked key by key), the synthetic model builder, and the head-sweep
// arithmetic (parameter and MAC counts against brute-force counts over the built model).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "bench_stats.h"
#include "converter/checkpoint/json.h"
#include "converter/synthetic_model.h"
#include "json_writer.h"
#include "test_support.h"
#include "xnn_gemm.h"

using namespace edgebert;
using namespace edgebert::tools;

TEST_CASE("latency statistics on known samples", "[bench]") {
  const LatencyStats s = compute_stats({5, 1, 4, 2, 3});
  CHECK(s.count == 5);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.median == 3);
  CHECK(s.mean == 3);
  CHECK(s.p90 == Approx(4.6));  // rank 0.9 * 4 = 3.6 -> 4 + 0.6 * (5 - 4)
  CHECK(s.p99 == Approx(4.96));
  CHECK(s.stddev == Approx(std::sqrt(2.5)));
  const LatencyStats even = compute_stats({10, 20, 30, 40});
  CHECK(even.median == 25);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  const LatencyStats h = compute_stats(hundred);
  CHECK(h.median == Approx(50.5));
  CHECK(h.p90 == Approx(90.1));
  CHECK(h.p99 == Approx(99.01));
  const LatencyStats one = compute_stats({7});
  CHECK(one.median == 7);
  CHECK(one.p99 == 7);
  CHECK(one.stddev == 0);
  CHECK(compute_stats({}).count == 0);
}

TEST_CASE("JSON writer output parses back", "[bench]") {
  JsonWriter j;
  j.begin_object().value("a", 1).value("s", "quote\" back\\ nl\n").value("x", 0.5).value("nan", NAN).value("b", true);
  j.begin_array("arr").value(nullptr, 1.5).value(nullptr, 2.5).end_array();
  j.begin_object("o").end_object().end_object();
  const convert::JsonValue v = convert::parse_json(j.str(), "writer");
  CHECK(v.at("a").as_int64() == 1);
  CHECK(v.at("s").as_string() == "quote\" back\\ nl\n");
  CHECK(v.at("x").as_double() == 0.5);
  CHECK(v.at("nan").is_null());
  CHECK(v.at("b").as_bool());
  CHECK(v.at("arr").size() == 2);
  CHECK(v.at("o").is_object());
}

TEST_CASE("edgebert-bench --json has the documented schema", "[bench][cli]") {
  const char* bin = std::getenv("EDGEBERT_BIN");
  REQUIRE(bin);
  const std::string json = "/tmp/eb_bench_test_" + std::to_string(::getpid()) + ".json";
  const std::string cmd = std::string(bin) +
                          "/edgebert-bench --synthetic hidden=64,heads=4,layers=2,intermediate=128,vocab=300,max_position=32"
                          " --seq-len 16 --runs 5 --warmup 1 --threads 2 --op-profile --json " + json + " > /dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const auto bytes = edgebert::test::read_bytes(json);
  std::remove(json.c_str());
  const convert::JsonValue v = convert::parse_json(std::string(bytes.begin(), bytes.end()), json);
  CHECK(v.at("edgebert_version").is_string());
  CHECK(v.at("model").at("precision").as_string() == "int8");
  CHECK(v.at("model").at("layers").as_int64() == 2);
  CHECK(v.at("model").at("heads").as_int64() == 4);
  CHECK(v.at("machine").at("threads").as_int64() == 2);
  CHECK(v.at("machine").at("cpu").is_string());
  CHECK(v.at("seq_len").as_int64() == 16);
  CHECK(v.at("init_ms").as_double() > 0);
  const convert::JsonValue& L = v.at("latency_ms");
  CHECK(L.at("runs").as_int64() == 5);
  CHECK(L.at("min").as_double() <= L.at("median").as_double());
  CHECK(L.at("median").as_double() <= L.at("max").as_double());
  CHECK(L.at("p90").as_double() <= L.at("p99").as_double());
  CHECK(v.at("times_ms").size() == 5);
  CHECK(v.at("tokens_per_second").as_double() > 0);
  CHECK(v.at("gemm_only_median_ms").as_double() > 0);
  const convert::JsonValue& M = v.at("memory");
  CHECK(M.at("arena_bytes").as_int64() > 0);
  CHECK(M.at("arena_bytes").as_int64() <= M.at("naive_bytes").as_int64());
  CHECK(M.at("packed_weight_bytes").as_int64() > 0);
  CHECK(M.at("model_file_bytes").as_int64() > 0);
  CHECK(M.at("peak_rss_bytes").as_int64() > 0);
  CHECK(M.at("int4_gemms").as_int64() == 0);
  CHECK(M.at("int4_gemms_requantized").as_int64() == 0);
  CHECK(v.at("allocations_during_runs").as_int64() == 0);
  CHECK(v.at("op_profile_ms").at("qkv_gemm").as_double() > 0);
  CHECK(v.at("op_profile_ms").at("attention_core").as_double() > 0);
}

TEST_CASE("edgebert-bench reports the int4 GEMMs and how many run as int8 here", "[bench][cli][int4]") {
  const char* bin = std::getenv("EDGEBERT_BIN");
  REQUIRE(bin);
  const std::string model = edgebert::test::ebm_path("h128_4x32", "int4");
  const std::string json = "/tmp/eb_bench_int4_" + std::to_string(::getpid()) + ".json";
  const std::string cmd = std::string(bin) + "/edgebert-bench --model " + model +
                          " --seq-len 8 --runs 2 --warmup 0 --json " + json + " > /dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const auto bytes = edgebert::test::read_bytes(json);
  std::remove(json.c_str());
  const convert::JsonValue M = convert::parse_json(std::string(bytes.begin(), bytes.end()), json).at("memory");
  const int64_t total = M.at("int4_gemms").as_int64(), requantized = M.at("int4_gemms_requantized").as_int64();
  CHECK(total > 0);
  CHECK(requantized >= 0);
  CHECK(requantized <= total);
  if (!edgebert::XnnGemm::int4_supported()) CHECK(requantized == total);  // no int4 GEMMs in this XNNPACK
}

TEST_CASE("synthetic models are deterministic and shaped as specified", "[bench][synthetic]") {
  convert::SyntheticSpec spec;
  std::string err;
  REQUIRE(convert::parse_synthetic_spec("hidden=96,heads=3,layers=2,intermediate=160,vocab=50,max_position=20,labels=2,seed=9",
                                        &spec, &err));
  CHECK_FALSE(convert::parse_synthetic_spec("hidden=96,heads=5", &spec, &err));
  CHECK_FALSE(convert::parse_synthetic_spec("hidden=abc", &spec, &err));
  CHECK_FALSE(convert::parse_synthetic_spec("color=3", &spec, &err));
  REQUIRE(convert::parse_synthetic_spec("hidden=96,heads=3,layers=2,intermediate=160,vocab=50,max_position=20,labels=2,seed=9",
                                        &spec, &err));
  const convert::FloatBert a = convert::make_synthetic_bert(spec), b = convert::make_synthetic_bert(spec);
  CHECK(a.layers[1].output.weight == b.layers[1].output.weight);
  CHECK(a.word_embeddings == b.word_embeddings);
  spec.seed = 10;
  CHECK(convert::make_synthetic_bert(spec).layers[1].output.weight != a.layers[1].output.weight);
  CHECK(a.layers.size() == 2);
  CHECK(a.layers[0].qkv.weight.size() == size_t(3 * 96 * 96));
  CHECK(a.layers[0].output.weight.size() == size_t(96 * 160));
  CHECK(a.classifier.weight.size() == size_t(2 * 96));
  // full-scale init: std 1/sqrt(fan_in)
  double ss = 0;
  for (float w : a.layers[0].output.weight) ss += double(w) * w;
  CHECK(std::sqrt(ss / a.layers[0].output.weight.size()) == Approx(1 / std::sqrt(160.0)).epsilon(0.05));
}

TEST_CASE("head-sweep arithmetic matches brute-force counts", "[bench][synthetic]") {
  for (int heads : {1, 2, 3, 4, 6, 12}) {
    convert::SyntheticSpec spec;
    spec.hidden = 96;
    spec.heads = heads;
    spec.layers = 2;
    spec.intermediate = 200;
    spec.vocab = 70;
    spec.max_position = 40;
    spec.labels = 3;
    const convert::FloatBert m = convert::make_synthetic_bert(spec);
    int64_t params = m.word_embeddings.size() + m.position_embeddings.size() + m.token_type_embeddings.size() +
                     m.embedding_norm.gamma.size() + m.embedding_norm.beta.size();
    for (const auto& L : m.layers) {
      for (const auto* l : {&L.qkv, &L.attention_output, &L.intermediate, &L.output})
        params += l->weight.size() + l->bias.size();
      params += L.attention_norm.gamma.size() * 2 + L.output_norm.gamma.size() * 2;
    }
    params += m.pooler.weight.size() + m.pooler.bias.size() + m.classifier.weight.size() + m.classifier.bias.size();
    CHECK(convert::bert_parameter_count(spec) == params);
    // parameters do not depend on the head split
    convert::SyntheticSpec one = spec;
    one.heads = 1;
    CHECK(convert::bert_parameter_count(one) == params);
    for (int64_t n : {1, 7, 128}) {
      int64_t proj = 0, core = 0, ffn = 0;
      const int64_t d = spec.hidden / heads;
      for (const auto& L : m.layers) {
        proj += n * L.qkv.in * L.qkv.out + n * L.attention_output.in * L.attention_output.out;
        ffn += n * L.intermediate.in * L.intermediate.out + n * L.output.in * L.output.out;
        for (int h = 0; h < heads; ++h) core += n * n * d /* QK^T */ + n * n * d /* PV */;
      }
      CHECK(convert::encoder_projection_macs(spec, n) == proj);
      CHECK(convert::encoder_attention_core_macs(spec, n) == core);
      CHECK(convert::encoder_ffn_macs(spec, n) == ffn);
    }
  }
}

TEST_CASE("edgebert-bench --texts: packed and one-by-one passes, the JSON schema, ids per text", "[bench][cli][packed]") {
  const char* bin = std::getenv("EDGEBERT_BIN");
  REQUIRE(bin);
  const std::string tmp = "/tmp/eb_bench_texts_" + std::to_string(::getpid());
  {
    std::FILE* f = std::fopen((tmp + ".txt").c_str(), "wb");
    REQUIRE(f);
    std::fputs("the movie was good\nwho was rude?\r\nthe staff\n", f);
    std::fclose(f);
  }
  for (int batch : {0, 64}) {
    INFO("batch tokens " << batch);
    const std::string cmd = std::string(bin) + "/edgebert-bench --model " + edgebert::test::ebm_path("task_st_mean_norm", "int8") +
                            " --texts " + tmp + ".txt --batch-tokens " + std::to_string(batch) +
                            " --threads 2 --runs 2 --peak-gops 100 --op-profile --write-ids " + tmp + ".ids --json " + tmp + ".json > /dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const auto bytes = edgebert::test::read_bytes(tmp + ".json");
    const convert::JsonValue v = convert::parse_json(std::string(bytes.begin(), bytes.end()), tmp);
    CHECK(v.at("count").as_int64() == 3);
    CHECK(v.at("too_long").as_int64() == 0);
    CHECK(v.at("batch_tokens").as_int64() == batch);
    CHECK(v.at("pass_seconds").size() == 2);
    CHECK(v.at("sentences_per_second").as_double() > 0);
    CHECK(v.at("tokens_per_second").as_double() > v.at("sentences_per_second").as_double());
    CHECK(v.at("gemm_share").as_double() > 0);
    CHECK(v.at("gemm_share").as_double() <= 1);
    CHECK(v.at("fraction_of_int8_peak_limit").as_double() > 0);
    CHECK(v.at("allocations_during_runs").as_int64() == 0);
    // the phase profile (--op-profile) of the profiled pass: its runs and rows, and times that add up
    const convert::JsonValue& ph = v.at("phase_profile_ms");
    CHECK(ph.at("runs").as_int64() == (batch == 0 ? 3 : 1));
    CHECK(ph.at("rows").as_int64() == v.at("tokens").as_int64());
    CHECK(ph.at("tokenize").as_double() > 0);
    const double pass = ph.at("profiled_pass").as_double();
    double ops = 0;
    for (const char* k : {"embeddings", "qkv_gemm", "attention_core", "attention_output_gemm", "add_layernorm_1",
                          "ffn_up_gemm", "gelu", "ffn_down_gemm", "add_layernorm_2", "task_head"}) {
      CHECK(ph.at(k).as_double() >= 0);
      ops += ph.at(k).as_double();
    }
    CHECK(ops > 0);
    CHECK(ops + ph.at("tokenize").as_double() <= pass);
    CHECK(ph.at("xnnpack_setup").as_double() <= ph.at("qkv_gemm").as_double() + ph.at("attention_output_gemm").as_double() +
                                                   ph.at("ffn_up_gemm").as_double() + ph.at("ffn_down_gemm").as_double() +
                                                   ph.at("task_head").as_double());
    CHECK(ph.at("executor_between_ops").as_double() >= -0.01);
    const auto ids = edgebert::test::read_bytes(tmp + ".ids");
    const std::string text(ids.begin(), ids.end());
    CHECK(std::count(text.begin(), text.end(), '\n') == 3);
    CHECK(text.rfind("101 ", 0) == 0);  // [CLS] first
    // tokens: the ids written, one per token
    CHECK(v.at("tokens").as_int64() == static_cast<int64_t>(std::count(text.begin(), text.end(), ' ') + 3));
  }
  std::remove((tmp + ".txt").c_str());
  std::remove((tmp + ".ids").c_str());
  std::remove((tmp + ".json").c_str());
}
