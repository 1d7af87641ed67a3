// SPDX-License-Identifier: Apache-2.0
// Unit tests for the BERT tokenizer of vocab.txt models (text::Tokenizer::init_bert_vocab, the
// pipeline of HF's BertTokenizerFast): BertNormalizer, BertPreTokenizer, WordPiece splitting,
// [UNK]/truncation handling, robustness against bad UTF-8, special tokens written in the text,
// byte offsets per token, streaming of texts longer than the workspace, and that encoding
// performs no heap allocation (global operator new is replaced in this file). Expected values
// are HF tokenizers 0.22.2's (hf_encode.js on this file's vocabulary) where HF and Python's
// BertTokenizer differ.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "text/tokenizer.h"
#include "text_encoder.h"

// ---- allocation counting: every operator new in this program goes through here -------------
namespace {
std::atomic<long> g_allocations{0};

void* counted_alloc(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size != 0 ? size : 1);
}
void* counted_aligned_alloc(std::size_t size, std::align_val_t align) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t a = static_cast<std::size_t>(align);
  const std::size_t rounded = ((size != 0 ? size : 1) + a - 1) / a * a;
  return std::aligned_alloc(a, rounded);
}
}  // namespace

void* operator new(std::size_t size) {
  if (void* p = counted_alloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted_alloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_alloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_alloc(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  if (void* p = counted_aligned_alloc(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) {
  if (void* p = counted_aligned_alloc(size, align)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return counted_aligned_alloc(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return counted_aligned_alloc(size, align);
}
// (GCC 12 reports std::free here as mismatched with operator new once both are inlined into one
// caller; these replacements pair malloc with free, which is correct: a known false positive)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// ---- helpers ---------------------------------------------------------------------------------
namespace {

using TokenizerOptions = edgebert::text::BertVocabOptions;
using edgebert::text::TextToken;

const std::vector<std::string> kVocab = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",                           // 0-4
    "hello", "world", ",", "!", "un", "##aff", "##able", "the",            // 5-12
    "Hello", "World", "H\xC3\xA9ll\xC3\xB2",                                 // 13-15  Héllò
    "\xE6\x88\x91", "\xE7\x88\xB1", "\xE5\x8C\x97", "\xE4\xBA\xAC",          // 16-19  我 爱 北 京
    "\xE6\xA8\xA1", "\xE5\x9E\x8B", "bert", "BERT",                          // 20-23  模 型
    ".", "?", "\xC2\xBF", "que", "\xC2\xAB", "\xC2\xBB", "hi",              // 24-30  ¿ « »
    "\xE2\x80\x9C", "\xE2\x80\x9D", "\xE2\x80\x94", "a", "b", "c",           // 31-36  “ ” —
    "\xE3\x80\x82", "\xEF\xBC\x81", "$", "5", "+", "=", "3",                 // 37-43  。 ！
    "##\xE7\x88\xB1", "##\xE5\x8C\x97", "##\xE4\xBA\xAC",                    // 44-46  ##爱 ##北 ##京
    "abc", "##de", "##f", "5\xE2\x82\xAC",                                   // 47-50  5€
    "istanbul", "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x82", "\xD0\xB5\xD0\xB6\xD0\xB8\xD0\xBA",  // 51-53
    "\xE3\x81\x8B", "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB", "naive", "cafe",  // 54-57  か 한(jamo)
    "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9",                              // 58     ééééé
    "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83",                                       // 59     οδοσ
};

std::vector<std::string_view> views(const std::vector<std::string>& v) {
  return std::vector<std::string_view>(v.begin(), v.end());
}

// The tokenizer of a vocabulary (owned: the tokenizer keeps views into it) with a reserved
// workspace, and the calls of the tests: encode() with [CLS] ... [SEP] (text::Tokenizer::encode)
// or without (encode_segment, with split_special_tokens and stop_after).
class WordPieceTokenizer {
 public:
  WordPieceTokenizer(const TokenizerOptions& opts, const std::vector<std::string>& vocab) : vocab_(vocab) {
    const edgebert::Status st = tok_.init_bert_vocab(views(vocab_), opts);
    INFO(st.message());
    REQUIRE(st.is_ok());
    ws_.reserve(kReserved);
    buf_.resize(4 * kReserved);
  }
  WordPieceTokenizer(const WordPieceTokenizer&) = delete;
  static constexpr size_t kReserved = 8192;

  size_t encode(std::string_view text, int32_t* ids, size_t max_ids, bool add_special = true) const {
    return encode(text, ids, nullptr, nullptr, max_ids, add_special, false);
  }
  size_t encode(std::string_view text, int32_t* ids, edgebert::TokenSpan* spans, size_t max_ids, bool add_special,
                bool split_special) const {
    return encode(text, ids, spans, nullptr, max_ids, add_special, split_special);
  }
  size_t encode(std::string_view text, int32_t* ids, edgebert::TokenSpan* spans, int32_t* words, size_t max_ids,
                bool add_special, bool split_special, size_t stop_after = SIZE_MAX) const {
    const size_t room = std::min(max_ids, buf_.size());
    const size_t n = add_special && !split_special ? tok_.encode(text, nullptr, 0, ws_, buf_.data(), room)
                                                   : tok_.encode_segment(text, split_special, ws_, buf_.data(), room, stop_after);
    if (add_special && split_special) {  // framed by hand
      if (max_ids > 0) put(0, TextToken{cls_id(), 0, 0, 0, -1, -1}, ids, spans, words);
      for (size_t i = 0; i < n && i + 1 < max_ids; ++i) put(i + 1, buf_[i], ids, spans, words);
      if (n + 1 < max_ids) put(n + 1, TextToken{sep_id(), 0, 0, 0, -1, -1}, ids, spans, words);
      return n + 2;
    }
    for (size_t i = 0; i < std::min(n, room); ++i) put(i, buf_[i], ids, spans, words);
    return n;
  }
  int32_t cls_id() const { return tok_.frame(false).prefix[0]; }
  int32_t sep_id() const { return tok_.frame(false).suffix[0]; }
  int32_t pad_id() const { return tok_.pad_id(); }
  int32_t unk_id() const { return tok_.unk_id(); }
  size_t vocab_size() const { return tok_.vocab_size(); }
  const edgebert::text::Tokenizer& pipeline() const { return tok_; }
  edgebert::text::TextWorkspace& workspace() const { return ws_; }

 private:
  static void put(size_t i, const TextToken& t, int32_t* ids, edgebert::TokenSpan* spans, int32_t* words) {
    if (ids) ids[i] = t.id;
    if (spans) spans[i] = edgebert::TokenSpan{t.begin, t.end};
    if (words) words[i] = t.word;
  }
  std::vector<std::string> vocab_;
  edgebert::text::Tokenizer tok_;
  mutable edgebert::text::TextWorkspace ws_;
  mutable std::vector<TextToken> buf_;
};

WordPieceTokenizer make(TokenizerOptions opts = {}, const std::vector<std::string>& vocab = kVocab) {
  return WordPieceTokenizer(opts, vocab);
}

TokenizerOptions cased() {
  TokenizerOptions o;
  o.lowercase = false;
  return o;
}

// Encodes without special tokens and maps ids back to token strings.
std::vector<std::string> tokens(const WordPieceTokenizer& tok, std::string_view text,
                                const std::vector<std::string>& vocab = kVocab) {
  std::vector<int32_t> ids(256, -7);
  const size_t n = tok.encode(text, ids.data(), ids.size(), false);
  REQUIRE(n <= ids.size());
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    REQUIRE(ids[i] >= 0);
    REQUIRE(static_cast<size_t>(ids[i]) < vocab.size());
    out.push_back(vocab[static_cast<size_t>(ids[i])]);
  }
  return out;
}

using Toks = std::vector<std::string>;

}  // namespace

// ---- tests -----------------------------------------------------------------------------------

TEST_CASE("tokenizer init validates the vocabulary and options", "[tokenizer]") {
  using edgebert::text::Tokenizer;
  Tokenizer tok;
  CHECK_FALSE(tok.init_bert_vocab(std::vector<std::string_view>{}, {}).is_ok());
  CHECK_FALSE(tok.initialized());
  edgebert::text::TextWorkspace ws;
  TextToken out[1];
  CHECK(tok.encode_segment("hello", false, ws, out, 1) == 0);  // uninitialized: nothing, no crash

  const std::vector<std::string> no_unk = {"[CLS]", "[SEP]", "a"};
  edgebert::Status st = tok.init_bert_vocab(views(no_unk), {});
  CHECK(st.code() == EB_ERROR_INVALID_MODEL);
  CHECK(st.message().find("[UNK]") != std::string::npos);
  TokenizerOptions given;
  given.unk_id = 2;
  REQUIRE(tok.init_bert_vocab(views(no_unk), given).is_ok());
  CHECK(tok.unk_id() == 2);
  CHECK(tok.frame(false).prefix == std::vector<int32_t>{0});
  CHECK(tok.frame(false).suffix == std::vector<int32_t>{1});
  CHECK(tok.pad_id() == 0);  // no [PAD]: falls back to id 0

  const std::vector<std::string> no_cls = {"[UNK]", "[SEP]"};
  CHECK_FALSE(tok.init_bert_vocab(views(no_cls), {}).is_ok());
  CHECK_FALSE(tok.initialized());  // a failed init leaves the tokenizer unusable
  CHECK_FALSE(tok.init_bert_vocab(views(kVocab), [] { TokenizerOptions o; o.sep_id = 1000; return o; }()).is_ok());
  CHECK_FALSE(tok.init_bert_vocab(views(kVocab), [] { TokenizerOptions o; o.cls_id = -2; return o; }()).is_ok());
  CHECK_FALSE(tok.init_bert_vocab(views(kVocab), [] { TokenizerOptions o; o.max_input_chars_per_word = -1; return o; }()).is_ok());
  CHECK_FALSE(tok.init_bert_vocab(views(kVocab), [] {
    TokenizerOptions o;
    o.max_input_chars_per_word = edgebert::text::kMaxInputCharsPerWord + 1;
    return o;
  }()).is_ok());

  const auto t = make();
  CHECK(t.vocab_size() == kVocab.size());
  CHECK(t.pad_id() == 0);
  CHECK(t.unk_id() == 1);
  CHECK(t.cls_id() == 2);
  CHECK(t.sep_id() == 3);
  CHECK(t.pipeline().is_word_local());

  // A later duplicate wins (like HF's vocabulary map); "##" alone is an ordinary token.
  const std::vector<std::string> dup = {"[UNK]", "[CLS]", "[SEP]", "x", "x", "##", "##y", "##y"};
  const auto d = make({}, dup);
  int32_t ids[4];
  REQUIRE(d.encode("x xy", ids, 4, false) == 3);
  CHECK(ids[0] == 4);
  CHECK(ids[1] == 4);
  CHECK(ids[2] == 7);
}

TEST_CASE("uncased English with WordPiece continuation pieces", "[tokenizer]") {
  const auto tok = make();
  int32_t ids[16];
  const size_t n = tok.encode("Hello, World! unaffable", ids, 16);
  REQUIRE(n == 9);
  const std::vector<int32_t> expected = {2, 5, 7, 6, 8, 9, 10, 11, 3};
  CHECK(std::vector<int32_t>(ids, ids + n) == expected);
  CHECK(tokens(tok, "HELLO  world") == Toks{"hello", "world"});
}

TEST_CASE("lower-casing strips accents", "[tokenizer]") {
  const auto tok = make();
  CHECK(tokens(tok, "H\xC3\xA9ll\xC3\xB2") == Toks{"hello"});              // Héllò
  CHECK(tokens(tok, "HE\xCC\x81LLO\xCC\x80") == Toks{"hello"});            // combining marks
  CHECK(tokens(tok, "Na\xC3\xAFve CAF\xC3\x89") == Toks{"naive", "cafe"});  // Naïve CAFÉ
  CHECK(tokens(tok, "\xC4\xB0stanbul") == Toks{"istanbul"});                // İstanbul
  CHECK(tokens(tok, "\xCE\x9F\xCE\x94\xCE\x8C\xCE\xA3") ==  // ΟΔΌΣ: Σ -> σ, never ς (HF lower-cases
        Toks{"\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83"});           // character by character; Python: ς)
  CHECK(tokens(tok, "\xD0\x81\xD0\x96\xD0\x98\xD0\x9A") ==                 // ЁЖИК -> ежик
        Toks{"\xD0\xB5\xD0\xB6\xD0\xB8\xD0\xBA"});
  CHECK(tokens(tok, "\xE3\x81\x8C") == Toks{"\xE3\x81\x8B"});               // が -> か
  CHECK(tokens(tok, "\xED\x95\x9C") ==                                      // 한 -> jamo
        Toks{"\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"});
}

TEST_CASE("cased mode keeps case and accents", "[tokenizer]") {
  const auto tok = make(cased());
  CHECK(tokens(tok, "Hello, World!") == Toks{"Hello", ",", "World", "!"});
  CHECK(tokens(tok, "H\xC3\xA9ll\xC3\xB2 hello") == Toks{"H\xC3\xA9ll\xC3\xB2", "hello"});
  CHECK(tokens(tok, "HELLO Hello\xCC\x81") == Toks{"[UNK]", "[UNK]"});  // no lower-casing or stripping
  CHECK(tokens(tok, "BERT\xE6\xA8\xA1\xE5\x9E\x8B") == Toks{"BERT", "\xE6\xA8\xA1", "\xE5\x9E\x8B"});
}

TEST_CASE("Chinese characters become single-character words", "[tokenizer]") {
  const auto tok = make();
  CHECK(tokens(tok, "\xE6\x88\x91\xE7\x88\xB1\xE5\x8C\x97\xE4\xBA\xAC") ==  // 我爱北京
        Toks{"\xE6\x88\x91", "\xE7\x88\xB1", "\xE5\x8C\x97", "\xE4\xBA\xAC"});
  CHECK(tokens(tok, "BERT\xE6\xA8\xA1\xE5\x9E\x8B") ==  // BERT模型
        Toks{"bert", "\xE6\xA8\xA1", "\xE5\x9E\x8B"});
  CHECK(tokens(tok, "\xE4\xBA\xAC\xE3\x80\x82") == Toks{"\xE4\xBA\xAC", "\xE3\x80\x82"});  // 京。

  TokenizerOptions o;
  o.handle_chinese_chars = false;
  const auto whole = make(o);
  CHECK(tokens(whole, "\xE6\x88\x91\xE7\x88\xB1\xE5\x8C\x97\xE4\xBA\xAC") ==
        Toks{"\xE6\x88\x91", "##\xE7\x88\xB1", "##\xE5\x8C\x97", "##\xE4\xBA\xAC"});
  CHECK(tokens(whole, "BERT\xE6\xA8\xA1\xE5\x9E\x8B") == Toks{"[UNK]"});
}

TEST_CASE("punctuation is split off", "[tokenizer]") {
  const auto tok = make();
  CHECK(tokens(tok, "a.b,c!?") == Toks{"a", ".", "b", ",", "c", "!", "?"});
  CHECK(tokens(tok, "\xC2\xBFQu\xC3\xA9?") == Toks{"\xC2\xBF", "que", "?"});  // ¿Qué?
  CHECK(tokens(tok, "\xC2\xABhi\xC2\xBB \xE2\x80\x9Chi\xE2\x80\x9D") ==       // «hi» “hi”
        Toks{"\xC2\xAB", "hi", "\xC2\xBB", "\xE2\x80\x9C", "hi", "\xE2\x80\x9D"});
  CHECK(tokens(tok, "a\xE2\x80\x94" "b") == Toks{"a", "\xE2\x80\x94", "b"});        // em dash
  CHECK(tokens(tok, "hi\xEF\xBC\x81") == Toks{"hi", "\xEF\xBC\x81"});              // fullwidth !
  CHECK(tokens(tok, "$5+3=5") == Toks{"$", "5", "+", "3", "=", "5"});  // ASCII symbols count
  CHECK(tokens(tok, "5\xE2\x82\xAC") == Toks{"5\xE2\x82\xAC"});        // € is not punctuation
  CHECK(tokens(tok, "hi#") == Toks{"hi", "[UNK]"});                    // unknown punctuation
}

TEST_CASE("unknown and too-long words become a single [UNK]", "[tokenizer]") {
  const auto tok = make();
  CHECK(tokens(tok, "zebra hello") == Toks{"[UNK]", "hello"});
  CHECK(tokens(tok, "unaffablex") == Toks{"[UNK]"});  // a failing piece discards the others
  CHECK(tokens(tok, "abcdef abcde") == Toks{"abc", "##de", "##f", "abc", "##de"});

  TokenizerOptions o;
  o.max_input_chars_per_word = 5;
  const auto short_words = make(o);
  CHECK(tokens(short_words, "abcdef abcde") == Toks{"[UNK]", "abc", "##de"});
  std::string long_word(5000, 'a');
  CHECK(tokens(short_words, long_word + " hello") == Toks{"[UNK]", "hello"});

  // The limit counts code points, not bytes.
  TokenizerOptions oc = cased();
  oc.max_input_chars_per_word = 5;
  const auto cased_short = make(oc);
  CHECK(tokens(cased_short, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9") ==
        Toks{"\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"});
  CHECK(tokens(cased_short, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9") == Toks{"[UNK]"});

  TokenizerOptions zero;
  zero.max_input_chars_per_word = 0;
  CHECK(tokens(make(zero), "hello , x") == Toks{"[UNK]", "[UNK]", "[UNK]"});
}

TEST_CASE("encode reports the full length when truncating", "[tokenizer]") {
  const auto tok = make();
  int32_t ids[8];
  std::fill(std::begin(ids), std::end(ids), -7);
  const size_t n = tok.encode("Hello, World! unaffable", ids, 4);
  CHECK(n == 9);
  CHECK(ids[0] == 2);
  CHECK(ids[1] == 5);
  CHECK(ids[2] == 7);
  CHECK(ids[3] == 6);
  CHECK(ids[4] == -7);  // nothing written past max_ids
  CHECK(tok.encode("Hello, World! unaffable", nullptr, 0) == 9);
  CHECK(tok.encode("Hello, World! unaffable", nullptr, 0, false) == 7);

  // Truncation in the middle of a word that later turns out to be [UNK].
  std::fill(std::begin(ids), std::end(ids), -7);
  CHECK(tok.encode("unaffablex hello", ids, 3) == 4);
  CHECK(ids[0] == 2);
  CHECK(ids[1] == 1);
  CHECK(ids[2] == 5);
}

TEST_CASE("stop_after: encoding stops at the first word boundary past the limit", "[tokenizer]") {
  const auto tok = make();
  // "hello , world ! un ##aff ##able" x 3 (no special tokens): 21 tokens
  const std::string text = "Hello, World! unaffable Hello, World! unaffable Hello, World! unaffable";
  int32_t full[32], part[32];
  edgebert::TokenSpan full_spans[32], part_spans[32];
  const size_t n = tok.encode(text, full, full_spans, nullptr, 32, false, false);
  REQUIRE(n == 21);
  for (size_t limit : {0, 1, 4, 5, 6, 12, 20}) {
    INFO("stop_after " << limit);
    const size_t m = tok.encode(text, part, part_spans, nullptr, limit, false, false, limit);
    CHECK(m > limit);  // more than the limit is known ...
    CHECK(m <= n);     // ... and no more than there are
    for (size_t i = 0; i < limit; ++i) {  // the tokens written are the whole text's
      CHECK(part[i] == full[i]);
      CHECK(part_spans[i].begin == full_spans[i].begin);
    }
  }
  // "unaffable" (3 pieces) is one word: stopping after "un" still finishes the word
  CHECK(tok.encode(text, part, nullptr, nullptr, 5, false, false, 4) == 7);
  CHECK(tok.encode(text, part, nullptr, nullptr, 32, false, false, 21) == 21);  // at the limit: the full count
  CHECK(tok.encode(text, part, nullptr, nullptr, 32, false, false, SIZE_MAX) == 21);
}

TEST_CASE("texts longer than the workspace are streamed with the whole text's tokens", "[tokenizer]") {
  const std::vector<std::string> pool = {
      "Hello", "world", ",", "!", "unaffable", "H\xC3\xA9ll\xC3\xB2", "HE\xCC\x81LLO\xCC\x80", "[SEP]", "[MASK]",
      "\xE6\x88\x91\xE7\x88\xB1\xE5\x8C\x97\xE4\xBA\xAC", "BERT\xE6\xA8\xA1\xE5\x9E\x8B", "\x01", "\xE2\x80\x8B",
      "\xC2\xA0", "zebra", "a.b,c", "\xCE\x9F\xCE\x94\xCE\x8C\xCE\xA3", "$5+3=5", "[SEP", "abcdef", " ", "\t", "\n",
      "\xED\x95\x9C", "\xC2\xBFQu\xC3\xA9?"};
  std::mt19937 rng(7);
  for (const TokenizerOptions& o : {TokenizerOptions{}, cased(), [] {
         TokenizerOptions n;
         n.handle_chinese_chars = false;
         return n;
       }()}) {
    const auto tok = make(o);
    for (int iter = 0; iter < 20; ++iter) {
      std::string text;
      const size_t target = WordPieceTokenizer::kReserved * (1 + iter % 4) + rng() % 1000;
      while (text.size() < target) {
        text += pool[rng() % pool.size()];
        if (rng() % 3 != 0) text += ' ';
        if (iter % 5 == 0 && rng() % 50 == 0) text += std::string(3000, 'a');  // long stretches without a cut
      }
      // the whole text at once: a workspace without a reserved size is never streamed
      edgebert::text::TextWorkspace whole_ws;
      std::vector<TextToken> whole(text.size() + 8);
      const size_t n = tok.pipeline().encode_segment(text, false, whole_ws, whole.data(), whole.size());
      std::vector<TextToken> part(text.size() + 8);
      REQUIRE(text.size() > tok.workspace().reserved_bytes);
      const size_t m = tok.pipeline().encode_segment(text, false, tok.workspace(), part.data(), part.size());
      REQUIRE(m == n);
      for (size_t i = 0; i < n; ++i) {
        INFO("token " << i << " of " << n);
        REQUIRE(part[i].id == whole[i].id);
        REQUIRE(part[i].begin == whole[i].begin);
        REQUIRE(part[i].end == whole[i].end);
        REQUIRE(part[i].word == whole[i].word);
      }
      // stop_after: more than the limit, the first tokens the whole text's
      const size_t limit = n / 3;
      const size_t k = tok.pipeline().encode_segment(text, false, tok.workspace(), part.data(), limit, limit);
      CHECK(k > limit);
      CHECK(k <= n);
      for (size_t i = 0; i < limit; ++i) REQUIRE(part[i].id == whole[i].id);
    }
  }
  // more than the workspace's bytes without a place to cut: refused (SIZE_MAX), never read whole
  const auto tok = make();
  const std::string one_word(3 * WordPieceTokenizer::kReserved, 'a');
  TextToken t[4];
  CHECK(tok.pipeline().encode_segment("hi " + one_word, false, tok.workspace(), t, 4) == SIZE_MAX);
  CHECK(tok.pipeline().encode_segment(one_word.substr(0, WordPieceTokenizer::kReserved), false, tok.workspace(), t, 4) == 1);
}

TEST_CASE("empty and whitespace-only text", "[tokenizer]") {
  const auto tok = make();
  int32_t ids[4];
  REQUIRE(tok.encode("", ids, 4) == 2);
  CHECK(ids[0] == tok.cls_id());
  CHECK(ids[1] == tok.sep_id());
  CHECK(tok.encode(" \t\r\n\xC2\xA0\xE3\x80\x80", ids, 4) == 2);
  CHECK(tok.encode("", ids, 4, false) == 0);
}

TEST_CASE("whitespace and control characters", "[tokenizer]") {
  const auto tok = make();
  CHECK(tokens(tok, "\thello\r\nworld\xC2\xA0" "a\xE3\x80\x80" "b\xE2\x80\xA8" "c") ==
        Toks{"hello", "world", "a", "b", "c"});  // \t \r\n NBSP, ideographic space, U+2028
  CHECK(tokens(tok, "\x01he\x7fl\x1bl\xC2\x85o") == Toks{"hello"});  // Cc dropped (not spaces)
  CHECK(tokens(tok, std::string_view("hel\0lo", 6)) == Toks{"hello"});  // NUL dropped
  CHECK(tokens(tok, "hel\xE2\x80\x8Blo wor\xC2\xAD" "ld") == Toks{"hello", "world"});  // ZWSP, SHY
  CHECK(tokens(tok, "hel\xEF\xBF\xBDlo \xEE\x80\x80world") == Toks{"hello", "world"});  // U+FFFD, PUA
}

TEST_CASE("invalid UTF-8 never crashes and is dropped", "[tokenizer]") {
  const auto tok = make();
  CHECK(tokens(tok, "hel\xFFlo") == Toks{"hello"});
  CHECK(tokens(tok, "hel\xC0\xAFlo") == Toks{"hello"});        // overlong '/'
  CHECK(tokens(tok, "hel\xED\xA0\x80lo") == Toks{"hello"});    // encoded surrogate
  CHECK(tokens(tok, "hel\xF4\x90\x80\x80lo") == Toks{"hello"});  // > U+10FFFF
  CHECK(tokens(tok, "hello\xE4\xBA") == Toks{"hello"});        // truncated at the end
  CHECK(tokens(tok, "\x80\xBF world") == Toks{"world"});       // stray continuation bytes

  std::mt19937 rng(1234);
  std::vector<int32_t> ids(64);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string s(rng() % 64, '\0');
    for (char& ch : s) ch = static_cast<char>(rng() % 256);
    const size_t n = tok.encode(s, ids.data(), ids.size());
    REQUIRE(n >= 2);
    for (size_t i = 0; i < std::min(n, ids.size()); ++i) {
      REQUIRE(ids[i] >= 0);
      REQUIRE(static_cast<size_t>(ids[i]) < tok.vocab_size());
    }
  }
}

TEST_CASE("encode performs no heap allocation", "[tokenizer]") {
  TokenizerOptions o;
  const auto uncased = make(o);
  o.handle_chinese_chars = false;
  const auto no_cjk = make(o);
  const auto cased_tok = make(cased());

  std::string text =
      "Hello, World! unaffable H\xC3\xA9ll\xC3\xB2 \xCE\x9F\xCE\x94\xCE\x8C\xCE\xA3 "
      "\xE6\x88\x91\xE7\x88\xB1\xE5\x8C\x97\xE4\xBA\xAC BERT\xE6\xA8\xA1\xE5\x9E\x8B "
      "\xED\x95\x9C\xE3\x81\x8C \xC2\xBFQu\xC3\xA9? zebra \xFF\xC0 \x01\t";
  text += std::string(3000, 'a');  // a too-long word
  text += " abcdef";
  for (int i = 0; i < 200; ++i) text += " unaffable";
  std::vector<int32_t> ids(64);
  edgebert::TokenSpan spans[64];

  std::string long_text;  // longer than the workspace: streamed in pieces
  while (long_text.size() < 3 * WordPieceTokenizer::kReserved) long_text += text.substr(0, 200) + " ";
  const long before = g_allocations.load();
  size_t total = 0;
  for (const WordPieceTokenizer* t : {&uncased, &no_cjk, &cased_tok}) {
    total += t->encode(text, ids.data(), ids.size());
    total += t->encode(text, nullptr, 0, false);
    total += t->encode("", ids.data(), ids.size());
    total += t->encode(text, ids.data(), spans, ids.size(), false, true);
    total += t->encode("a [SEP] b[MASK]", ids.data(), spans, ids.size(), true, false);
    total += t->encode(long_text, ids.data(), spans, ids.size(), false, false);
    total += t->encode(long_text, ids.data(), spans, nullptr, ids.size(), false, false, 10);
  }
  const long after = g_allocations.load();
  CHECK(after == before);
  CHECK(total > 600);
}

namespace {

struct Encoded {
  std::vector<std::string> tokens;
  std::vector<std::string> texts;  // the byte range of each token in the input
  std::vector<edgebert::TokenSpan> spans;
};

// Encodes with offsets; texts[i] = text.substr(span) checks offsets against the input itself.
Encoded encode_spans(const WordPieceTokenizer& tok, std::string_view text, bool split_special = false,
                     bool add_special = false) {
  std::vector<int32_t> ids(256);
  std::vector<edgebert::TokenSpan> spans(256, edgebert::TokenSpan{-1, -1});
  const size_t n = tok.encode(text, ids.data(), spans.data(), ids.size(), add_special, split_special);
  REQUIRE(n <= ids.size());
  Encoded e;
  for (size_t i = 0; i < n; ++i) {
    REQUIRE(ids[i] >= 0);
    REQUIRE(static_cast<size_t>(ids[i]) < kVocab.size());
    const edgebert::TokenSpan sp = spans[i];
    REQUIRE(0 <= sp.begin);
    REQUIRE(sp.begin <= sp.end);
    REQUIRE(static_cast<size_t>(sp.end) <= text.size());
    if (sp.end > sp.begin) {  // tokens from the text come in text order
      for (const edgebert::TokenSpan& prev : e.spans) REQUIRE((prev.end == prev.begin || prev.end <= sp.begin));
    }
    e.tokens.push_back(kVocab[static_cast<size_t>(ids[i])]);
    e.texts.emplace_back(text.substr(static_cast<size_t>(sp.begin), static_cast<size_t>(sp.end - sp.begin)));
    e.spans.push_back(sp);
  }
  return e;
}

}  // namespace

TEST_CASE("special tokens written in the text are single tokens by default (HF)", "[tokenizer]") {
  const auto tok = make();
  CHECK(tokens(tok, "hello [SEP] world") == Toks{"hello", "[SEP]", "world"});
  CHECK(tokens(tok, "[CLS]hello[SEP]world[MASK]") == Toks{"[CLS]", "hello", "[SEP]", "world", "[MASK]"});
  CHECK(tokens(tok, "a[PAD][UNK]b") == Toks{"a", "[PAD]", "[UNK]", "b"});
  // matched case-sensitively on the raw text, even though the text is lower-cased
  CHECK(tokens(tok, "[sep]") == Toks{"[UNK]", "[UNK]", "[UNK]"});
  CHECK(tokens(tok, "[Sep]") == Toks{"[UNK]", "[UNK]", "[UNK]"});
  CHECK(tokens(tok, "[SEP") == Toks{"[UNK]", "[UNK]"});  // incomplete: plain text
  CHECK(tokens(tok, "[[SEP]]") == Toks{"[UNK]", "[SEP]", "[UNK]"});
  // also in cased mode
  CHECK(tokens(make(cased()), "Hello[SEP]BERT") == Toks{"Hello", "[SEP]", "BERT"});
  // with [CLS]/[SEP] added around
  int32_t ids[8];
  REQUIRE(tok.encode("hello [SEP] world", ids, 8) == 5);
  CHECK(std::vector<int32_t>(ids, ids + 5) == std::vector<int32_t>{2, 5, 3, 6, 3});

  // only the special tokens the vocabulary has are matched
  const std::vector<std::string> small = {"[UNK]", "[CLS]", "[SEP]", "a", "[", "]", "mask", "##mask", "m"};
  const auto st = make({}, small);
  std::vector<int32_t> out(16);
  const size_t n = st.encode("a[MASK]", out.data(), out.size(), false);
  // "[MASK]" is not in this vocabulary: "[" "mask" "]" (lower-cased text)
  CHECK(std::vector<int32_t>(out.begin(), out.begin() + static_cast<long>(n)) == std::vector<int32_t>{3, 4, 6, 5});
}

TEST_CASE("split_special_tokens treats special-token strings as plain text", "[tokenizer]") {
  const auto tok = make();
  const Encoded e = encode_spans(tok, "hello [SEP] world", /*split_special=*/true);
  CHECK(e.tokens == Toks{"hello", "[UNK]", "[UNK]", "[UNK]", "world"});  // "[", "sep", "]"
  CHECK(e.texts == Toks{"hello", "[", "SEP", "]", "world"});
  const Encoded kept = encode_spans(tok, "hello [SEP] world", false);
  CHECK(kept.tokens == Toks{"hello", "[SEP]", "world"});
  CHECK(kept.texts == Toks{"hello", "[SEP]", "world"});
  CHECK(kept.spans[1].begin == 6);
  CHECK(kept.spans[1].end == 11);
}

TEST_CASE("byte offsets of words, pieces and punctuation", "[tokenizer]") {
  const auto tok = make();
  const Encoded e = encode_spans(tok, "  Hello, World!  unaffable", false, true);
  CHECK(e.tokens == Toks{"[CLS]", "hello", ",", "world", "!", "un", "##aff", "##able", "[SEP]"});
  CHECK(e.texts == Toks{"", "Hello", ",", "World", "!", "un", "aff", "able", ""});
  CHECK(e.spans[0].begin == 0);
  CHECK(e.spans[0].end == 0);
  CHECK(e.spans[1].begin == 2);
  CHECK(e.spans[1].end == 7);
  CHECK(e.spans[8].begin == 0);
  CHECK(e.spans[8].end == 0);
  CHECK(e.spans[7].begin == 22);
  CHECK(e.spans[7].end == 26);
}

TEST_CASE("byte offsets map lower-cased and accent-stripped pieces to the original bytes", "[tokenizer]") {
  const auto tok = make();
  // Naïve CAFÉ: precomposed, 2-byte characters
  Encoded e = encode_spans(tok, "Na\xC3\xAFve CAF\xC3\x89!");
  CHECK(e.tokens == Toks{"naive", "cafe", "!"});
  CHECK(e.texts == Toks{"Na\xC3\xAFve", "CAF\xC3\x89", "!"});
  // decomposed: a dropped combining mark inside the word stays with its letter, the one at the
  // word's end leaves its offsets (HF; Python's BertTokenizer kept it)
  e = encode_spans(tok, "HE\xCC\x81LLO\xCC\x80 x");
  CHECK(e.tokens[0] == "hello");
  CHECK(e.texts[0] == "HE\xCC\x81LLO");
  // İstanbul (2-byte İ -> "i")
  e = encode_spans(tok, "\xC4\xB0stanbul");
  CHECK(e.texts == Toks{"\xC4\xB0stanbul"});
  // Hangul syllable -> three jamo: one token covering the 3-byte syllable
  e = encode_spans(tok, "a \xED\x95\x9C");
  CHECK(e.tokens == Toks{"a", "\xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB"});
  CHECK(e.texts == Toks{"a", "\xED\x95\x9C"});
  // pieces inside an accented word: "ééééé" is one vocab token in cased mode
  const auto ct = make(cased());
  std::vector<int32_t> ids(8);
  edgebert::TokenSpan sp[8];
  REQUIRE(ct.encode("x \xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", ids.data(), sp, 8, false, false) == 2);
  CHECK(sp[1].begin == 2);
  CHECK(sp[1].end == 12);
}

TEST_CASE("byte offsets of CJK characters and WordPiece pieces of CJK words", "[tokenizer]") {
  const auto tok = make();
  Encoded e = encode_spans(tok, "\xE6\x88\x91\xE7\x88\xB1\xE5\x8C\x97\xE4\xBA\xAC!");  // 我爱北京!
  CHECK(e.tokens == Toks{"\xE6\x88\x91", "\xE7\x88\xB1", "\xE5\x8C\x97", "\xE4\xBA\xAC", "!"});
  CHECK(e.texts == e.tokens);
  CHECK(e.spans[3].begin == 9);
  CHECK(e.spans[3].end == 12);
  // without CJK splitting the word is split by WordPiece: 我 ##爱 ##北 ##京
  TokenizerOptions o;
  o.handle_chinese_chars = false;
  e = encode_spans(make(o), "a \xE6\x88\x91\xE7\x88\xB1\xE5\x8C\x97\xE4\xBA\xAC");
  CHECK(e.tokens == Toks{"a", "\xE6\x88\x91", "##\xE7\x88\xB1", "##\xE5\x8C\x97", "##\xE4\xBA\xAC"});
  CHECK(e.texts == Toks{"a", "\xE6\x88\x91", "\xE7\x88\xB1", "\xE5\x8C\x97", "\xE4\xBA\xAC"});
}

TEST_CASE("byte offsets with [UNK], too-long words, dropped bytes and invalid UTF-8", "[tokenizer]") {
  const auto tok = make();
  Encoded e = encode_spans(tok, "hello zebra!");
  CHECK(e.tokens == Toks{"hello", "[UNK]", "!"});
  CHECK(e.texts == Toks{"hello", "zebra", "!"});
  e = encode_spans(tok, "hel\xFFlo \x01wor\xE2\x80\x8Bld");  // invalid byte, control, ZWSP
  CHECK(e.tokens == Toks{"hello", "world"});
  CHECK(e.texts == Toks{"hel\xFFlo", "wor\xE2\x80\x8Bld"});
  const std::string long_word(150, 'a');
  e = encode_spans(tok, "hi " + long_word + " hi");
  CHECK(e.tokens == Toks{"hi", "[UNK]", "hi"});
  CHECK(e.texts[1] == long_word);

  // random bytes: every span stays inside the text and in order (checked by encode_spans)
  std::mt19937 rng(99);
  for (int iter = 0; iter < 500; ++iter) {
    std::string s(rng() % 48, '\0');
    for (char& ch : s) ch = static_cast<char>(rng() % 4 == 0 ? '[' : rng() % 256);
    if (iter % 7 == 0) s += "[SEP]";
    encode_spans(tok, s, iter % 2 == 0);
  }
}

TEST_CASE("capital sigma before a special token", "[tokenizer]") {
  const auto tok = make();
  // ΟΔΟΣ[SEP]: [SEP] is matched in the raw text first; Σ becomes σ (HF: no final-sigma rule)
  CHECK(tokens(tok, "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3[SEP]") == Toks{"\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83", "[SEP]"});
}

TEST_CASE("real uncased BERT vocabulary: HF tokens, special tokens in the text and offsets", "[tokenizer]") {
  const char* shared = std::getenv("EDGEBERT_SHARED");
  const std::string path =
      std::string(shared ? shared : "../shared") + "/models/bert-tiny-sst2-encoder/vocab.txt";  // bert-base-uncased vocab
  std::ifstream f(path);
  if (!f) {
    WARN("SKIPPED: " << path << " not found");
    return;
  }
  std::vector<std::string> vocab;
  for (std::string line; std::getline(f, line);) vocab.push_back(line);
  REQUIRE(vocab.size() == 30522);
  const auto tok = make({}, vocab);
  auto run = [&](std::string_view text, bool split) {
    std::vector<int32_t> ids(64);
    std::vector<edgebert::TokenSpan> spans(64);
    const size_t n = tok.encode(text, ids.data(), spans.data(), ids.size(), true, split);
    REQUIRE(n <= ids.size());
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) {
      out.push_back(vocab[static_cast<size_t>(ids[i])] + "@" + std::to_string(spans[i].begin) + "-" +
                    std::to_string(spans[i].end));
    }
    return out;
  };
  // HF documentation example (bert-base-uncased): i have a new gp ##u !
  CHECK(run("I have a new GPU!", false) ==
        Toks{"[CLS]@0-0", "i@0-1", "have@2-6", "a@7-8", "new@9-12", "gp@13-15", "##u@15-16", "!@16-17", "[SEP]@0-0"});
  // a hand-written question/context pair: [SEP] and [MASK] stay single tokens (ids 102, 103)
  CHECK(run("Who was RUDE? [SEP] The hotel [MASK].", false) ==
        Toks{"[CLS]@0-0", "who@0-3", "was@4-7", "rude@8-12", "?@12-13", "[SEP]@14-19", "the@20-23", "hotel@24-29",
             "[MASK]@30-36", ".@36-37", "[SEP]@0-0"});
  CHECK(run("[SEP]", true) == Toks{"[CLS]@0-0", "[@0-1", "sep@1-4", "]@4-5", "[SEP]@0-0"});
}
