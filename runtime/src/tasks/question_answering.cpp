// SPDX-License-Identifier: Apache-2.0
// question_answering.cpp: answer spans and windowed answers over long contexts (see
// question_answering.h).
#include "tasks/question_answering.h"

#include <algorithm>
#include <cstdint>

#include "session.h"
#include "tasks/overflow_windows.h"

namespace edgebert::tasks {

namespace {

// Tokenizes a prefix of context[from, end) that ends before ASCII whitespace (no word crosses it,
// so its tokens are the first tokens of the whole rest) and holds at least `need` tokens, or the
// whole rest: each window reads about its own bytes, not the rest of a long context.
size_t tokenize_context(const TextEncoder& text, QaScratch& q, std::string_view context, size_t from, size_t need) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  for (size_t guess = 8 * need + 64;; guess *= 2) {
    size_t cut = guess < context.size() - from ? from + guess : context.size();
    while (cut < context.size() && !is_space(context[cut])) ++cut;
    const size_t tokens = text.encode(context.substr(from, cut - from), q.context_ids.data(), q.context_spans.data(),
                                      q.context_words.data(), need);
    if (tokens >= need || cut == context.size()) return tokens;
  }
}

}  // namespace

bool best_span_in_run(const RunInputs& in, const float* start_logits, const float* end_logits, size_t begin, size_t end,
                      size_t max_len, eb_span* out) {
  bool found = false;
  for (size_t s = begin; s < end; ++s) {
    if (in.segment[s] != 1) continue;
    for (size_t e = s; e < end && e - s < max_len && in.segment[e] == 1; ++e) {
      const float score = start_logits[s] + end_logits[e];
      if (found && !(score > out->score)) continue;
      found = true;
      out->start_token = static_cast<int32_t>(s);
      out->end_token = static_cast<int32_t>(e);
      out->begin_byte = in.begin[s];
      out->end_byte = in.end[e];
      out->score = score;
    }
  }
  return found;
}

namespace {

size_t max_span(int max_tokens) { return max_tokens <= 0 ? 30 : static_cast<size_t>(max_tokens); }

eb_status check_qa(Session& s, const char* what, eb_span* out) {
  if (!out) return s.fail(EB_ERROR_INVALID_ARGUMENT, "out_span is NULL");
  if (s.model().task != Task::kQuestionAnswering || !s.start_logits())
    return s.fail(EB_ERROR_UNSUPPORTED, "%s needs a question-answering model", what);
  return EB_OK;
}

}  // namespace

eb_status best_span(Session& s, int max_tokens, eb_span* out) {
  const eb_status qa = check_qa(s, "best_span", out);
  if (qa != EB_OK) return qa;
  if (!s.has_pair())
    return s.fail(EB_ERROR_BAD_STATE, "best_span needs a successful run_text_pair(question, context) as the last run");
  if (!best_span_in_run(s.inputs(), s.start_logits(), s.end_logits(), 0, s.seq_len(), max_span(max_tokens), out))
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "the context of the last run has no tokens (empty or only whitespace): no span");
  s.clear_error();
  return EB_OK;
}

eb_status sequence_best_span(Session& s, size_t index, int max_tokens, eb_span* out) {
  const eb_status qa = check_qa(s, "sequence_best_span", out);
  if (qa != EB_OK) return qa;
  if (!s.packed()) {
    if (index != 0) return s.fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu of 1 (the last run was a single run)", index);
    return best_span(s, max_tokens, out);
  }
  if (!s.packed_pairs())
    return s.fail(EB_ERROR_BAD_STATE,
                  "sequence_best_span needs a successful run_text_pairs(questions, contexts) as the last run");
  if (index >= s.sequence_count())
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu of %zu", index, s.sequence_count());
  const SequenceInfo q = s.sequence(index);
  if (q.status != EB_OK)
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu did not run (%s)", index, eb_status_string(q.status));
  if (!best_span_in_run(s.inputs(), s.start_logits(), s.end_logits(), q.first_token, q.first_token + q.tokens,
                        max_span(max_tokens), out))
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "the context of sequence %zu has no tokens (empty or only whitespace): no span",
                  index);
  s.clear_error();
  return EB_OK;
}

