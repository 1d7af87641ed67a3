// SPDX-License-Identifier: Apache-2.0
// unigram_model.h: HuggingFace's Unigram model (SentencePiece's): the Viterbi segmentation of a
// word into vocabulary pieces maximising the sum of their scores (log probabilities), a character
// no piece covers being the unknown token at (lowest score - 10); consecutive unknowns fused
// (fuse_unk, always on in the reference), optionally spelled as <0xXX> byte tokens.
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

class UnigramModel {
 public:
  // Builds its index of pieces and prefixes, or adopts `tables` (one index) when given.
  Status init(const VocabView& vocab, const double* scores, int32_t unk_id, bool byte_fallback,
              const TokenTables* tables = nullptr);
  void export_tables(TokenTables& out) const;
  void tokenize(const char* word, size_t n, std::vector<ModelToken>& out, ModelScratch& scratch) const;

 private:
  TokenIndex trie_;  // every piece and every prefix of one (prefix only: -1)
  const double* scores_ = nullptr;
  double unk_score_ = 0;
  int32_t unk_id_ = -1;
  bool byte_fallback_ = false;
  int32_t byte_ids_[256];
};

}  // namespace text
}  // namespace edgebert
