// SPDX-License-Identifier: Apache-2.0
// chunked_embedding.cpp: windows of a long text's tokens streamed from pieces of the text, laid
// out as packed runs, and their sentence embeddings pooled (chunked_embedding.h).
#include "tasks/chunked_embedding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "session.h"
#include "tasks/many.h"
#include "tasks/overflow_windows.h"
#include "text/unicode.h"

namespace edgebert::tasks {

namespace {

bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The text's tokens read piece by piece: tokens [base(), end()) are in the scratch buffers (global
// token indices; byte ranges in the whole text, word ids numbered over the whole text).
class TokenStream {
 public:
  // prompt_tokens: how many ids of the scratch's prompt go before each window (embed_chunked)
  TokenStream(Session& s, std::string_view text, size_t prompt_tokens)
      : s_(s), text_(s.text()), c_(s.chunk_scratch()), doc_(text), max_piece_(s.text().max_text_bytes()),
        prompt_tokens_(prompt_tokens) {
    target_ = std::min(max_piece_, 4 * c_.piece_tokens);
  }
  size_t base() const { return base_; }
  size_t end() const { return base_ + len_; }
  bool done() const { return pos_ == doc_.size(); }
  size_t slot(size_t token) const { return token - base_; }
  const ChunkScratch& buffers() const { return c_; }

  // Reads pieces until tokens [from, want) are in the buffers or the text is read, first dropping
  // the tokens before `from` (>= base()). EB_OK, or the error (the session's message set).
  eb_status fill(size_t from, size_t want) {
    while (end() < want && !done()) {
      if (from > base_) {  // keep [from, end()): at most one window
        const size_t keep = end() - from, drop = from - base_;
        std::memmove(c_.ids.data(), c_.ids.data() + drop, keep * sizeof(int32_t));
        std::memmove(c_.words.data(), c_.words.data() + drop, keep * sizeof(int32_t));
        std::memmove(c_.spans.data(), c_.spans.data() + drop, keep * sizeof(TokenSpan));
        base_ = from;
        len_ = keep;
      }
      const eb_status st = read_piece();
      if (st != EB_OK) return st;
    }
    return EB_OK;
  }

 private:
  // A single ASCII space in (lo, hi) of the text, the one nearest `near` (searched down from it,
  // then up); npos when there is none.
  size_t find_cut(size_t lo, size_t near, size_t hi) const {
    auto single = [&](size_t i) { return doc_[i] == ' ' && !ascii_space(doc_[i - 1]) && !ascii_space(doc_[i + 1]); };
    for (size_t i = std::min(near, hi - 1); i > lo; --i)
      if (i + 1 < doc_.size() && single(i)) return i;
    for (size_t i = near + 1; i < hi; ++i)
      if (i + 1 < doc_.size() && single(i)) return i;
    return std::string_view::npos;
  }

