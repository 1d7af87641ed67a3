// SPDX-License-Identifier: Apache-2.0
// regex.cpp: Oniguruma -> PCRE2 spelling, compilation (JIT when available) and bounded search.
#include "text/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace edgebert {
namespace text {
namespace {

// Oniguruma's \s in UTF-8: the White_Space property (PCRE2's \s adds U+180E, which Unicode took
// out of White_Space in 6.3), as class members.
constexpr const char* kSpaceMembers =
    "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// Search limits: the match limit grows with the text searched (a linear pattern backtracks at most
// a few times per byte), so only a pattern that backtracks super-linearly reaches it.
constexpr uint32_t kBaseMatchLimit = 10000000;
constexpr uint32_t kMatchLimitPerByte = 64;
constexpr uint32_t kDepthLimit = 1000000;
constexpr uint32_t kHeapLimitKiB = 64 * 1024;

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Bytes of the UTF-8 character starting with lead byte c (1 for a stray byte).
size_t utf8_length(unsigned char c) { return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1; }

}  // namespace

bool translate_regex(std::string_view p, std::string* out, std::string* error) {
  out->clear();
  auto refuse = [&](const std::string& what) {
    *error = what + " (Oniguruma, which HuggingFace tokenizers uses, and PCRE2 read it differently)";
    return false;
  };
  bool in_class = false;
  size_t class_at = 0;  // index in p of the class's first member
  for (size_t i = 0; i < p.size();) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return *error = "the pattern ends with a backslash", false;
      const char d = p[i + 1];
      switch (d) {
        case 's':
          *out += in_class ? std::string(kSpaceMembers) : "[" + std::string(kSpaceMembers) + "]";
          i += 2;
          continue;
        case 'S':
          if (in_class) return refuse("\\S inside a character class");
          *out += "[^" + std::string(kSpaceMembers) + "]";
          i += 2;
          continue;
        case 'u':  // \uHHHH
          if (i + 6 > p.size() || !is_hex(p[i + 2]) || !is_hex(p[i + 3]) || !is_hex(p[i + 4]) || !is_hex(p[i + 5]))
            return *error = "\\u is not followed by four hex digits", false;
          *out += "\\x{" + std::string(p.substr(i + 2, 4)) + "}";
          i += 6;
          continue;
        case 'w': case 'W': case 'b': case 'B': case 'h': case 'H': case 'R': case 'X': case 'K':
        case 'G': case 'y': case 'Y': case 'O': case 'g': case 'k': case 'N': case 'C': case 'v': case 'Q': case 'E':
          return refuse(std::string("\\") + d);
        case 'p': case 'P': case 'x': {  // \p{..} \P{..} \x{..} as they are (\pL, \xHH too)
          size_t j = i + 2;
          if (j < p.size() && p[j] == '{') {
            const size_t close = p.find('}', j);
            if (close == std::string_view::npos) return *error = std::string("unterminated \\") + d + "{", false;
            j = close + 1;
          } else {
            j = std::min(p.size(), j + (d == 'x' ? 2 : 1));
          }
          out->append(p.substr(i, j - i));
          i = j;
          continue;
        }
        default: {  // an escaped character (any UTF-8 character) or \d \D \t \n \r \A \z ...
          const size_t len = 1 + utf8_length(static_cast<unsigned char>(d));
          out->append(p.substr(i, std::min(len, p.size() - i)));
          i += len;
          continue;
        }
      }
    }
    if (in_class) {
      if (c == '[') return refuse("a nested or POSIX character class");
      if (c == '&' && i + 1 < p.size() && p[i + 1] == '&') return refuse("class intersection &&");
      if (c == ']' && i > class_at) in_class = false;
    } else if (c == '[') {
      in_class = true;
      out->push_back(c);
      ++i;
      if (i < p.size() && p[i] == '^') out->push_back(p[i++]);
      class_at = i;  // a ']' here is a member
      continue;
    } else if (c == '^' || c == '$') {
      return refuse(std::string("the anchor ") + c);
    } else if (c == '(' && i + 1 < p.size() && p[i + 1] == '?') {
      // inline options: only (?i) / (?-i) mean the same in both engines
      size_t j = i + 2;
      while (j < p.size() && (p[j] == '-' || (p[j] >= 'a' && p[j] <= 'z') || (p[j] >= 'A' && p[j] <= 'Z'))) {
        if (p[j] != 'i' && p[j] != '-') return refuse(std::string("the inline option (?") + p[j]);
        ++j;
      }
    }
    const size_t len = utf8_length(static_cast<unsigned char>(c));
    out->append(p.substr(i, std::min(len, p.size() - i)));
    i += len;
  }
  if (in_class) return *error = "an unterminated character class", false;
  return true;
}

