// SPDX-License-Identifier: Apache-2.0
// Unit tests for converter/checkpoint: JSON parser, mapped files, safetensors (single, sharded,
// F32/F16/BF16, every malformed case), HuggingFace BERT directories (config.json, name
// resolution, shapes, vocab) and a truncation / byte-flip robustness sweep. All data is written
// from this file into a fresh temp dir.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/checkpoint/json.h"
#include "converter/checkpoint/mapped_file.h"
#include "converter/checkpoint/safetensors.h"

using namespace edgebert::convert;
namespace fs = std::filesystem;

namespace {

// ---- temp dir + file helpers

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/eb_ckpt_test_XXXXXX";
    char* p = mkdtemp(tmpl);
    REQUIRE(p != nullptr);
    path = p;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  std::string subdir(const std::string& name) const {
    const std::string d = path + "/" + name;
    fs::create_directories(d);
    return d;
  }
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  REQUIRE(f.good());
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

// ---- safetensors writer

struct T {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}

std::string f32_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t b;
    std::memcpy(&b, &v[i], 4);
    for (int k = 0; k < 4; ++k) s[4 * i + k] = static_cast<char>((b >> (8 * k)) & 0xFF);
  }
  return s;
}

std::string u16_bytes(const std::vector<uint16_t>& v) {
  std::string s(v.size() * 2, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    s[2 * i] = static_cast<char>(v[i] & 0xFF);
    s[2 * i + 1] = static_cast<char>(v[i] >> 8);
  }
  return s;
}