  // Tokenizes the next piece (the rest of the text, or up to a single space) after the buffered
  // tokens; a piece with more tokens than the room left is cut shorter.
  eb_status read_piece() {
    const size_t room = std::min(c_.piece_tokens, c_.ids.size() - len_);
    size_t limit = std::min(doc_.size(), pos_ + max_piece_);  // the piece ends at or before it
    for (;;) {
      size_t cut = doc_.size();
      if (doc_.size() - pos_ > target_ || limit < doc_.size()) {
        cut = find_cut(pos_, pos_ + target_, limit + 1);
        if (cut == std::string_view::npos) {
          if (limit == doc_.size() && doc_.size() - pos_ <= max_piece_) {
            cut = doc_.size();  // the rest fits a piece but has no place to cut: take it whole
          } else {
            return s_.fail(EB_ERROR_SEQUENCE_TOO_LONG,
                           "the text has no single ASCII space between bytes %zu and %zu; a session of %zu batch "
                           "tokens reads texts in pieces of up to %zu bytes cut only there",
                           pos_, limit, s_.max_batch_tokens(), max_piece_);
          }
        }
      }
      const std::string_view piece = doc_.substr(pos_, cut - pos_);
      int32_t* ids = c_.ids.data() + len_;
      int32_t* words = c_.words.data() + len_;
      TokenSpan* spans = c_.spans.data() + len_;
      size_t n = first_with_prompt() ? text_.encode_first(piece, ids, spans, words, room)
                                     : text_.encode(piece, ids, spans, words, room);
      if (n <= room && first_with_prompt()) n = drop_prompt_tokens(ids, spans, words, n, c_.prompt.data(), prompt_tokens_);
      if (n <= room) {
        const int32_t at = static_cast<int32_t>(pos_);
        for (size_t i = 0; i < n; ++i) {
          spans[i].begin += at;
          spans[i].end += at;
          words[i] += word_base_;
        }
        if (n > 0) word_base_ = words[n - 1] + 1;
        len_ += n;
        pos_ = cut;
        if (n < room / 4 && target_ < max_piece_) target_ = std::min(max_piece_, 2 * target_);
        return EB_OK;
      }
      // too many tokens for the room: a shorter piece (cut before this one's end)
      if (cut - pos_ < 2)
        return s_.fail(EB_ERROR_SEQUENCE_TOO_LONG, "the text at byte %zu has more than %zu tokens without a place to cut",
                       pos_, room);
      limit = cut - 1;
      target_ = std::max<size_t>(1, (cut - pos_) / 2);
      if (limit <= pos_ + 1)
        return s_.fail(EB_ERROR_SEQUENCE_TOO_LONG, "the text at byte %zu has more than %zu tokens without a place to cut",
                       pos_, room);
    }
  }

  // The text's first piece is tokenized after the session's prompt, as one string (as a prompt
  // run, where the prompt's trailing space goes with the text's first word: "▁Which", not "Which"),
  // so that the first window's tokens are the prompt run's; later pieces are the text's alone.
  bool first_with_prompt() const { return pos_ == 0 && text_.has_prompt(); }
  // Drops from the front of n tokens the prompt's ids that every window gets (`prompt`, its text
  // without trailing spaces): a token of the prompt's spaces that stays a token of its own (two
  // spaces before the text, say) stays with the text, so one window is the prompt run's tokens.
  // Else (another split) every prompt-only token (encode_first's spans {0, 0}). Numbers the words
  // from 0; the count left.
  static size_t drop_prompt_tokens(int32_t* ids, TokenSpan* spans, int32_t* words, size_t n, const int32_t* prompt,
                                   size_t prompt_n) {
    size_t k = 0;
    while (k < n && spans[k].begin == 0 && spans[k].end == 0) ++k;
    if (k >= prompt_n && std::equal(prompt, prompt + prompt_n, ids)) k = prompt_n;
    std::memmove(ids, ids + k, (n - k) * sizeof(int32_t));
    std::memmove(spans, spans + k, (n - k) * sizeof(TokenSpan));
    std::memmove(words, words + k, (n - k) * sizeof(int32_t));
    const int32_t first_word = n > k ? words[0] : 0;
    for (size_t i = 0; i < n - k; ++i) words[i] -= first_word;
    return n - k;
  }

