// SPDX-License-Identifier: Apache-2.0
// unicode.h: UTF-8 decoding/encoding and the character classes the tokenizer pipeline needs, as
// HuggingFace tokenizers (Rust) defines them. Categories, case mapping, normalization forms and
// grapheme clusters come from utf8proc (docs/tokenizers.md says why); nothing here allocates.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgebert {
namespace text {

constexpr uint32_t kReplacementChar = 0xFFFD;

// Decodes one code point from s[0..n) (n >= 1). Invalid or truncated sequences yield U+FFFD and
// consume one byte (overlongs, surrogates and values above U+10FFFF are invalid).
uint32_t decode_utf8(const unsigned char* s, size_t n, size_t* length);
inline uint32_t decode_utf8(const char* s, size_t n, size_t* length) {
  return decode_utf8(reinterpret_cast<const unsigned char*>(s), n, length);
}
// The byte offset of the first byte of s[0..n) that does not start a valid UTF-8 sequence (the
// same rule as decode_utf8: overlongs, surrogates, values above U+10FFFF, stray continuation
// bytes and a sequence cut off by the end are invalid), or n when all of it is valid. ASCII runs
// are checked 8 bytes at a time (several GB/s).
size_t find_invalid_utf8(const char* s, size_t n);
// Writes the UTF-8 form of c (<= 4 bytes) to out; returns its length.
size_t encode_utf8(uint32_t c, char* out);
inline size_t utf8_length(uint32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

// Rust char::is_whitespace (the White_Space property).
bool is_whitespace(uint32_t c);
// General categories.
bool is_letter(uint32_t c);        // L*
bool is_number(uint32_t c);        // N*
bool is_punctuation(uint32_t c);   // P*
// Cc Cf Cs Co: HF's char::is_other (the unicode_categories crate's tables come from
// UnicodeData.txt, which lists no unassigned code point, so Cn is never "other" there).
bool is_other(uint32_t c);
bool is_mark_nonspacing(uint32_t c);  // Mn
bool is_mark(uint32_t c);          // M*
bool is_alphanumeric(uint32_t c);  // L* or N* (Rust char::is_alphanumeric, approximately)
bool is_word_number(uint32_t c);   // Nd or Nl (the numbers of regex \w)
bool is_connector_punctuation(uint32_t c);  // Pc
// Regex \w as HF tokenizers' engines have it (UTS #18: Alphabetic, marks, Nd, Pc, Join_Control):
// letters, Nl, the Other_Alphabetic symbols (circled / squared Latin letters), marks, decimal
// digits, connector punctuation, U+200C / U+200D. Whitespace pre-tokenizer, added tokens'
// single_word.
bool is_word_char(uint32_t c);
// BERT's CJK ideograph blocks (tokenize_chinese_chars).
bool is_cjk_ideograph(uint32_t c);

// Simple lower-case mapping (U+0130 handled by the caller: its full mapping has two characters).
uint32_t to_lower(uint32_t c);

// Unicode normalization forms.
enum class NormalForm { kNFC, kNFD, kNFKC, kNFKD };
// The full canonical (or compatibility) decomposition of one code point, not reordered, into
// out (capacity cap); returns its length, or -1 when cap is too small.
long decompose_char(uint32_t c, bool compat, uint32_t* out, size_t cap);
// Canonical combining class.
int combining_class(uint32_t c);
// Canonical composition of buf[0..n) (decomposed and canonically ordered) in place; returns the
// new length (or -1).
long compose(uint32_t* buf, size_t n);
// Whether a code point starts a new normalization segment (canonical combining class 0 and not
// composing with a preceding character).
bool is_normalization_boundary(uint32_t c);

// Extended grapheme cluster boundaries: true when a cluster break lies between `previous` and
// `c`. `state` is carried across calls (start each text with 0).
bool is_grapheme_break(uint32_t previous, uint32_t c, int32_t* state);

}  // namespace text
}  // namespace edgebert
