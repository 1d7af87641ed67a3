// SPDX-License-Identifier: Apache-2.0
// jni_batch.cpp: native side of org.edgebert.Session.embedMany / classifyMany / classify /
// tokenLabels: the texts (or text pairs) of a TextBatch handed to eb_session_embed_many /
// eb_session_classify_many (which loop over the packed runs and report each input's status), and
// eb_session_get_token_labels; Session.rerank: a query and a TextBatch of passages handed to
// eb_session_rerank_top_k; Session.runTexts: one packed run of a TextBatch (eb_session_run_texts).
#include <vector>

#include "jni_support.h"

using namespace edgebert_jni;

namespace {

// Pointers to the NUL-terminated texts of one block (TextBatch: bytes + starts), checked to lie
// inside it. False with an exception pending when they do not.
bool text_pointers(JNIEnv* env, const jbyte* bytes, jsize size, const jint* starts, jsize n,
                   std::vector<const char*>* out) {
  out->resize(static_cast<size_t>(n));
  for (jsize i = 0; i < n; ++i) {
    if (starts[i] < 0 || starts[i] >= size || (i + 1 < n && starts[i + 1] <= starts[i]) || bytes[size - 1] != 0) {
      throw_status(env, EB_ERROR_INVALID_ARGUMENT, "malformed text batch");
      return false;
    }
    (*out)[static_cast<size_t>(i)] = reinterpret_cast<const char*>(bytes + starts[i]);
  }
  return true;
}

// The texts (and pairs) of one call, pinned while it lasts; ok() false with an exception pending
// when the block is malformed or cannot be pinned.
class TextBlocks {
 public:
  TextBlocks(JNIEnv* env, jbyteArray a, jintArray starts_a, jbyteArray b, jintArray starts_b)
      : ba_(env, a), bb_(env, b), sa_(env, starts_a), sb_(env, starts_b) {
    n_ = starts_a ? env->GetArrayLength(starts_a) : 0;
    if (!a || !starts_a || (b && !starts_b) || (b && env->GetArrayLength(starts_b) != n_)) {
      throw_status(env, EB_ERROR_INVALID_ARGUMENT, "malformed text batch");
      return;
    }
    if (!ba_.ok() || !bb_.ok() || !sa_.ok() || !sb_.ok()) return;
    if (!text_pointers(env, ba_.get(), env->GetArrayLength(a), sa_.get(), n_, &pa_)) return;
    if (b && !text_pointers(env, bb_.get(), env->GetArrayLength(b), sb_.get(), n_, &pb_)) return;
    paired_ = b != nullptr;
    ok_ = true;
  }
  bool ok() const { return ok_; }
  size_t size() const { return static_cast<size_t>(n_); }
  const char* const* texts() const { return pa_.data(); }
  const char* const* pairs() const { return paired_ ? pb_.data() : nullptr; }

 private:
  PinnedBytes ba_, bb_;
  PinnedInts sa_, sb_;
  jsize n_ = 0;
  std::vector<const char*> pa_, pb_;
  bool paired_ = false, ok_ = false;
};

}  // namespace

extern "C" {

// out [n * width] receives the rows of output `which`; statuses (null: the first failed input is
// thrown, its message naming it) each input's eb_status.
JNIEXPORT void JNICALL Java_org_edgebert_Session_nEmbedMany(JNIEnv* env, jclass, jlong h, jbyteArray a,
                                                            jintArray starts_a, jbyteArray b, jintArray starts_b,
                                                            jint which, jfloatArray out, jintArray statuses) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_embed_many), "eb_session_embed_many")) return;
  TextBlocks in(env, a, starts_a, b, starts_b);
  if (!in.ok()) return;
  Written<float, jfloatArray> rows(env, out);
  Written<jint, jintArray> codes(env, statuses);
  eb_session* s = session_ptr(h);
  const eb_status st = eb_session_embed_many(s, in.texts(), in.pairs(), in.size(), static_cast<eb_output>(which),
                                             rows.get(), rows.size(), codes.get());
  if (st != EB_OK) return throw_session_error(env, s, st);
  copy_back(rows);
  copy_back(codes);
}

