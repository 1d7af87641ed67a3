// SPDX-License-Identifier: Apache-2.0
// overflow_windows.h: the windows HuggingFace tokenizers cut a long token sequence into
// (return_overflowing_tokens with a stride: Encoding::truncate with direction right): windows of
// `window` tokens starting at tokens 0, step, 2 step, ... (step = window - stride, so consecutive
// windows share `stride` tokens) until one reaches the sequence's end; and the template's runs of
// special tokens written around a window in a run's inputs. Shared by QA's context windows
// (question_answering.cpp) and chunked embedding (chunked_embedding.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tasks/run_inputs.h"

namespace edgebert::tasks {

struct OverflowWindows {
  size_t window = 0;  // tokens per window (> 0)
  size_t step = 0;    // window - stride (> 0)

  // Tokens of the window starting at `start` of a sequence of `total` tokens.
  size_t length(size_t start, size_t total) const { return std::min(window, total - start); }
  // Whether the window at `start` is the last one (it reaches the end).
  bool last(size_t start, size_t total) const { return start + window >= total; }
  // How many windows a sequence of `total` tokens gives (1 when it fits one window, 0 tokens included).
  size_t count(size_t total) const { return total <= window ? 1 : 1 + (total - window + step - 1) / step; }
};

// Writes the special tokens `ids` (with `types` when the model has token types, else 0) at token
// t of the inputs: no byte range ({0, 0}), segment and word -1. Returns the token after them.
inline size_t put_special_tokens(RunInputs& in, size_t t, const std::vector<int32_t>& ids,
                                 const std::vector<int32_t>& types, bool token_types) {
  for (size_t k = 0; k < ids.size(); ++k, ++t) {
    in.ids[t] = ids[k];
    in.begin[t] = in.end[t] = 0;
    in.segment[t] = in.word_ids[t] = -1;
    in.types[t] = token_types ? types[k] : 0;
  }
  return t;
}

}  // namespace edgebert::tasks
