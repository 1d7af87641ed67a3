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

// The inputs of a many call: texts[0, count) (pairs null) or pairs (texts[i], pairs[i]); with
// shared_first, texts[0] is the first text of every pair (a rerank query). The names are those
// error messages give them ("texts[3]: ...").
struct ManyInputs {
  const char* const* texts;
  const char* const* pairs;
  size_t count;
  bool shared_first = false;
  const char* texts_name = "texts";
  const char* pairs_name = "pairs";
};

// Where run_many writes: rows of `which` ([count, width] floats; may be null), each row's argmax
// (may be null), each input's status (null: stop at the first failure), and a sink called with
// every consumed input's row and status, in input order (may be null).
struct ManyOutputs {
  eb_output which;
  float* rows;
  int32_t* labels;
  int32_t* statuses;
  void (*sink)(void* context, size_t index, const float* row, eb_status status) = nullptr;
  void* sink_context = nullptr;
};

// Every input through packed runs, a run at a time until all are consumed: the loop of the many
// calls. Text that is not UTF-8 refuses the call before anything runs. With statuses null, the
// first input that fails stops the call with its status (the message naming it). The caller has
// checked the model has `which` and the buffers' sizes.
eb_status run_many(Session& session, const ManyInputs& inputs, const ManyOutputs& outputs);

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

// A refusal before anything ran: the previous run's outputs are gone, as after any failed call;
// the message is the session's.
__attribute__((format(printf, 3, 4))) eb_status refuse(Session& session, eb_status status, const char* fmt, ...);

// The index of the largest of v[0, n) (the first of equal maxima).
int32_t argmax(const float* v, size_t n);

// Token classifiers after a run: argmax of each token's token_logits into labels[0, tokens);
// *out_len = the run's tokens (labels may be null: only the count).
eb_status token_labels(Session& session, int32_t* labels, size_t labels_size, size_t* out_len);

}  // namespace edgebert::tasks