eb_status answer(Session& s, const char* question, const char* context, int max_answer_tokens, int doc_stride,
                 eb_span* out, int32_t* out_windows) {
  s.reset_run();
  const Model& model = s.model();
  const TextEncoder& text = s.text();
  RunInputs& in = s.inputs();
  QaScratch& qs = s.qa_scratch();
  const int max_n = s.max_seq_len();
  if (out_windows) *out_windows = 0;
  if (!question || !context) return s.fail(EB_ERROR_INVALID_ARGUMENT, "question and context must not be NULL");
  if (!out) return s.fail(EB_ERROR_INVALID_ARGUMENT, "out_span is NULL");
  if (model.task != Task::kQuestionAnswering || !s.start_logits())
    return s.fail(EB_ERROR_UNSUPPORTED, "answer needs a question-answering model");
  if (!text.available()) return s.fail(EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  if (s.check_text(question, "question") != EB_OK || s.check_text(context, "context") != EB_OK)
    return EB_ERROR_INVALID_ARGUMENT;
  const size_t cap = static_cast<size_t>(max_n);
  const text::Tokenizer::Frame& f = text.frame(true);  // prefix question middle window suffix
  const size_t specials = f.prefix.size() + f.middle.size() + f.suffix.size();
  const size_t q = text.encode(question, qs.question_ids.data(), qs.question_spans.data(), qs.question_words.data(), cap);
  if (q + specials + 1 > cap)
    return s.fail(EB_ERROR_SEQUENCE_TOO_LONG,
                "the question is %zu tokens long: with the model's %zu special tokens it leaves no room for context in "
                "the session maximum of %d",
                q, specials, max_n);
  const size_t window = cap - q - specials;  // context tokens per window
  const std::string_view ctx(context);
  // Word-local tokenizers (BERT's WordPiece) re-tokenize the context from a word start before
  // each window (any length, read in pieces of the workspace's size);
  // the other tokenizers' pieces can carry the space before a word, so their context is
  // tokenized once, whole, into buffers sized at session creation (longer contexts are refused).
  const bool whole = !text.retokenizes_from_words();
  if (whole && ctx.size() > text.max_text_bytes())
    return s.fail(EB_ERROR_SEQUENCE_TOO_LONG,
                "the context is %zu bytes long; with this model's tokenizer a session of %d positions answers over "
                "contexts of up to %zu bytes",
                ctx.size(), max_n, text.max_text_bytes());
  size_t total = text.encode(ctx, nullptr, nullptr, nullptr, 0);
  if (total == SIZE_MAX)  // streamed in pieces of the workspace's size: one has no place to cut
    return s.fail(EB_ERROR_SEQUENCE_TOO_LONG,
                  "the context has a stretch of more than %zu bytes without whitespace, punctuation or a CJK "
                  "character; a session of %d positions reads contexts in pieces of up to that size",
                  text.max_text_bytes(), max_n);
  if (whole) {
    if (total > qs.context_ids.size())  // bounded buffers: never grown during a run
      return s.fail(EB_ERROR_SEQUENCE_TOO_LONG,
                  "the context is %zu tokens long; with this model's tokenizer a session of %d positions answers over "
                  "contexts of up to %zu tokens",
                  total, max_n, qs.context_ids.size());
    total = text.encode(ctx, qs.context_ids.data(), qs.context_spans.data(), qs.context_words.data(), qs.context_ids.size());
  }
  const size_t stride = doc_stride < 0 ? std::min<size_t>(128, window / 2) : static_cast<size_t>(doc_stride);
  if (total > window && stride >= window)
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "doc_stride %zu must be smaller than the %zu context tokens of a window", stride,
                window);
  const OverflowWindows windows_of{window, window - stride};
  const size_t step = windows_of.step, max_len = max_answer_tokens <= 0 ? 30 : static_cast<size_t>(max_answer_tokens);
  // The windows start at context tokens 0, step, 2 step, ... (as HuggingFace's overflowing tokens)
  // until one reaches the end. The context is tokenized from a word start at or before each
  // window (its pieces are the same as in the whole context's tokenization), not kept whole.
  size_t cursor_byte = 0, cursor_token = 0;
  int32_t cursor_word = 0;
  eb_span best{};
  bool found = false;
  int32_t windows = 0;
  for (size_t start = 0;; start += step) {
    // the tokens from the cursor to the window's end, and the one after it (the next window may
    // start there)
    const size_t skip = start - cursor_token, need = skip + window + 1;
    if (!whole) {
      if (need > qs.context_ids.size())
        return s.fail(EB_ERROR_BACKEND, "a word of the context is longer than %zu tokens", qs.context_ids.size() - window - 1);
      const size_t rest = tokenize_context(text, qs, ctx, cursor_byte, need);
      if (cursor_token + rest > total || (rest < need && rest != total - cursor_token))
        return s.fail(EB_ERROR_BACKEND, "the context re-tokenized from byte %zu gave %zu tokens, not %zu", cursor_byte,
                    rest, total - cursor_token);
    }
    const size_t win = windows_of.length(start, total);
    const size_t n = q + win + specials;
    size_t t = put_special_tokens(in, 0, f.prefix, f.prefix_types, model.has_token_types);
    for (size_t i = 0; i < q; ++i, ++t) {
      in.ids[t] = qs.question_ids[i];
      in.begin[t] = qs.question_spans[i].begin;
      in.end[t] = qs.question_spans[i].end;
      in.segment[t] = 0;
      in.word_ids[t] = qs.question_words[i];
      in.types[t] = model.has_token_types ? f.type_a : 0;
    }
    t = put_special_tokens(in, t, f.middle, f.middle_types, model.has_token_types);
    for (size_t i = 0; i < win; ++i, ++t) {
      const size_t c = skip + i;
      in.ids[t] = qs.context_ids[c];
      in.begin[t] = static_cast<int32_t>(cursor_byte) + qs.context_spans[c].begin;
      in.end[t] = static_cast<int32_t>(cursor_byte) + qs.context_spans[c].end;
      in.segment[t] = 1;
      in.word_ids[t] = cursor_word + qs.context_words[c];
      in.types[t] = model.has_token_types ? f.type_b : 0;
    }
    put_special_tokens(in, t, f.suffix, f.suffix_types, model.has_token_types);
    const eb_status st = s.run_text_inputs(n, true);
    if (st != EB_OK) {
      s.reset_run();
      return st;
    }
    ++windows;
    eb_span span{};
    if (best_span_in_run(in, s.start_logits(), s.end_logits(), 0, n, max_len, &span) && (!found || span.score > best.score))
      best = span, found = true;
    if (windows_of.last(start, total)) break;
    // the next cursor: the start of the word holding the next window's first token
    if (whole) continue;  // the whole context stays in the buffers
    size_t local = start + step - cursor_token;
    while (local > 0 && qs.context_words[local] == qs.context_words[local - 1]) --local;
    cursor_byte += static_cast<size_t>(qs.context_spans[local].begin);
    cursor_word += qs.context_words[local];
    cursor_token += local;
  }
  if (!found) {
    s.reset_run();
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "the context has no tokens (empty or only whitespace): no span");
  }
  *out = best;
  if (out_windows) *out_windows = windows;
  s.clear_error();
  return EB_OK;
}

}  // namespace edgebert::tasks
