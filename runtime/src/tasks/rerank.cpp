// SPDX-License-Identifier: Apache-2.0
// rerank.cpp: cross-encoder reranking over packed (query, passage) pairs (rerank.h).
#include "tasks/rerank.h"

#include <cmath>
#include <cstdint>

#include "session.h"
#include "tasks/many.h"

namespace edgebert::tasks {

namespace {

// The model's relevance score of a pair's logit (Model::score_sigmoid: CrossEncoder's Sigmoid).
float score_of(bool sigmoid, float logit) {
  return sigmoid ? static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(logit)))) : logit;
}

// Whether the model is a cross-encoder (one-label sequence classifier), else the refusal.
eb_status check_model(Session& s, const char* what) {
  const Model& m = s.model();
  if (m.task != Task::kSequenceClassification || m.config.num_labels != 1)
    return refuse(s, EB_ERROR_UNSUPPORTED,
                  "%s: needs a cross-encoder (a sequence classifier with one label); this model has task %d and %d "
                  "labels",
                  what, static_cast<int>(m.task), m.config.num_labels);
  return EB_OK;
}

eb_status check_inputs(Session& s, const char* what, const char* query, const char* const* passages) {
  if (!query) return refuse(s, EB_ERROR_INVALID_ARGUMENT, "%s: query is NULL", what);
  if (!passages) return refuse(s, EB_ERROR_INVALID_ARGUMENT, "%s: passages is NULL", what);
  return EB_OK;
}

ManyInputs pair_inputs(const char* const* query, const char* const* passages, size_t count) {
  ManyInputs in{query, passages, count};
  in.shared_first = true;
  in.texts_name = "query";
  in.pairs_name = "passages";
  return in;
}

// Every score into scores[index].
struct AllScores {
  float* scores;
  bool sigmoid;
  static void take(void* self, size_t index, const float* logit, eb_status status) {
    auto* a = static_cast<AllScores*>(self);
    a->scores[index] = status == EB_OK ? score_of(a->sigmoid, *logit) : -INFINITY;
  }
};

// The best k so far, best first, in the caller's buffers (an insertion into k sorted entries per
// passage: k is small next to the cost of a pair's run).
struct TopK {
  int32_t* indices;
  float* scores;
  size_t k, found;
  bool sigmoid;
  static void take(void* self, size_t index, const float* logit, eb_status status) {
    auto* t = static_cast<TopK*>(self);
    if (status != EB_OK || t->k == 0) return;
    const float score = score_of(t->sigmoid, *logit);
    // position: after every kept score >= this one (equal scores: the earlier passage first)
    size_t at = t->found;
    while (at > 0 && t->scores[at - 1] < score) --at;
    if (at >= t->k) return;
    const size_t last = t->found < t->k ? t->found : t->k - 1;
    for (size_t j = last; j > at; --j) {
      t->scores[j] = t->scores[j - 1];
      t->indices[j] = t->indices[j - 1];
    }
    t->scores[at] = score;
    t->indices[at] = static_cast<int32_t>(index);
    if (t->found < t->k) ++t->found;
  }
};

}  // namespace

eb_status rerank(Session& s, const char* query, const char* const* passages, size_t count, float* scores,
                 int32_t* statuses) {
  eb_status st = check_model(s, "rerank");
  if (st != EB_OK || count == 0) return st;
  if ((st = check_inputs(s, "rerank", query, passages)) != EB_OK) return st;
  if (!scores) return refuse(s, EB_ERROR_INVALID_ARGUMENT, "rerank: out_scores is NULL");
  AllScores all{scores, s.model().score_sigmoid};
  ManyOutputs out{EB_OUTPUT_LOGITS, nullptr, nullptr, statuses};
  out.sink = &AllScores::take;
  out.sink_context = &all;
  return run_many(s, pair_inputs(&query, passages, count), out);
}

eb_status rerank_top_k(Session& s, const char* query, const char* const* passages, size_t count, size_t k,
                       int32_t* indices, float* scores, size_t* found, int32_t* statuses) {
  if (found) *found = 0;
  eb_status st = check_model(s, "rerank_top_k");
  if (st != EB_OK || count == 0) return st;
  if ((st = check_inputs(s, "rerank_top_k", query, passages)) != EB_OK) return st;
  if (k > 0 && (!indices || !scores))
    return refuse(s, EB_ERROR_INVALID_ARGUMENT, "rerank_top_k: out_indices and out_scores must hold k entries");
  TopK top{indices, scores, k, 0, s.model().score_sigmoid};
  ManyOutputs out{EB_OUTPUT_LOGITS, nullptr, nullptr, statuses};
  out.sink = &TopK::take;
  out.sink_context = &top;
  st = run_many(s, pair_inputs(&query, passages, count), out);
  if (st == EB_OK && found) *found = top.found;
  return st;
}

}  // namespace edgebert::tasks
