// SPDX-License-Identifier: Apache-2.0
// fuzz_tokenizer.cpp: libFuzzer target for the tokenizers. Byte 0 = 0xF0, 0xF1, 0xF2: the text
// pipeline (runtime/src/text) with the WordPiece, byte-level BPE or Unigram sample tokenizer of
// tokenizer_samples.h, the rest of the input as check_encodings() reads it (pairs, truncation,
// offsets, word ids). Any other byte 0: the vocab.txt WordPiece tokenizer; byte 0 chooses the
// options (lower-casing, CJK splitting, max_chars_per_word) and whether the vocabulary is the tiny
// model's or comes from the input itself (lines up to the first NUL byte); the rest is the text.
// Checked on every input: ids in range, [CLS] ... [SEP] framing, and that a short output buffer
// receives a prefix of the full encoding with the same reported length.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "converter/tokenizer/tokenizer_json.h"
#include "tiny_model.h"
#include "tokenizer_samples.h"
#include "tokenizer/wordpiece_tokenizer.h"

namespace {

constexpr size_t kMaxIds = 1024;

void check(const edgebert::WordPieceTokenizer& t, std::string_view text, bool special) {
  static int32_t ids[kMaxIds];
  static int32_t prefix[8];
  const size_t n = t.encode(text, ids, kMaxIds, special);
  const size_t shown = n < kMaxIds ? n : kMaxIds;
  for (size_t i = 0; i < shown; ++i)
    if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= t.vocab_size()) __builtin_trap();
  if (special) {
    if (n < 2 || ids[0] != t.cls_id()) __builtin_trap();
    if (n <= kMaxIds && ids[n - 1] != t.sep_id()) __builtin_trap();
  }
  const size_t m = t.encode(text, prefix, 8, special);
  if (m != n) __builtin_trap();
  for (size_t i = 0; i < (n < 8 ? n : 8); ++i)
    if (prefix[i] != ids[i]) __builtin_trap();
  if (t.encode(text, nullptr, 0, special) != n) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  if (mode >= 0xF0 && mode < 0xF0 + edgebert::fuzz::kTokenizerKinds) {
    static edgebert::text::Tokenizer pipelines[edgebert::fuzz::kTokenizerKinds];
    edgebert::text::Tokenizer& t = pipelines[mode - 0xF0];
    if (!t.initialized()) {
      const auto tj = edgebert::convert::parse_tokenizer_json(edgebert::fuzz::sample_tokenizer_json(mode - 0xF0), "sample");
      if (!t.init_from_buffer(edgebert::convert::tokenizer_spec_buffer(tj)).is_ok()) __builtin_trap();
    }
    edgebert::fuzz::check_encodings(t, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
    return 0;
  }
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  edgebert::TokenizerOptions options;
  options.do_lower_case = mode & 1;
  options.tokenize_chinese_chars = mode & 2;
  static const int kMaxChars[4] = {100, 0, 3, 1024};
  options.max_chars_per_word = kMaxChars[(mode >> 2) & 3];
  std::vector<std::string_view> vocab;
  if (mode & 0x80) {  // vocabulary from the input: lines up to the first NUL
    const size_t end = rest.find('\0');
    std::string_view lines = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    size_t start = 0;
    while (start <= lines.size() && vocab.size() < 4096) {
      const size_t nl = lines.find('\n', start);
      vocab.push_back(lines.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
    if (mode & 0x40) {  // special tokens by id rather than by name
      const int32_t n = static_cast<int32_t>(vocab.size());
      options.unk_id = n > 0 ? 0 : -1;
      options.cls_id = n > 1 ? 1 : n - 1;
      options.sep_id = n > 2 ? 2 : n - 1;
      options.pad_id = (mode & 0x20) ? n : -1;  // n is out of range: must be refused
    }
  } else {
    for (const char* t : edgebert::fuzz::tiny_vocabulary()) vocab.emplace_back(t);
  }
  edgebert::WordPieceTokenizer tokenizer;
  std::string error;
  if (!tokenizer.init(vocab, options, &error)) {
    if (error.empty()) __builtin_trap();
    return 0;
  }
  check(tokenizer, rest, true);
  check(tokenizer, rest, false);
  return 0;
}