RegexScratch::~RegexScratch() {
  pcre2_match_data_free(data_);
  pcre2_match_context_free(context_);
}

bool RegexScratch::reserve() {
  if (data_ == nullptr) data_ = pcre2_match_data_create(1, nullptr);
  if (context_ == nullptr) {
    context_ = pcre2_match_context_create(nullptr);
    if (context_ != nullptr) {
      pcre2_set_depth_limit(context_, kDepthLimit);
      pcre2_set_heap_limit(context_, kHeapLimitKiB);
    }
  }
  return data_ != nullptr && context_ != nullptr;
}

Regex::~Regex() { pcre2_code_free(code_); }

Status Regex::init(std::string_view pattern) {
  pcre2_code_free(code_);
  code_ = nullptr;
  jit_ = false;
  std::string translated, why;
  if (!translate_regex(pattern, &translated, &why))
    return Status(EB_ERROR_INVALID_MODEL, "Split regex \"" + std::string(pattern) + "\": " + why);
  pcre2_compile_context* cc = pcre2_compile_context_create(nullptr);
  if (cc == nullptr) return Status(EB_ERROR_OUT_OF_MEMORY, "Split regex: out of memory");
  pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
  int code = 0;
  PCRE2_SIZE offset = 0;
  // UCP: \d and \p{..} by Unicode properties; MATCH_INVALID_UTF: no UTF check of the subject per
  // search (linear time over many searches of one text) and no undefined behaviour on bad bytes.
  code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                        PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_NEVER_BACKSLASH_C, &code, &offset, cc);
  pcre2_compile_context_free(cc);
  if (code_ == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(code, message, sizeof message);
    return Status(EB_ERROR_INVALID_MODEL, "Split regex \"" + std::string(pattern) + "\" does not compile (PCRE2, at " +
                                              std::to_string(offset) + "): " + reinterpret_cast<const char*>(message));
  }
  jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;  // else the interpreter
  return Status::ok();
}

Regex::Result Regex::find(const char* s, size_t n, size_t start, RegexScratch& scratch, size_t* begin,
                          size_t* end) const {
  if (code_ == nullptr || !scratch.reserve()) return kLimit;
  const size_t rest = n - start;
  const uint64_t limit = kBaseMatchLimit + static_cast<uint64_t>(kMatchLimitPerByte) * rest;
  pcre2_set_match_limit(scratch.context_, limit > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(limit));
  const auto subject = reinterpret_cast<PCRE2_SPTR>(s);
  int rc = pcre2_match(code_, subject, n, start, 0, scratch.data_, scratch.context_);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // the JIT's machine-stack block is full: the interpreter
    rc = pcre2_match(code_, subject, n, start, PCRE2_NO_JIT, scratch.data_, scratch.context_);
  if (rc == PCRE2_ERROR_NOMATCH) return kNoMatch;
  if (rc < 0) return kLimit;
  const PCRE2_SIZE* v = pcre2_get_ovector_pointer(scratch.data_);
  *begin = v[0];
  *end = v[1];
  return kMatch;
}

}  // namespace text
}  // namespace edgebert
