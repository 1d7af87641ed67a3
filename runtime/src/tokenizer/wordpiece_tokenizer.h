// SPDX-License-Identifier: Apache-2.0
// BERT WordPiece tokenizer (BasicTokenizer + WordpieceTokenizer behaviour of the reference BERT
// implementation): UTF-8 text -> vocabulary ids. All tables are built in init(); encode() does not
// allocate and is safe to call concurrently on one initialized tokenizer.
//
// Pipeline of encode(), as in the reference:
//   0. unless split_special_tokens: the strings [CLS] [SEP] [MASK] [PAD] [UNK] written in the text
//      (those present in the vocabulary; matched case-sensitively on the raw bytes, anywhere, as
//      HuggingFace does before normalization even with do_lower_case) become single tokens
//   1. clean: drop NUL, U+FFFD (also produced by invalid UTF-8) and control/format characters
//      (Cc except \t \n \r, Cf, Co, Cs, noncharacters); whitespace (\t \n \r, Zs, U+2028/2029) -> space
//   2. CJK ideographs become single-character words (tokenize_chinese_chars)
//   3. split on whitespace
//   4. do_lower_case: full Unicode simple lower-casing (incl. final sigma, U+0130 -> "i"), then NFD
//      and removal of nonspacing marks (Mn) -- see wordpiece_tokenizer.cpp for what is covered
//   5. split off punctuation (ASCII 33-47, 58-64, 91-96, 123-126 and General_Category P*)
//   6. greedy longest-match-first WordPiece with "##" continuation prefix; a word with more than
//      max_chars_per_word code points, or with a part that matches nothing, becomes [UNK]
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgebert {

// Byte range [begin, end) in the encoded text that a token came from. WordPiece pieces map back
// to the original bytes (through lower-casing, accent stripping and dropped combining marks);
// the [CLS]/[SEP] added by add_special_tokens get {0, 0}.
struct TokenSpan {
  int32_t begin, end;
};

struct TokenizerOptions {
  bool do_lower_case = true;           // lower-case + strip accents (NFD, drop combining marks)
  bool tokenize_chinese_chars = true;  // CJK ideographs become single-character words
  int32_t unk_id = -1, cls_id = -1, sep_id = -1, pad_id = -1;  // -1: look up "[UNK]","[CLS]","[SEP]","[PAD]"
  int max_chars_per_word = 100;        // longer words become [UNK]; 0..kMaxCharsPerWordLimit
};

class WordPieceTokenizer {
 public:
  // Upper bound accepted for TokenizerOptions::max_chars_per_word (encode keeps one word in a
  // fixed stack buffer of 4 * limit + 4 bytes).
  static constexpr int kMaxCharsPerWordLimit = 1024;
  // The message init() leaves when an allocation failed (callers map it to an out-of-memory status).
  static constexpr const char* kOutOfMemoryMessage = "tokenizer: out of memory";

  // vocab[i] is the token with id i (used verbatim; a later duplicate wins, as in the reference).
  // Copies what it needs. Returns false (and sets *error if non-null) on an unusable vocab (empty,
  // more than INT32_MAX tokens, missing [UNK]/[CLS]/[SEP] when not given by id, ids out of range)
  // or bad options, leaving the tokenizer uninitialized. A missing "[PAD]" falls back to id 0.
  // Can be called again to re-initialize.
  bool init(const std::vector<std::string_view>& vocab, const TokenizerOptions& opts,
            std::string* error);

  // Tokenizes UTF-8 `text` (invalid UTF-8 bytes are treated as U+FFFD, i.e. dropped) into ids:
  // [CLS] tokens... [SEP] when add_special_tokens. Writes the first min(result, max_ids) ids into
  // `ids` (may be null when max_ids == 0) and returns the length of the full encoding, so
  // result > max_ids means truncation. Entries of `ids` past the returned length may have been
  // overwritten. Zero heap allocations. Returns 0 when not initialized.
  // Special-token strings in the text are kept as single tokens (split_special_tokens = false).
  size_t encode(std::string_view text, int32_t* ids, size_t max_ids,
                bool add_special_tokens = true) const;

  // As above, plus: `spans` (may be null) receives the byte range of each of the first
  // min(result, max_ids) tokens; split_special_tokens = true tokenizes "[SEP]" etc. in the text
  // as plain text. Texts longer than INT32_MAX bytes give spans clamped to INT32_MAX.
  size_t encode(std::string_view text, int32_t* ids, TokenSpan* spans, size_t max_ids,
                bool add_special_tokens, bool split_special_tokens) const;
  // As above, plus `words` (may be null): the index of the word each token belongs to (a run of
  // characters between whitespace, a punctuation character, a CJK ideograph or a special token
  // written in the text, as HuggingFace's word_ids() counts them); -1 for the added [CLS]/[SEP].
  size_t encode(std::string_view text, int32_t* ids, TokenSpan* spans, int32_t* words, size_t max_ids,
                bool add_special_tokens, bool split_special_tokens) const;
  // As above, but stops at the first word boundary after more than `stop_after` tokens: the
  // result is then some count > stop_after (not the full length), and the rest of the text is
  // not read. Time and memory stay bounded by what was read (callers refusing a text that cannot
  // fit stop as soon as it cannot).
  size_t encode(std::string_view text, int32_t* ids, TokenSpan* spans, int32_t* words, size_t max_ids,
                bool add_special_tokens, bool split_special_tokens, size_t stop_after) const;

  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  size_t vocab_size() const { return vocab_size_; }
  bool initialized() const { return vocab_size_ != 0; }

 private:
  struct Slot {
    uint32_t offset;  // key bytes in chars_
    uint32_t length;  // key length in bytes; top bit set for "##" continuation keys
    uint32_t hash;    // low 32 bits of the key hash
    int32_t id;       // -1: empty slot
  };
  class Encoder;  // per-call encoding state (lives on the stack of encode)
  struct SpecialToken {
    char text[8];    // "[CLS]", "[SEP]", "[MASK]", "[PAD]" or "[UNK]"
    uint8_t length;
    int32_t id;
  };
  static constexpr int kMaxSpecialTokens = 5;

  // Id of the word-initial (continuation == false) or "##"-continuation piece `key`, or -1.
  int32_t find(const char* key, size_t length, bool continuation) const;

  std::vector<char> chars_;  // all keys, contiguous ("##" stripped from continuation tokens)
  std::vector<Slot> slots_;  // open addressing, power-of-two size
  size_t mask_ = 0;
  size_t max_word_key_ = 0;  // longest word-initial key, bytes
  size_t max_cont_key_ = 0;  // longest continuation key (without "##"), bytes
  size_t vocab_size_ = 0;
  int32_t unk_id_ = -1, cls_id_ = -1, sep_id_ = -1, pad_id_ = -1;
  bool lower_case_ = true;
  bool chinese_chars_ = true;
  int max_chars_per_word_ = 100;
  SpecialToken specials_[kMaxSpecialTokens] = {};  // those present in the vocabulary
  int num_specials_ = 0;
};

}  // namespace edgebert
