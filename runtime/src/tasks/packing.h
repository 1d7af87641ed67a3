// SPDX-License-Identifier: Apache-2.0
// packing.h: the inputs of a packed run: as many whole sequences as fit in the run's rows, laid
// end to end in the run's inputs in order, each with its status (run, or why not: a NULL text,
// an empty or too long sequence, ids out of range). A sequence that fits only a run of its own
// ends the run (the caller's next call starts with it). No allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgebert/edgebert.h"
#include "tasks/run_inputs.h"
#include "tasks/text_layout.h"
#include "text_encoder.h"

namespace edgebert::tasks {

// One sequence of a run: its status (EB_OK, or why it was not run), its tokens
// [first_token, first_token + tokens) and words [first_word, first_word + words) in the run.
struct SequenceInfo {
  eb_status status = EB_OK;
  size_t first_token = 0, tokens = 0, first_word = 0, words = 0;
  size_t truncated = 0;  // text tokens the session's truncation left out (0: none)
};

// What a packed run may hold, and what the model accepts as inputs.
struct PackLimits {
  size_t max_rows = 0;       // tokens of the run (max_batch_tokens)
  size_t max_len = 0;        // tokens of one sequence (max_sequence_length)
  int64_t vocab = 0;         // ids in [0, vocab)
  int64_t type_vocab = 0;    // token types in [0, type_vocab) (0 always accepted)
  bool token_types = false;  // the model has token types (else they are set to 0)
};

// EB_OK when the ids and token types of tokens [first, first + n) are in range (types set to 0
// for models without them).
eb_status check_ids(const PackLimits& limits, RunInputs& in, size_t first, size_t n);

// Texts (texts_b null) or pairs, tokenized with their template and cut as `truncation` says
// (text_layout.h), each followed by `expansion`'s tokens (ColBERT queries): sequences[0, k), the
// inputs and the key mask of every run token are filled; returns k, the inputs consumed.
size_t pack_texts(const TextEncoder& text, const PackLimits& limits, Truncation truncation, const char* const* texts_a,
                  const char* const* texts_b, size_t count, RunInputs& in, SequenceInfo* sequences,
                  const Expansion& expansion = Expansion{});

// Token ids given by the caller, `count` sequences of lengths[i] ids (types: null, all 0; mask:
// null, every token attended, else each entry 0 or 1, laid as the run's key mask: a sequence with
// another value is EB_ERROR_INVALID_ARGUMENT).
size_t pack_ids(const PackLimits& limits, const int32_t* ids, const int32_t* token_types, const int32_t* mask,
                const size_t* lengths, size_t count, RunInputs& in, SequenceInfo* sequences);

}  // namespace edgebert::tasks