  Session& s_;
  const TextEncoder& text_;
  ChunkScratch& c_;
  std::string_view doc_;
  size_t max_piece_, target_;
  size_t prompt_tokens_;
  size_t pos_ = 0;               // bytes read
  size_t base_ = 0, len_ = 0;    // buffered tokens [base_, base_ + len_)
  int32_t word_base_ = 0;        // word id of the next piece's first word
};

// The windows of the whole text, one call of `visit(start, tokens, stream)` per window in order
// (its tokens are buffered); stops at the first error (visit's or the stream's).
template <typename Visit>
eb_status for_each_window(Session& s, std::string_view text, size_t prompt_tokens, const OverflowWindows& w,
                          Visit&& visit) {
  TokenStream stream(s, text, prompt_tokens);
  for (size_t start = 0;; start += w.step) {
    // the window's tokens, and one more: whether another window follows
    const eb_status st = stream.fill(start, start + w.window + 1);
    if (st != EB_OK) return st;
    const size_t total = stream.end();  // when the text is read: all its tokens
    const bool last = stream.done() && w.last(start, total);
    const eb_status v = visit(start, last ? total - start : w.window, stream);
    if (v != EB_OK) return v;
    if (last) return EB_OK;
  }
}

// Packs windows into the session's inputs, runs them when the next one does not fit, and hands
// each run's sentence embeddings to the pooling, in window order.
class WindowRunner {
 public:
  // prompt_tokens: how many of the scratch's prompt ids go before each window's tokens.
  WindowRunner(Session& s, int32_t pooling, float* out, eb_chunk* chunks, size_t prompt_tokens)
      : s_(s), in_(s.inputs()), slots_(s.sequence_slots()), f_(s.text().frame(false)), pooling_(pooling), out_(out),
        chunks_(chunks), width_(s.sentence_embedding_width()), sums_(s.chunk_scratch().sums.data()),
        weights_(s.chunk_scratch().weights.data()), prompt_(s.chunk_scratch().prompt.data()),
        prompt_tokens_(prompt_tokens) {
    std::fill(sums_, sums_ + width_, 0.0);
  }

  eb_status add(size_t start, size_t tokens, const TokenStream& stream) {
    const size_t specials = f_.prefix.size() + f_.suffix.size() + prompt_tokens_;
    if (tokens + specials == 0)  // (an empty text's window, a tokenizer without special tokens, no prompt)
      return s_.fail(EB_ERROR_INVALID_ARGUMENT,
                     "embed_chunked: the text gives no tokens (this model's tokenizer adds no special tokens)");
    if (rows_ + tokens + specials > s_.max_batch_tokens()) {
      const eb_status st = flush();
      if (st != EB_OK) return st;
    }
    const bool types = s_.model().has_token_types;
    SequenceInfo& q = slots_[count_++];
    q = SequenceInfo{};
    q.first_token = rows_;
    size_t t = put_special_tokens(in_, rows_, f_.prefix, f_.prefix_types, types);
    for (size_t i = 0; i < prompt_tokens_; ++i, ++t) {  // as a prompt run's: text 0, offsets {0, 0}
      in_.ids[t] = prompt_[i];
      in_.begin[t] = in_.end[t] = 0;
      in_.segment[t] = 0;
      in_.word_ids[t] = -1;
      in_.types[t] = types ? f_.type_a : 0;
    }
    const ChunkScratch& c = stream.buffers();
    eb_chunk place{0, 0, start, tokens};
    for (size_t i = 0; i < tokens; ++i, ++t) {
      const size_t k = stream.slot(start + i);
      in_.ids[t] = c.ids[k];
      in_.begin[t] = c.spans[k].begin;
      in_.end[t] = c.spans[k].end;
      in_.segment[t] = 0;
      in_.word_ids[t] = c.words[k];
      in_.types[t] = types ? f_.type_a : 0;
    }
    if (tokens > 0) {
      place.begin_byte = static_cast<size_t>(c.spans[stream.slot(start)].begin);
      place.end_byte = static_cast<size_t>(c.spans[stream.slot(start + tokens - 1)].end);
    }
    t = put_special_tokens(in_, t, f_.suffix, f_.suffix_types, types);
    q.tokens = t - rows_;
    rows_ = t;
    if (chunks_) chunks_[windows_ + count_ - 1] = place;
    weights_[count_ - 1] = tokens > 0 ? static_cast<double>(tokens) : 1.0;
    return EB_OK;
  }

  size_t windows() const { return windows_; }

