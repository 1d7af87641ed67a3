// SPDX-License-Identifier: Apache-2.0
// text_encoder.h: the tokenizer as a session uses it: one segment of text -> token ids, their byte
// ranges and word ids, without special tokens; plus the model's template as runs of special
// tokens around the segments (text::Tokenizer::Frame: [CLS] A [SEP] B [SEP] for BERT,
// <s> A </s></s> B </s> for RoBERTa, A </s> B </s> for T5, ...). It wraps the model's own
// tokenizer of every kind (runtime/src/text). Allocates only in reserve() (session creation) and
// when a text longer than any before needs larger buffers. Every text is checked to be UTF-8
// before it is tokenized (docs/tokenizers.md, "Invalid UTF-8").
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "model.h"
#include "status.h"
#include "text/tokenizer.h"

namespace edgebert {

// Byte range [begin, end) of a token in the text it came from ({0, 0} for special tokens).
struct TokenSpan {
  int32_t begin, end;
};

// A text that is not valid UTF-8, as encode() reports it: what() is "text is not valid UTF-8:
// byte 0xXX at offset N" (N: the first invalid byte, from the start of that text). Nothing is
// allocated to throw it beyond the exception object. The C API's guard turns it into
// EB_ERROR_INVALID_ARGUMENT with that message, until the session checks its inputs with check()
// first (then nothing throws it).
class InvalidTextError : public std::exception {
 public:
  InvalidTextError(size_t offset, unsigned char byte);
  const char* what() const noexcept override { return message_; }
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
  char message_[96];
};

// A text the tokenizer could not tokenize (its Split regex reached its search limits:
// text/regex.h); what() is the tokenizer's message. The C API's guard turns it into
// EB_ERROR_INVALID_ARGUMENT.
class UntokenizableTextError : public std::exception {
 public:
  explicit UntokenizableTextError(const char* message) : message_(message) {}
  const char* what() const noexcept override { return message_; }

 private:
  const char* message_;
};

class TextEncoder {
 public:
  TextEncoder(const Model& model, bool split_special_tokens)
      : tokenizer_(model.text_tokenizer.get()), split_special_tokens_(split_special_tokens) {
    for (const auto& p : model.prompts) max_prompt_bytes_ = std::max(max_prompt_bytes_, p.second.size());
    if (tokenizer_ && model.colbert.present) {  // PyLate's markers after the template's first token
      const int32_t ids[2] = {model.colbert.query_prefix_id, model.colbert.document_prefix_id};
      for (int k = 0; k < 2; ++k) {
        marked_[k] = tokenizer_->frame(false);
        text::Tokenizer::Frame& f = marked_[k];
        if (ids[k] < 0 || f.prefix.empty()) continue;
        f.prefix.insert(f.prefix.begin() + 1, ids[k]);
        f.prefix_types.insert(f.prefix_types.begin() + 1, 0);
      }
    }
  }

  // Sizes the buffers for `max_tokens` tokens per call and texts of about `text_bytes` bytes.
  void reserve(size_t max_tokens, size_t text_bytes) {
    tokens_.resize(max_tokens);
    ws_.reserve(text_bytes + max_prompt_bytes_);
    joined_.reserve(text_bytes + max_prompt_bytes_);
    text_bytes_ = text_bytes;
  }
  // The longest text (bytes) a run takes: the reserved workspace (16 bytes per position). Callers
  // refuse longer texts before tokenizing them; QA contexts of word-local tokenizers
  // (retokenizes_from_words) may be longer: they are read in pieces of the workspace's size.
  size_t max_text_bytes() const { return text_bytes_; }

  bool available() const { return tokenizer_ != nullptr; }
  // The template's special tokens around one text (pair = false) or two; a single text's with the
  // ColBERT marker when one is set.
  const text::Tokenizer::Frame& frame(bool pair) const {
    return marker_ > 0 && !pair ? marked_[marker_ - 1] : tokenizer_->frame(pair);
  }
  // Whether the template has a first token for a marker to follow (PyLate inserts at position 1).
  bool has_leading_special() const { return !tokenizer_->frame(false).prefix.empty(); }
  // The ColBERT marker of single texts (eb_colbert_input: 0 none, 1 the query's, 2 the document's
  // prefix id after the template's first token; models with PyLate conventions only).
  void set_marker(int input) { marker_ = input; }
  // Whether a text re-tokenized from one of its word starts gives the same tokens from there on
  // (text::Tokenizer::is_word_local: BERT's WordPiece; byte-level or SentencePiece pieces can
  // carry the space before a word, so those contexts are tokenized once, whole).
  bool retokenizes_from_words() const { return tokenizer_->is_word_local(); }

  // The input check every text goes through: OK, or EB_ERROR_INVALID_ARGUMENT "text is not valid
  // UTF-8: byte 0xXX at offset N" (`what` replaces "text", e.g. "text_b", "context").
  static Status check(std::string_view text, const char* what = "text");

  // Tokenizes `text` (no special tokens added). Writes the first min(total, cap) tokens: ids,
  // spans (byte ranges in `text`; may be null) and word ids (numbered from 0 within `text`; may
  // be null). Returns:
  //  - cap == 0: the total number of tokens of the text (bounded memory, linear time for
  //    word-local tokenizers, which read a text longer than the workspace in pieces; SIZE_MAX
  //    when such a text has more than the workspace's bytes without a place to cut);
  //  - cap > 0: the total when it is at most cap or the text is at most the reserved
  //    `text_bytes` long; else some count > cap: tokenizing stops at the first word boundary past
  //    cap tokens (a long text that cannot fit is refused in the time of its first cap tokens,
  //    however long it is).
  // Throws InvalidTextError when `text` is not valid UTF-8 (checked before tokenizing),
  // UntokenizableTextError when the tokenizer gives up on it.
  size_t encode(std::string_view text, int32_t* ids, TokenSpan* spans, int32_t* word_ids, size_t cap) const;
  // encode() of the run's first text with the session's prompt in front (prompt + text, tokenized
  // as one string, as sentence-transformers does): spans stay byte ranges in `text` (the prompt's
  // own tokens get {0, 0}). Without a prompt, encode(). No allocation for texts of at most the
  // reserved bytes.
  size_t encode_first(std::string_view text, int32_t* ids, TokenSpan* spans, int32_t* word_ids, size_t cap) const;
  // The prompt of later encode_first calls (a view of the model's text; empty: none).
  void set_prompt(std::string_view prompt) { prompt_ = prompt; }
  bool has_prompt() const { return !prompt_.empty(); }
  std::string_view prompt() const { return prompt_; }

 private:
  const text::Tokenizer* tokenizer_;
  bool split_special_tokens_;
  mutable text::TextWorkspace ws_;             // a session runs one call at a time
  mutable std::vector<text::TextToken> tokens_;
  size_t text_bytes_ = 0;
  std::string_view prompt_;
  size_t max_prompt_bytes_ = 0;
  text::Tokenizer::Frame marked_[2];  // the single-text frame with the query's / document's marker
  int marker_ = 0;
  mutable std::string joined_;  // prompt + text (reserved)
};

}  // namespace edgebert
