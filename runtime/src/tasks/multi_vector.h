// SPDX-License-Identifier: Apache-2.0
// multi_vector.h: multi-vector (ColBERT, bge-m3) outputs: how many rows a run has, and MaxSim late
// interaction between a query's and a document's token vectors.
#pragma once

#include <cstddef>

#include "session.h"

namespace edgebert::tasks {

// Rows of the last run's token vectors: every row for ColBERT models; for bge-m3 every row but
// each sequence's first ([CLS]), the sequences' kept rows end to end (exec/drop_first_rows.cpp).
inline size_t token_vector_rows(const Session& s) {
  if (s.model().task != Task::kBgeM3) return s.seq_len();
  size_t rows = 0;
  for (size_t i = 0; i < s.sequence_count(); ++i) {
    const size_t tokens = s.sequence(i).tokens;
    rows += tokens > 0 ? tokens - 1 : 0;
  }
  return rows;
}

// Sequence `index`'s token vectors of the last run as its model scores them (eb_session_get_token_vectors):
// its rows of the output (bge-m3: all but its first token's), without the rows of the skiplist's
// tokens after a ColBERT document run; *out_rows the count, copied into out [capacity_rows, dim]
// unless out is null and capacity_rows 0. No allocation.
eb_status copy_token_vectors(Session& s, size_t index, float* out, size_t capacity_rows, size_t* out_rows);

// sum_i max_j <q[i], d[j]> over q [q_tokens, dim] and d [d_tokens, dim] (row-major; both counts
// and dim > 0), dot products and the sum in double. No allocation.
float maxsim(const float* q, size_t q_tokens, const float* d, size_t d_tokens, size_t dim);

}  // namespace edgebert::tasks
