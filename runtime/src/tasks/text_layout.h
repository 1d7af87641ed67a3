// SPDX-License-Identifier: Apache-2.0
// text_layout.h: a text or text pair laid out as the model's template (prefix A suffix, or prefix
// A middle B suffix: [CLS] A [SEP] B [SEP], <s> A </s></s> B </s>, ...) into a run's inputs,
// and the words of a text run (the labels of token classifiers: each word's first token).
#pragma once

#include <cstddef>

#include "tasks/run_inputs.h"
#include "text_encoder.h"

namespace edgebert::tasks {

// How a text (pair) longer than the session's maximum is cut (eb_truncation), as HuggingFace
// tokenizers' TruncationStrategy with direction right: kNone refuses it; kLongestFirst keeps a
// single text's first max_len - specials tokens and, of a pair, the shorter text whole and the
// longer up to the budget (budget = max_len - specials), or when both exceed half the budget,
// floor(budget / 2) tokens of the shorter and ceil(budget / 2) of the longer (the first text
// counts as the shorter on equal lengths); kOnlySecond cuts the end of the second text only
// (refused when that would leave it no token, and for single texts).
enum class Truncation { kNone = 0, kLongestFirst = 1, kOnlySecond = 2 };

// Writes the template around `a` (and `b`, may be null) from token `at`, at most `cap` tokens,
// with token types when the model has them. Returns the tokens the sequence needs (written only
// when <= cap; for a pair whose a alone is too long, a lower bound; max_len + 1 for a text longer
// than the tokenizer takes), and a's tokens in *first_len. A sequence longer than max_len is cut
// as `truncation` says: then the tokens it needs are the cut sequence's (at most max_len), and
// *cut (may be null) receives how many text tokens were left out (0 when none).
size_t lay_out_sequence(const TextEncoder& text, bool token_types, size_t max_len, RunInputs& in, const char* a,
                        const char* b, size_t at, size_t cap, size_t* first_len, Truncation truncation = Truncation::kNone,
                        size_t* cut = nullptr);

// The tokens kept of texts of na and nb tokens (nb: 0 for a single text, has_b false) in `budget`
// text positions under `truncation` (HuggingFace tokenizers' truncate_encodings); false when the
// strategy cannot make them fit (kNone, kOnlySecond of a single text or leaving b no token).
bool truncated_lengths(Truncation truncation, size_t na, size_t nb, bool has_b, size_t budget, size_t* keep_a,
                       size_t* keep_b);

// Why a text (pair) that needs `total` tokens (a alone: first_len) does not fit a session of
// max_len positions, into msg[0, size) (no allocation: refusals are allocation-free too).
void too_long_message(const TextEncoder& text, const char* a, const char* b, size_t total, size_t first_len,
                      size_t max_len, char* msg, size_t size);

// PyLate's query expansion (eb_colbert_input QUERY): the expansion token ([MASK]) after a laid-out
// query up to `length` tokens in all.
struct Expansion {
  int32_t id = -1;      // -1: no expansion
  size_t length = 0;    // tokens of the expanded sequence
  bool attend = false;  // whether tokens attend to the expansion tokens (their key mask)
};

// Sets the key mask of the sequence's tokens [at, at + n) to 1 and, with an expansion, appends its
// tokens up to e.length (id e.id, type 0, offsets {0, 0}, segment and word -1, key mask e.attend).
// Returns the sequence's tokens (the caller has room for max(n, e.length) from `at`).
size_t expand_sequence(RunInputs& in, size_t at, size_t n, const Expansion& e);

// The words of the text run's tokens [0, n) (consecutive tokens of one word and segment), each
// labelled with the argmax of its first token's logits when token_logits is not null. Returns
// their count.
size_t build_words(RunInputs& in, size_t n, const float* token_logits, int labels);

}  // namespace edgebert::tasks
