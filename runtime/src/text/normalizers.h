// SPDX-License-Identifier: Apache-2.0
// normalizers.h: the normalizers of HuggingFace tokenizers that BERT-family checkpoints use
// (BertNormalizer, Lowercase, NFC/NFD/NFKC/NFKD, StripAccents, Strip, Replace with a literal
// pattern, Prepend, Precompiled). A tokenizer.json Sequence is a list of these applied in order.
#pragma once

#include <string_view>
#include <vector>

#include "text/precompiled_charsmap.h"
#include "text/text_buffer.h"

namespace edgebert {
namespace text {

enum class NormalizerKind { kBert, kLowercase, kNFC, kNFD, kNFKC, kNFKD, kStripAccents, kStrip, kReplace, kPrepend, kPrecompiled };

struct Normalizer {
  NormalizerKind kind = NormalizerKind::kLowercase;
  bool clean_text = true, handle_chinese_chars = true, strip_accents = true, lowercase = true;  // kBert
  bool strip_left = true, strip_right = true;  // kStrip
  std::string_view pattern, content;           // kReplace (literal), kPrepend (content)
  int min_repeat = 0;                          // kReplace: > 0: runs of >= n copies of `pattern`
  PrecompiledCharsmap charsmap;                // kPrecompiled
};

// Scratch space one normalization pass uses (owned by the caller's workspace).
struct NormalizerScratch {
  std::vector<Change> changes;
  std::vector<uint32_t> segment, normalized, sources, composed, out_sources;
  TextBuffer tmp;
};

// Applies `n` to all of `buf` (one piece of text whose insertions at the start get `base`).
void apply_normalizer(const Normalizer& n, TextBuffer& buf, Align base, NormalizerScratch& scratch);

}  // namespace text
}  // namespace edgebert
