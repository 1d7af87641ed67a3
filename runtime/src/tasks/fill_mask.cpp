// SPDX-License-Identifier: Apache-2.0
// fill_mask.cpp: the most probable vocabulary entries at one token of a masked-LM run (see
// fill_mask.h).
#include "tasks/fill_mask.h"

#include <cmath>

#include "session.h"
#include "tasks/sparse.h"

namespace edgebert::tasks {

eb_status fill_mask(Session& s, size_t token, size_t k, int32_t* ids, float* probs, size_t* n) {
  *n = 0;
  if (!s.has_masked_lm_head())
    return s.fail(EB_ERROR_UNSUPPORTED, "fill-mask needs a masked-LM model (task MASKED_LM)");
  if (!s.has_output()) return s.fail(EB_ERROR_BAD_STATE, "no successful run yet: outputs are not available");
  if (token >= s.seq_len())
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "token %zu is outside the run's %zu tokens", token, s.seq_len());
  for (size_t q = 0; q < s.sequence_count(); ++q) {  // (a failed sequence of a packed run has no tokens)
    const SequenceInfo info = s.sequence(q);
    if (token >= info.first_token && token < info.first_token + info.tokens && info.status != EB_OK)
      return s.fail(info.status, "token %zu belongs to sequence %zu, which failed", token, q);
  }
  const float* logits = nullptr;
  const eb_status st = s.masked_lm_logits(token, &logits);
  if (st != EB_OK) return st;
  const size_t V = static_cast<size_t>(s.model().config.vocab);
  // the top k by logit (softmax is monotonic); probs holds their logits, the first the largest
  const size_t found = sparse_top_k(logits, V, k < V ? k : V, -INFINITY, ids, probs);
  if (found == 0) return s.fail(EB_ERROR_BACKEND, "the masked-LM logits at token %zu are not finite", token);
  const double top = probs[0];
  double sum = 0;
  for (size_t c = 0; c < V; ++c) sum += std::exp(static_cast<double>(logits[c]) - top);
  if (!std::isfinite(sum)) return s.fail(EB_ERROR_BACKEND, "the masked-LM logits at token %zu are not finite", token);
  for (size_t i = 0; i < found; ++i) probs[i] = static_cast<float>(std::exp(static_cast<double>(probs[i]) - top) / sum);
  *n = found;
  s.clear_error();
  return EB_OK;
}

}  // namespace edgebert::tasks
