// SPDX-License-Identifier: Apache-2.0
// jni_batch.cpp: native side of org.edgebert.Session.embedMany / classifyMany: all texts (or text
// pairs) through eb_session_run_texts / eb_session_run_text_pairs, a packed run at a time until
// every input is consumed, reading each input's status (eb_session_get_sequence) and its row of
// one pooled output ([consumed, width] after a packed run).
#include <cstring>
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

}  // namespace

extern "C" {

JNIEXPORT jint JNICALL Java_org_edgebert_Session_nRunMany(JNIEnv* env, jclass, jlong h, jbyteArray a,
                                                          jintArray starts_a, jbyteArray b, jintArray starts_b,
                                                          jint which, jint width, jfloatArray out,
                                                          jintArray statuses, jboolean stop_at_failure) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_run_texts), "eb_session_run_texts")) return -1;
  eb_session* s = session_ptr(h);
  const jsize n = env->GetArrayLength(starts_a);
  if (!a || (b && !starts_b) || (b && env->GetArrayLength(starts_b) != n) || width <= 0 ||
      env->GetArrayLength(out) / width < n || env->GetArrayLength(statuses) != n) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "malformed text batch");
    return -1;
  }
  PinnedBytes ba(env, a), bb(env, b);
  PinnedInts sa(env, starts_a), sb(env, starts_b);
  if (!ba.ok() || !bb.ok() || !sa.ok() || !sb.ok()) return -1;
  std::vector<const char*> pa, pb;
  if (!text_pointers(env, ba.get(), env->GetArrayLength(a), sa.get(), n, &pa)) return -1;
  if (b && !text_pointers(env, bb.get(), env->GetArrayLength(b), sb.get(), n, &pb)) return -1;
  jint first_failed = -1;
  for (size_t done = 0, total = static_cast<size_t>(n); done < total;) {
    size_t consumed = 0;
    const eb_status st = b ? eb_session_run_text_pairs(s, pa.data() + done, pb.data() + done, total - done, &consumed)
                           : eb_session_run_texts(s, pa.data() + done, total - done, &consumed);
    if (st != EB_OK) {
      throw_session_error(env, s, st);
      return -1;
    }
    if (consumed == 0 || consumed > total - done) {
      throw_status(env, EB_ERROR_BACKEND, "the library consumed no inputs, or more than it was given");
      return -1;
    }
    for (size_t i = 0; i < consumed; ++i) {
      eb_sequence_info q;
      const eb_status qs = eb_session_get_sequence(s, i, &q);
      if (qs != EB_OK) {
        throw_session_error(env, s, qs);
        return -1;
      }
      const jint code = q.status;
      env->SetIntArrayRegion(statuses, static_cast<jsize>(done + i), 1, &code);
      if (code != EB_OK && first_failed < 0) first_failed = static_cast<jint>(done + i);
    }
    const float* data = nullptr;
    int64_t shape[2] = {0, 0};
    int32_t rank = 0;
    const eb_status os = eb_session_get_output(s, static_cast<eb_output>(which), &data, shape, &rank);
    if (os != EB_OK) {
      throw_session_error(env, s, os);
      return -1;
    }
    if (rank != 2 || shape[0] != static_cast<int64_t>(consumed) || shape[1] != width) {
      throw_status(env, EB_ERROR_BACKEND, "unexpected output shape after a packed run");
      return -1;
    }
    env->SetFloatArrayRegion(out, static_cast<jsize>(done) * width, static_cast<jsize>(consumed) * width, data);
    if (first_failed >= 0 && stop_at_failure) return first_failed;
    done += consumed;
  }
  return first_failed;
}

JNIEXPORT jstring JNICALL Java_org_edgebert_Session_nStatusString(JNIEnv* env, jclass, jint status) {
  return env->NewStringUTF(eb_status_string(static_cast<eb_status>(status)));
}

}  // extern "C"
