// SPDX-License-Identifier: Apache-2.0
// wordpiece_model.h: HuggingFace's WordPiece model: greedy longest-match-first with a
// continuation prefix ("##"); a word longer than max_input_chars_per_word, or one with a part
// that matches nothing, is one unknown token.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "status.h"

#include "text/model_token.h"
#include "text/token_index.h"
#include "text/token_tables.h"

namespace edgebert {
namespace text {

class WordPieceModel {
 public:
  // Builds its two indexes, or adopts `tables` (two indexes) when given.
  Status init(const VocabView& vocab, int32_t unk_id, std::string_view prefix, int max_input_chars_per_word,
              const TokenTables* tables = nullptr);
  void export_tables(TokenTables& out) const;
  void tokenize(const char* word, size_t n, std::vector<ModelToken>& out) const;

 private:
  TokenIndex words_, continuations_;  // continuations: tokens that start with the prefix, without it
  size_t max_word_ = 0, max_cont_ = 0;
  int32_t unk_id_ = -1;
  int max_chars_ = 100;
};

}  // namespace text
}  // namespace edgebert
