// SPDX-License-Identifier: Apache-2.0
// fuzz_tokenizer.cpp: libFuzzer target for the tokenizers. Byte 0 = 0xF0, 0xF1, 0xF2: the text
// pipeline (runtime/src/text) with the WordPiece, byte-level BPE or Unigram sample tokenizer of
// tokenizer_samples.h, the rest of the input as check_encodings() reads it (pairs, truncation,
// offsets, word ids). Any other byte 0: the BERT pipeline of a vocabulary alone (vocab.txt models,
// text::Tokenizer::init_bert_vocab); byte 0 chooses the options (lower-casing, CJK splitting,
// max_input_chars_per_word) and whether the vocabulary is the tiny model's or comes from the input
// itself (lines up to the first NUL byte); the rest is the text. Checked on every input: ids in
// range, [CLS] ... [SEP] framing, a short output buffer receives a prefix of the full encoding
// with the same reported length, and the text streamed through a small workspace (pieces cut
// where no word crosses) gives the whole text's ids, offsets and word ids (or SIZE_MAX).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "converter/tokenizer/tokenizer_json.h"
#include "text/tokenizer.h"
#include "tiny_model.h"
#include "tokenizer_samples.h"

namespace {

constexpr size_t kMaxTokens = 1024;

void check(const edgebert::text::Tokenizer& t, std::string_view text) {
  using edgebert::text::TextToken;
  static TextToken full[kMaxTokens], prefix[8], streamed[kMaxTokens];
  static edgebert::text::TextWorkspace ws, small;
  if (small.reserved_bytes == 0) small.reserve(48);
  const size_t n = t.encode(text, nullptr, 0, ws, full, kMaxTokens);
  const size_t shown = n < kMaxTokens ? n : kMaxTokens;
  for (size_t i = 0; i < shown; ++i)
    if (full[i].id < 0 || static_cast<size_t>(full[i].id) >= t.vocab_size()) __builtin_trap();
  if (n < 2 || full[0].id != t.frame(false).prefix[0]) __builtin_trap();
  if (n <= kMaxTokens && full[n - 1].id != t.frame(false).suffix[0]) __builtin_trap();
  if (t.encode(text, nullptr, 0, ws, prefix, 8) != n) __builtin_trap();
  for (size_t i = 0; i < (n < 8 ? n : 8); ++i)
    if (prefix[i].id != full[i].id) __builtin_trap();
  // the segment alone, whole and streamed
  const size_t s = t.encode_segment(text, false, ws, full, kMaxTokens);
  if (s + 2 != n) __builtin_trap();
  if (ws.reserved_bytes != 0 || !t.is_word_local()) __builtin_trap();
  const size_t m = t.encode_segment(text, false, small, streamed, kMaxTokens);
  if (m == SIZE_MAX) return;  // a stretch of more than 48 bytes without a cut
  if (m != s) __builtin_trap();
  for (size_t i = 0; i < (s < kMaxTokens ? s : kMaxTokens); ++i)
    if (streamed[i].id != full[i].id || streamed[i].begin != full[i].begin || streamed[i].end != full[i].end ||
        streamed[i].word != full[i].word)
      __builtin_trap();
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
  edgebert::text::BertVocabOptions options;
  options.lowercase = mode & 1;
  options.handle_chinese_chars = mode & 2;
  static const int kMaxChars[4] = {100, 0, 3, 1024};
  options.max_input_chars_per_word = kMaxChars[(mode >> 2) & 3];
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
  edgebert::text::Tokenizer tokenizer;
  const edgebert::Status st = tokenizer.init_bert_vocab(vocab, options);
  if (!st.is_ok()) {
    if (st.message().empty() || tokenizer.initialized()) __builtin_trap();
    return 0;
  }
  if (rest.size() > std::numeric_limits<uint32_t>::max() / 8) return 0;
  check(tokenizer, rest);
  return 0;
}
