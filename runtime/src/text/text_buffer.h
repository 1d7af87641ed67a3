// SPDX-License-Identifier: Apache-2.0
// text_buffer.h: a normalized string as HuggingFace's NormalizedString keeps it: UTF-8 bytes and,
// for every byte, the byte range [begin, end) of the original text it came from. Normalizers and
// pre-tokenizers rewrite it with a list of (character, change) pairs, with exactly the alignment
// rule of NormalizedString::transform_range (a character with change > 0 is inserted and takes
// the alignment of the byte before it; one with change <= 0 replaces the next original character
// and takes its alignment; change < 0 also removes that many characters after it), so that token
// offsets agree with the reference library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "text/unicode.h"

namespace edgebert {
namespace text {

struct Align {
  uint32_t begin, end;
};

// One element of a rewrite. A code point of kSkip removes `change` (> 0) characters of the input
// without emitting anything.
struct Change {
  uint32_t cp;
  int32_t change;
};
constexpr uint32_t kSkip = 0xFFFFFFFFu;

struct TextBuffer {
  std::vector<char> bytes;
  std::vector<Align> align;  // one per byte

  void clear() {
    bytes.clear();
    align.clear();
  }
  size_t size() const { return bytes.size(); }
  void push(uint32_t c, Align a) {
    char tmp[4];
    const size_t n = encode_utf8(c, tmp);
    for (size_t i = 0; i < n; ++i) {
      bytes.push_back(tmp[i]);
      align.push_back(a);
    }
  }
  void append(const TextBuffer& from, size_t begin, size_t end) {
    bytes.insert(bytes.end(), from.bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                 from.bytes.begin() + static_cast<std::ptrdiff_t>(end));
    align.insert(align.end(), from.align.begin() + static_cast<std::ptrdiff_t>(begin),
                 from.align.begin() + static_cast<std::ptrdiff_t>(end));
  }
};

// Rewrites in[begin, end) with `changes` (after first removing `initial_skip` characters) and
// appends the result to out. `base` is the alignment an insertion at the very start gets.
void apply_changes(const TextBuffer& in, size_t begin, size_t end, const std::vector<Change>& changes,
                   size_t initial_skip, Align base, TextBuffer& out);

}  // namespace text
}  // namespace edgebert
