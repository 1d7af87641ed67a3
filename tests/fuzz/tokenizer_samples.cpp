// SPDX-License-Identifier: Apache-2.0
// tokenizer_samples.cpp
#include "tokenizer_samples.h"

#include "converter/converter.h"
#include "converter/synthetic_model.h"
#include "converter/tokenizer/tokenizer_json.h"
#include "text/pre_tokenizers.h"

namespace edgebert::fuzz {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string byte_char(int b) {
  char buf[4];
  return std::string(buf, text::encode_utf8(text::byte_level_char(static_cast<uint8_t>(b)), buf));
}

std::string make_bpe() {
  std::string vocab;
  for (int b = 0; b < 256; ++b) vocab += quoted(byte_char(b)) + ": " + std::to_string(b) + ", ";
  const std::string G = byte_char(' ');
  vocab += R"("<s>": 256, "</s>": 257, "<pad>": 258, "<unk>": 259, "<mask>": 260, "he": 261, "ll": 262, "hell": 263, "hello": 264, )";
  vocab += quoted(G + "w") + ": 265, " + quoted(G + "wo") + ": 266, \"or\": 267";
  return R"({"added_tokens": [{"id": 256, "content": "<s>", "special": true}, {"id": 257, "content": "</s>", "special": true},
 {"id": 258, "content": "<pad>", "special": true}, {"id": 260, "content": "<mask>", "special": true, "lstrip": true, "normalized": true}],
 "normalizer": null, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true},
 "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 257], "cls": ["<s>", 256], "trim_offsets": true, "add_prefix_space": false},
 "model": {"type": "BPE", "unk_token": null, "vocab": {)" + vocab + R"(}, "merges": ["h e", "l l", "he ll", "hell o", )" +
         quoted(G + " w") + ", " + quoted(G + "w o") + R"(, "o r"]}})";
}

const char* kWordPiece = R"({"added_tokens": [{"id": 0, "content": "[PAD]", "special": true}, {"id": 2, "content": "[CLS]", "special": true},
 {"id": 3, "content": "[SEP]", "special": true}, {"id": 4, "content": "[MASK]", "special": true}],
 "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
 "pre_tokenizer": {"type": "BertPreTokenizer"},
 "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
 "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 20,
  "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "the": 5, "movie": 6, "##s": 7, "!": 8, "un": 9,
            "##aff": 10, "##able": 11, "cafe": 12, "\u4e2d": 13, "a": 14, "##a": 15, "b": 16, "##b": 17}}})";

const char* kUnigram = R"({"added_tokens": [{"id": 1, "content": "</s>", "special": true}, {"id": 8, "content": "<x>", "special": false, "single_word": true, "rstrip": true}],
 "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}, {"type": "Strip", "strip_left": true, "strip_right": true}]},
 "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Digits", "individual_digits": true}, {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": true}]},
 "post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
  "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "</s>", "type_id": 1}}],
  "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
 "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": true, "vocab": [["<unk>", 0], ["</s>", 0], ["\u2581", -2], ["\u2581a", -1], ["b", -2], ["\u2581ab", -5], ["c", -3], ["fi", -1], ["<x>", 0],
  ["<0xC3>", -8], ["<0xA9>", -8], ["1", -3], ["\u2581the", -2]]}})";

}  // namespace

const std::string& sample_tokenizer_json(int kind) {
  static const std::string samples[kTokenizerKinds] = {kWordPiece, make_bpe(), kUnigram};
  return samples[kind < 0 ? 0 : kind % kTokenizerKinds];
}

std::vector<uint8_t> make_tiny_model_with_tokenizer(int kind) {
  const convert::TokenizerJson tj = convert::parse_tokenizer_json(sample_tokenizer_json(kind), "sample.json");
  convert::SyntheticSpec spec;
  spec.hidden = 16;
  spec.heads = 2;
  spec.layers = 1;
  spec.intermediate = 32;
  spec.vocab = static_cast<int>(tj.vocab_size);
  spec.max_position = 16;
  spec.labels = 2;
  spec.seed = 11;
  const convert::FloatBert model = convert::make_synthetic_bert(spec);
  convert::ConvertOptions options;
  options.fp32 = true;
  options.quiet = true;
  options.error_report = false;
  const convert::ConvertResult r = convert::convert_model(model, nullptr, options, &tj);
  return std::vector<uint8_t>(r.buffer.data(), r.buffer.data() + r.buffer.size());
}

void check_encodings(const text::Tokenizer& t, std::string_view input) {
  if (input.empty() || !t.initialized()) return;
  const uint8_t mode = static_cast<uint8_t>(input[0]);
  input.remove_prefix(1);
  static const size_t kLimits[4] = {0, 1, 5, 16};
  const size_t max_length = kLimits[mode & 3];
  std::string_view a = input, b;
  const bool pair = (mode & 4) != 0;
  if (pair) {
    const size_t tab = input.find('\t');
    a = input.substr(0, tab);
    b = tab == std::string_view::npos ? std::string_view() : input.substr(tab + 1);
  }
  text::TextWorkspace ws;
  static text::TextToken out[4096], again[4096], prefix[3];
  const size_t n = t.encode(a, pair ? &b : nullptr, max_length, ws, out, 4096);
  const size_t shown = n < 4096 ? n : 4096;
  const size_t specials = t.num_special_tokens(pair);
  if (max_length > 0 && n > (max_length > specials ? max_length : specials)) __builtin_trap();
  int32_t last_word[2] = {-1, -1};
  for (size_t i = 0; i < shown; ++i) {
    const text::TextToken& k = out[i];
    if (k.id < 0 || static_cast<size_t>(k.id) >= t.vocab_size()) __builtin_trap();
    if (k.sequence < 0) {
      if (k.word != -1 || k.begin != 0 || k.end != 0) __builtin_trap();
      continue;
    }
    if (k.sequence > 1 || (k.sequence == 1 && !pair)) __builtin_trap();
    const std::string_view src = k.sequence == 0 ? a : b;
    if (k.begin < 0 || k.begin > k.end || static_cast<size_t>(k.end) > src.size()) __builtin_trap();
    if (k.word < last_word[k.sequence]) __builtin_trap();
    last_word[k.sequence] = k.word;
  }
  if (t.encode(a, pair ? &b : nullptr, max_length, ws, again, 4096) != n) __builtin_trap();
  for (size_t i = 0; i < shown; ++i)
    if (again[i].id != out[i].id || again[i].begin != out[i].begin || again[i].end != out[i].end) __builtin_trap();
  if (t.encode(a, pair ? &b : nullptr, max_length, ws, prefix, 3) != n) __builtin_trap();
  for (size_t i = 0; i < (shown < 3 ? shown : 3); ++i)
    if (prefix[i].id != out[i].id) __builtin_trap();
  if (t.encode(a, pair ? &b : nullptr, max_length, ws, nullptr, 0) != n) __builtin_trap();
}

}  // namespace edgebert::fuzz
