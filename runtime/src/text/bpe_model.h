// SPDX-License-Identifier: Apache-2.0
// bpe_model.h: HuggingFace's BPE model: a word starts as its characters (with the continuation
// prefix on all but the first and the end-of-word suffix on the last; unknown ones as <0xXX> byte
// tokens with byte_fallback, else the unknown token, fused when fuse_unk), then the adjacent pair
// of lowest merge rank is merged, leftmost first, until no pair has a merge.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "page_alloc.h"
#include "status.h"

#include "text/model_token.h"
#include "text/token_index.h"
#include "text/token_tables.h"

namespace edgebert {
namespace text {

struct BpeOptions {
  int32_t unk_id = -1;
  std::string_view continuing_subword_prefix, end_of_word_suffix;
  bool byte_fallback = false, fuse_unk = false, ignore_merges = false;
};

class BpeModel {
 public:
  struct Merge {
    int32_t left, right, merged;
  };
  static constexpr size_t kMaxAffixBytes = 64;

  // Builds its vocabulary index and merge table (checking every merge), or adopts `tables` (one
  // index and the merge table) when given: the merges are then not read.
  Status init(const VocabView& vocab, const Merge* merges, size_t num_merges, const BpeOptions& options,
              const TokenTables* tables = nullptr);
  void export_tables(TokenTables& out) const;
  static constexpr size_t kPairSlotBytes = 16;  // the model file's BpePairSlot
  void tokenize(const char* word, size_t n, std::vector<ModelToken>& out, ModelScratch& scratch) const;

 private:
  // (rank << 32 | merged id) of the pair (left, right), or UINT64_MAX (also for a slot whose
  // merged id is outside the vocabulary: an adopted table is not trusted).
  uint64_t find_merge(int32_t left, int32_t right) const;
  // Checks every merge (ids in range, the merged token the concatenation of its parts, less the
  // right part's continuation prefix `pre`) and fills pairs_. May throw std::bad_alloc.
  Status build_pairs(const VocabView& vocab, const Merge* merges, size_t num_merges, std::string_view pre);

  TokenIndex vocab_;
  struct PairSlot {
    uint64_t key;    // left << 32 | right; UINT64_MAX: empty
    uint64_t value;  // rank << 32 | merged
  };
  PageArray<PairSlot> owned_pairs_;  // a built table: whole pages, huge pages when large (page_alloc.h)
  const PairSlot* pairs_ = nullptr;  // owned_pairs_', or an adopted table's
  size_t pair_capacity_ = 0, pair_mask_ = 0;
  uint32_t vocab_size_ = 0;
  BpeOptions options_;
  int32_t byte_ids_[256];  // <0xXX> tokens (-1: absent)
};

}  // namespace text
}  // namespace edgebert