  // Runs the packed windows and pools their vectors.
  eb_status flush() {
    if (count_ == 0) return EB_OK;
    const eb_status st = s_.run_laid_out_texts(count_);
    if (st != EB_OK) return st;
    for (size_t k = 0; k < count_; ++k) {
      if (s_.sequence(k).status != EB_OK) return s_.fail(s_.sequence(k).status, "window %zu did not run", windows_ + k);
      const float* row = s_.sentence_embedding() + k * width_;
      if (pooling_ == EB_CHUNK_POOLING_NONE) {
        std::memcpy(out_ + (windows_ + k) * width_, row, width_ * sizeof(float));
      } else {
        for (size_t d = 0; d < width_; ++d) sums_[d] += weights_[k] * static_cast<double>(row[d]);
        weight_ += weights_[k];
      }
    }
    windows_ += count_;
    count_ = rows_ = 0;
    return EB_OK;
  }

  // MEAN: the weighted mean into out, L2-normalized when `normalize`.
  void finish_mean(bool normalize) {
    double norm = 0.0;
    for (size_t d = 0; d < width_; ++d) norm += (sums_[d] / weight_) * (sums_[d] / weight_);
    const double scale = normalize ? 1.0 / std::max(std::sqrt(norm), 1e-12) : 1.0;
    for (size_t d = 0; d < width_; ++d) out_[d] = static_cast<float>(sums_[d] / weight_ * scale);
  }

