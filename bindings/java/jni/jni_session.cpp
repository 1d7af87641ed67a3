// SPDX-License-Identifier: Apache-2.0
// jni_session.cpp: native side of org.edgebert.Session (runs, outputs as copies or into a
// caller's FloatBuffer without allocating, input ids, token offsets, word ids and words, answer
// spans (one pair or windows over a long context), truncation, memory, destroy).
#include <cstring>

#include "jni_support.h"

using namespace edgebert_jni;

namespace {

bool check(JNIEnv* env, eb_session* s, eb_status st) {
  if (st == EB_OK) return true;
  throw_session_error(env, s, st);
  return false;
}

// One output of the last run as eb_session_get_output describes it, plus its element count.
struct OutputView {
  const float* data = nullptr;
  int64_t shape[2] = {0, 0};
  int32_t rank = 0;
  jsize count = 0;
};

// False with an exception pending on failure.
bool get_output(JNIEnv* env, eb_session* s, jint which, OutputView* v) {
  const eb_status st = eb_session_get_output(s, static_cast<eb_output>(which), &v->data, v->shape, &v->rank);
  if (!check(env, s, st)) return false;
  const int64_t n = v->rank == 2 ? v->shape[0] * v->shape[1] : v->shape[0];
  if (n < 0 || n > 0x7fffffff) {
    throw_status(env, EB_ERROR_INVALID_MODEL, "output too large for a Java array");
    return false;
  }
  v->count = static_cast<jsize>(n);
  return true;
}

jintArray int_array(JNIEnv* env, const int32_t* data, size_t n) {
  jintArray a = env->NewIntArray(static_cast<jsize>(n));
  if (a && n) env->SetIntArrayRegion(a, 0, static_cast<jsize>(n), reinterpret_cast<const jint*>(data));
  return a;
}

}  // namespace

extern "C" {

JNIEXPORT void JNICALL Java_org_edgebert_Session_nRunText(JNIEnv* env, jclass, jlong h, jbyteArray text) {
  PinnedBytes t(env, text);
  if (!t.ok()) return;
  check(env, session_ptr(h), eb_session_run_text(session_ptr(h), reinterpret_cast<const char*>(t.get())));
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nRunTextPair(JNIEnv* env, jclass, jlong h, jbyteArray a,
                                                              jbyteArray b) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_run_text_pair), "eb_session_run_text_pair")) return;
  PinnedBytes ta(env, a), tb(env, b);
  if (!ta.ok() || !tb.ok()) return;
  check(env, session_ptr(h),
        eb_session_run_text_pair(session_ptr(h), reinterpret_cast<const char*>(ta.get()),
                                 reinterpret_cast<const char*>(tb.get())));
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nRunIds(JNIEnv* env, jclass, jlong h, jintArray ids,
                                                         jintArray types, jintArray mask) {
  PinnedInts i(env, ids), t(env, types), m(env, mask);
  if (!i.ok() || !t.ok() || !m.ok()) return;
  const size_t n = static_cast<size_t>(env->GetArrayLength(ids));  // Java checked types/mask lengths
  check(env, session_ptr(h), eb_session_run_ids(session_ptr(h), i.get(), t.get(), m.get(), n));
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nRunEmbeddings(JNIEnv* env, jclass, jlong h, jfloatArray emb,
                                                                jintArray mask, jint hidden) {
  PinnedFloats e(env, emb);
  PinnedInts m(env, mask);
  if (!e.ok() || !m.ok()) return;
  const size_t n = static_cast<size_t>(env->GetArrayLength(emb)) / static_cast<size_t>(hidden);
  check(env, session_ptr(h), eb_session_run_embeddings(session_ptr(h), e.get(), m.get(), n));
}

JNIEXPORT jfloatArray JNICALL Java_org_edgebert_Session_nOutput(JNIEnv* env, jclass, jlong h, jint which) {
  OutputView v;
  if (!get_output(env, session_ptr(h), which, &v)) return nullptr;
  jfloatArray a = env->NewFloatArray(v.count);
  if (a && v.count) env->SetFloatArrayRegion(a, 0, v.count, v.data);
  return a;
}

JNIEXPORT jlongArray JNICALL Java_org_edgebert_Session_nShape(JNIEnv* env, jclass, jlong h, jint which) {
  OutputView v;
  if (!get_output(env, session_ptr(h), which, &v)) return nullptr;
  jlongArray a = env->NewLongArray(v.rank);
  if (a) env->SetLongArrayRegion(a, 0, v.rank, reinterpret_cast<const jlong*>(v.shape));
  return a;
}

JNIEXPORT jboolean JNICALL Java_org_edgebert_Session_nHasOutput(JNIEnv* env, jclass, jlong h, jint which) {
  const eb_status st = eb_session_get_output(session_ptr(h), static_cast<eb_output>(which), nullptr, nullptr, nullptr);
  if (st == EB_ERROR_BAD_STATE) throw_session_error(env, session_ptr(h), st);
  return st == EB_OK;
}

JNIEXPORT jint JNICALL Java_org_edgebert_Session_nOutputInto(JNIEnv* env, jclass, jlong h, jint which,
                                                             jobject direct, jfloatArray array, jint offset,
                                                             jint room) {
  OutputView v;
  if (!get_output(env, session_ptr(h), which, &v)) return 0;
  const jsize n = v.count;
  const float* data = v.data;
  if (n > room) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "dst has too little room for the output");
    return 0;
  }
  if (direct) {
    auto* base = static_cast<float*>(env->GetDirectBufferAddress(direct));
    const jlong capacity = env->GetDirectBufferCapacity(direct);
    if (!base || offset < 0 || offset + static_cast<jlong>(n) > capacity) {
      throw_status(env, EB_ERROR_INVALID_ARGUMENT, "dst is not a usable direct FloatBuffer");
      return 0;
    }
    if (n) std::memcpy(base + offset, data, static_cast<size_t>(n) * sizeof(float));
  } else {
    if (!array || offset < 0 || offset + static_cast<jlong>(n) > env->GetArrayLength(array)) {
      throw_status(env, EB_ERROR_INVALID_ARGUMENT, "dst has no accessible array");
      return 0;
    }
    if (n) env->SetFloatArrayRegion(array, offset, n, data);
  }
  return n;
}

