// SPDX-License-Identifier: Apache-2.0
// multi_vector.h: scoring multi-vector (ColBERT) outputs: MaxSim late interaction between a
// query's and a document's token vectors.
#pragma once

#include <cstddef>

namespace edgebert::tasks {

// sum_i max_j <q[i], d[j]> over q [q_tokens, dim] and d [d_tokens, dim] (row-major; both counts
// and dim > 0), dot products and the sum in double. No allocation.
float maxsim(const float* q, size_t q_tokens, const float* d, size_t d_tokens, size_t dim);

}  // namespace edgebert::tasks
