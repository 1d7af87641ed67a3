// SPDX-License-Identifier: Apache-2.0
// multi_vector.cpp: MaxSim (see multi_vector.h).
#include "tasks/multi_vector.h"

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

}  // namespace edgebert::tasks
