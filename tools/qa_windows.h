// qa_windows.h: splits a QA context that does not fit the session into overlapping windows of
// whole words (HuggingFace pipeline style: `stride` tokens of overlap), as byte ranges of the
// context, using the model's own WordPiece tokenizer (so each window re-tokenizes to exactly
// its tokens).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/wordpiece_tokenizer.h"

namespace edgebert::tools {

struct ContextWindow {
  size_t begin_byte, end_byte;  // [begin, end) in the context
  size_t first_token, tokens;   // the window's tokens among the context's tokens
};

// Windows of at most `window_tokens` context tokens each, consecutive windows sharing about
// `stride` tokens; each starts and ends on a word boundary (never between "##" pieces). Empty on
// error (*error says why: window too small for one word, stride >= window).
inline std::vector<ContextWindow> split_context(const WordPieceTokenizer& tok, const std::string& context,
                                                size_t window_tokens, size_t stride, std::string* error) {
  std::vector<ContextWindow> out;
  const size_t total = tok.encode(context, nullptr, nullptr, 0, false, false);
  std::vector<int32_t> ids(total);
  std::vector<TokenSpan> spans(total);
  tok.encode(context, ids.data(), spans.data(), total, false, false);
  if (stride >= window_tokens) {
    *error = "--stride " + std::to_string(stride) + " must be smaller than the " + std::to_string(window_tokens) +
             " context tokens that fit in one window";
    return out;
  }
  // word_start[t]: token t begins a word (its bytes do not continue the previous token's)
  auto word_start = [&](size_t t) { return t == 0 || t >= total || spans[t].begin != spans[t - 1].end; };
  size_t start = 0;
  while (start < total) {
    size_t end = std::min(total, start + window_tokens);
    while (end < total && end > start && !word_start(end)) --end;  // end on a word boundary
    if (end == start) {
      *error = "a word of the context is longer than the " + std::to_string(window_tokens) + " tokens of a window";
      return {};
    }
    out.push_back({static_cast<size_t>(spans[start].begin), static_cast<size_t>(spans[end - 1].end), start, end - start});
    if (end == total) break;
    size_t next = end > stride ? end - stride : 0;
    if (next <= start) next = start + 1;
    while (next < end && !word_start(next)) ++next;  // start on a word boundary
    start = next;
  }
  return out;
}

}  // namespace edgebert::tools
