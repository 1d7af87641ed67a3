// SPDX-License-Identifier: Apache-2.0
// model_token.h: what a tokenization model (WordPiece, BPE, Unigram) produces for one
// pre-tokenized word, and the per-call scratch space the models share.
#pragma once

#include <cstdint>
#include <vector>

namespace edgebert {
namespace text {

struct ModelToken {
  int32_t id;
  uint32_t begin, end;  // bytes of the word
};

struct ModelScratch {
  // BPE: the word's symbols
  struct Symbol {
    int32_t id;
    uint32_t begin, end;
    int32_t prev, next;
  };
  std::vector<Symbol> symbols;
  // BPE: the candidate merges, a min-heap on (rank, position of the left symbol)
  struct Candidate {
    uint32_t rank, pos;
    int32_t merged;
  };
  std::vector<Candidate> queue;
  // Unigram: best path per byte position
  struct Node {
    double score;
    int32_t start;  // -1: not reached
    int32_t id;
  };
  std::vector<Node> nodes;
  std::vector<char> key;  // keys with a prefix / suffix
};

}  // namespace text
}  // namespace edgebert
