// SPDX-License-Identifier: Apache-2.0
// text_buffer.cpp: the alignment-preserving rewrite of a normalized string.
#include "text/text_buffer.h"

namespace edgebert {
namespace text {

void apply_changes(const TextBuffer& in, size_t begin, size_t end, const std::vector<Change>& changes,
                   size_t initial_skip, Align base, TextBuffer& out) {
  const char* s = in.bytes.data();
  size_t pos = begin;  // next unconsumed input byte
  auto skip_char = [&] {
    if (pos >= end) return;
    size_t len;
    decode_utf8(s + pos, end - pos, &len);
    pos += len;
  };
  for (size_t i = 0; i < initial_skip; ++i) skip_char();
  for (const Change& ch : changes) {
    if (ch.cp == kSkip) {
      for (int32_t k = 0; k < ch.change; ++k) skip_char();
      continue;
    }
    Align a;
    if (ch.change > 0) {
      a = pos > begin ? in.align[pos - 1] : base;
    } else {
      a = pos < end ? in.align[pos] : (end > begin ? in.align[end - 1] : base);
      skip_char();
      for (int32_t k = 0; k < -ch.change; ++k) skip_char();
    }
    out.push(ch.cp, a);
  }
}

}  // namespace text
}  // namespace edgebert
