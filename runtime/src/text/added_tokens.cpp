// SPDX-License-Identifier: Apache-2.0
// added_tokens.cpp
#include "text/added_tokens.h"

#include <cstring>

#include "text/unicode.h"

namespace edgebert {
namespace text {
namespace {

uint32_t last_char(const char* s, size_t end) {
  size_t b = end;
  while (b > 0 && (static_cast<unsigned char>(s[b - 1]) & 0xC0) == 0x80) --b;
  if (b > 0) --b;
  size_t len;
  return decode_utf8(s + b, end - b, &len);
}

}  // namespace

void AddedTokenMatcher::init(const std::vector<AddedToken>& tokens, bool normalized) {
  tokens_.clear();
  for (auto& f : first_) f.clear();
  for (const AddedToken& t : tokens) {
    if (t.normalized != normalized || t.content.empty() || tokens_.size() >= 65535) continue;
    first_[static_cast<unsigned char>(t.content[0])].push_back(static_cast<uint16_t>(tokens_.size()));
    tokens_.push_back(&t);
  }
}

void AddedTokenMatcher::find(const char* s, size_t n, std::vector<Match>& out, bool skip_special) const {
  if (tokens_.empty()) return;
  size_t done = 0;  // end of the previous match (lstrip does not reach before it)
  for (size_t i = 0; i < n;) {
    const auto& cands = first_[static_cast<unsigned char>(s[i])];
    const AddedToken* best = nullptr;
    for (uint16_t k : cands) {
      const AddedToken* t = tokens_[k];
      if (t->content.size() <= n - i && std::memcmp(s + i, t->content.data(), t->content.size()) == 0 &&
          (best == nullptr || t->content.size() > best->content.size()))
        best = t;
    }
    if (best == nullptr) {
      ++i;
      continue;
    }
    size_t start = i, stop = i + best->content.size();
    if (skip_special && best->special) {
      i = stop;
      continue;
    }
    const uint32_t token_begin = static_cast<uint32_t>(start), token_end = static_cast<uint32_t>(stop);
    if (best->single_word) {
      size_t len;
      // single_word: HF checks the neighbours with the regex crate's \w (^\w, \w$): marks, joiners
      // and Pc count, No (½ ² ①) does not
      const bool left_ok = start == 0 || !is_word_char(last_char(s, start));
      const bool right_ok = stop == n || !is_word_char(decode_utf8(s + stop, n - stop, &len));
      if (!left_ok || !right_ok) {
        i = stop;  // the search goes on after the match, as a non-overlapping scan does
        continue;
      }
    }
    if (best->lstrip) {
      size_t b = start;
      while (b > done) {
        size_t q = b;
        while (q > 0 && (static_cast<unsigned char>(s[q - 1]) & 0xC0) == 0x80) --q;
        if (q > 0) --q;
        size_t len;
        if (!is_whitespace(decode_utf8(s + q, b - q, &len))) break;
        b = q;
      }
      start = b;
    }
    // (HF: max(lstrip's start, the previous match's end), which can be past the content's start
    // when the previous rstrip took the whitespace this content begins with)
    if (best->lstrip && start < done) start = done;
    if (best->rstrip) {
      while (stop < n) {
        size_t len;
        if (!is_whitespace(decode_utf8(s + stop, n - stop, &len))) break;
        stop += len;
      }
    }
    if (start >= stop) {  // all of it taken by the previous match's rstrip: HF's empty split is dropped
      i = token_end;
      continue;
    }
    out.push_back(Match{static_cast<uint32_t>(start), static_cast<uint32_t>(stop), token_begin, token_end, best->id});
    done = stop;
    // HF finds every match first (non-overlapping on the contents), then strips: the next match
    // may start inside the whitespace this one's rstrip took (lstrip stops at `done`; without
    // lstrip the two overlap, as HF's splits do)
    i = token_end;
  }
}

}  // namespace text
}  // namespace edgebert
