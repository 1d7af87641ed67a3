// SPDX-License-Identifier: Apache-2.0
// make_seeds.cpp: writes the fuzz_model seed corpus (the tiny int8 and fp32 models of
// tiny_model.h, and tiny models carrying each sample tokenizer of tokenizer_samples.h) into the
// folder given as argument, and the pipeline seeds of fuzz_tokenizer and fuzz_tokenizer_json into
// its sibling folders (the seeds of older formats stay beside them, as *_v2.ebm / *_v7.ebm). Run by
// hand when the model format changes:
//   cmake --build build/dev --target fuzz_make_seeds && build/dev/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus/fuzz_model
#include <cstdio>
#include <string>
#include <vector>

#include "tiny_model.h"
#include "tokenizer_samples.h"

namespace {
bool write(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "%s: cannot write\n", path.c_str());
    return false;
  }
  std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
  return true;
}
std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  for (bool int8 : {true, false}) {
    const std::vector<uint8_t> bytes = edgebert::fuzz::make_tiny_model(int8);
    const std::string path = std::string(argv[1]) + (int8 ? "/tiny_int8.ebm" : "/tiny_fp32.ebm");
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "%s: cannot write\n", path.c_str());
      return 1;
    }
    std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
  }
  // schema_version 7: the fp32 model's payloads of 4 KiB or more after the FlatBuffer
  if (!write(std::string(argv[1]) + "/tiny_external_fp32.ebm", edgebert::fuzz::make_tiny_model(false, {}, 1))) return 1;
  const std::string dir = argv[1];
  const char* const kinds[] = {"wordpiece", "bpe", "unigram"};
  // texts for check_encodings(): byte 0 = mode (max_length, pair)
  const std::string texts[] = {std::string("\x00") + "The movies! unaffable caf\xc3\xa9 \xe4\xb8\xad [MASK] a b",
                               std::string("\x06") + "hello world <mask>\the world  ab c",
                               std::string("\x01") + "ab  c \xef\xac\x81 \xc3\xa9 12 <x> </s> the"};
  for (int k = 0; k < edgebert::fuzz::kTokenizerKinds; ++k) {
    if (!write(dir + "/tiny_tokenizer_" + kinds[k] + ".ebm", edgebert::fuzz::make_tiny_model_with_tokenizer(k))) return 1;
    for (int t = 0; t < 3; ++t) {
      if (!write(dir + "/../fuzz_tokenizer/pipeline_" + kinds[k] + "_" + std::to_string(t),
                 bytes_of(std::string(1, static_cast<char>(0xF0 + k)) + texts[t])))
        return 1;
    }
    std::string json = edgebert::fuzz::sample_tokenizer_json(k);
    if (!write(dir + "/../fuzz_tokenizer_json/" + kinds[k], bytes_of(json + std::string(1, '\0') + texts[k]))) return 1;
  }
  // refusals and the Precompiled normalizer (a charsmap the runtime must check)
  std::string uni = edgebert::fuzz::sample_tokenizer_json(2);
  const std::string nfkc = "{\"type\": \"NFKC\"}";
  std::string pre = uni;
  pre.replace(pre.find(nfkc), nfkc.size(), "{\"type\": \"Precompiled\", \"precompiled_charsmap\": \"CAAAAAEAAAACAAAAYQA=\"}");
  if (!write(dir + "/../fuzz_tokenizer_json/precompiled", bytes_of(pre + std::string(1, '\0') + texts[2]))) return 1;
  std::string split = uni;
  const std::string ws = "{\"type\": \"WhitespaceSplit\"}";
  split.replace(split.find(ws), ws.size(), "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\s+\"}, \"behavior\": \"Removed\"}");
  if (!write(dir + "/../fuzz_tokenizer_json/split_regex", bytes_of(split))) return 1;
  std::string literal = uni;
  literal.replace(literal.find(ws), ws.size(), "{\"type\": \"Split\", \"pattern\": {\"String\": \"b\"}, \"behavior\": \"MergedWithPrevious\"}");
  if (!write(dir + "/../fuzz_tokenizer_json/split_literal", bytes_of(literal + std::string(1, '\0') + texts[2]))) return 1;
  return 0;
}