std::string shape_json(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string container(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

std::string make_st(const std::vector<T>& tensors, bool metadata = true) {
  std::string header = "{";
  std::string data;
  if (metadata) header += "\"__metadata__\":{\"format\":\"pt\"}";
  for (const T& t : tensors) {
    if (header.size() > 1) header += ",";
    header += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":" + shape_json(t.shape) +
              ",\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  while (header.size() % 8) header += ' ';  // padding as the reference writer does
  return container(header, data);
}

// A header with one tensor entry of our choosing and `data_size` bytes of data.
std::string one_entry(const std::string& entry, size_t data_size) {
  return container("{\"w\":" + entry + "}", std::string(data_size, '\x01'));
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const CheckpointError& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    return msg;
  }
  FAIL("expected a CheckpointError");
  return "";
}

#define REQUIRE_ERROR_HAS(expr, ...)                                   \
  do {                                                                 \
    const std::string msg_ = error_of([&] { (void)(expr); });          \
    INFO("message: " << msg_);                                         \
    for (const std::string& part_ : std::initializer_list<std::string>{__VA_ARGS__}) { \
      CHECK(msg_.find(part_) != std::string::npos);                    \
    }                                                                  \
  } while (0)

std::vector<float> read(const SafetensorsCheckpoint& ck, const std::string& name) {
  std::vector<float> out;
  ck.read_f32(name, out);
  return out;
}

// ---- a tiny BERT directory

constexpr int kH = 4, kHeads = 2, kL = 1, kI = 8, kV = 10, kP = 16;

std::string config_json(const std::string& extra = "", const std::string& model_type = "bert") {
  return "{\"model_type\":\"" + model_type +
         "\",\"hidden_size\":4,\"num_attention_heads\":2,"
         "\"num_hidden_layers\":1,\"intermediate_size\":8,\"vocab_size\":10,"
         "\"max_position_embeddings\":16,\"type_vocab_size\":2,\"layer_norm_eps\":1e-12,"
         "\"hidden_act\":\"gelu\",\"architectures\":[\"BertModel\"]" +
         extra + "}";
}

std::vector<float> iota(size_t n, float start = 0.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + 0.5f * static_cast<float>(i);
  return v;
}

std::vector<T> bert_tensors(const std::string& prefix, bool legacy_ln = false) {
  const std::string g = legacy_ln ? "gamma" : "weight", b = legacy_ln ? "beta" : "bias";
  return {
      {prefix + "embeddings.word_embeddings.weight", "F32", {kV, kH}, f32_bytes(iota(kV * kH))},
      {prefix + "embeddings.LayerNorm." + g, "F32", {kH}, f32_bytes(iota(kH, 1))},
      {prefix + "embeddings.LayerNorm." + b, "F32", {kH}, f32_bytes(iota(kH, 2))},
      {prefix + "encoder.layer.0.attention.self.query.weight", "F32", {kH, kH},
       f32_bytes(iota(kH * kH, 3))},
      {prefix + "encoder.layer.0.output.LayerNorm." + g, "F32", {kH}, f32_bytes(iota(kH, 4))},
  };
}

std::string make_bert_dir(const TempDir& tmp, const std::string& name,
                          const std::vector<T>& tensors,
                          const std::string& config = config_json()) {
  const std::string d = tmp.subdir(name);
  write_file(d + "/config.json", config);
  write_file(d + "/model.safetensors", make_st(tensors));
  return d;
}

}  // namespace

// =============================================================================================
// JSON

TEST_CASE("json: values, escapes, numbers, lookup", "[json]") {
  const JsonValue v = parse_json(
      " {\"a\": [1, -2, 3.5, 1e3, 9223372036854775807, -9223372036854775808, 0, -0.0],"
      " \"s\": \"x\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20ac\\ud83d\\ude00\","
      " \"t\": true, \"f\": false, \"n\": null, \"o\": {}, \"e\": [], \"u\": \"\xc3\xa9\"} \n",
      "test.json");
  REQUIRE(v.is_object());
  REQUIRE(v.size() == 8);
  const JsonValue& a = v.at("a");
  REQUIRE(a.is_array());
  REQUIRE(a.size() == 8);
  CHECK(a[0].as_int64() == 1);
  CHECK(a[1].as_int64() == -2);
  CHECK(a[2].as_double() == 3.5);
  CHECK_FALSE(a[2].is_integer());
  CHECK(a[3].is_integer());
  CHECK(a[3].as_int64() == 1000);
  CHECK(a[4].as_int64() == std::numeric_limits<int64_t>::max());
  CHECK(a[5].as_int64() == std::numeric_limits<int64_t>::min());
  CHECK(a[6].as_int64() == 0);
  CHECK(v.at("s").as_string() ==
        "x\"\\/\b\f\n\r\tA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  CHECK(v.at("t").as_bool());
  CHECK_FALSE(v.at("f").as_bool());
  CHECK(v.at("n").is_null());
  CHECK(v.at("o").is_object());
  CHECK(v.at("e").is_array());
  CHECK(v.at("u").as_string() == "\xc3\xa9");
  CHECK(v.find("missing") == nullptr);
  CHECK(v.key(0) == "a");
  CHECK(v.key(7) == "u");
  CHECK_THROWS_AS(v.at("missing"), CheckpointError);
  CHECK_THROWS_AS(v.at("s").as_int64(), CheckpointError);
  CHECK_THROWS_AS(v.at("t").as_string(), CheckpointError);
  CHECK_THROWS_AS(a[8], CheckpointError);
  CHECK_THROWS_AS(parse_json("1.5", "x").as_int64(), CheckpointError);
  CHECK(parse_json("18446744073709551616", "x").is_number());  // > int64: double
  CHECK_FALSE(parse_json("18446744073709551616", "x").is_integer());
  CHECK(parse_json("1e-400", "x").as_double() == 0.0);
  CHECK(parse_json("\"\"", "x").as_string().empty());
}

TEST_CASE("json: depth limit", "[json]") {
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  CHECK_NOTHROW(parse_json(ok, "deep.json"));
  const std::string deep = std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  REQUIRE_ERROR_HAS(parse_json(deep, "deep.json"), "deep.json: malformed JSON at byte 64",
                    "nesting");
  // Very deep input must not overflow the stack.
  REQUIRE_ERROR_HAS(parse_json(std::string(1000000, '['), "deep.json"), "deep.json");
}

TEST_CASE("json: malformed inputs", "[json]") {
  struct Case {
    const char* text;
    size_t byte;
  };
  const Case cases[] = {
      {"", 0},                // empty
      {"   ", 3},             // only whitespace
      {"{", 1},               // unterminated object
      {"[1,]", 3},            // trailing comma
      {"{\"a\":1,}", 7},      // trailing comma in object
      {"{\"a\" 1}", 5},       // missing colon
      {"{a:1}", 1},           // unquoted key
      {"[1 2]", 3},           // missing comma
      {"{} x", 3},            // trailing garbage
      {"{}{}", 2},            // two values
      {"01", 1},              // leading zero
      {"-", 1},               // bare minus
      {"1.", 2},              // no fraction digits
      {".5", 0},              // no integer part
      {"1e", 2},              // no exponent digits
      {"+1", 0},              // plus sign
      {"1e999", 0},           // overflow
      {"NaN", 0},             // not JSON
      {"tru", 3},             // truncated literal
      {"nul", 3},             // truncated literal
      {"\"abc", 0},           // unterminated string
      {"\"a\nb\"", 2},        // raw control char
      {"\"\\x\"", 1},         // bad escape
      {"\"\\u12G4\"", 5},     // bad hex
      {"\"\\u12\"", 1},       // truncated \u
      {"\"\\ud800\"", 1},     // lone high surrogate
      {"\"\\ud800\\u0041\"", 1},  // high surrogate + non-low
      {"\"\\udc00\"", 1},     // lone low surrogate
      {"\"\xff\"", 1},        // invalid UTF-8 byte
      {"\"\xc3\"", 1},        // truncated UTF-8
      {"\"\xc0\xaf\"", 1},    // overlong
      {"\"\xed\xa0\x80\"", 1},  // UTF-8-encoded surrogate
      {"{\"a\":1,\"a\":2}", 7},  // duplicate key
      {"[\"\\", 1},           // truncated escape (string starts at byte 1)
  };
  for (const Case& c : cases) {
    INFO("input: " << c.text);
    REQUIRE_ERROR_HAS(parse_json(c.text, "bad.json"),
                      ("bad.json: malformed JSON at byte " + std::to_string(c.byte) + ":").c_str());
  }
  // Embedded NUL and bytes outside strings.
  REQUIRE_ERROR_HAS(parse_json(std::string("{\0}", 3), "bad.json"), "bad.json: malformed JSON");
  REQUIRE_ERROR_HAS(parse_json("\xef\xbb\xbf{}", "bad.json"), "byte 0", "unexpected byte 0xef");
}

// =============================================================================================
// MappedFile

TEST_CASE("mapped file: contents, empty file, missing file, directory", "[mapped]") {
  TempDir tmp;
  write_file(tmp / "a.bin", "hello");
  const MappedFile a = MappedFile::open(tmp / "a.bin");
  CHECK(a.size() == 5);
  CHECK(a.view() == "hello");

  write_file(tmp / "empty.bin", "");
  MappedFile e = MappedFile::open(tmp / "empty.bin");
  CHECK(e.size() == 0);
  CHECK(e.data() != nullptr);
  MappedFile moved = std::move(e);
  CHECK(moved.size() == 0);

  REQUIRE_ERROR_HAS(MappedFile::open(tmp / "nope.bin"), (tmp / "nope.bin").c_str(),
                    ": cannot open: No such file or directory");
  REQUIRE_ERROR_HAS(MappedFile::open(tmp.path), ": cannot open: is a directory");
}

// =============================================================================================
// safetensors: valid files

TEST_CASE("f16 / bf16 conversion", "[safetensors]") {
  CHECK(f16_to_f32(0x0000) == 0.0f);
  CHECK(std::signbit(f16_to_f32(0x8000)));
  CHECK(f16_to_f32(0x8000) == 0.0f);
  CHECK(f16_to_f32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(f16_to_f32(0x03FF) == std::ldexp(1023.0f, -24));  // largest subnormal
  CHECK(f16_to_f32(0x8001) == -std::ldexp(1.0f, -24));
  CHECK(f16_to_f32(0x0400) == std::ldexp(1.0f, -14));  // smallest normal
  CHECK(f16_to_f32(0x3C00) == 1.0f);
  CHECK(f16_to_f32(0x3C01) == 1.0f + std::ldexp(1.0f, -10));
  CHECK(f16_to_f32(0xC000) == -2.0f);
  CHECK(f16_to_f32(0x3555) == 0.333251953125f);
  CHECK(f16_to_f32(0x7BFF) == 65504.0f);
  CHECK(std::isinf(f16_to_f32(0x7C00)));
  CHECK(f16_to_f32(0x7C00) > 0);
  CHECK(std::isinf(f16_to_f32(0xFC00)));
  CHECK(f16_to_f32(0xFC00) < 0);
  CHECK(std::isnan(f16_to_f32(0x7E00)));
  CHECK(std::isnan(f16_to_f32(0x7C01)));
  CHECK(std::isnan(f16_to_f32(0xFE00)));

  CHECK(bf16_to_f32(0x3F80) == 1.0f);
  CHECK(bf16_to_f32(0xC040) == -3.0f);
  CHECK(bf16_to_f32(0x0001) == std::ldexp(1.0f, -133));  // subnormal
  CHECK(std::isinf(bf16_to_f32(0x7F80)));
  CHECK(std::isnan(bf16_to_f32(0x7FC0)));
}

TEST_CASE("safetensors: single file F32 / F16 / BF16 round trip", "[safetensors]") {
  TempDir tmp;
  const std::vector<float> f32 = {0.0f, -1.5f, 3.14159265f, 1e-30f, -65504.0f, 1e30f};
  const std::vector<uint16_t> f16 = {0x0000, 0x3C00, 0xC000, 0x0001, 0x7BFF, 0xFBFF};
  const std::vector<uint16_t> bf16 = {0x3F80, 0xBF80, 0x4049, 0x0000, 0x7F7F, 0xFF7F};
  write_file(tmp / "model.safetensors",
             make_st({{"a.f32", "F32", {2, 3}, f32_bytes(f32)},
                      {"b.f16", "F16", {6}, u16_bytes(f16)},
                      {"c.bf16", "BF16", {3, 1, 2}, u16_bytes(bf16)},
                      {"d.ids", "I64", {1, 3}, std::string(24, '\0')},
                      {"e.scalar", "F32", {}, f32_bytes({7.0f})},
                      {"f.empty", "F32", {0, 5}, ""},
                      {"g.nan", "F32", {3}, f32_bytes({1.0f, std::nanf(""), 2.0f})},
                      {"h.inf", "F16", {2}, u16_bytes({0x3C00, 0x7C00})},
                      {"i.ninf", "BF16", {1}, u16_bytes({0xFF80})}}));

  for (int via_dir = 0; via_dir < 2; ++via_dir) {
    const SafetensorsCheckpoint ck = via_dir ? SafetensorsCheckpoint::open_dir(tmp.path)
                                             : SafetensorsCheckpoint::open_file(tmp / "model.safetensors");
    CHECK(ck.names() == std::vector<std::string>{"a.f32", "b.f16", "c.bf16", "d.ids", "e.scalar", "f.empty",
                                                  "g.nan", "h.inf", "i.ninf"});
    CHECK(ck.has("a.f32"));
    CHECK_FALSE(ck.has("__metadata__"));
    CHECK(ck.find("zzz") == nullptr);
    CHECK(ck.source() == tmp / "model.safetensors");

    const TensorInfo* a = ck.find("a.f32");
    REQUIRE(a);
    CHECK(a->dtype == DType::F32);
    CHECK(a->shape == std::vector<int64_t>{2, 3});
    CHECK(a->nbytes == 24);
    CHECK(a->numel() == 6);
    CHECK(a->file == tmp / "model.safetensors");
    CHECK(read(ck, "a.f32") == f32);

    const std::vector<float> h = read(ck, "b.f16");
    REQUIRE(h.size() == 6);
    for (size_t i = 0; i < h.size(); ++i) CHECK(h[i] == f16_to_f32(f16[i]));
    CHECK(h[1] == 1.0f);
    CHECK(h[3] == std::ldexp(1.0f, -24));
    CHECK(h[5] == -65504.0f);

    const std::vector<float> b = read(ck, "c.bf16");
    REQUIRE(b.size() == 6);
    CHECK(b[0] == 1.0f);
    CHECK(b[1] == -1.0f);
    CHECK(b[2] == 3.140625f);
    CHECK(std::isfinite(b[5]));
    CHECK(ck.find("c.bf16")->dtype == DType::BF16);

    CHECK(read(ck, "e.scalar") == std::vector<float>{7.0f});
    CHECK(read(ck, "f.empty").empty());

    REQUIRE_ERROR_HAS(read(ck, "d.ids"), (tmp / "model.safetensors").c_str(), "'d.ids'",
                      "unsupported dtype I64");
    // a weight that is not finite would make transformers' outputs NaN: refused by name and place
    REQUIRE_ERROR_HAS(read(ck, "g.nan"), "tensor 'g.nan' holds a non-finite value (NaN) at element 1");
    REQUIRE_ERROR_HAS(read(ck, "h.inf"), "tensor 'h.inf' holds a non-finite value (+Inf) at element 1");
    REQUIRE_ERROR_HAS(read(ck, "i.ninf"), "tensor 'i.ninf' holds a non-finite value (-Inf) at element 0");
    REQUIRE_ERROR_HAS(read(ck, "nope"), (tmp / "model.safetensors").c_str(),
                      "missing tensor 'nope'");
  }
}

TEST_CASE("safetensors: all known dtypes parse", "[safetensors]") {
  TempDir tmp;
  const char* names[] = {"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16",
                         "F16",  "BF16", "I32", "U32", "F32", "F64", "I64", "U64"};
  std::vector<T> ts;
  for (const char* n : names) {
    DType d;
    REQUIRE(parse_dtype(n, &d));
    CHECK(std::string(dtype_name(d)) == n);
    ts.push_back({std::string("t_") + n, n, {3}, std::string(3 * dtype_size(d), '\0')});
  }
  write_file(tmp / "x.safetensors", make_st(ts, false));
  const auto ck = SafetensorsCheckpoint::open_file(tmp / "x.safetensors");
  CHECK(ck.size() == 15);
  REQUIRE_ERROR_HAS(read(ck, "t_F64"), "x.safetensors: tensor 't_F64': unsupported dtype F64");
  REQUIRE_ERROR_HAS(read(ck, "t_BOOL"), "unsupported dtype BOOL");
}

TEST_CASE("safetensors: sharded directory with index.json", "[safetensors]") {
  TempDir tmp;
  write_file(tmp / "model-00001-of-00002.safetensors",
             make_st({{"a", "F32", {2}, f32_bytes({1, 2})},
                      {"b", "F16", {1}, u16_bytes({0x3C00})},
                      {"stray", "F32", {1}, f32_bytes({9})}}));
  write_file(tmp / "model-00002-of-00002.safetensors",
             make_st({{"c", "BF16", {2}, u16_bytes({0x4000, 0x4040})}}));
  write_file(tmp / "model.safetensors.index.json",
             "{\"metadata\":{\"total_size\":14},\"weight_map\":{"
             "\"a\":\"model-00001-of-00002.safetensors\","
             "\"b\":\"model-00001-of-00002.safetensors\","
             "\"c\":\"model-00002-of-00002.safetensors\"}}");
  // An index takes precedence over a stale single file.
  write_file(tmp / "model.safetensors", "garbage");

  auto ck = SafetensorsCheckpoint::open_dir(tmp.path);
  CHECK(ck.names() == std::vector<std::string>{"a", "b", "c"});
  CHECK(ck.source() == tmp / "model.safetensors.index.json");
  CHECK(read(ck, "a") == std::vector<float>{1, 2});
  CHECK(read(ck, "b") == std::vector<float>{1});
  CHECK(read(ck, "c") == std::vector<float>{2, 3});
  CHECK(ck.find("c")->file == tmp / "model-00002-of-00002.safetensors");
  CHECK(ck.find("a")->file == tmp / "model-00001-of-00002.safetensors");
  CHECK_FALSE(ck.has("stray"));

  // Move keeps the mappings valid.
  SafetensorsCheckpoint moved = std::move(ck);
  CHECK(read(moved, "c") == std::vector<float>{2, 3});
}

TEST_CASE("safetensors: sharded error cases", "[safetensors]") {
  TempDir tmp;
  const std::string shard = make_st({{"a", "F32", {1}, f32_bytes({1})}});

  const std::string d1 = tmp.subdir("missing_shard");
  write_file(d1 + "/s1.safetensors", shard);
  write_file(d1 + "/model.safetensors.index.json",
             "{\"weight_map\":{\"a\":\"s1.safetensors\",\"b\":\"s2.safetensors\"}}");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d1), "model.safetensors.index.json",
                    "'b'", "'s2.safetensors'", "No such file or directory");

  const std::string d2 = tmp.subdir("missing_tensor");
  write_file(d2 + "/s1.safetensors", shard);
  write_file(d2 + "/model.safetensors.index.json",
             "{\"weight_map\":{\"a\":\"s1.safetensors\",\"zz\":\"s1.safetensors\"}}");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d2), (d2 + "/s1.safetensors").c_str(),
                    "missing tensor 'zz'");

  const std::string d3 = tmp.subdir("bad_index");
  write_file(d3 + "/model.safetensors.index.json", "{\"weight_map\": [}");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d3),
                    (d3 + "/model.safetensors.index.json: malformed JSON at byte").c_str());
  write_file(d3 + "/model.safetensors.index.json", "{\"metadata\":{}}");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d3), "index.json: missing 'weight_map'");
  write_file(d3 + "/model.safetensors.index.json", "{\"weight_map\":{}}");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d3), "'weight_map' is empty");
  write_file(d3 + "/model.safetensors.index.json", "{\"weight_map\":{\"a\":3}}");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d3), "tensor 'a' is not a string");
  write_file(d3 + "/model.safetensors.index.json", "{\"weight_map\":{\"a\":\"../x\"}}");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d3), "not a plain file name");

  const std::string d4 = tmp.subdir("bad_shard");
  write_file(d4 + "/s1.safetensors", le64(3) + "{}");
  write_file(d4 + "/model.safetensors.index.json", "{\"weight_map\":{\"a\":\"s1.safetensors\"}}");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d4), (d4 + "/s1.safetensors").c_str(),
                    "exceeds the file size");

  const std::string d5 = tmp.subdir("empty");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d5),
                    (d5 + ": no model.safetensors or model.safetensors.index.json").c_str());
  write_file(d5 + "/pytorch_model.bin", "x");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(d5), "found pytorch_model.bin");
  REQUIRE_ERROR_HAS(SafetensorsCheckpoint::open_dir(tmp / "does_not_exist"),
                    "does_not_exist: no model.safetensors");
}

