// SPDX-License-Identifier: Apache-2.0
// added_tokens.h: tokenizer.json's added tokens (special or not), found in the text before the
// model runs, as HuggingFace's AddedVocabulary does: leftmost-longest matches, single_word
// (no word character on either side), lstrip / rstrip (the match takes the whitespace beside it).
// Tokens with normalized = false are found in the raw text, the others in the normalized text.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace edgebert {
namespace text {

struct AddedToken {
  int32_t id;
  std::string_view content;
  bool special, lstrip, rstrip, single_word, normalized;
};

class AddedTokenMatcher {
 public:
  // Keeps the tokens with normalized == `normalized` (views into `tokens`, which must outlive it).
  void init(const std::vector<AddedToken>& tokens, bool normalized);
  bool empty() const { return tokens_.empty(); }
  struct Match {
    uint32_t begin, end;            // what the match consumes (with lstrip / rstrip whitespace)
    uint32_t token_begin, token_end;  // the token's own bytes (its offsets)
    int32_t id;
  };
  // The matches in s[0, n), in order, non-overlapping (appended to out). skip_special: special
  // tokens are not matched (their text is tokenized as text: HF's split_special_tokens).
  void find(const char* s, size_t n, std::vector<Match>& out, bool skip_special = false) const;

 private:
  std::vector<const AddedToken*> tokens_;
  std::vector<uint16_t> first_[256];  // indices of tokens_ by first byte
};

}  // namespace text
}  // namespace edgebert
