// SPDX-License-Identifier: Apache-2.0
// text_encoder.h: the tokenizer as a session uses it: one segment of text -> token ids, their byte
// ranges and word ids, without special tokens; plus the ids of [CLS] and [SEP]. Today it wraps
// the model's WordPiece tokenizer (a token whose vocabulary string starts with "##" continues the
// previous word); a different tokenizer pipeline replaces it here without touching the session.
// Never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model.h"
#include "tokenizer/wordpiece_tokenizer.h"

namespace edgebert {

class TextEncoder {
 public:
  TextEncoder(const Model& model, bool split_special_tokens)
      : model_(model), split_special_tokens_(split_special_tokens) {}

  bool available() const { return model_.has_vocab; }
  int32_t cls_id() const { return model_.tokenizer.cls_id(); }
  int32_t sep_id() const { return model_.tokenizer.sep_id(); }

  // Tokenizes `text` (no special tokens added). Writes the first min(total, cap) tokens: ids,
  // spans (byte ranges in `text`; may be null) and word ids (numbered from 0 within `text`; may
  // be null); returns the total number of tokens of the text.
  size_t encode(std::string_view text, int32_t* ids, TokenSpan* spans, int32_t* word_ids, size_t cap) const {
    const size_t total = model_.tokenizer.encode(text, ids, spans, cap, false, split_special_tokens_);
    if (word_ids) {
      int32_t word = -1;
      const size_t written = total < cap ? total : cap;
      for (size_t i = 0; i < written; ++i) {
        if (i == 0 || !continues_word(ids[i])) ++word;
        word_ids[i] = word;
      }
    }
    return total;
  }

 private:
  // "##piece": the token continues the word of the token before it (BERT's WordPiece).
  bool continues_word(int32_t id) const {
    const std::string_view s = model_.vocab[static_cast<size_t>(id)];
    return s.size() >= 2 && s[0] == '#' && s[1] == '#';
  }

  const Model& model_;
  bool split_special_tokens_;
};

}  // namespace edgebert
