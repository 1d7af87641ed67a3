// SPDX-License-Identifier: Apache-2.0
// question_answering.h: extractive QA on top of a session: the best answer span of a run's
// context tokens, and answers over contexts of any length (eb_session_answer): windows of the
// context's tokens with overlap (HuggingFace's doc_stride), each run as
// [CLS] question [SEP] window [SEP], the best span over all windows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "edgebert/edgebert.h"
#include "tasks/run_inputs.h"
#include "text_encoder.h"

namespace edgebert {
class Session;
}

namespace edgebert::tasks {

// Token buffers of answer(), sized once at session creation: the question's tokens and the
// context's tokens from the current window's word start.
struct QaScratch {
  std::vector<int32_t> question_ids, question_words, context_ids, context_words;
  std::vector<TokenSpan> question_spans, context_spans;
  void allocate(size_t question_tokens, size_t context_tokens) {
    question_ids.assign(question_tokens, 0);
    question_words.assign(question_tokens, 0);
    question_spans.assign(question_tokens, TokenSpan{0, 0});
    context_ids.assign(context_tokens, 0);
    context_words.assign(context_tokens, 0);
    context_spans.assign(context_tokens, TokenSpan{0, 0});
  }
};

// Room for the tokens of one word before a window's first token (a vocab.txt WordPiece word has
// at most max_input_chars_per_word pieces) when the context is re-tokenized from that word's start.
constexpr size_t kContextWordSlack = static_cast<size_t>(text::kMaxInputCharsPerWord) + 1;

// The best span of the context tokens (segment 1) among tokens [begin, end) of the run's inputs, at
// most max_len tokens, by start_logits + end_logits; false when there are none.
bool best_span_in_run(const RunInputs& in, const float* start_logits, const float* end_logits, size_t begin, size_t end,
                      size_t max_len, eb_span* out);

// eb_session_best_span: after run_text_pair(question, context) on a QA model, the best span of the
// context (segment 1), start <= end, at most max_tokens tokens (<= 0: 30), by start + end logits.
eb_status best_span(Session& session, int max_tokens, eb_span* out);
// eb_session_sequence_best_span: the same for sequence `index` of the last run (a packed run of
// pairs, or a single pair run).
eb_status sequence_best_span(Session& session, size_t index, int max_tokens, eb_span* out);

// eb_session_answer on `session` (a QA model): runs each window; the session's last run is the
// last window's.
eb_status answer(Session& session, const char* question, const char* context, int max_answer_tokens, int doc_stride,
                 eb_span* out, int32_t* out_windows);

}  // namespace edgebert::tasks