JNIEXPORT jintArray JNICALL Java_org_edgebert_Session_nInputIds(JNIEnv* env, jclass, jlong h) {
  const int32_t* ids = nullptr;
  size_t n = 0;
  if (!check(env, session_ptr(h), eb_session_get_input_ids(session_ptr(h), &ids, &n))) return nullptr;
  return int_array(env, ids, n);
}

JNIEXPORT jobjectArray JNICALL Java_org_edgebert_Session_nTokenOffsets(JNIEnv* env, jclass, jlong h) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_get_token_offsets), "eb_session_get_token_offsets"))
    return nullptr;
  const int32_t *begin = nullptr, *end = nullptr, *segment = nullptr;
  size_t n = 0;
  if (!check(env, session_ptr(h), eb_session_get_token_offsets(session_ptr(h), &begin, &end, &segment, &n)))
    return nullptr;
  jclass int_array_class = env->FindClass("[I");
  if (!int_array_class) return nullptr;
  jobjectArray out = env->NewObjectArray(3, int_array_class, nullptr);
  if (!out) return nullptr;
  const int32_t* parts[3] = {begin, end, segment};
  for (jsize k = 0; k < 3; ++k) {
    jintArray a = int_array(env, parts[k], n);
    if (!a) return nullptr;
    env->SetObjectArrayElement(out, k, a);
    env->DeleteLocalRef(a);
  }
  return out;
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nBestSpan(JNIEnv* env, jclass, jlong h, jint max_tokens,
                                                           jintArray ints, jfloatArray score) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_best_span), "eb_session_best_span")) return;
  eb_span span;
  if (!check(env, session_ptr(h), eb_session_best_span(session_ptr(h), max_tokens, &span))) return;
  const jint v[4] = {span.start_token, span.end_token, span.begin_byte, span.end_byte};
  env->SetIntArrayRegion(ints, 0, 4, v);
  env->SetFloatArrayRegion(score, 0, 1, &span.score);
}

JNIEXPORT jintArray JNICALL Java_org_edgebert_Session_nWordIds(JNIEnv* env, jclass, jlong h) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_get_word_ids), "eb_session_get_word_ids")) return nullptr;
  const int32_t* ids = nullptr;
  size_t n = 0;
  if (!check(env, session_ptr(h), eb_session_get_word_ids(session_ptr(h), &ids, &n))) return nullptr;
  return int_array(env, ids, n);
}

// The words of the last text run, 6 ints each: first token, last token, segment, begin byte,
// end byte, label.
JNIEXPORT jintArray JNICALL Java_org_edgebert_Session_nWords(JNIEnv* env, jclass, jlong h) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_get_words), "eb_session_get_words")) return nullptr;
  const eb_word* words = nullptr;
  size_t n = 0;
  if (!check(env, session_ptr(h), eb_session_get_words(session_ptr(h), &words, &n))) return nullptr;
  static_assert(sizeof(eb_word) == 6 * sizeof(int32_t), "eb_word is 6 int32 fields");
  if (n > 0x7fffffff / 6) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "too many words for a Java array");
    return nullptr;
  }
  return int_array(env, reinterpret_cast<const int32_t*>(words), 6 * n);
}

