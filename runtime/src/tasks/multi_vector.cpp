// SPDX-License-Identifier: Apache-2.0
// multi_vector.cpp: MaxSim and a sequence's token vectors (see multi_vector.h).
#include "tasks/multi_vector.h"

#include <algorithm>
#include <cstring>

namespace edgebert::tasks {

float maxsim(const float* q, size_t q_tokens, const float* d, size_t d_tokens, size_t dim) {
  double total = 0.0;
  for (size_t i = 0; i < q_tokens; ++i) {
    const float* qi = q + i * dim;
    double best = 0.0;
    for (size_t j = 0; j < d_tokens; ++j) {
      const float* dj = d + j * dim;
      double dot = 0.0;
      for (size_t k = 0; k < dim; ++k) dot += static_cast<double>(qi[k]) * dj[k];
      if (j == 0 || dot > best) best = dot;
    }
    total += best;
  }
  return static_cast<float>(total);
}

eb_status copy_token_vectors(Session& s, size_t index, float* out, size_t capacity_rows, size_t* out_rows) {
  if (!out_rows) return s.fail(EB_ERROR_INVALID_ARGUMENT, "out_rows is NULL");
  *out_rows = 0;
  const bool bge_m3 = s.model().task == Task::kBgeM3;
  if (!s.token_vectors() || (s.model().task != Task::kTokenVectors && !bge_m3))
    return s.fail(EB_ERROR_UNSUPPORTED, "this model has no token vectors");
  if (!s.has_output()) return s.fail(EB_ERROR_BAD_STATE, "no successful run yet");
  if (index >= s.sequence_count())
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "sequence %zu is out of range (the last run has %zu)", index, s.sequence_count());
  // the sequence's rows in the output: its tokens (bge-m3: all but its first, sequence after sequence)
  size_t first = 0, rows = 0;
  if (bge_m3) {
    for (size_t k = 0; k <= index; ++k) {
      const size_t t = s.sequence(k).tokens;
      first += rows;
      rows = t > 0 ? t - 1 : 0;
    }
  } else {
    const SequenceInfo q = s.sequence(index);
    first = q.first_token;
    rows = q.tokens;
  }
  const Model::ColbertInputs& c = s.model().colbert;
  const bool skip = !bge_m3 && s.run_colbert_input() == EB_COLBERT_INPUT_DOCUMENT && c.skiplist_count > 0;
  auto skipped = [&](size_t r) {
    return skip && std::binary_search(c.skiplist_ids, c.skiplist_ids + c.skiplist_count, s.input_ids()[first + r]);
  };
  size_t kept = 0;
  for (size_t r = 0; r < rows; ++r) kept += !skipped(r);
  *out_rows = kept;
  if (!out && capacity_rows == 0) return EB_OK;
  if (!out || capacity_rows < kept)
    return s.fail(EB_ERROR_INVALID_ARGUMENT, "out holds %zu rows, sequence %zu has %zu token vectors", out ? capacity_rows : 0,
                index, kept);
  const size_t dim = static_cast<size_t>(s.model().config.num_labels);
  for (size_t r = 0, w = 0; r < rows; ++r)
    if (!skipped(r)) std::memcpy(out + (w++) * dim, s.token_vectors() + (first + r) * dim, dim * sizeof(float));
  s.clear_error();
  return EB_OK;
}

}  // namespace edgebert::tasks
