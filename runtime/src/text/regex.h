// SPDX-License-Identifier: Apache-2.0
// regex.h: the regular expressions of tokenizer.json's Split pre-tokenizer (HuggingFace runs them
// with Oniguruma), compiled with PCRE2 (8-bit, UTF + Unicode properties, JIT when the library and
// the CPU have it). The pattern is first rewritten where the two engines read the same spelling
// differently (\s: Oniguruma's White_Space set, without U+180E; \uHHHH) and refused where no
// rewrite is exact (\w \b \h \R \X ^ $ (?m) nested classes, ...: translate_regex names the
// construct). Matching is bounded: a match or backtracking limit reached is an error, never a
// hang. The compiled pattern is immutable and shared by every thread; the match state (match
// data, limits) is per workspace (RegexScratch), created once, so a match allocates nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "status.h"

struct pcre2_real_code_8;
struct pcre2_real_match_data_8;
struct pcre2_real_match_context_8;

namespace edgebert {
namespace text {

// The PCRE2 spelling of an Oniguruma pattern, or false with `error` naming what cannot be run
// exactly the same way.
bool translate_regex(std::string_view onig, std::string* pcre2, std::string* error);

// Per-workspace match state (one match data serves every pattern: only the whole match is read).
class RegexScratch {
 public:
  RegexScratch() = default;
  ~RegexScratch();
  RegexScratch(const RegexScratch&) = delete;
  RegexScratch& operator=(const RegexScratch&) = delete;
  // Creates the match data and context (idempotent; false when out of memory).
  bool reserve();

 private:
  friend class Regex;
  pcre2_real_match_data_8* data_ = nullptr;
  pcre2_real_match_context_8* context_ = nullptr;
};

class Regex {
 public:
  // What one search returns.
  enum Result { kMatch, kNoMatch, kLimit };
  Regex() = default;
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Translates and compiles `pattern` (Oniguruma syntax, as in tokenizer.json).
  Status init(std::string_view pattern);
  // The leftmost match in s[0, n) starting at or after `start` (look-around sees all of s):
  // [*begin, *end). kLimit: the search gave up at the match / backtracking limit (or an engine
  // error), which the caller reports.
  Result find(const char* s, size_t n, size_t start, RegexScratch& scratch, size_t* begin, size_t* end) const;
  bool jit() const { return jit_; }

 private:
  pcre2_real_code_8* code_ = nullptr;
  bool jit_ = false;
};

}  // namespace text
}  // namespace edgebert