 private:
  Session& s_;
  RunInputs& in_;
  SequenceInfo* slots_;
  const text::Tokenizer::Frame& f_;
  int32_t pooling_;
  float* out_;
  eb_chunk* chunks_;
  size_t width_;
  double* sums_;
  double* weights_;  // the packed windows' weights (token counts)
  const int32_t* prompt_;
  size_t prompt_tokens_;
  double weight_ = 0.0;
  size_t count_ = 0, rows_ = 0, windows_ = 0;
};

}  // namespace

eb_status embed_chunked(Session& s, const char* text, size_t text_size, int32_t window, int32_t stride,
                        int32_t pooling, float* out, size_t out_size, eb_chunk* chunks, size_t chunks_size,
                        size_t* out_windows) {
  s.reset_run();
  if (out_windows) *out_windows = 0;
  if (!text) return refuse(s, EB_ERROR_INVALID_ARGUMENT, "embed_chunked: text is NULL");
  if (!out && !out_windows)
    return refuse(s, EB_ERROR_INVALID_ARGUMENT, "embed_chunked: out and out_windows are both NULL");
  if (pooling != EB_CHUNK_POOLING_NONE && pooling != EB_CHUNK_POOLING_MEAN)
    return refuse(s, EB_ERROR_INVALID_ARGUMENT, "embed_chunked: pooling %d is not EB_CHUNK_POOLING_NONE or _MEAN",
                  static_cast<int>(pooling));
  if (!s.sentence_embedding())
    return refuse(s, EB_ERROR_UNSUPPORTED, "embed_chunked: this model is not a sentence-embedding model");
  if (!s.model().has_embeddings)
    return refuse(s, EB_ERROR_UNSUPPORTED, "this model has no embedding tables; run it on precomputed embeddings");
  if (!s.text().available()) return refuse(s, EB_ERROR_UNSUPPORTED, "this model has no vocabulary; run it on token ids");
  if (window <= 0 || stride < 0 || stride >= window)
    return refuse(s, EB_ERROR_INVALID_ARGUMENT,
                  "embed_chunked: window %d and stride %d: need window > 0 and 0 <= stride < window", window, stride);
  // The session's prompt goes before every window's tokens: the tokens of the prompt text without
  // its trailing spaces (those that joined with the text's first word tokenize with the window's
  // first token, which the text alone starts with; edgebert.h).
  size_t prompt_tokens = 0;
  if (s.text().has_prompt()) {
    std::string_view p = s.text().prompt();
    while (!p.empty() && p.back() == ' ') p.remove_suffix(1);
    std::vector<int32_t>& room = s.chunk_scratch().prompt;
    prompt_tokens = s.text().encode(p, room.data(), nullptr, nullptr, room.size());
    if (prompt_tokens > room.size())
      return refuse(s, EB_ERROR_SEQUENCE_TOO_LONG, "embed_chunked: the session's prompt has more than %zu tokens",
                    room.size());
  }
  const text::Tokenizer::Frame& f = s.text().frame(false);
  const size_t specials = f.prefix.size() + f.suffix.size();
  if (static_cast<size_t>(window) + specials + prompt_tokens > static_cast<size_t>(s.max_seq_len()))
    return refuse(s, EB_ERROR_SEQUENCE_TOO_LONG,
                  "embed_chunked: a window of %d tokens with the model's %zu special tokens and the prompt's %zu "
                  "tokens exceeds the session maximum %d",
                  window, specials, prompt_tokens, s.max_seq_len());
  if (text_size > static_cast<size_t>(INT32_MAX))
    return refuse(s, EB_ERROR_SEQUENCE_TOO_LONG, "embed_chunked: the text is %zu bytes long; texts of up to %d bytes",
                  text_size, INT32_MAX);
  const size_t bad = text::find_invalid_utf8(text, text_size);
  if (bad != text_size)
    return refuse(s, EB_ERROR_INVALID_ARGUMENT, "text is not valid UTF-8: byte 0x%02X at offset %zu",
                  static_cast<unsigned char>(text[bad]), bad);
  const std::string_view doc(text, text_size);
  const OverflowWindows w{static_cast<size_t>(window), static_cast<size_t>(window - stride)};
  const size_t width = s.sentence_embedding_width();
  if (out && out_size < width)
    return refuse(s, EB_ERROR_INVALID_ARGUMENT, "embed_chunked: out holds %zu floats, a window's vector needs %zu",
                  out_size, width);
  // A counting pass (refusals before anything runs) when the caller's arrays are sized by the
  // window count: the count itself, one row per window, or the chunks. The mean alone writes one
  // row, only once every window ran, so it tokenizes the text once.
  eb_status st = EB_OK;
  size_t windows = 0;
  if (!out || pooling == EB_CHUNK_POOLING_NONE || chunks) {
    st = for_each_window(s, doc, prompt_tokens, w, [&](size_t, size_t, const TokenStream&) {
      ++windows;
      return EB_OK;
    });
    if (st != EB_OK) {
      s.reset_run();
      return st;
    }
    if (!out) {
      *out_windows = windows;
      s.clear_error();
      return EB_OK;
    }
    const size_t rows = pooling == EB_CHUNK_POOLING_NONE ? windows : 1;
    if (out_size / width < rows)
      return refuse(s, EB_ERROR_INVALID_ARGUMENT, "embed_chunked: out holds %zu floats, %zu window%s of %zu need %zu",
                    out_size, rows, rows == 1 ? "" : "s", width, rows * width);
    if (chunks && chunks_size < windows)
      return refuse(s, EB_ERROR_INVALID_ARGUMENT, "embed_chunked: chunks holds %zu entries, the text has %zu windows",
                    chunks_size, windows);
  }
  // The windows through packed runs.
  WindowRunner runner(s, pooling, out, chunks, prompt_tokens);
  st = for_each_window(s, doc, prompt_tokens, w,
                       [&](size_t start, size_t tokens, const TokenStream& t) { return runner.add(start, tokens, t); });
  if (st == EB_OK) st = runner.flush();
  if (st != EB_OK) {
    s.reset_run();
    return st;
  }
  if (pooling == EB_CHUNK_POOLING_MEAN)
    runner.finish_mean(s.model().normalize || width != static_cast<size_t>(s.model().config.hidden));
  if (out_windows) *out_windows = runner.windows();
  s.clear_error();
  return EB_OK;
}

}  // namespace edgebert::tasks
