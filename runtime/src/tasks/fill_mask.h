// SPDX-License-Identifier: Apache-2.0
// fill_mask.h: HF FillMaskPipeline's scores at one token of the last run of a masked-LM model:
// the decoder's logits at that token (Session::masked_lm_logits), softmax over the whole
// vocabulary, the k most probable entries. Selection in the caller's arrays (the bounded heap of
// tasks/sparse.h), the softmax's sum in double; no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgebert/edgebert.h"

namespace edgebert {
class Session;
}

namespace edgebert::tasks {

// Run-wide token `token` (a row of last_hidden_state) of the last successful run: the
// min(k, vocab) most probable entries, largest first (equal probabilities: the lower id first),
// into ids / probs, their count into *n. k > 0 and the arrays non-null (the C API checks them).
// EB_ERROR_UNSUPPORTED (not a masked-LM model), EB_ERROR_BAD_STATE (no run), EB_ERROR_INVALID_ARGUMENT
// (token out of range), or the status of the packed run's sequence the token belongs to.
eb_status fill_mask(Session& s, size_t token, size_t k, int32_t* ids, float* probs, size_t* n);

}  // namespace edgebert::tasks
