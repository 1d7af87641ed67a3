// SPDX-License-Identifier: Apache-2.0
// many.h: many texts per call on top of a session's packed runs (eb_session_embed_many /
// eb_session_classify_many): every input through Session::run_texts, a packed run at a time until
// all are consumed, each input's row of one pooled output (and its label: the argmax of its
// logits) copied into the caller's buffers with its status; and the label of every token of a
// token classifier's run (eb_session_get_token_labels). Allocation-free: the caller owns the
// buffers, the session's arena holds each run.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgebert/edgebert.h"

namespace edgebert {
class Session;
}

namespace edgebert::tasks {

// eb_session_embed_many: the rows of `which` (EB_OUTPUT_SENTENCE_EMBEDDING or
// EB_OUTPUT_POOLER_OUTPUT) of texts[0, count) (pairs null: single texts, else (texts[i],
// pairs[i])) into out[count, hidden] (out_size floats); statuses may be null (then: stop at the
// first input that fails and return its status, the message naming its index).
eb_status embed_many(Session& session, const char* const* texts, const char* const* pairs, size_t count,
                     int32_t which, float* out, size_t out_size, int32_t* statuses);

// eb_session_classify_many: logits [count, num_labels] (may be null) and label indices [count]
// (the argmax; -1 for an input that did not run; may be null, not both).
eb_status classify_many(Session& session, const char* const* texts, const char* const* pairs, size_t count,
                        float* logits, size_t logits_size, int32_t* labels, int32_t* statuses);

// The index of the largest of v[0, n) (the first of equal maxima).
int32_t argmax(const float* v, size_t n);

// Token classifiers after a run: argmax of each token's token_logits into labels[0, tokens);
// *out_len = the run's tokens (labels may be null: only the count).
eb_status token_labels(Session& session, int32_t* labels, size_t labels_size, size_t* out_len);

}  // namespace edgebert::tasks
