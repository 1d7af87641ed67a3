// SPDX-License-Identifier: Apache-2.0
// jni_chunked.cpp: native side of Session.embedChunked (eb_session_embed_chunked): a long text's
// windows, counted (out null) or embedded with each window's place.
#include "jni_support.h"

using namespace edgebert_jni;

extern "C" {

// out and chunks null: returns the window count. Else out receives the vectors and chunks 4 ints
// per window (first_token, tokens, begin_byte, end_byte); returns the window count.
JNIEXPORT jint JNICALL Java_org_edgebert_Session_nEmbedChunked(JNIEnv* env, jclass, jlong h, jbyteArray text,
                                                               jint size, jint window, jint stride, jint pooling,
                                                               jfloatArray out, jintArray chunks) {
  if (missing(env, reinterpret_cast<const void*>(&eb_session_embed_chunked), "eb_session_embed_chunked")) return 0;
  PinnedBytes bytes(env, text);
  if (!bytes.ok()) return 0;
  if (!text || size < 0 || size > env->GetArrayLength(text) || (out == nullptr) != (chunks == nullptr)) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "embedChunked: malformed text or result arrays");
    return 0;
  }
  Written<float, jfloatArray> vectors(env, out);
  Written<jint, jintArray> places(env, chunks);
  std::vector<eb_chunk> found(places.size() / 4);
  eb_session* s = session_ptr(h);
  size_t windows = 0;
  const eb_status st = eb_session_embed_chunked(
      s, reinterpret_cast<const char*>(bytes.get()), static_cast<size_t>(size), window, stride,
      static_cast<eb_chunk_pooling>(pooling), vectors.get(), vectors.size(), out ? found.data() : nullptr,
      found.size(), &windows);
  if (st != EB_OK) {
    throw_session_error(env, s, st);
    return 0;
  }
  // a Java array is below 2 GiB: the windows, byte offsets and token counts fit a jint
  for (size_t i = 0; i < found.size() && i < windows; i++) {
    places.data[4 * i] = static_cast<jint>(found[i].first_token);
    places.data[4 * i + 1] = static_cast<jint>(found[i].tokens);
    places.data[4 * i + 2] = static_cast<jint>(found[i].begin_byte);
    places.data[4 * i + 3] = static_cast<jint>(found[i].end_byte);
  }
  copy_back(vectors);
  copy_back(places);
  return static_cast<jint>(windows);
}

}  // extern "C"