// =============================================================================================
// safetensors: malformed single files

TEST_CASE("safetensors: malformed files name the file and tensor", "[safetensors]") {
  TempDir tmp;
  const std::string p = tmp / "model.safetensors";
  auto open_bytes = [&](const std::string& bytes) {
    write_file(p, bytes);
    return SafetensorsCheckpoint::open_file(p);
  };
  const std::string W = p + ": tensor 'w': ";

  // Header length problems.
  REQUIRE_ERROR_HAS(open_bytes(""), (p + ": file too small").c_str());
  REQUIRE_ERROR_HAS(open_bytes("\x02\0\0"), (p + ": file too small").c_str());
  REQUIRE_ERROR_HAS(open_bytes(le64(0) + "{}"), (p + ": safetensors header length is 0").c_str());
  REQUIRE_ERROR_HAS(open_bytes(le64(100) + "{}"),
                    (p + ": safetensors header length 100 exceeds the file size (10 bytes)").c_str());
  REQUIRE_ERROR_HAS(open_bytes(le64(~0ull) + "{}"), (p + ": safetensors header length").c_str(),
                    "limit");
  REQUIRE_ERROR_HAS(open_bytes(le64(200ull * 1000 * 1000) + "{}"), "exceeds the limit");
  REQUIRE_ERROR_HAS(open_bytes("PK\x03\x04garbage-not-safetensors"), p.c_str());
  REQUIRE_ERROR_HAS(open_bytes(le64(1) + "{}"), (p + ": header: malformed JSON at byte 1").c_str());

  // Header JSON problems.
  REQUIRE_ERROR_HAS(open_bytes(container("[1,2]", "")), (p + ": safetensors header is a JSON array").c_str());
  REQUIRE_ERROR_HAS(open_bytes(container("{\"w\":", "")), (p + ": header: malformed JSON").c_str());
  REQUIRE_ERROR_HAS(open_bytes(container("{\"w\":{}} trailing", "")), "trailing characters");
  REQUIRE_ERROR_HAS(open_bytes(container(std::string("{\0}", 3), "")), "malformed JSON");
  REQUIRE_ERROR_HAS(open_bytes(container("{\"__metadata__\":{\"a\":1}}", "")),
                    (p + ": __metadata__ must be an object of strings").c_str());
  REQUIRE_ERROR_HAS(open_bytes(container("{\"__metadata__\":[]}", "")), "__metadata__");

  // Entry field problems.
  REQUIRE_ERROR_HAS(open_bytes(one_entry("3", 0)), (W + "header entry is a JSON number").c_str());
  REQUIRE_ERROR_HAS(open_bytes(one_entry("{\"shape\":[1],\"data_offsets\":[0,4]}", 4)),
                    (W + "missing 'dtype'").c_str());
  REQUIRE_ERROR_HAS(open_bytes(one_entry("{\"dtype\":5,\"shape\":[1],\"data_offsets\":[0,4]}", 4)),
                    (W + "'dtype' is not a string").c_str());
  REQUIRE_ERROR_HAS(
      open_bytes(one_entry("{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,4]}", 4)),
      (W + "unknown dtype 'Q7'").c_str());
  REQUIRE_ERROR_HAS(
      open_bytes(one_entry("{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}", 4)),
      (W + "unknown dtype 'f32'").c_str());
  REQUIRE_ERROR_HAS(open_bytes(one_entry("{\"dtype\":\"F32\",\"data_offsets\":[0,4]}", 4)),
                    (W + "missing 'shape'").c_str());
  for (const char* bad_shape : {"[-1]", "[1.5]", "\"1\"", "[\"1\"]", "{}", "[99999999999999999999]"}) {
    INFO(bad_shape);
    REQUIRE_ERROR_HAS(open_bytes(one_entry(std::string("{\"dtype\":\"F32\",\"shape\":") +
                                               bad_shape + ",\"data_offsets\":[0,4]}",
                                           4)),
                      (W + "'shape' must be an array of non-negative integers").c_str());
  }
  REQUIRE_ERROR_HAS(open_bytes(one_entry("{\"dtype\":\"F32\",\"shape\":[1]}", 4)),
                    (W + "missing 'data_offsets'").c_str());
  for (const char* bad_offs : {"[0]", "[0,4,8]", "[-4,0]", "[0,\"4\"]", "4", "[0,1e30]"}) {
    INFO(bad_offs);
    REQUIRE_ERROR_HAS(open_bytes(one_entry(std::string("{\"dtype\":\"F32\",\"shape\":[1],"
                                                       "\"data_offsets\":") +
                                               bad_offs + "}",
                                           4)),
                      (W + "'data_offsets' must be an array of two non-negative integers").c_str());
  }

  // Offsets and sizes.
  REQUIRE_ERROR_HAS(
      open_bytes(one_entry("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}", 8)),
      (W + "data_offsets [8, 4] have begin > end").c_str());
  REQUIRE_ERROR_HAS(
      open_bytes(one_entry("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,99999999]}", 4)),
      (W + "data_offsets [0, 99999999] exceed the file's data section (4 bytes)").c_str());
  REQUIRE_ERROR_HAS(
      open_bytes(one_entry("{\"dtype\":\"F32\",\"shape\":[1],"
                           "\"data_offsets\":[9223372036854775800,9223372036854775807]}",
                           4)),
      (W + "data_offsets").c_str(), "exceed the file's data section");
  REQUIRE_ERROR_HAS(
      open_bytes(one_entry("{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}", 20)),
      (W + "shape [2, 3] with dtype F32 needs 24 bytes but data_offsets [0, 20] span 20 bytes")
          .c_str());
  REQUIRE_ERROR_HAS(
      open_bytes(one_entry("{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,4]}", 4)),
      (W + "shape [3] with dtype F16 needs 6 bytes").c_str());
  REQUIRE_ERROR_HAS(
      open_bytes(one_entry("{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
                           "\"data_offsets\":[0,4]}",
                           4)),
      (W + "shape [4294967296, 4294967296] is too large").c_str());
  REQUIRE_ERROR_HAS(
      open_bytes(one_entry("{\"dtype\":\"F64\",\"shape\":[2305843009213693952],"
                           "\"data_offsets\":[0,4]}",
                           4)),
      "is too large");
  // A zero dimension makes the product 0 even next to huge ones.
  CHECK_NOTHROW(open_bytes(one_entry(
      "{\"dtype\":\"F32\",\"shape\":[9223372036854775807,0,9223372036854775807],"
      "\"data_offsets\":[0,0]}",
      0)));

  // Truncated data section: a valid file cut short.
  const std::string good = make_st({{"w", "F32", {4}, f32_bytes({1, 2, 3, 4})}});
  REQUIRE_ERROR_HAS(open_bytes(good.substr(0, good.size() - 1)),
                    (W + "data_offsets [0, 16] exceed the file's data section (15 bytes)").c_str());

  // Control characters in a tensor name stay on one line.
  const std::string nl = error_of([&] {
    open_bytes(container("{\"a\\nb\":{\"dtype\":\"X\",\"shape\":[],\"data_offsets\":[0,0]}}", ""));
  });
  CHECK(nl.find("'a\\x0ab'") != std::string::npos);
  REQUIRE_ERROR_HAS(open_bytes(container("{\"\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}",
                                         "abcd")),
                    "empty tensor name");
}

