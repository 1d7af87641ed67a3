// SPDX-License-Identifier: Apache-2.0
// chunked_embedding.h: eb_session_embed_chunked: a document of any length embedded as
// overlapping windows of its tokens (HuggingFace's overflowing tokens, tasks/overflow_windows.h),
// each window's sentence embedding, one row per window or their token-weighted mean. The text is
// streamed in pieces cut at single ASCII spaces into buffers sized at session creation (at most
// one window plus one piece of tokens), so a document of tens of megabytes runs in bounded memory
// with no allocation; the windows go through the session's packed runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "edgebert/edgebert.h"
#include "text_encoder.h"

namespace edgebert {
class Session;
}

namespace edgebert::tasks {

// The token buffers of embed_chunked, sized once at session creation: room for the tokens of one
// window carried over (window_tokens) plus one piece of text (piece_tokens), the mean's sums and
// the weights of one packed run's windows, and the session prompt's tokens (at most one window's).
struct ChunkScratch {
  std::vector<int32_t> ids, words, prompt;
  std::vector<TokenSpan> spans;
  std::vector<double> sums, weights;
  size_t piece_tokens = 0;
  void allocate(size_t window_tokens, size_t piece, size_t width, size_t run_sequences) {
    piece_tokens = piece;
    ids.assign(window_tokens + piece, 0);
    words.assign(window_tokens + piece, 0);
    spans.assign(window_tokens + piece, TokenSpan{0, 0});
    prompt.assign(window_tokens, 0);
    sums.assign(width, 0.0);
    weights.assign(run_sequences, 0.0);
  }
  // What allocate(...) takes, for the session's memory estimate.
  static size_t bytes(size_t window_tokens, size_t piece, size_t width, size_t run_sequences) {
    return (window_tokens + piece) * (2 * sizeof(int32_t) + sizeof(TokenSpan)) + window_tokens * sizeof(int32_t) +
           (width + run_sequences) * sizeof(double);
  }
};

// eb_session_embed_chunked (edgebert.h documents the contract).
eb_status embed_chunked(Session& session, const char* text, size_t text_size, int32_t window, int32_t stride,
                        int32_t pooling, float* out, size_t out_size, eb_chunk* chunks, size_t chunks_size,
                        size_t* out_windows);

}  // namespace edgebert::tasks
