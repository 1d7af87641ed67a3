// SPDX-License-Identifier: Apache-2.0
// many.cpp: embed / classify many texts through packed runs, and per-token labels (many.h).
#include "tasks/many.h"

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "session.h"

namespace edgebert::tasks {

namespace {

// The session's rows of pooled output `which` ([sequence_count, width] after a packed run) and
// their width; null when the model lacks the output.
const float* pooled_rows(const Session& s, eb_output which, size_t* width) {
  const Model& m = s.model();
  switch (which) {
    case EB_OUTPUT_POOLER_OUTPUT:
      *width = static_cast<size_t>(m.config.hidden);
      return m.has_pooler ? s.pooler_output() : nullptr;
    case EB_OUTPUT_SENTENCE_EMBEDDING:
      *width = s.sentence_embedding_width();
      return s.sentence_embedding();
    case EB_OUTPUT_LOGITS:
      *width = static_cast<size_t>(m.config.num_labels);
      return s.logits();
    default:
      *width = 0;
      return nullptr;
  }
}

// Whether `size` floats hold count rows of width (without overflow).
bool holds(size_t size, size_t count, size_t width) { return width == 0 || count <= size / width; }

// The text of input i's first / second side.
const char* first_text(const ManyInputs& in, size_t i) { return in.shared_first ? in.texts[0] : in.texts[i]; }

// The status of input i that failed in a packed run, with a message naming it: its own message is
// the one a single run of it gives (which fails the same way; allocation-free too).
eb_status input_error(Session& s, const ManyInputs& in, size_t i, eb_status status) {
  const char* a = first_text(in, i);
  const bool null_text = !a || (in.pairs && !in.pairs[i]);
  const eb_status single = null_text ? status : in.pairs ? s.run_text_pair(a, in.pairs[i]) : s.run_text(a);
  char msg[512];  // the single run's message (fail() below overwrites the session's)
  std::snprintf(msg, sizeof msg, "%s",
                null_text                                 ? "text is NULL"
                : single == status && s.last_error()[0] ? s.last_error()
                                                          : eb_status_string(status));
  s.reset_run();
  if (in.shared_first) return s.fail(status, "%s[%zu]: %s", in.pairs_name, i, msg);
  if (in.pairs) return s.fail(status, "%s[%zu], %s[%zu]: %s", in.texts_name, i, in.pairs_name, i, msg);
  return s.fail(status, "%s[%zu]: %s", in.texts_name, i, msg);
}

// Whether the text of one side is valid UTF-8 (NULL: the packed run gives it its own status).
bool text_ok(Session& s, const char* t, const char* name, size_t i, bool indexed) {
  char what[64];
  if (indexed)
    std::snprintf(what, sizeof what, "%s[%zu]", name, i);
  else
    std::snprintf(what, sizeof what, "%s", name);
  return !t || s.check_text(t, what) == EB_OK;
}

}  // namespace

// Every input through packed runs (Session::run_texts consumes as many whole ones as fit), each
// consumed input's row, label and status written before the next run.
eb_status run_many(Session& s, const ManyInputs& in, const ManyOutputs& out) {
  // text that is not UTF-8 refuses the call before anything runs, named by its index in the call
  // (run_texts would name it by its index in one run)
  if (in.shared_first && in.count > 0 && !text_ok(s, in.texts[0], in.texts_name, 0, false)) {
    s.reset_run();
    return EB_ERROR_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < in.count; ++i)
    if ((!in.shared_first && !text_ok(s, in.texts[i], in.texts_name, i, true)) ||
        (in.pairs && !text_ok(s, in.pairs[i], in.pairs_name, i, true))) {
      s.reset_run();
      return EB_ERROR_INVALID_ARGUMENT;
    }
  // a shared first text is repeated in this array, a run's worth of inputs at a time
  constexpr size_t kShared = 256;
  const char* shared[kShared];
  if (in.shared_first) std::fill(shared, shared + std::min(in.count, kShared), in.texts[0]);
  for (size_t done = 0; done < in.count;) {
    size_t k = 0;
    const size_t left = in.shared_first ? std::min(in.count - done, kShared) : in.count - done;
    const char* const* firsts = in.shared_first ? shared : in.texts + done;
    const eb_status st = s.run_texts(firsts, in.pairs ? in.pairs + done : nullptr, left, &k);
    if (st != EB_OK) return st;  // the call's own failure (unsupported model, backend): the session's message
    if (k == 0 || k > left) {
      s.reset_run();
      return s.fail(EB_ERROR_BACKEND, "a packed run consumed %zu of %zu inputs", k, left);
    }
    size_t width = 0;
    const float* rows = pooled_rows(s, out.which, &width);
    for (size_t i = 0; i < k; ++i) {
      const size_t at = done + i;
      const eb_status q = s.sequence(i).status;  // a failed input's rows are 0 (Session::run_packed)
      const float* row = rows + i * width;
      if (out.rows) std::memcpy(out.rows + at * width, row, width * sizeof(float));
      if (out.labels) out.labels[at] = q == EB_OK ? argmax(row, width) : -1;
      if (out.sink) out.sink(out.sink_context, at, row, q);
      if (out.statuses)
        out.statuses[at] = static_cast<int32_t>(q);
      else if (q != EB_OK)
        return input_error(s, in, at, q);
    }
    done += k;
  }
  s.clear_error();
  return EB_OK;
}

namespace {

// The checks every many call shares: texts, and a buffer of count rows of width.
eb_status check_inputs(Session& s, const char* what, const char* const* texts, size_t count, const char* buffer,
                       size_t size, size_t width) {
  if (!texts) return refuse(s, EB_ERROR_INVALID_ARGUMENT, "%s: texts is NULL", what);
  if (!holds(size, count, width)) {
    if (width != 0 && count > SIZE_MAX / width)
      return refuse(s, EB_ERROR_INVALID_ARGUMENT, "%s: %zu inputs of %zu floats are more than any buffer holds", what,
                    count, width);
    return refuse(s, EB_ERROR_INVALID_ARGUMENT, "%s: %s holds %zu floats, %zu inputs of %zu need %zu", what, buffer,
                  size, count, width, count * width);
  }
  return EB_OK;
}

}  // namespace

eb_status refuse(Session& s, eb_status status, const char* fmt, ...) {
  s.reset_run();
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return s.fail(status, "%s", msg);
}

int32_t argmax(const float* v, size_t n) {
  return n == 0 ? -1 : static_cast<int32_t>(std::max_element(v, v + n) - v);
}

eb_status embed_many(Session& s, const char* const* texts, const char* const* pairs, size_t count, int32_t which,
                     float* out, size_t out_size, int32_t* statuses) {
  if (which != EB_OUTPUT_SENTENCE_EMBEDDING && which != EB_OUTPUT_POOLER_OUTPUT)
    return refuse(s, EB_ERROR_INVALID_ARGUMENT,
                  "embed_many: output %d is not EB_OUTPUT_SENTENCE_EMBEDDING or EB_OUTPUT_POOLER_OUTPUT",
                  static_cast<int>(which));
  size_t width = 0;
  const eb_output output = static_cast<eb_output>(which);  // one of the two (checked above)
  if (!pooled_rows(s, output, &width))
    return refuse(s, EB_ERROR_UNSUPPORTED, "embed_many: %s",
                  which == EB_OUTPUT_POOLER_OUTPUT ? "this model has no pooler"
                                                   : "this model is not a sentence-embedding model");
  if (count == 0) return EB_OK;
  if (!out) return refuse(s, EB_ERROR_INVALID_ARGUMENT, "embed_many: out is NULL");
  const eb_status st = check_inputs(s, "embed_many", texts, count, "out", out_size, width);
  if (st != EB_OK) return st;
  return run_many(s, ManyInputs{texts, pairs, count}, ManyOutputs{output, out, nullptr, statuses});
}

eb_status classify_many(Session& s, const char* const* texts, const char* const* pairs, size_t count, float* logits,
                        size_t logits_size, int32_t* labels, int32_t* statuses) {
  size_t width = 0;
  if (!pooled_rows(s, EB_OUTPUT_LOGITS, &width))
    return refuse(s, EB_ERROR_UNSUPPORTED, "classify_many: this model is not a sequence classifier");
  if (count == 0) return EB_OK;
  if (!logits && !labels) return refuse(s, EB_ERROR_INVALID_ARGUMENT, "classify_many: out_logits and out_labels are both NULL");
  const eb_status st = check_inputs(s, "classify_many", texts, count, "out_logits", logits ? logits_size : SIZE_MAX, width);
  if (st != EB_OK) return st;
  return run_many(s, ManyInputs{texts, pairs, count}, ManyOutputs{EB_OUTPUT_LOGITS, logits, labels, statuses});
}

eb_status token_labels(Session& s, int32_t* labels, size_t labels_size, size_t* out_len) {
  if (out_len) *out_len = 0;
  if (!s.token_logits()) return s.fail(EB_ERROR_UNSUPPORTED, "this model is not a token classifier");
  if (!s.has_output()) return s.fail(EB_ERROR_BAD_STATE, "no successful run yet: token labels are not available");
  const size_t n = s.seq_len(), width = static_cast<size_t>(s.model().config.num_labels);
  if (out_len) *out_len = n;
  if (!labels) return EB_OK;
  if (labels_size < n)
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "out_labels holds %zu labels, the last run has %zu tokens", labels_size, n);
  const float* logits = s.token_logits();
  for (size_t t = 0; t < n; ++t) labels[t] = argmax(logits + t * width, width);
  s.clear_error();
  return EB_OK;
}

}  // namespace edgebert::tasks