TEST_CASE("safetensors: truncation and byte-flip sweep never crashes", "[safetensors][fuzz]") {
  TempDir tmp;
  const std::string good = make_st({{"a", "F32", {2, 2}, f32_bytes({1, 2, 3, 4})},
                                    {"b", "F16", {3}, u16_bytes({0x3C00, 0x7C00, 0x0001})},
                                    {"c", "BF16", {1}, u16_bytes({0x3F80})}});
  const std::string p = tmp / "f.safetensors";
  size_t parsed = 0, rejected = 0;
  auto attempt = [&](const std::string& bytes) {
    write_file(p, bytes);
    try {
      const auto ck = SafetensorsCheckpoint::open_file(p);
      for (const std::string& n : ck.names()) {
        std::vector<float> out;
        try {
          ck.read_f32(n, out);
        } catch (const CheckpointError&) {
        }
        CHECK(out.size() == ck.find(n)->numel());
      }
      ++parsed;
    } catch (const CheckpointError& e) {
      const std::string msg = e.what();
      CHECK(msg.find(p) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
      ++rejected;
    }
  };

  for (size_t len = 0; len < good.size(); ++len) attempt(good.substr(0, len));
  CHECK(parsed == 0);  // every truncation is detected
  rejected = 0;

  const uint64_t header_len = 8 + static_cast<uint64_t>(static_cast<unsigned char>(good[0]));
  REQUIRE(header_len < good.size());
  for (size_t i = 0; i < header_len; ++i) {
    for (unsigned char x : {0x01, 0x02, 0x10, 0x20, 0x80, 0xFF}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      attempt(bad);
    }
  }
  CHECK(rejected > 0);
  CHECK(parsed > 0);  // e.g. flips inside padding or metadata strings
  attempt(good);
}

// =============================================================================================
// HuggingFace BERT directory

TEST_CASE("hf: config.json parsing", "[hf]") {
  TempDir tmp;
  const std::string p = tmp / "config.json";
  write_file(p, config_json(",\"id2label\":{\"0\":\"NEG\",\"1\":\"POS\",\"2\":\"NEU\"}"));
  BertConfig c = read_bert_config(p);
  CHECK(c.hidden_size == kH);
  CHECK(c.num_attention_heads == kHeads);
  CHECK(c.num_hidden_layers == kL);
  CHECK(c.intermediate_size == kI);
  CHECK(c.vocab_size == kV);
  CHECK(c.max_position_embeddings == kP);
  CHECK(c.type_vocab_size == 2);
  CHECK(c.layer_norm_eps == 1e-12f);
  CHECK(c.hidden_act == "gelu");
  CHECK(c.num_labels == 3);
  CHECK(c.has_id2label);
  CHECK(c.architectures == std::vector<std::string>{"BertModel"});

  // Defaults.
  write_file(p, "{\"model_type\":\"bert\",\"hidden_size\":8,\"num_attention_heads\":2,"
                "\"num_hidden_layers\":2,\"intermediate_size\":16,\"vocab_size\":5,"
                "\"max_position_embeddings\":4,\"num_labels\":7,\"position_embedding_type\":\"absolute\"}");
  c = read_bert_config(p);
  CHECK(c.type_vocab_size == 2);
  CHECK(c.layer_norm_eps == 1e-12f);
  CHECK(c.hidden_act == "gelu");
  CHECK(c.num_labels == 7);
  CHECK_FALSE(c.has_id2label);
  CHECK(c.architectures.empty());

  // Activations, label names, DistilBERT keys.
  for (const auto& [act, want] : {std::pair<const char*, HiddenAct>{"relu", HiddenAct::kRelu},
                                  {"gelu_new", HiddenAct::kGeluTanh},
                                  {"gelu_pytorch_tanh", HiddenAct::kGeluTanh},
                                  {"gelu", HiddenAct::kGelu}}) {
    write_file(p, "{\"model_type\":\"bert\",\"hidden_size\":8,\"num_attention_heads\":2,\"num_hidden_layers\":2,"
                  "\"intermediate_size\":16,\"vocab_size\":5,\"max_position_embeddings\":4,\"hidden_act\":\"" +
                      std::string(act) + "\",\"id2label\":{\"1\":\"pos\",\"0\":\"neg\"}}");
    c = read_bert_config(p);
    CHECK(c.activation == want);
    CHECK(c.id2label == std::vector<std::string>{"neg", "pos"});
    CHECK(c.num_labels == 2);
  }
  write_file(p, "{\"model_type\":\"distilbert\",\"dim\":8,\"n_heads\":2,\"n_layers\":3,\"hidden_dim\":16,"
                "\"vocab_size\":5,\"max_position_embeddings\":4,\"activation\":\"relu\","
                "\"hidden_size\":999,\"architectures\":[\"DistilBertModel\"]}");
  c = read_bert_config(p);
  CHECK(c.is_distilbert());
  CHECK(c.hidden_size == 8);
  CHECK(c.num_attention_heads == 2);
  CHECK(c.num_hidden_layers == 3);
  CHECK(c.intermediate_size == 16);
  CHECK(c.type_vocab_size == 0);
  CHECK_FALSE(c.has_token_types());
  CHECK(c.activation == HiddenAct::kRelu);
  CHECK(c.layer_norm_eps == 1e-12f);

  write_file(p, config_json(",\"layer_norm_eps\":1e-5,\"type_vocab_size\":1"));
  // Duplicate key rejected (config_json already has both keys).
  REQUIRE_ERROR_HAS(read_bert_config(p), (p + ": malformed JSON").c_str(), "duplicate key");
}

TEST_CASE("hf: Qwen3 and Gemma 3 keys absent from config.json take transformers' defaults", "[hf]") {
  TempDir tmp;
  const std::string p = tmp / "config.json";
  const std::string ints = "\"hidden_size\":64,\"num_attention_heads\":32,\"num_hidden_layers\":2,"
                           "\"intermediate_size\":8,\"vocab_size\":10,\"max_position_embeddings\":16";
  // Qwen3Config: head_dim 128, num_key_value_heads 32, rope_theta 10000 (not the 1e6 of the released models)
  write_file(p, "{\"model_type\":\"qwen3\"," + ints + "}");
  BertConfig c = read_bert_config(p);
  CHECK(c.family.head_dim == 128);
  CHECK(c.family.num_key_value_heads == 32);
  CHECK(c.family.rotary_theta == 10000.0);
  // null KV heads: one per query head; sliding windows that reach no layer are accepted
  write_file(p, "{\"model_type\":\"qwen3\"," + ints + ",\"num_key_value_heads\":null,\"use_sliding_window\":true,"
                "\"max_window_layers\":2}");
  c = read_bert_config(p);
  CHECK(c.family.num_key_value_heads == 32);
  write_file(p, "{\"model_type\":\"qwen3\"," + ints + ",\"use_sliding_window\":true,\"sliding_window\":null,"
                "\"max_window_layers\":1}");
  CHECK(read_bert_config(p).family.causal);
  // Gemma3TextConfig: head_dim 256, num_key_value_heads 4, rope_theta 1e6, local 1e4, window 4096
  write_file(p, "{\"model_type\":\"gemma3_text\"," + ints + ",\"use_bidirectional_attention\":true}");
  c = read_bert_config(p);
  CHECK(c.family.head_dim == 256);
  CHECK(c.family.num_key_value_heads == 4);
  CHECK(c.family.rotary_theta == 1000000.0);
  CHECK(c.family.rotary_local_theta == 10000.0);
  CHECK(c.family.local_attention == 4096);
}

TEST_CASE("hf: nomic-bert and ModernBERT keys as their modeling code reads them", "[hf]") {
  TempDir tmp;
  const std::string p = tmp / "config.json";
  // nomic-bert: a gated FFN without n_inner is int(8 * n_embd / 3) rounded up to 256 wide; plain 4 x
  const std::string nomic = "{\"model_type\":\"nomic_bert\",\"n_embd\":96,\"n_head\":2,\"n_layer\":1,"
                            "\"vocab_size\":10,\"rotary_emb_fraction\":1.0";
  write_file(p, nomic + ",\"activation_function\":\"swiglu\"}");
  CHECK(read_bert_config(p).intermediate_size == 256);
  write_file(p, nomic + ",\"activation_function\":\"swiglu\",\"n_inner\":300}");
  CHECK(read_bert_config(p).intermediate_size == 512);
  write_file(p, nomic + ",\"activation_function\":\"gelu\"}");
  CHECK(read_bert_config(p).intermediate_size == 384);
  write_file(p, "{\"model_type\":\"nomic_bert\",\"n_embd\":400,\"n_head\":4,\"n_layer\":1,\"vocab_size\":10,"
                "\"rotary_emb_fraction\":1.0,\"activation_function\":\"swiglu\"}");
  CHECK(read_bert_config(p).intermediate_size == 1280);  // 1066 -> 1280
  // ModernBERT: local_rope_theta null is the global theta (transformers 4.48+), absent 10000
  const std::string mb = "{\"model_type\":\"modernbert\",\"hidden_size\":4,\"num_attention_heads\":2,"
                         "\"num_hidden_layers\":1,\"intermediate_size\":8,\"vocab_size\":10,"
                         "\"max_position_embeddings\":16,\"global_rope_theta\":20000.0";
  write_file(p, mb + ",\"local_rope_theta\":null}");
  CHECK(read_bert_config(p).family.rotary_local_theta == 20000.0);
  write_file(p, mb + "}");
  CHECK(read_bert_config(p).family.rotary_local_theta == 10000.0);
}

TEST_CASE("hf: config.json errors", "[hf]") {
  TempDir tmp;
  const std::string p = tmp / "config.json";
  auto cfg_err = [&](const std::string& text, std::initializer_list<const char*> parts) {
    write_file(p, text);
    const std::string msg = error_of([&] { read_bert_config(p); });
    INFO("config: " << text << "\nmessage: " << msg);
    CHECK(msg.rfind(p + ": ", 0) == 0);
    for (const char* part : parts) CHECK(msg.find(part) != std::string::npos);
  };
  const std::string base_ints =
      "\"hidden_size\":4,\"num_attention_heads\":2,\"num_hidden_layers\":1,"
      "\"intermediate_size\":8,\"vocab_size\":10,\"max_position_embeddings\":16";

  REQUIRE_ERROR_HAS(read_bert_config(tmp / "nope.json"), "nope.json: cannot open");
  cfg_err(config_json("", "deberta-v2"), {"unsupported model_type 'deberta-v2' (bert, distilbert, roberta, xlm-roberta, "
                                            "camembert, electra, albert, nomic_bert, modernbert, qwen3, gemma3_text)"});
  // the other families' readers (issue 18): what they do not support is a one-line error
  cfg_err(config_json(",\"num_hidden_groups\":2", "albert"), {"num_hidden_groups 2 exceeds num_hidden_layers 1"});
  cfg_err(config_json(",\"net_structure_type\":1", "albert"), {"unsupported ALBERT option 'net_structure_type'"});
  cfg_err(config_json(",\"pad_token_id\":15", "roberta"), {"leaves no positions after padding_idx 15"});
  cfg_err("{\"model_type\":\"electra\"," + base_ints + ",\"hidden_act\":\"silu\"}", {"unsupported hidden_act 'silu'"});
  const std::string nomic = "{\"model_type\":\"nomic_bert\",\"n_embd\":8,\"n_head\":2,\"n_layer\":1,"
                            "\"vocab_size\":10,\"rotary_emb_fraction\":1.0";
  cfg_err(nomic + ",\"causal\":true}", {"unsupported nomic-bert option 'causal' (only false)"});
  cfg_err(nomic + ",\"rotary_emb_scale_base\":512}", {"rotary_emb_scale_base"});
  cfg_err(nomic + ",\"activation_function\":\"relu\"}", {"unsupported activation_function 'relu'"});
  cfg_err("{\"model_type\":\"nomic_bert\",\"n_embd\":6,\"n_head\":2,\"n_layer\":1,\"vocab_size\":10,"
          "\"rotary_emb_fraction\":0.5}", {"rotary_emb_fraction 0.500000 x head dim 3 is not a whole number of rotary dims"});
  cfg_err("{\"model_type\":\"nomic_bert\",\"n_embd\":32,\"n_head\":2,\"n_layer\":1,\"vocab_size\":10,"
          "\"rotary_emb_fraction\":0.4}", {"0.400000 x head dim 16 is not a whole number of rotary dims"});
  cfg_err("{\"model_type\":\"nomic_bert\",\"n_embd\":40,\"n_head\":2,\"n_layer\":1,\"vocab_size\":10,"
          "\"rotary_emb_fraction\":0.45}", {"gives 9 rotary dims of head dim 20"});
  const std::string mb = "{\"model_type\":\"modernbert\"," + base_ints;
  cfg_err(mb + ",\"layer_types\":[\"full_attention\",\"x\"]}", {"'layer_types' must be an array of 1 strings"});
  cfg_err(mb + ",\"layer_types\":[\"sliding_attention\"],\"global_attn_every_n_layers\":3}",
          {"'layer_types' entry 0 disagrees with global_attn_every_n_layers 3"});
  cfg_err(mb + ",\"rope_parameters\":{\"full_attention\":{\"rope_type\":\"yarn\"}}}",
          {"rope_parameters.full_attention: unsupported rope_type (only default)"});
  cfg_err(mb + ",\"classifier_pooling\":\"max\"}", {"unsupported classifier_pooling 'max'"});
  cfg_err(mb + ",\"global_rope_theta\":null}", {"'global_rope_theta' is null"});
  // Qwen3 (issue 24): what its modeling code computes and edgebert does not is refused by key
  const std::string qw = "{\"model_type\":\"qwen3\"," + base_ints + ",\"head_dim\":4,\"num_key_value_heads\":2";
  // (sliding layers from max_window_layers on: the default 28 reaches none of 1 layer)
  cfg_err(qw + ",\"use_sliding_window\":true,\"max_window_layers\":0}", {"'max_window_layers' must be a positive integer"});
  std::string two_layers = qw;
  two_layers.replace(two_layers.find("\"num_hidden_layers\":1"), 21, "\"num_hidden_layers\":2");
  cfg_err(two_layers + ",\"use_sliding_window\":true,\"max_window_layers\":1}",
          {"unsupported 'use_sliding_window' true with max_window_layers 1 < num_hidden_layers 2"});
  cfg_err(qw + ",\"layer_types\":[\"sliding_attention\"]}", {"'layer_types' entry 0 is not \"full_attention\""});
  cfg_err(qw + ",\"rope_scaling\":{\"rope_type\":\"yarn\",\"factor\":4.0}}", {"unsupported 'rope_scaling'"});
  cfg_err(qw + ",\"rope_parameters\":{\"rope_type\":\"yarn\"}}", {"rope_parameters: unsupported rope_type"});
  cfg_err(qw + ",\"hidden_act\":\"gelu\"}", {"unsupported hidden_act 'gelu' (Qwen3: silu)"});
  cfg_err("{\"model_type\":\"qwen3\"," + base_ints + ",\"head_dim\":4,\"num_key_value_heads\":3}",
          {"num_key_value_heads 3 does not divide num_attention_heads 2"});
  cfg_err(qw.substr(0, qw.find(",\"head_dim\"")) + ",\"head_dim\":3,\"num_key_value_heads\":2}", {"head_dim 3 must be even"});
  cfg_err(qw + ",\"partial_rotary_factor\":0.5}", {"unsupported 'partial_rotary_factor'"});
  // Gemma 3 (issue 24): only the bidirectional encoder form; soft-capping, rope scaling refused
  // absent keys take transformers' defaults: Qwen3Config's 32 KV heads do not divide 2 query heads
  cfg_err("{\"model_type\":\"qwen3\"," + base_ints + ",\"head_dim\":4}",
          {"num_key_value_heads 32 (absent: transformers' default) does not divide num_attention_heads 2"});
  const std::string gm = "{\"model_type\":\"gemma3_text\"," + base_ints + ",\"head_dim\":4,\"num_key_value_heads\":1";
  const std::string gmb = gm + ",\"use_bidirectional_attention\":true";
  cfg_err(gm + "}", {"unsupported causal Gemma 3 ('use_bidirectional_attention' is not true"});
  cfg_err(gmb + ",\"attn_logit_softcapping\":50.0}", {"unsupported 'attn_logit_softcapping' (only null)"});
  cfg_err(gmb + ",\"rope_scaling\":{\"factor\":8.0}}", {"unsupported 'rope_scaling'"});
  cfg_err(gmb + ",\"hidden_activation\":\"silu\"}", {"unsupported hidden_activation 'silu' (Gemma 3: gelu_pytorch_tanh)"});
  cfg_err(gmb + ",\"sliding_window_pattern\":0}", {"'sliding_window_pattern' must be a positive integer"});
  cfg_err(gmb + ",\"sliding_window\":1}", {"unsupported 'sliding_window' 1 (each token would attend only to itself"});
  cfg_err(gmb + ",\"layer_types\":[\"chunked_attention\"]}",
          {"'layer_types' entry 0 must be \"full_attention\" or \"sliding_attention\""});
  cfg_err(gmb + ",\"rope_parameters\":{\"sliding_attention\":{\"rope_type\":\"linear\"}}}",
          {"rope_parameters.sliding_attention: unsupported rope_type (only default)"});
  cfg_err("{\"model_type\":\"gemma3_text\"," + base_ints + ",\"head_dim\":4,\"use_bidirectional_attention\":true,"
          "\"num_key_value_heads\":3}", {"num_key_value_heads 3 does not divide num_attention_heads 2"});
  cfg_err("{" + base_ints + "}", {"missing 'model_type'"});
  cfg_err("{\"model_type\":7," + base_ints + "}", {"unsupported model_type"});
  for (const char* key : {"hidden_size", "num_attention_heads", "num_hidden_layers",
                          "intermediate_size", "vocab_size", "max_position_embeddings"}) {
    std::string text = "{\"model_type\":\"bert\"," + base_ints + "}";
    const std::string k = std::string("\"") + key + "\":";
    const size_t at = text.find(k);
    REQUIRE(at != std::string::npos);
    const size_t end = text.find_first_of(",}", at);
    std::string missing = text;
    missing.erase(at, end - at + (text[end] == ',' ? 1 : 0));
    if (missing[missing.size() - 2] == ',') missing.erase(missing.size() - 2, 1);
    cfg_err(missing, {(std::string("missing '") + key + "'").c_str()});
    cfg_err(text.substr(0, at) + k + "0" + text.substr(end),
            {(std::string("'") + key + "' must be a positive integer, got 0").c_str()});
    cfg_err(text.substr(0, at) + k + "-3" + text.substr(end), {"must be a positive integer"});
    cfg_err(text.substr(0, at) + k + "\"4\"" + text.substr(end),
            {(std::string("'") + key + "' must be an integer").c_str()});
    cfg_err(text.substr(0, at) + k + "99999999999" + text.substr(end), {"positive integer"});
  }
  cfg_err("{\"model_type\":\"bert\",\"hidden_size\":10,\"num_attention_heads\":4,"
          "\"num_hidden_layers\":1,\"intermediate_size\":8,\"vocab_size\":10,"
          "\"max_position_embeddings\":16}",
          {"hidden_size 10 is not divisible by num_attention_heads 4"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"hidden_act\":\"silu\"}",
          {"unsupported hidden_act 'silu' (gelu, relu, gelu_new, gelu_pytorch_tanh or gelu_fast)"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"hidden_act\":\"GELU\"}", {"unsupported hidden_act 'GELU'"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"id2label\":{\"0\":\"a\",\"2\":\"b\"}}",
          {"'id2label' key '2' is not a label id in 0..1"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"id2label\":{\"x\":\"a\"}}", {"'id2label' key 'x'"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"id2label\":{\"-0\":\"a\"}}", {"'id2label' key '-0'"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"id2label\":{\"0\":1}}",
          {"'id2label' value of id 0 must be a string"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"id2label\":{\"0\":\"a\",\"00\":\"b\"}}",
          {"'id2label' has label id 0 twice"});
  const std::string distil_ints =
      "\"dim\":4,\"n_heads\":2,\"n_layers\":1,\"hidden_dim\":8,\"vocab_size\":10,\"max_position_embeddings\":16";
  cfg_err("{\"model_type\":\"distilbert\"," + base_ints + "}", {"missing 'dim'"});
  cfg_err("{\"model_type\":\"distilbert\"," + distil_ints + ",\"activation\":\"gelu_new\"}",
          {"unsupported activation 'gelu_new' (gelu or relu)"});
  cfg_err("{\"model_type\":\"distilbert\",\"dim\":6,\"n_heads\":4,\"n_layers\":1,\"hidden_dim\":8,"
          "\"vocab_size\":10,\"max_position_embeddings\":16}",
          {"dim 6 is not divisible by n_heads 4"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"hidden_act\":1}", {"'hidden_act' must be a string"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"position_embedding_type\":\"relative_key\"}",
          {"unsupported position_embedding_type 'relative_key'"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"layer_norm_eps\":0}", {"layer_norm_eps"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"layer_norm_eps\":1e300}", {"layer_norm_eps"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"type_vocab_size\":0}", {"type_vocab_size"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"is_decoder\":true}", {"is_decoder"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"id2label\":[\"a\"]}", {"'id2label' must be an object"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"num_labels\":-1}", {"num_labels"});
  cfg_err("{\"model_type\":\"bert\"," + base_ints + ",\"architectures\":\"BertModel\"}", {"architectures"});
  cfg_err("[1]", {"expected an object"});
  cfg_err("{\"model_type\":\"bert\",", {"malformed JSON at byte 21"});
  cfg_err("", {"malformed JSON at byte 0: unexpected end of input"});
}

TEST_CASE("hf: unprefixed and prefixed checkpoints load by canonical name", "[hf]") {
  TempDir tmp;
  for (const std::string prefix : {"", "bert."}) {
    INFO("prefix '" << prefix << "'");
    std::vector<T> ts = bert_tensors(prefix);
    const bool cls = !prefix.empty();
    if (cls) {
      ts.push_back({"classifier.weight", "F32", {3, kH}, f32_bytes(iota(3 * kH))});
      ts.push_back({"classifier.bias", "F32", {3}, f32_bytes({1, 2, 3})});
      ts.push_back({"bert.pooler.dense.weight", "F16", {kH, kH}, u16_bytes(std::vector<uint16_t>(kH * kH, 0x3C00))});
    }
    const std::string d = make_bert_dir(
        tmp, prefix.empty() ? "plain" : "prefixed", ts,
        config_json(cls ? ",\"id2label\":{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"}" : ""));
    const HfBertCheckpoint ck = HfBertCheckpoint::open(d);
    CHECK(ck.dir() == d);
    CHECK(ck.config().hidden_size == kH);
    CHECK(ck.has_embeddings());
    CHECK(ck.has_pooler() == cls);
    CHECK(ck.num_labels() == (cls ? 3 : 0));
    CHECK(ck.has("encoder.layer.0.attention.self.query.weight"));
    CHECK_FALSE(ck.has("encoder.layer.0.attention.self.key.weight"));

    std::vector<float> out;
    ck.load("embeddings.word_embeddings.weight", {kV, kH}, out);
    CHECK(out == iota(kV * kH));
    ck.load("encoder.layer.0.attention.self.query.weight", {kH, kH}, out);
    CHECK(out == iota(kH * kH, 3));
    ck.load("embeddings.LayerNorm.weight", {kH}, out);
    CHECK(out == iota(kH, 1));
    if (cls) {
      ck.load("classifier.bias", {3}, out);
      CHECK(out == std::vector<float>{1, 2, 3});
      ck.load("pooler.dense.weight", {kH, kH}, out);
      CHECK(out == std::vector<float>(kH * kH, 1.0f));
    }

    const std::string file = d + "/model.safetensors";
    REQUIRE_ERROR_HAS(ck.load("encoder.layer.0.attention.self.key.weight", {kH, kH}, out),
                      (file + ": missing tensor '" + prefix +
                       "encoder.layer.0.attention.self.key.weight'").c_str());
    REQUIRE_ERROR_HAS(ck.load("encoder.layer.0.attention.self.query.weight", {kH, kI}, out),
                      (file + ": tensor '" + prefix +
                       "encoder.layer.0.attention.self.query.weight' has shape [4, 4], expected "
                       "[4, 8] from config.json").c_str());
    REQUIRE_ERROR_HAS(ck.load("embeddings.LayerNorm.bias", {kH, 1}, out),
                      "has shape [4], expected [4, 1] from config.json");
    if (!cls) {
      REQUIRE_ERROR_HAS(ck.load("classifier.weight", {2, kH}, out),
                        (file + ": missing tensor 'classifier.weight'").c_str());
    }
  }
}

TEST_CASE("hf: legacy gamma/beta, headless checkpoints, num_labels checks", "[hf]") {
  TempDir tmp;
  {
    const std::string d = make_bert_dir(tmp, "legacy", bert_tensors("bert.", true));
    const HfBertCheckpoint ck = HfBertCheckpoint::open(d);
    std::vector<float> out;
    ck.load("embeddings.LayerNorm.weight", {kH}, out);
    CHECK(out == iota(kH, 1));
    ck.load("embeddings.LayerNorm.bias", {kH}, out);
    CHECK(out == iota(kH, 2));
    ck.load("encoder.layer.0.output.LayerNorm.weight", {kH}, out);
    CHECK(out == iota(kH, 4));
    CHECK(ck.num_labels() == 0);
  }
  {
    // Encoder only: no embeddings, no pooler.
    const std::string d = make_bert_dir(
        tmp, "headless",
        {{"encoder.layer.0.attention.self.query.weight", "BF16", {kH, kH},
          u16_bytes(std::vector<uint16_t>(kH * kH, 0x3F80))}});
    const HfBertCheckpoint ck = HfBertCheckpoint::open(d);
    CHECK_FALSE(ck.has_embeddings());
    CHECK_FALSE(ck.has_pooler());
    std::vector<float> out;
    ck.load("encoder.layer.0.attention.self.query.weight", {kH, kH}, out);
    CHECK(out == std::vector<float>(kH * kH, 1.0f));
  }
  {
    // Classifier rows disagree with id2label.
    std::vector<T> ts = bert_tensors("bert.");
    ts.push_back({"classifier.weight", "F32", {2, kH}, f32_bytes(iota(2 * kH))});
    const std::string d = make_bert_dir(
        tmp, "labels_mismatch", ts, config_json(",\"id2label\":{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"}"));
    REQUIRE_ERROR_HAS(HfBertCheckpoint::open(d), (d + "/model.safetensors").c_str(),
                      "'classifier.weight' has 2 rows", "id2label has 3 labels");
  }
  {
    std::vector<T> ts = bert_tensors("");
    ts.push_back({"classifier.weight", "F32", {2 * kH}, f32_bytes(iota(2 * kH))});
    const std::string d = make_bert_dir(tmp, "cls_1d", ts);
    REQUIRE_ERROR_HAS(HfBertCheckpoint::open(d), "'classifier.weight' has shape [8]");
  }
  {
    // Sharded HF directory.
    const std::string d = tmp.subdir("sharded");
    write_file(d + "/config.json", config_json());
    std::vector<T> ts = bert_tensors("bert.");
    write_file(d + "/m1.safetensors", make_st({ts[0], ts[1]}));
    write_file(d + "/m2.safetensors", make_st({ts[2], ts[3], ts[4]}));
    std::string wm = "{\"weight_map\":{";
    for (size_t i = 0; i < ts.size(); ++i) {
      wm += (i ? "," : "") + ("\"" + ts[i].name + "\":\"") + (i < 2 ? "m1" : "m2") + ".safetensors\"";
    }
    write_file(d + "/model.safetensors.index.json", wm + "}}");
    const HfBertCheckpoint ck = HfBertCheckpoint::open(d);
    std::vector<float> out;
    ck.load("encoder.layer.0.attention.self.query.weight", {kH, kH}, out);
    CHECK(out == iota(kH * kH, 3));
    REQUIRE_ERROR_HAS(ck.load("pooler.dense.weight", {kH, kH}, out),
                      (d + "/model.safetensors.index.json: missing tensor 'bert.pooler.dense.weight'").c_str());
    REQUIRE_ERROR_HAS(ck.load("embeddings.word_embeddings.weight", {kV, kH + 1}, out),
                      (d + "/m1.safetensors: tensor 'bert.embeddings.word_embeddings.weight' has shape [10, 4]").c_str());
  }
  {
    // Missing config.json / missing weights / bad config.
    const std::string d = tmp.subdir("no_config");
    write_file(d + "/model.safetensors", make_st(bert_tensors("")));
    REQUIRE_ERROR_HAS(HfBertCheckpoint::open(d), (d + "/config.json: cannot open: No such file").c_str());
    write_file(d + "/config.json", config_json("", "distilbert"));  // BERT keys, DistilBERT type
    REQUIRE_ERROR_HAS(HfBertCheckpoint::open(d), (d + "/config.json: missing 'dim'").c_str());
    const std::string e = tmp.subdir("no_weights");
    write_file(e + "/config.json", config_json());
    REQUIRE_ERROR_HAS(HfBertCheckpoint::open(e), (e + ": no model.safetensors").c_str());
  }
}

TEST_CASE("hf: vocab.txt and do_lower_case", "[hf]") {
  TempDir tmp;
  const std::string d = tmp.subdir("vocab");
  write_file(d + "/vocab.txt", "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\nthe\r\n##ing\r\n\xc3\xa9t\xc3\xa9\r\n");
  Vocab v = read_vocab(d);
  CHECK(v.tokens == std::vector<std::string>{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the",
                                              "##ing", "\xc3\xa9t\xc3\xa9"});
  CHECK(v.do_lower_case);  // heuristic: no uppercase tokens

  // No final newline; empty line kept so ids stay line numbers; BOM stripped.
  write_file(d + "/vocab.txt", "\xef\xbb\xbf[PAD]\n\nHello\nWorld\nthe");
  v = read_vocab(d);
  CHECK(v.tokens == std::vector<std::string>{"[PAD]", "", "Hello", "World", "the"});
  CHECK_FALSE(v.do_lower_case);  // heuristic: cased

  write_file(d + "/tokenizer_config.json", "{\"do_lower_case\": true, \"model_max_length\": 512}");
  CHECK(read_vocab(d).do_lower_case);
  write_file(d + "/tokenizer_config.json", "{\"model_max_length\": 512}");
  CHECK_FALSE(read_vocab(d).do_lower_case);  // key absent: heuristic
  write_file(d + "/tokenizer_config.json", "{\"do_lower_case\": \"yes\"}");
  REQUIRE_ERROR_HAS(read_vocab(d), (d + "/tokenizer_config.json: 'do_lower_case' must be true or false").c_str());
  write_file(d + "/tokenizer_config.json", "{\"do_lower_case\": true, \"strip_accents\": null, \"tokenize_chinese_chars\": false}");
  v = read_vocab(d);
  CHECK(v.do_lower_case);
  CHECK_FALSE(v.tokenize_chinese_chars);
  write_file(d + "/tokenizer_config.json", "{\"do_lower_case\": false, \"strip_accents\": false}");
  v = read_vocab(d);
  CHECK_FALSE(v.do_lower_case);
  CHECK(v.tokenize_chinese_chars);
  write_file(d + "/tokenizer_config.json", "{\"do_lower_case\": true, \"strip_accents\": false}");
  REQUIRE_ERROR_HAS(read_vocab(d), (d + "/tokenizer_config.json: strip_accents false with do_lower_case true is not supported").c_str());
  write_file(d + "/tokenizer_config.json", "{\"strip_accents\": true}");
  REQUIRE_ERROR_HAS(read_vocab(d), "'strip_accents' is set but 'do_lower_case' is not");
  write_file(d + "/tokenizer_config.json", "{\"strip_accents\": 1}");
  REQUIRE_ERROR_HAS(read_vocab(d), "'strip_accents' must be true, false or null");
  write_file(d + "/tokenizer_config.json", "{\"tokenize_chinese_chars\": \"no\"}");
  REQUIRE_ERROR_HAS(read_vocab(d), "'tokenize_chinese_chars' must be true or false");
  write_file(d + "/tokenizer_config.json", "{\"do_lower_case\": tru}");
  REQUIRE_ERROR_HAS(read_vocab(d), (d + "/tokenizer_config.json: malformed JSON at byte").c_str());

  // Large uncased-looking vocab with a handful of uppercase tokens stays uncased.
  std::string big;
  for (int i = 0; i < 1000; ++i) big += "tok" + std::to_string(i) + "\n";
  big += "Foo\nBar\n[CLS]\n<S>\n";
  const std::string b = tmp.subdir("big");
  write_file(b + "/vocab.txt", big);
  CHECK(read_vocab(b).do_lower_case);

  const std::string e = tmp.subdir("empty");
  write_file(e + "/vocab.txt", "");
  REQUIRE_ERROR_HAS(read_vocab(e), (e + "/vocab.txt: empty vocabulary").c_str());
  REQUIRE_ERROR_HAS(read_vocab(tmp / "missing"), "missing/vocab.txt: cannot open: No such file");
}
