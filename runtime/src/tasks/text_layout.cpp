// SPDX-License-Identifier: Apache-2.0
// text_layout.cpp: texts and pairs into the model's template, and the words of a text run (see
// text_layout.h).
#include "tasks/text_layout.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace edgebert::tasks {

namespace {

// lay_out_sequence with at most keep_a / keep_b tokens of each text (SIZE_MAX: all).
size_t lay_out(const TextEncoder& text, bool token_types, size_t max_len, RunInputs& in, const char* a, const char* b,
               size_t at, size_t cap, size_t* first_len, size_t keep_a, size_t keep_b) {
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
  auto put_text = [&](const char* t, size_t room, size_t keep, int32_t seg, int32_t type) {
    room = std::min(room, keep);
    // the first text carries the session's prompt (TextEncoder::encode_first)
    const size_t n = std::min(seg == 0 ? text.encode_first(t, in.ids.data() + pos, in.spans.data() + pos,
                                                           in.word_ids.data() + pos, room)
                                       : text.encode(t, in.ids.data() + pos, in.spans.data() + pos,
                                                     in.word_ids.data() + pos, room),
                              keep);
    for (size_t i = pos; i < pos + std::min(n, room); ++i) {
      in.types[i] = type;
      in.begin[i] = in.spans[i].begin;
      in.end[i] = in.spans[i].end;
      in.segment[i] = seg;
    }
    return n;
  };
  put_specials(f.prefix, f.prefix_types);
  const size_t na = put_text(a, end_cap > pos ? end_cap - pos : 0, keep_a, 0, f.type_a);
  *first_len = na;
  const size_t after_a = pos - at + na + specials - f.prefix.size() + (b ? 1 : 0);
  if (after_a > cap) return after_a;
  pos += na;
  if (b) {
    put_specials(f.middle, f.middle_types);
    const size_t nb = put_text(b, end_cap - pos, keep_b, 1, f.type_b);
    if (pos - at + nb + f.suffix.size() > cap) return pos - at + nb + f.suffix.size();
    pos += nb;
  }
  put_specials(f.suffix, f.suffix_types);
  if (!token_types)
    for (size_t i = at; i < pos; ++i) in.types[i] = 0;
  return pos - at;
}

}  // namespace

bool truncated_lengths(Truncation truncation, size_t na, size_t nb, bool has_b, size_t budget, size_t* keep_a,
                       size_t* keep_b) {
  *keep_a = na;
  *keep_b = nb;
  if (na + nb <= budget) return true;
  switch (truncation) {
    case Truncation::kNone:
      return false;
    case Truncation::kOnlySecond: {
      const size_t remove = na + nb - budget;
      if (!has_b || nb <= remove) return false;  // tokenizers: "second sequence not long enough"
      *keep_b = nb - remove;
      return true;
    }
    case Truncation::kLongestFirst: {
      if (!has_b) {
        *keep_a = budget;
        return true;
      }
      // tokenizers' truncate_encodings: n1 the shorter (the first on equal lengths), n2 the longer
      const bool swap = na > nb;
      size_t n1 = swap ? nb : na, n2 = swap ? na : nb;
      n2 = n1 > budget ? n1 : std::max(n1, budget - n1);
      if (n1 + n2 > budget) {
        n1 = budget / 2;
        n2 = n1 + budget % 2;
      }
      *keep_a = swap ? n2 : n1;
      *keep_b = swap ? n1 : n2;
      return true;
    }
  }
  return false;
}

size_t lay_out_sequence(const TextEncoder& text, bool token_types, size_t max_len, RunInputs& in, const char* a,
                        const char* b, size_t at, size_t cap, size_t* first_len, Truncation truncation, size_t* cut) {
  if (cut) *cut = 0;
  const size_t need = lay_out(text, token_types, max_len, in, a, b, at, cap, first_len, SIZE_MAX, SIZE_MAX);
  if (need <= max_len || truncation == Truncation::kNone) return need;
  // too long: the exact lengths of both texts (counted without storing), then the cut layout
  const size_t max_bytes = text.max_text_bytes();
  for (const char* t : {a, b})
    if (t && std::strlen(t) > max_bytes) return need;  // cannot be tokenized whole here
  const text::Tokenizer::Frame& f = text.frame(b != nullptr);
  const size_t specials = f.prefix.size() + f.middle.size() + f.suffix.size();
  if (max_len <= specials) return need;
  const size_t na = text.encode_first(a, nullptr, nullptr, nullptr, 0), nb = b ? text.encode(b, nullptr, nullptr, nullptr, 0) : 0;
  size_t keep_a = 0, keep_b = 0;
  if (!truncated_lengths(truncation, na, nb, b != nullptr, max_len - specials, &keep_a, &keep_b)) return need;
  const size_t total = keep_a + keep_b + specials;
  if (total > cap) return total;  // fits a run of its own
  const size_t laid = lay_out(text, token_types, max_len, in, a, b, at, cap, first_len, keep_a, keep_b);
  if (cut && laid == total) *cut = na + nb - keep_a - keep_b;
  return laid;
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

size_t expand_sequence(RunInputs& in, size_t at, size_t n, const Expansion& e) {
  std::fill(in.key_mask.begin() + static_cast<std::ptrdiff_t>(at), in.key_mask.begin() + static_cast<std::ptrdiff_t>(at + n),
            uint8_t{1});
  if (e.id < 0 || n >= e.length) return n;
  for (size_t i = at + n; i < at + e.length; ++i) {
    in.ids[i] = e.id;
    in.types[i] = 0;
    in.begin[i] = in.end[i] = 0;
    in.segment[i] = in.word_ids[i] = -1;
    in.key_mask[i] = e.attend ? 1 : 0;
  }
  return e.length;
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
