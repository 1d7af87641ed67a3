// SPDX-License-Identifier: Apache-2.0
// run_inputs.h: the inputs of a session's current run, laid out by the tasks before the session
// runs them: per token its id, token type and key-mask entry and, for text runs, its byte range in
// its text, its segment (0: text / text_a, 1: text_b, -1: an added special token) and word, and
// the words. Sized once at session creation for the session's most tokens; never grown by a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "edgebert/edgebert.h"
#include "text_encoder.h"

namespace edgebert::tasks {

struct RunInputs {
  std::vector<int32_t> ids, types;
  std::vector<uint8_t> key_mask;
  std::vector<TokenSpan> spans;  // encode()'s byte ranges, copied into begin / end
  std::vector<int32_t> begin, end, segment, word_ids;
  std::vector<eb_word> words;

  void allocate(size_t tokens) {
    ids.assign(tokens, 0);
    types.assign(tokens, 0);
    key_mask.assign(tokens, 1);
    spans.assign(tokens, TokenSpan{0, 0});
    begin.assign(tokens, 0);
    end.assign(tokens, 0);
    segment.assign(tokens, -1);
    word_ids.assign(tokens, -1);
    words.assign(tokens, eb_word{});
  }
};

}  // namespace edgebert::tasks
