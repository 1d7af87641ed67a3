// SPDX-License-Identifier: Apache-2.0
// unicode.cpp: UTF-8 codec and character classes over utf8proc.
#include "text/unicode.h"

#include <cstring>

#include <utf8proc.h>

namespace edgebert {
namespace text {

uint32_t decode_utf8(const unsigned char* s, size_t n, size_t* length) {
  const uint32_t b0 = s[0];
  *length = 1;
  if (b0 < 0x80) return b0;
  if (b0 < 0xC2 || b0 > 0xF4) return kReplacementChar;
  auto cont = [](unsigned char b) { return (b & 0xC0) == 0x80; };
  if (b0 < 0xE0) {
    if (n < 2 || !cont(s[1])) return kReplacementChar;
    *length = 2;
    return ((b0 & 0x1F) << 6) | (s[1] & 0x3F);
  }
  const unsigned lo = (b0 == 0xE0) ? 0xA0 : (b0 == 0xF0) ? 0x90 : 0x80;
  const unsigned hi = (b0 == 0xED) ? 0x9F : (b0 == 0xF4) ? 0x8F : 0xBF;
  if (b0 < 0xF0) {
    if (n < 3 || s[1] < lo || s[1] > hi || !cont(s[2])) return kReplacementChar;
    *length = 3;
    return ((b0 & 0x0F) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3F);
  }
  if (n < 4 || s[1] < lo || s[1] > hi || !cont(s[2]) || !cont(s[3])) return kReplacementChar;
  *length = 4;
  return ((b0 & 0x07) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3F);
}

size_t find_invalid_utf8(const char* text, size_t n) {
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  size_t i = 0;
  while (i < n) {
    if (s[i] < 0x80) {
      // ASCII fast path: 8 bytes at a time while none has its top bit set
      while (i + 8 <= n) {
        uint64_t w;
        std::memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull) break;
        i += 8;
      }
      while (i < n && s[i] < 0x80) ++i;
      continue;
    }
    size_t len;
    if (decode_utf8(s + i, n - i, &len) == kReplacementChar && len == 1) return i;
    i += len;
  }
  return n;
}

size_t encode_utf8(uint32_t c, char* out) {
  if (c < 0x80) {
    out[0] = static_cast<char>(c);
    return 1;
  }
  if (c < 0x800) {
    out[0] = static_cast<char>(0xC0 | (c >> 6));
    out[1] = static_cast<char>(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (c >> 12));
    out[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (c & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (c >> 18));
  out[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (c & 0x3F));
  return 4;
}

namespace {
utf8proc_category_t category(uint32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }
}  // namespace

bool is_whitespace(uint32_t c) {
  if (c <= 0x20) return c == 0x20 || (c >= 0x09 && c <= 0x0D);
  if (c < 0x85) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_letter(uint32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  const auto k = category(c);
  return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}
bool is_number(uint32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  const auto k = category(c);
  return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}
bool is_punctuation(uint32_t c) {
  const auto k = category(c);
  return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}
bool is_other(uint32_t c) { return category(c) >= UTF8PROC_CATEGORY_CC; }
bool is_mark_nonspacing(uint32_t c) { return c >= 0x300 && category(c) == UTF8PROC_CATEGORY_MN; }
bool is_mark(uint32_t c) {
  const auto k = category(c);
  return k >= UTF8PROC_CATEGORY_MN && k <= UTF8PROC_CATEGORY_ME;
}
bool is_alphanumeric(uint32_t c) { return is_letter(c) || is_number(c); }
bool is_word_number(uint32_t c) {
  const auto k = category(c);
  return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL;
}
bool is_connector_punctuation(uint32_t c) { return category(c) == UTF8PROC_CATEGORY_PC; }
bool is_word_char(uint32_t c) {
  if (c < 0x80) return c == '_' || is_letter(c) || is_number(c);
  // Other_Alphabetic characters outside L / M / Nl (all So): Ⓐ-ⓩ, 🄰-🅉, 🅐-🅩, 🅰-🆉
  if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
      (c >= 0x1F170 && c <= 0x1F189))
    return true;
  return c == 0x200C || c == 0x200D || is_letter(c) || is_mark(c) || is_word_number(c) || is_connector_punctuation(c);
}

bool is_cjk_ideograph(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

uint32_t to_lower(uint32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  return static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
}

long decompose_char(uint32_t c, bool compat, uint32_t* out, size_t cap) {
  int options = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE;
  if (compat) options |= UTF8PROC_COMPAT;
  int boundclass = UTF8PROC_BOUNDCLASS_START;
  const utf8proc_ssize_t r = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), reinterpret_cast<utf8proc_int32_t*>(out),
                                                     static_cast<utf8proc_ssize_t>(cap),
                                                     static_cast<utf8proc_option_t>(options), &boundclass);
  return (r < 0 || static_cast<size_t>(r) > cap) ? -1 : static_cast<long>(r);
}

int combining_class(uint32_t c) {
  if (c < 0x300) return 0;
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
}

long compose(uint32_t* buf, size_t n) {
  const utf8proc_ssize_t r = utf8proc_normalize_utf32(reinterpret_cast<utf8proc_int32_t*>(buf), static_cast<utf8proc_ssize_t>(n),
                                                      static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  return r < 0 ? -1 : static_cast<long>(r);
}

bool is_normalization_boundary(uint32_t c) {
  if (c < 0x300) return true;
  if (c >= 0x1161 && c <= 0x11C2) return false;  // Hangul vowel / trailing jamo compose with the syllable
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
  return p->combining_class == 0 && !is_mark(c);
}

bool is_grapheme_break(uint32_t previous, uint32_t c, int32_t* state) {
  return utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(previous),
                                          static_cast<utf8proc_int32_t>(c), state);
}

}  // namespace text
}  // namespace edgebert
