// SPDX-License-Identifier: Apache-2.0
// WordPiece tokenizer: text normalization (BERT BasicTokenizer), vocabulary hash table and greedy
// longest-match-first WordPiece.
//
// Character classes: text/python_unicode.h (Python 3.11 / Unicode 14.0, as the reference).
//  - no NFC composition (newer HuggingFace versions add one before splitting; Google's does not).
//  - special-token strings in the text (e.g. "[SEP]") are single tokens unless
//    split_special_tokens (HuggingFace matches them on the raw text, before normalization).
// Byte offsets: every byte of the current word remembers the source byte range of the character
// it came from, so a WordPiece piece maps back to [first byte's begin, last byte's end).
#include "tokenizer/wordpiece_tokenizer.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <new>

#include "text/python_unicode.h"
#include "text/unicode.h"

namespace edgebert {
namespace {

using text::decode_utf8;
using text::encode_utf8;
using text::kReplacementChar;
using text::py::is_case_ignorable;
using text::py::is_cased;
using text::py::is_cjk;
using text::py::is_control;
using text::py::is_nonspacing_mark;
using text::py::is_punctuation;
using text::py::is_whitespace;
using text::py::to_lower;

bool is_utf8_continuation(char b) { return (static_cast<unsigned char>(b) & 0xC0) == 0x80; }

// ---------------------------------------------------------------------------------------------
// Hashing

constexpr uint32_t kContinuationBit = 0x80000000u;  // in Slot::length: key is a "##" piece

uint64_t hash_key(const char* key, size_t length, bool continuation) {
  uint64_t h = continuation ? 0x84222325cbf29ce4ull : 0xcbf29ce484222325ull;  // FNV-1a
  for (size_t i = 0; i < length; ++i) {
    h ^= static_cast<unsigned char>(key[i]);
    h *= 0x100000001b3ull;
  }
  return h ^ (h >> 29);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Vocabulary

int32_t WordPieceTokenizer::find(const char* key, size_t length, bool continuation) const {
  if (slots_.empty()) return -1;
  const uint64_t h = hash_key(key, length, continuation);
  const uint32_t h32 = static_cast<uint32_t>(h);
  const uint32_t tagged = static_cast<uint32_t>(length) | (continuation ? kContinuationBit : 0);
  for (size_t i = static_cast<size_t>(h >> 32) & mask_;; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.id < 0) return -1;
    if (s.hash == h32 && s.length == tagged && std::memcmp(chars_.data() + s.offset, key, length) == 0) {
      return s.id;
    }
  }
}

bool WordPieceTokenizer::init(const std::vector<std::string_view>& vocab,
                              const TokenizerOptions& opts, std::string* error) {
  auto reset = [this] {
    chars_ = std::vector<char>();
    slots_ = std::vector<Slot>();
    mask_ = max_word_key_ = max_cont_key_ = vocab_size_ = 0;
    unk_id_ = cls_id_ = sep_id_ = pad_id_ = -1;
    num_specials_ = 0;
  };
  auto fail = [&](const char* message) {
    reset();
    if (error != nullptr) {
      try {
        *error = message;
      } catch (...) {
      }
    }
    return false;
  };
  reset();  // start from a clean, uninitialized state
  try {
    if (vocab.empty()) return fail("tokenizer: empty vocabulary");
    if (vocab.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
      return fail("tokenizer: vocabulary has more than 2^31-1 tokens");
    }
    if (opts.max_chars_per_word < 0 || opts.max_chars_per_word > kMaxCharsPerWordLimit) {
      return fail("tokenizer: max_chars_per_word out of range [0, 1024]");
    }
    const int64_t n = static_cast<int64_t>(vocab.size());
    for (int32_t id : {opts.unk_id, opts.cls_id, opts.sep_id, opts.pad_id}) {
      if (id < -1 || id >= n) return fail("tokenizer: special token id out of vocabulary range");
    }
    uint64_t total = 0;
    for (std::string_view t : vocab) total += t.size();
    if (total >= kContinuationBit) return fail("tokenizer: vocabulary text larger than 2 GiB");

    size_t capacity = 16;
    while (capacity < 2 * vocab.size()) capacity *= 2;
    chars_.reserve(static_cast<size_t>(total));
    slots_.assign(capacity, Slot{0, 0, 0, -1});
    mask_ = capacity - 1;
    for (size_t id = 0; id < vocab.size(); ++id) {
      std::string_view key = vocab[id];
      const bool continuation = key.size() > 2 && key[0] == '#' && key[1] == '#';
      if (continuation) key.remove_prefix(2);
      if (key.empty()) continue;  // can never match a piece
      const uint64_t h = hash_key(key.data(), key.size(), continuation);
      const uint32_t tagged =
          static_cast<uint32_t>(key.size()) | (continuation ? kContinuationBit : 0);
      size_t i = static_cast<size_t>(h >> 32) & mask_;
      for (;; i = (i + 1) & mask_) {
        Slot& s = slots_[i];
        if (s.id < 0) {
          s = Slot{static_cast<uint32_t>(chars_.size()), tagged, static_cast<uint32_t>(h),
                   static_cast<int32_t>(id)};
          chars_.insert(chars_.end(), key.begin(), key.end());
          break;
        }
        if (s.hash == static_cast<uint32_t>(h) && s.length == tagged &&
            std::memcmp(chars_.data() + s.offset, key.data(), key.size()) == 0) {
          s.id = static_cast<int32_t>(id);  // later duplicate wins, like a Python dict
          break;
        }
      }
      size_t& longest = continuation ? max_cont_key_ : max_word_key_;
      if (key.size() > longest) longest = key.size();
    }

    auto lookup = [&](int32_t given, std::string_view name) {
      return given >= 0 ? given : find(name.data(), name.size(), false);
    };
    unk_id_ = lookup(opts.unk_id, "[UNK]");
    cls_id_ = lookup(opts.cls_id, "[CLS]");
    sep_id_ = lookup(opts.sep_id, "[SEP]");
    pad_id_ = lookup(opts.pad_id, "[PAD]");
    if (unk_id_ < 0) return fail("tokenizer: vocabulary has no [UNK] token");
    if (cls_id_ < 0) return fail("tokenizer: vocabulary has no [CLS] token");
    if (sep_id_ < 0) return fail("tokenizer: vocabulary has no [SEP] token");
    if (pad_id_ < 0) pad_id_ = 0;
    for (const char* name : {"[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]"}) {
      const size_t len = std::strlen(name);
      const int32_t id = find(name, len, false);
      if (id < 0) continue;
      SpecialToken& t = specials_[num_specials_++];
      std::memcpy(t.text, name, len);
      t.length = static_cast<uint8_t>(len);
      t.id = id;
    }
    lower_case_ = opts.do_lower_case;
    chinese_chars_ = opts.tokenize_chinese_chars;
    max_chars_per_word_ = opts.max_chars_per_word;
    vocab_size_ = vocab.size();
    return true;
  } catch (const std::bad_alloc&) {
    return fail(kOutOfMemoryMessage);
  } catch (...) {
    return fail("tokenizer: unexpected error");
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding

class WordPieceTokenizer::Encoder {
 public:
  Encoder(const WordPieceTokenizer& tok, int32_t* ids, TokenSpan* spans, int32_t* words, size_t max_ids,
          bool match_specials, size_t stop_after)
      : tok_(tok),
        ids_(ids),
        spans_(spans),
        words_(words),
        max_ids_(ids != nullptr ? max_ids : 0),
        stop_after_(stop_after),
        match_specials_(match_specials) {}

  size_t count() const { return count_; }

  void emit(int32_t id, size_t begin, size_t end) {
    if (count_ < max_ids_) {
      ids_[count_] = id;
      if (spans_ != nullptr) spans_[count_] = TokenSpan{clamp(begin), clamp(end)};
      if (words_ != nullptr) words_[count_] = current_word_;
    }
    ++count_;
  }

  void run(std::string_view text) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    bool prev_cased = false;  // final-sigma context: last non-case-ignorable char was cased
    for (size_t i = 0; i < n;) {
      // (count_ only moves on when a word is flushed, and a flushed word's tokens stay: once past
      // the limit the full length is too, whatever the word in progress gives)
      if (count_ > stop_after_) return;
      if (const SpecialToken* t = special_at(s, i, n)) {
        flush_word();
        current_word_ = word_index_++;
        emit(t->id, i, i + t->length);
        current_word_ = -1;
        i += t->length;
        prev_cased = false;
        continue;
      }
      size_t length;
      const uint32_t c = decode_utf8(s + i, n - i, &length);
      src_begin_ = i;
      i += length;
      src_end_ = i;
      if (c == 0 || c == kReplacementChar || is_control(c)) continue;
      if (is_whitespace(c)) {
        flush_word();
        prev_cased = false;
        continue;
      }
      if (tok_.chinese_chars_ && is_cjk(c)) {
        flush_word();
        add_char(c);  // unaffected by lower-casing and (with our tables) accent stripping
        flush_word();
        prev_cased = false;
        continue;
      }
      if (!tok_.lower_case_) {
        add_char(c);
        continue;
      }
      uint32_t lower;
      if (c == 0x3A3) {  // capital sigma: final form at the end of a cased word
        lower = (prev_cased && !next_is_cased(s, i, n)) ? 0x3C2 : 0x3C3;
      } else if (c == 0x130) {  // capital I with dot above -> "i" + U+0307, the mark is stripped
        lower = 'i';
      } else {
        lower = to_lower(c);
      }
      if (!is_case_ignorable(c)) prev_cased = is_cased(c);
      add_stripped(lower);
    }
    flush_word();
  }

 private:
  static int32_t clamp(size_t offset) {
    return offset > static_cast<size_t>(std::numeric_limits<int32_t>::max())
               ? std::numeric_limits<int32_t>::max()
               : static_cast<int32_t>(offset);
  }

  // The special token written at s[i..n), if special tokens are matched and one starts there.
  const SpecialToken* special_at(const unsigned char* s, size_t i, size_t n) const {
    if (!match_specials_ || s[i] != '[') return nullptr;
    for (int k = 0; k < tok_.num_specials_; ++k) {
      const SpecialToken& t = tok_.specials_[k];
      if (n - i >= t.length && std::memcmp(s + i, t.text, t.length) == 0) return &t;
    }
    return nullptr;
  }

  // Whether the next non-case-ignorable character of the current whitespace token is cased
  // (a special token ends the token, as HuggingFace splits the text there first).
  bool next_is_cased(const unsigned char* s, size_t i, size_t n) const {
    while (i < n) {
      if (special_at(s, i, n) != nullptr) return false;
      size_t length;
      const uint32_t c = decode_utf8(s + i, n - i, &length);
      i += length;
      if (c == 0 || c == kReplacementChar || is_control(c)) continue;
      if (is_whitespace(c) || (tok_.chinese_chars_ && is_cjk(c))) return false;
      if (is_case_ignorable(c)) continue;
      return is_cased(c);
    }
    return false;
  }

  // Accent stripping of a lower-cased character: NFD, then drop nonspacing marks.
  void add_stripped(uint32_t c) {
    if (c < 0xC0) {
      add_char(c);
      return;
    }
    uint32_t base[3];
    if (const int n = text::py::strip_decompose(c, base)) {
      for (int i = 0; i < n; ++i) add_char(base[i]);
      return;
    }
    if (is_nonspacing_mark(c)) {
      // A dropped combining mark still belongs to the character before it in the text.
      if (word_bytes_ > 0 && word_src_end_[word_bytes_ - 1] == clamp(src_begin_)) {
        word_src_end_[word_bytes_ - 1] = clamp(src_end_);
        word_end_ = src_end_;
      }
      return;
    }
    add_char(c);
  }

  // Punctuation split: punctuation characters are words of their own.
  void add_char(uint32_t c) {
    if (is_punctuation(c)) {
      flush_word();
      append(c);
      flush_word();
    } else {
      append(c);
    }
  }

  void append(uint32_t c) {
    if (word_chars_ == 0) word_begin_ = src_begin_;
    word_end_ = src_end_;
    // Words longer than max_chars_per_word become [UNK]; only their length is tracked.
    if (word_chars_ < static_cast<size_t>(tok_.max_chars_per_word_)) {
      const size_t bytes = encode_utf8(c, word_ + word_bytes_);
      for (size_t b = word_bytes_; b < word_bytes_ + bytes; ++b) {
        word_src_begin_[b] = clamp(src_begin_);
        word_src_end_[b] = clamp(src_end_);
      }
      word_bytes_ += bytes;
    }
    ++word_chars_;
  }

  void flush_word() {
    if (word_chars_ == 0) return;
    current_word_ = word_index_++;
    if (word_chars_ > static_cast<size_t>(tok_.max_chars_per_word_)) {
      emit(tok_.unk_id_, word_begin_, word_end_);
    } else {
      wordpiece();
    }
    current_word_ = -1;
    word_chars_ = 0;
    word_bytes_ = 0;
  }

  // Greedy longest-match-first split of word_[0, word_bytes_); [UNK] if any position fails.
  void wordpiece() {
    const size_t length = word_bytes_;
    const size_t first = count_;
    size_t start = 0;
    while (start < length) {
      const bool continuation = start > 0;
      const size_t longest = continuation ? tok_.max_cont_key_ : tok_.max_word_key_;
      size_t end = (length - start > longest) ? start + longest : length;
      while (end > start && end < length && is_utf8_continuation(word_[end])) --end;
      int32_t id = -1;
      while (end > start) {
        id = tok_.find(word_ + start, end - start, continuation);
        if (id >= 0) break;
        do {
          --end;
        } while (end > start && is_utf8_continuation(word_[end]));
      }
      if (id < 0) {
        count_ = first;  // drop the pieces emitted so far
        emit(tok_.unk_id_, word_begin_, word_end_);
        return;
      }
      emit(id, static_cast<size_t>(word_src_begin_[start]), static_cast<size_t>(word_src_end_[end - 1]));
      start = end;
    }
  }

  static constexpr size_t kWordBytes = 4 * kMaxCharsPerWordLimit + 4;
  const WordPieceTokenizer& tok_;
  int32_t* ids_;
  TokenSpan* spans_;
  int32_t* words_;
  int32_t current_word_ = -1;  // word index of the tokens being emitted (-1: added special token)
  int32_t word_index_ = 0;     // words seen so far
  size_t max_ids_;
  size_t stop_after_;
  bool match_specials_;
  size_t count_ = 0;
  size_t src_begin_ = 0, src_end_ = 0;    // source bytes of the character being processed
  size_t word_begin_ = 0, word_end_ = 0;  // source bytes of the current word
  size_t word_chars_ = 0;  // characters in the current word (counted past max_chars_per_word)
  size_t word_bytes_ = 0;  // UTF-8 bytes stored in word_
  char word_[kWordBytes];
  int32_t word_src_begin_[kWordBytes];  // per byte of word_: its character's source bytes (clamped)
  int32_t word_src_end_[kWordBytes];
};

size_t WordPieceTokenizer::encode(std::string_view text, int32_t* ids, size_t max_ids,
                                  bool add_special_tokens) const {
  return encode(text, ids, nullptr, max_ids, add_special_tokens, false);
}

size_t WordPieceTokenizer::encode(std::string_view text, int32_t* ids, TokenSpan* spans,
                                  size_t max_ids, bool add_special_tokens,
                                  bool split_special_tokens) const {
  return encode(text, ids, spans, nullptr, max_ids, add_special_tokens, split_special_tokens);
}

size_t WordPieceTokenizer::encode(std::string_view text, int32_t* ids, TokenSpan* spans, int32_t* words,
                                  size_t max_ids, bool add_special_tokens,
                                  bool split_special_tokens) const {
  return encode(text, ids, spans, words, max_ids, add_special_tokens, split_special_tokens, SIZE_MAX);
}

size_t WordPieceTokenizer::encode(std::string_view text, int32_t* ids, TokenSpan* spans, int32_t* words,
                                  size_t max_ids, bool add_special_tokens, bool split_special_tokens,
                                  size_t stop_after) const {
  if (vocab_size_ == 0) return 0;
  Encoder encoder(*this, ids, spans, words, max_ids, !split_special_tokens, stop_after);
  if (add_special_tokens) encoder.emit(cls_id_, 0, 0);
  encoder.run(text);
  if (add_special_tokens) encoder.emit(sep_id_, 0, 0);
  return encoder.count();
}

}  // namespace edgebert