// Whether the loaded library runs windows over long contexts (eb_session_answer).
JNIEXPORT jboolean JNICALL Java_org_edgebert_Session_nHasWindowedAnswer(JNIEnv*, jclass) {
  return eb_session_answer != nullptr ? JNI_TRUE : JNI_FALSE;
}

// ints = {start token, end token, begin byte, end byte, windows}, score[0] = score.
JNIEXPORT void JNICALL Java_org_edgebert_Session_nAnswer(JNIEnv* env, jclass, jlong h, jbyteArray question,
                                                         jbyteArray context, jint max_tokens, jint doc_stride,
                                                         jintArray ints, jfloatArray score) {
  PinnedBytes q(env, question), c(env, context);
  if (!q.ok() || !c.ok()) return;
  eb_session* s = session_ptr(h);
  const char* qs = reinterpret_cast<const char*>(q.get());
  const char* cs = reinterpret_cast<const char*>(c.get());
  eb_span span;
  int32_t windows = 1;
  if (eb_session_answer) {
    if (!check(env, s, eb_session_answer(s, qs, cs, max_tokens, doc_stride, &span, &windows))) return;
  } else {  // an older library: one pair run (a context that does not fit is SEQUENCE_TOO_LONG)
    if (missing(env, reinterpret_cast<const void*>(&eb_session_best_span), "eb_session_best_span")) return;
    if (!check(env, s, eb_session_run_text_pair(s, qs, cs))) return;
    if (!check(env, s, eb_session_best_span(s, max_tokens, &span))) return;
  }
  const jint v[5] = {span.start_token, span.end_token, span.begin_byte, span.end_byte, windows};
  env->SetIntArrayRegion(ints, 0, 5, v);
  env->SetFloatArrayRegion(score, 0, 1, &span.score);
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nMemory(JNIEnv* env, jclass, jlong h, jlongArray out) {
  size_t arena = 0, naive = 0, packed = 0;
  if (!check(env, session_ptr(h), eb_session_memory(session_ptr(h), &arena, &naive, &packed))) return;
  const jlong v[3] = {static_cast<jlong>(arena), static_cast<jlong>(naive), static_cast<jlong>(packed)};
  env->SetLongArrayRegion(out, 0, 3, v);
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nSetTruncation(JNIEnv* env, jclass, jlong h, jint strategy) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_set_truncation), "eb_session_set_truncation")) return;
  check(env, session_ptr(h), eb_session_set_truncation(session_ptr(h), static_cast<eb_truncation>(strategy)));
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nSetPrompt(JNIEnv* env, jclass, jlong h, jbyteArray name) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_set_prompt), "eb_session_set_prompt")) return;
  if (!name) {
    check(env, session_ptr(h), eb_session_set_prompt(session_ptr(h), nullptr));
    return;
  }
  PinnedBytes n(env, name);
  if (!n.ok()) return;
  check(env, session_ptr(h), eb_session_set_prompt(session_ptr(h), reinterpret_cast<const char*>(n.get())));
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nSetEmbeddingDims(JNIEnv* env, jclass, jlong h, jint dims) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_set_embedding_dims), "eb_session_set_embedding_dims"))
    return;
  check(env, session_ptr(h), eb_session_set_embedding_dims(session_ptr(h), dims));
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nSetNumThreads(JNIEnv* env, jclass, jlong h, jint threads) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_set_num_threads), "eb_session_set_num_threads")) return;
  check(env, session_ptr(h), eb_session_set_num_threads(session_ptr(h), threads));
}

JNIEXPORT jint JNICALL Java_org_edgebert_Session_nTruncatedTokens(JNIEnv* env, jclass, jlong h, jint index) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_get_truncated_tokens), "eb_session_get_truncated_tokens"))
    return 0;
  int32_t cut = 0;
  if (index < 0) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "index must be >= 0");
    return 0;
  }
  check(env, session_ptr(h), eb_session_get_truncated_tokens(session_ptr(h), static_cast<size_t>(index), &cut));
  return cut;
}

JNIEXPORT void JNICALL Java_org_edgebert_Session_nDestroy(JNIEnv*, jclass, jlong h) {
  eb_session_destroy(session_ptr(h));
}

}  // extern "C"
