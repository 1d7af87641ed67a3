// SPDX-License-Identifier: Apache-2.0
// text_layout.cpp: texts and pairs into the model's template, and the words of a text run (see
// text_layout.h).
#include "tasks/text_layout.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace edgebert::tasks {

size_t lay_out_sequence(const TextEncoder& text, bool token_types, size_t max_len, RunInputs& in, const char* a,
                        const char* b, size_t at, size_t cap, size_t* first_len) {
  *first_len = 0;
  const text::Tokenizer::Frame& f = text.frame(b != nullptr);
  const size_t specials = f.prefix.size() + f.middle.size() + f.suffix.size();
  const size_t max_bytes = text.max_text_bytes();
  for (const char* t : {a, b})
    if (t && std::strlen(t) > max_bytes) return max_len + 1;
  if (cap < specials + (b ? 1 : 0)) return specials + 1;
  const size_t end_cap = at + cap;
  size_t pos = at;
  auto put_specials = [&](const std::vector<int32_t>& ids, const std::vector<int32_t>& types) {
    for (size_t k = 0; k < ids.size() && pos < end_cap; ++k, ++pos) {
      in.ids[pos] = ids[k];
      in.types[pos] = types[k];
      in.begin[pos] = in.end[pos] = 0;
      in.segment[pos] = in.word_ids[pos] = -1;
    }
  };
  auto put_text = [&](const char* t, size_t room, int32_t seg, int32_t type) {
    const size_t n = text.encode(t, in.ids.data() + pos, in.spans.data() + pos, in.word_ids.data() + pos, room);
    for (size_t i = pos; i < pos + std::min(n, room); ++i) {
      in.types[i] = type;
      in.begin[i] = in.spans[i].begin;
      in.end[i] = in.spans[i].end;
      in.segment[i] = seg;
    }
    return n;
  };
  put_specials(f.prefix, f.prefix_types);
  const size_t na = put_text(a, end_cap > pos ? end_cap - pos : 0, 0, f.type_a);
  *first_len = na;
  const size_t after_a = pos - at + na + specials - f.prefix.size() + (b ? 1 : 0);
  if (after_a > cap) return after_a;
  pos += na;
  if (b) {
    put_specials(f.middle, f.middle_types);
    const size_t nb = put_text(b, end_cap - pos, 1, f.type_b);
    if (pos - at + nb + f.suffix.size() > cap) return pos - at + nb + f.suffix.size();
    pos += nb;
  }
  put_specials(f.suffix, f.suffix_types);
  if (!token_types)
    for (size_t i = at; i < pos; ++i) in.types[i] = 0;
  return pos - at;
}

void too_long_message(const TextEncoder& text, const char* a, const char* b, size_t total, size_t first_len,
                      size_t max_len, char* msg, size_t size) {
  const size_t max_bytes = text.max_text_bytes();
  for (const char* t : {a, b})
    if (t && std::strlen(t) > max_bytes) {
      std::snprintf(msg, size,
                    "text is %zu bytes long; this model's tokenizer takes texts of up to %zu bytes in sessions of %zu "
                    "positions",
                    std::strlen(t), max_bytes, max_len);
      return;
    }
  const text::Tokenizer::Frame& f = text.frame(true);
  if (b && first_len + f.prefix.size() + f.middle.size() + f.suffix.size() + 1 > max_len)
    std::snprintf(msg, size,
                  "text pair is more than %zu tokens long (the first text alone is %zu), the session maximum is %zu",
                  total, first_len, max_len);
  else
    std::snprintf(msg, size, "%s needs at least %zu tokens, the session maximum is %zu", b ? "text pair" : "text", total,
                  max_len);  // a lower bound: tokenizing stops soon after the maximum
}

size_t build_words(RunInputs& in, size_t n, const float* token_logits, int labels) {
  size_t count = 0;
  for (size_t t = 0; t < n; ++t) {
    if (in.segment[t] < 0) continue;
    const bool continues =
        count > 0 && t > 0 && in.segment[t - 1] == in.segment[t] && in.word_ids[t - 1] == in.word_ids[t];
    if (continues) {
      eb_word& w = in.words[count - 1];
      w.last_token = static_cast<int32_t>(t);
      w.end_byte = in.end[t];
      continue;
    }
    eb_word& w = in.words[count++];
    w.first_token = w.last_token = static_cast<int32_t>(t);
    w.segment = in.segment[t];
    w.begin_byte = in.begin[t];
    w.end_byte = in.end[t];
    w.label = -1;
    if (token_logits && labels > 0) {  // the label of the word's first token
      const float* row = token_logits + t * static_cast<size_t>(labels);
      w.label = static_cast<int32_t>(std::max_element(row, row + labels) - row);
    }
  }
  return count;
}

}  // namespace edgebert::tasks
