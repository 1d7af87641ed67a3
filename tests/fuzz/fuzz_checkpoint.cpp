// SPDX-License-Identifier: Apache-2.0
// fuzz_checkpoint.cpp: libFuzzer target for the converter's checkpoint readers. Byte 0 chooses
// what the rest of the input is:
//   0: a JSON text for the strict JSON parser (the parsed value is walked);
//   1: a .safetensors file (header, offsets; every float tensor converted);
//   2: a config.json for read_bert_config;
//   3: a whole HuggingFace directory: 2 bytes of config.json length, config.json, then
//      model.safetensors; opened and loaded as a float BERT;
//   4: a sharded directory: model.safetensors.index.json naming shards "a"/"b.safetensors",
//      with the shards made from the input's tail;
//   5: vocab.txt and tokenizer_config.json (2 length bytes, then the two files) for read_vocab.
// The files go to a private temporary folder. Every rejection must be a CheckpointError or
// std::runtime_error with a one-line message; anything else (a crash, another exception, an
// allocation beyond libFuzzer's -malloc_limit_mb) is a finding.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/checkpoint/json.h"
#include "converter/checkpoint/safetensors.h"
#include "converter/float_bert.h"

namespace {

using namespace edgebert::convert;

const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string t = std::string(base && *base ? base : "/tmp") + "/edgebert-fuzz-XXXXXX";
    std::vector<char> buf(t.begin(), t.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) std::abort();
    return std::string(buf.data());
  }();
  return dir;
}

const char* const kFiles[] = {"config.json", "model.safetensors", "model.safetensors.index.json",
                              "a.safetensors", "b.safetensors", "vocab.txt", "tokenizer_config.json"};

std::string path_of(const char* name) { return scratch_dir() + "/" + name; }

void write(const char* name, std::string_view bytes) {
  FILE* f = std::fopen(path_of(name).c_str(), "wb");
  if (!f) std::abort();
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
  std::fclose(f);
}

void clear() {
  for (const char* name : kFiles) unlink(path_of(name).c_str());
}

// Splits "LL<first L bytes><rest>" (L big-endian 16 bit).
void split(std::string_view in, std::string_view* first, std::string_view* rest) {
  if (in.size() < 2) {
    *first = in;
    *rest = {};
    return;
  }
  const size_t n = (static_cast<size_t>(static_cast<uint8_t>(in[0])) << 8) | static_cast<uint8_t>(in[1]);
  in.remove_prefix(2);
  *first = in.substr(0, n);
  *rest = n < in.size() ? in.substr(n) : std::string_view();
}

size_t walk(const JsonValue& v, int depth) {
  size_t n = 1;
  if (v.is_integer()) n += static_cast<size_t>(v.as_int64() & 1);
  if (v.is_number()) n += v.as_double() > 0;
  if (v.is_string()) n += v.as_string().size();
  if (v.is_array())
    for (const JsonValue& e : v.elements()) n += walk(e, depth + 1);
  if (v.is_object())
    for (size_t i = 0; i < v.size(); ++i) {
      if (v.find(v.key(i)) != &v.value(i)) __builtin_trap();  // lookup finds the member itself
      n += walk(v.value(i), depth + 1);
    }
  if (depth > kMaxJsonDepth + 1) __builtin_trap();
  return n;
}

void read_all(const SafetensorsCheckpoint& c) {
  std::vector<float> values;
  for (const std::string& name : c.names()) {
    const TensorInfo& t = c.get(name);
    if (t.dtype == DType::F32 || t.dtype == DType::F16 || t.dtype == DType::BF16) {
      c.read_f32(name, values);
      if (values.size() != t.numel()) __builtin_trap();
    }
  }
}

void run(uint8_t mode, std::string_view in) {
  switch (mode % 6) {
    case 0: walk(parse_json(in, "fuzz.json"), 0); break;
    case 1:
      write("model.safetensors", in);
      read_all(SafetensorsCheckpoint::open_file(path_of("model.safetensors")));
      break;
    case 2: write("config.json", in); read_bert_config(path_of("config.json")); break;
    case 3: {
      std::string_view config, weights;
      split(in, &config, &weights);
      write("config.json", config);
      write("model.safetensors", weights);
      const HfBertCheckpoint ckpt = HfBertCheckpoint::open(scratch_dir());
      load_float_bert(ckpt);
      break;
    }
    case 4: {
      std::string_view index, shards, a, b;
      split(in, &index, &shards);
      split(shards, &a, &b);
      write("model.safetensors.index.json", index);
      write("a.safetensors", a);
      write("b.safetensors", b);
      read_all(SafetensorsCheckpoint::open_dir(scratch_dir()));
      break;
    }
    default: {
      std::string_view vocab, config;
      split(in, &vocab, &config);
      write("vocab.txt", vocab);
      if (!config.empty()) write("tokenizer_config.json", config);
      read_vocab(scratch_dir());
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  clear();
  try {
    run(data[0], std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  } catch (const std::runtime_error& e) {  // CheckpointError derives from it
    const std::string_view what = e.what();
    if (what.empty() || what.find('\n') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