// logits [n * numLabels] and labels [n] (either may be null) receive each input's logits and label
// index; statuses as nEmbedMany.
JNIEXPORT void JNICALL Java_org_edgebert_Session_nClassifyMany(JNIEnv* env, jclass, jlong h, jbyteArray a,
                                                               jintArray starts_a, jbyteArray b, jintArray starts_b,
                                                               jfloatArray logits, jintArray labels,
                                                               jintArray statuses) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_classify_many), "eb_session_classify_many")) return;
  TextBlocks in(env, a, starts_a, b, starts_b);
  if (!in.ok()) return;
  Written<float, jfloatArray> rows(env, logits);
  Written<jint, jintArray> indices(env, labels), codes(env, statuses);
  eb_session* s = session_ptr(h);
  const eb_status st = eb_session_classify_many(s, in.texts(), in.pairs(), in.size(), rows.get(), rows.size(),
                                                indices.get(), codes.get());
  if (st != EB_OK) return throw_session_error(env, s, st);
  copy_back(rows);
  copy_back(indices);
  copy_back(codes);
}

// The best k passages' indices and scores (eb_session_rerank_top_k); returns how many were written.
// statuses as nEmbedMany.
JNIEXPORT jint JNICALL Java_org_edgebert_Session_nRerankTopK(JNIEnv* env, jclass, jlong h, jbyteArray query,
                                                             jbyteArray passages, jintArray starts, jint k,
                                                             jintArray indices, jfloatArray scores,
                                                             jintArray statuses) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_rerank_top_k), "eb_session_rerank_top_k")) return 0;
  PinnedBytes q(env, query);
  if (!q.ok()) return 0;
  if (!query || env->GetArrayLength(query) == 0 || q.get()[env->GetArrayLength(query) - 1] != 0) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "malformed query");
    return 0;
  }
  TextBlocks in(env, passages, starts, nullptr, nullptr);
  if (!in.ok()) return 0;
  Written<jint, jintArray> order(env, indices), codes(env, statuses);
  Written<float, jfloatArray> values(env, scores);
  if (k < 0 || order.size() < static_cast<size_t>(k) || values.size() < static_cast<size_t>(k)) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "rerank: k entries do not fit the result arrays");
    return 0;
  }
  eb_session* s = session_ptr(h);
  size_t found = 0;
  const eb_status st = eb_session_rerank_top_k(s, reinterpret_cast<const char*>(q.get()), in.texts(), in.size(),
                                               static_cast<size_t>(k), order.get(), values.get(), &found,
                                               codes.get());
  if (st != EB_OK) {
    throw_session_error(env, s, st);
    return 0;
  }
  copy_back(order);
  copy_back(values);
  copy_back(codes);
  return static_cast<jint>(found);
}

// One eb_session_run_texts of the texts; statuses[k] receives the eb_status of taken text k
// (eb_session_get_sequence). Returns how many texts the run took.
JNIEXPORT jint JNICALL Java_org_edgebert_Session_nRunTexts(JNIEnv* env, jclass, jlong h, jbyteArray texts,
                                                           jintArray starts, jintArray statuses) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_run_texts), "eb_session_run_texts") ||
      missing(env, reinterpret_cast<const void*>(&eb_session_get_sequence), "eb_session_get_sequence"))
    return 0;
  TextBlocks in(env, texts, starts, nullptr, nullptr);
  if (!in.ok()) return 0;
  Written<jint, jintArray> codes(env, statuses);
  if (codes.size() < in.size()) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "runTexts: statuses shorter than the texts");
    return 0;
  }
  eb_session* s = session_ptr(h);
  size_t consumed = 0;
  eb_status st = eb_session_run_texts(s, in.texts(), in.size(), &consumed);
  for (size_t k = 0; st == EB_OK && k < consumed && k < codes.size(); ++k) {
    eb_sequence_info info;
    st = eb_session_get_sequence(s, k, &info);
    if (st == EB_OK) codes.data[k] = info.status;
  }
  if (st != EB_OK) {
    throw_session_error(env, s, st);
    return 0;
  }
  copy_back(codes);
  return static_cast<jint>(consumed);
}

// The label index of every token of the last run (eb_session_get_token_labels).
JNIEXPORT jintArray JNICALL Java_org_edgebert_Session_nTokenLabels(JNIEnv* env, jclass, jlong h) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_get_token_labels), "eb_session_get_token_labels"))
    return nullptr;
  eb_session* s = session_ptr(h);
  size_t n = 0;
  eb_status st = eb_session_get_token_labels(s, nullptr, 0, &n);
  std::vector<jint> labels(n);
  if (st == EB_OK) st = eb_session_get_token_labels(s, labels.data(), labels.size(), &n);
  if (st != EB_OK) {
    throw_session_error(env, s, st);
    return nullptr;
  }
  jintArray out = env->NewIntArray(static_cast<jsize>(n));
  if (out) env->SetIntArrayRegion(out, 0, static_cast<jsize>(n), labels.data());
  return out;
}

}  // extern "C"
