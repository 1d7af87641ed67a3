// SPDX-License-Identifier: Apache-2.0
// pre_tokenizers.h: the pre-tokenizers of HuggingFace tokenizers (BertPreTokenizer, Whitespace,
// WhitespaceSplit, ByteLevel with the GPT-2 split pattern written out by hand, Metaspace,
// Punctuation, Digits, Split on a literal string or a regular expression (text/regex.h)). Each
// turns a list of splits of a normalized buffer into a new list (in a second buffer, since
// ByteLevel and Metaspace rewrite the text).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "text/regex.h"
#include "text/text_buffer.h"

namespace edgebert {
namespace text {

// A piece of the normalized text: bytes [begin, end) of its buffer. added_id >= 0 marks an added
// token found before pre-tokenization (pre-tokenizers and the model pass it through).
struct Split {
  uint32_t begin, end;
  int32_t added_id;
};

enum class PreTokenizerKind { kBert, kWhitespace, kWhitespaceSplit, kByteLevel, kMetaspace, kPunctuation, kDigits, kSplit };
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
enum class PrependScheme { kAlways, kFirst, kNever };

struct PreTokenizer {
  PreTokenizerKind kind = PreTokenizerKind::kWhitespaceSplit;
  bool add_prefix_space = false, use_regex = true;  // kByteLevel
  uint32_t replacement = 0x2581;                    // kMetaspace
  PrependScheme prepend_scheme = PrependScheme::kAlways;
  bool split = true;                                // kMetaspace
  bool individual_digits = false;                   // kDigits
  SplitBehavior behavior = SplitBehavior::kIsolated;  // kPunctuation, kSplit
  std::string_view pattern;                         // kSplit: a literal string, unless `regex` is set
  std::shared_ptr<const Regex> regex;               // kSplit: the compiled regular expression
  bool invert = false;                              // kSplit
};

struct PreTokenizerScratch {
  struct Segment {
    uint32_t begin, end;
    bool match;
  };
  std::vector<Segment> segments, merged;
  std::vector<Change> changes;
  RegexScratch regex;
};

// Splits of `src` -> splits of `dst` (cleared first). False when a Split regex gave up at its
// search limits (regex.h): `dst` is then incomplete and the text cannot be tokenized.
bool apply_pre_tokenizer(const PreTokenizer& p, const TextBuffer& src, const std::vector<Split>& in,
                         TextBuffer& dst, std::vector<Split>& out, PreTokenizerScratch& scratch);

// GPT-2 byte-to-character map of ByteLevel (printable bytes map to themselves, the others to
// U+0100 + n in byte order).
uint32_t byte_level_char(uint8_t b);
// Inverse (-1 for a character that is no byte's image).
int byte_level_byte(uint32_t c);

}  // namespace text
}  // namespace edgebert
