// SPDX-License-Identifier: Apache-2.0
// rerank.h: cross-encoder reranking (eb_session_rerank / eb_session_rerank_top_k): (query,
// passage) pairs through the many-texts loop (tasks/many.h: packed runs, a status per passage),
// each pair's one logit turned into the model's relevance score (the raw logit, or its sigmoid
// when the converter recorded sentence-transformers' CrossEncoder activation as Sigmoid), and the
// best k kept in the caller's buffers as the runs go (no [count] scratch, no allocation).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgebert/edgebert.h"

namespace edgebert {
class Session;
}

namespace edgebert::tasks {

// scores[count] (a passage that did not run: -INFINITY); statuses may be null (then: stop at the
// first passage that fails and return its status, the message naming it).
eb_status rerank(Session& session, const char* query, const char* const* passages, size_t count, float* scores,
                 int32_t* statuses);

// The best min(k, passages that ran) passages, best first (equal scores: the lower index first),
// into indices[k] and scores[k] (both needed when k > 0); *found (may be null) their count.
eb_status rerank_top_k(Session& session, const char* query, const char* const* passages, size_t count, size_t k,
                       int32_t* indices, float* scores, size_t* found, int32_t* statuses);

}  // namespace edgebert::tasks
