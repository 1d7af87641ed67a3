// SPDX-License-Identifier: Apache-2.0
// jni_retrieval.cpp: native side of the retrieval outputs' helpers: Session.sparseTopK
// (eb_session_sparse_top_k), Session.fillMask (eb_session_fill_mask), MultiVector.maxSim
// (eb_maxsim), and ColBERT's PyLate inputs: Session.setColbertInput (eb_session_set_colbert_input)
// and Session.tokenVectors (eb_session_get_token_vectors).
#include <vector>

#include "jni_support.h"

using namespace edgebert_jni;

extern "C" {

// The top k entries of sequence `index`'s sparse vector into ids / weights (k 0: all that fit);
// returns how many were written.
JNIEXPORT jint JNICALL Java_org_edgebert_Session_nSparseTopK(JNIEnv* env, jclass, jlong h, jint index, jint k,
                                                             jfloat threshold, jintArray ids, jfloatArray weights) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_sparse_top_k), "eb_session_sparse_top_k")) return 0;
  Written<jint, jintArray> out_ids(env, ids);
  Written<float, jfloatArray> out_weights(env, weights);
  if (index < 0 || k < 0 || !out_ids.get() || !out_weights.get() || out_ids.size() != out_weights.size() ||
      out_ids.size() < static_cast<size_t>(k)) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "sparseTopK: k entries do not fit the result arrays");
    return 0;
  }
  // k 0 asks for every entry above the threshold: the arrays are sized for the whole vocabulary
  const size_t want = k > 0 ? static_cast<size_t>(k) : out_ids.size();
  eb_session* s = session_ptr(h);
  size_t found = 0;
  const eb_status st = eb_session_sparse_top_k(s, static_cast<size_t>(index), want, threshold,
                                               reinterpret_cast<int32_t*>(out_ids.get()), out_weights.get(), &found);
  if (st != EB_OK) {
    throw_session_error(env, s, st);
    return 0;
  }
  copy_back(out_ids);
  copy_back(out_weights);
  return static_cast<jint>(found);
}

// The ids.length most probable entries at `token` into ids / probs; returns how many were written.
JNIEXPORT jint JNICALL Java_org_edgebert_Session_nFillMask(JNIEnv* env, jclass, jlong h, jint token, jintArray ids,
                                                           jfloatArray probs) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_fill_mask), "eb_session_fill_mask")) return 0;
  Written<jint, jintArray> out_ids(env, ids);
  Written<float, jfloatArray> out_probs(env, probs);
  if (token < 0 || !out_ids.get() || out_ids.size() != out_probs.size()) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "fillMask: a negative token or result arrays of different lengths");
    return 0;
  }
  eb_session* s = session_ptr(h);
  size_t found = 0;
  const eb_status st = eb_session_fill_mask(s, static_cast<size_t>(token), out_ids.size(),
                                            reinterpret_cast<int32_t*>(out_ids.get()), out_probs.get(), &found);
  if (st != EB_OK) {
    throw_session_error(env, s, st);
    return 0;
  }
  copy_back(out_ids);
  copy_back(out_probs);
  return static_cast<jint>(found);
}

JNIEXPORT jfloat JNICALL Java_org_edgebert_MultiVector_nMaxSim(JNIEnv* env, jclass, jfloatArray q, jint q_tokens,
                                                               jfloatArray d, jint d_tokens, jint dim) {
  if (missing(env, reinterpret_cast<const void*>(&eb_maxsim), "eb_maxsim")) return 0;
  PinnedFloats qp(env, q), dp(env, d);
  if (!qp.ok() || !dp.ok()) return 0;
  if (q_tokens < 0 || d_tokens < 0 || dim < 0 || (q && env->GetArrayLength(q) < q_tokens * dim) ||
      (d && env->GetArrayLength(d) < d_tokens * dim)) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "maxSim: arrays shorter than tokens x dim");
    return 0;
  }
  float score = 0;
  const eb_status st = eb_maxsim(qp.get(), static_cast<size_t>(q_tokens), dp.get(), static_cast<size_t>(d_tokens),
                                 static_cast<size_t>(dim), &score);
  if (st != EB_OK) throw_status(env, st, "maxSim: empty query or document (0 tokens), or dim 0");
  return score;
}

