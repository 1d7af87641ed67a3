// SPDX-License-Identifier: Apache-2.0
// text_encoder.cpp: the session's tokenizer calls: the UTF-8 check, then the bounded encode.
#include "text_encoder.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "text/unicode.h"

namespace edgebert {

InvalidTextError::InvalidTextError(size_t offset, unsigned char byte) : offset_(offset) {
  std::snprintf(message_, sizeof message_, "text is not valid UTF-8: byte 0x%02X at offset %zu", byte, offset);
}

Status TextEncoder::check(std::string_view text, const char* what) {
  const size_t bad = text::find_invalid_utf8(text.data(), text.size());
  if (bad == text.size()) return Status::ok();
  char m[128];
  std::snprintf(m, sizeof m, "%s is not valid UTF-8: byte 0x%02X at offset %zu", what,
                static_cast<unsigned char>(text[bad]), bad);
  return Status(EB_ERROR_INVALID_ARGUMENT, m);
}

size_t TextEncoder::encode(std::string_view text, int32_t* ids, TokenSpan* spans, int32_t* word_ids,
                           size_t cap) const {
  const size_t bad = text::find_invalid_utf8(text.data(), text.size());
  if (bad != text.size()) throw InvalidTextError(bad, static_cast<unsigned char>(text[bad]));
  if (cap > tokens_.size()) tokens_.resize(cap);
  // Texts the reserved workspace holds are counted exactly (callers' messages give the count);
  // longer ones stop at the first word past cap tokens.
  const size_t stop_after = cap == 0 || text.size() <= text_bytes_ ? SIZE_MAX : cap;
  const size_t total = tokenizer_->encode_segment(text, split_special_tokens_, ws_, tokens_.data(), cap, stop_after);
  if (ws_.error) throw UntokenizableTextError(ws_.error);
  const size_t written = total < cap ? total : cap;
  for (size_t i = 0; i < written; ++i) {
    const text::TextToken& t = tokens_[i];
    if (ids) ids[i] = t.id;
    if (spans) spans[i] = TokenSpan{t.begin, t.end};
    if (word_ids) word_ids[i] = t.word;
  }
  return total;
}

size_t TextEncoder::encode_first(std::string_view text, int32_t* ids, TokenSpan* spans, int32_t* word_ids,
                                 size_t cap) const {
  if (prompt_.empty()) return encode(text, ids, spans, word_ids, cap);
  const size_t bad = text::find_invalid_utf8(text.data(), text.size());
  if (bad != text.size()) throw InvalidTextError(bad, static_cast<unsigned char>(text[bad]));
  joined_.assign(prompt_);
  joined_.append(text);
  const size_t total = encode(joined_, ids, spans, word_ids, cap);
  const int32_t p = static_cast<int32_t>(prompt_.size());
  for (size_t i = 0; spans && i < std::min(total, cap); ++i)
    spans[i] = spans[i].end <= p ? TokenSpan{0, 0} : TokenSpan{std::max(spans[i].begin - p, 0), spans[i].end - p};
  return total;
}

}  // namespace edgebert
