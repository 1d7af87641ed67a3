// SPDX-License-Identifier: Apache-2.0
// jni_support.h: helpers shared by the JNI glue: throwing EdgeBertException with a C status and
// message, pinning Java arrays for the duration of a call, and optional (weak) C API functions.
#pragma once

#include <jni.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "edgebert/edgebert.h"

// Functions added to the C API with the task heads: weak, so this glue also loads against an
// older libedgebert and reports UNSUPPORTED instead of dying on an unresolved symbol.
extern "C" {
__attribute__((weak)) eb_status eb_session_run_text_pair(eb_session*, const char*, const char*);
__attribute__((weak)) eb_status eb_session_get_token_offsets(const eb_session*, const int32_t**, const int32_t**,
                                                             const int32_t**, size_t*);
__attribute__((weak)) eb_status eb_session_best_span(const eb_session*, int32_t, eb_span*);
__attribute__((weak)) eb_status eb_model_get_label(const eb_model*, int32_t, const char**);
// Added with the shared program, weight cache, words and long-context QA (edgebert.h, 9bf212a).
__attribute__((weak)) void eb_load_options_init(eb_load_options*);
__attribute__((weak)) eb_status eb_model_load_file_with_options(const char*, const eb_load_options*, eb_model**,
                                                                char*, size_t);
__attribute__((weak)) eb_status eb_model_load_memory_with_options(const void*, size_t, const eb_load_options*,
                                                                  eb_model**, char*, size_t);
__attribute__((weak)) eb_status eb_model_get_weight_cache(const eb_model*, eb_weight_cache_state*, const char**);
__attribute__((weak)) eb_status eb_model_get_memory(const eb_model*, size_t*, size_t*);
__attribute__((weak)) eb_status eb_session_get_word_ids(const eb_session*, const int32_t**, size_t*);
__attribute__((weak)) eb_status eb_session_get_words(const eb_session*, const eb_word**, size_t*);
__attribute__((weak)) eb_status eb_session_answer(eb_session*, const char*, const char*, int32_t, int32_t, eb_span*,
                                                  int32_t*);
// Added with packed runs (issue 19).
__attribute__((weak)) eb_status eb_session_run_texts(eb_session*, const char* const*, size_t, size_t*);
__attribute__((weak)) eb_status eb_session_run_text_pairs(eb_session*, const char* const*, const char* const*, size_t,
                                                          size_t*);
__attribute__((weak)) eb_status eb_session_get_sequence(const eb_session*, size_t, eb_sequence_info*);
// Added with the many-texts entry points (issue 22).
__attribute__((weak)) eb_status eb_session_embed_many(eb_session*, const char* const*, const char* const*, size_t,
                                                      eb_output, float*, size_t, int32_t*);
__attribute__((weak)) eb_status eb_session_classify_many(eb_session*, const char* const*, const char* const*, size_t,
                                                         float*, size_t, int32_t*, int32_t*);
__attribute__((weak)) eb_status eb_session_get_token_labels(const eb_session*, int32_t*, size_t, size_t*);
// Added with chunked embedding of long documents (issue 25).
__attribute__((weak)) eb_status eb_session_embed_chunked(eb_session*, const char*, size_t, int32_t, int32_t,
                                                         eb_chunk_pooling, float*, size_t, eb_chunk*, size_t,
                                                         size_t*);
}

namespace edgebert_jni {

// Throws org.edgebert.EdgeBertException(status, message) unless an exception is already pending.
void throw_status(JNIEnv* env, int status, const char* message);
// For a failed call on a session: the session's last error message, else the status string.
void throw_session_error(JNIEnv* env, const eb_session* session, eb_status status);
// When fn is missing from the loaded library: throws UNSUPPORTED naming it and returns true.
bool missing(JNIEnv* env, const void* fn, const char* name);
// A new Java byte[] with the bytes of a C string (NULL on failure, exception pending).
jbyteArray utf8_bytes(JNIEnv* env, const char* s);

// Elements of a Java primitive array for the duration of one call (null array -> null data).
template <typename Array, typename T, T* (JNIEnv::*Get)(Array, jboolean*), void (JNIEnv::*Release)(Array, T*, jint)>
class Pinned {
 public:
  Pinned(JNIEnv* env, Array a) : env_(env), array_(a), data_(a ? (env->*Get)(a, nullptr) : nullptr) {}
  ~Pinned() {
    if (data_) (env_->*Release)(array_, data_, JNI_ABORT);  // inputs: nothing to copy back
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  T* get() const { return data_; }
  // True when the array was null or could be pinned; false (OutOfMemoryError pending) otherwise.
  bool ok() const { return !array_ || data_; }

 private:
  JNIEnv* env_;
  Array array_;
  T* data_;
};
using PinnedInts = Pinned<jintArray, jint, &JNIEnv::GetIntArrayElements, &JNIEnv::ReleaseIntArrayElements>;
using PinnedBytes = Pinned<jbyteArray, jbyte, &JNIEnv::GetByteArrayElements, &JNIEnv::ReleaseByteArrayElements>;
using PinnedFloats = Pinned<jfloatArray, jfloat, &JNIEnv::GetFloatArrayElements, &JNIEnv::ReleaseFloatArrayElements>;

// A Java array the call writes (null -> null), copied back when the call succeeded.
template <typename T, typename Array>
struct Written {
  JNIEnv* env;
  Array array;
  std::vector<T> data;
  Written(JNIEnv* e, Array a) : env(e), array(a), data(a ? static_cast<size_t>(e->GetArrayLength(a)) : 0) {}
  T* get() { return array ? data.data() : nullptr; }
  size_t size() const { return data.size(); }
};

inline void copy_back(Written<float, jfloatArray>& w) {
  if (w.array) w.env->SetFloatArrayRegion(w.array, 0, static_cast<jsize>(w.size()), w.data.data());
}
inline void copy_back(Written<jint, jintArray>& w) {
  if (w.array) w.env->SetIntArrayRegion(w.array, 0, static_cast<jsize>(w.size()), w.data.data());
}

inline eb_session* session_ptr(jlong h) { return reinterpret_cast<eb_session*>(static_cast<intptr_t>(h)); }

}  // namespace edgebert_jni