JNIEXPORT jfloatArray JNICALL Java_org_edgebert_MultiVector_nPoolTokenVectors(JNIEnv* env, jclass, jfloatArray v,
                                                                              jint rows, jint dim, jint factor,
                                                                              jint protected_rows) {
  if (missing(env, reinterpret_cast<const void*>(&eb_pool_token_vectors), "eb_pool_token_vectors")) return nullptr;
  if (rows <= 0 || dim <= 0 || factor < 1 || protected_rows < 0 || !v ||
      env->GetArrayLength(v) != static_cast<jlong>(rows) * dim) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "poolTokenVectors: arrays and counts disagree");
    return nullptr;
  }
  std::vector<float> out(static_cast<size_t>(rows) * static_cast<size_t>(dim));
  size_t pooled = 0;
  eb_status st;
  {
    PinnedFloats vp(env, v);
    if (!vp.ok()) return nullptr;
    st = eb_pool_token_vectors(vp.get(), static_cast<size_t>(rows), static_cast<size_t>(dim), static_cast<size_t>(factor),
                               static_cast<size_t>(protected_rows), out.data(), &pooled);
  }
  if (st != EB_OK) {
    throw_status(env, st, st == EB_ERROR_OUT_OF_MEMORY ? "poolTokenVectors: out of memory"
                                                        : "poolTokenVectors: a value that is not finite");
    return nullptr;
  }
  const jsize n = static_cast<jsize>(pooled * static_cast<size_t>(dim));
  jfloatArray r = env->NewFloatArray(n);
  if (r) env->SetFloatArrayRegion(r, 0, n, out.data());
  return r;
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nSetColbertInput(JNIEnv* env, jclass, jlong h, jint input) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_set_colbert_input), "eb_session_set_colbert_input"))
    return;
  eb_session* s = session_ptr(h);
  const eb_status st = eb_session_set_colbert_input(s, static_cast<eb_colbert_input>(input));
  if (st != EB_OK) throw_session_error(env, s, st);
}

// The rows of sequence `index` (row-major, dim floats each): the row count first (out NULL), then
// the rows.
JNIEXPORT jfloatArray JNICALL Java_org_edgebert_Session_nTokenVectors(JNIEnv* env, jclass, jlong h, jint index,
                                                                      jint dim) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_get_token_vectors), "eb_session_get_token_vectors"))
    return nullptr;
  if (index < 0 || dim < 0) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "tokenVectors: a negative index or dim");
    return nullptr;
  }
  eb_session* s = session_ptr(h);
  size_t rows = 0;
  eb_status st = eb_session_get_token_vectors(s, static_cast<size_t>(index), nullptr, 0, &rows);
  if (st != EB_OK) {
    throw_session_error(env, s, st);
    return nullptr;
  }
  if (dim > 0 && rows > static_cast<size_t>(0x7fffffff / dim)) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "tokenVectors: too many rows for a Java array");
    return nullptr;
  }
  std::vector<float> values(rows * static_cast<size_t>(dim));
  if (rows > 0) {
    size_t got = 0;
    st = eb_session_get_token_vectors(s, static_cast<size_t>(index), values.data(), rows, &got);
    if (st != EB_OK) {
      throw_session_error(env, s, st);
      return nullptr;
    }
  }
  const jsize n = static_cast<jsize>(values.size());
  jfloatArray out = env->NewFloatArray(n);
  if (out && n) env->SetFloatArrayRegion(out, 0, n, values.data());
  return out;
}

}  // extern "C"
