// SPDX-License-Identifier: Apache-2.0
// jni_support.cpp: EdgeBertException construction from C statuses and messages.
#include "jni_support.h"

#include <cstring>
#include <string>

namespace edgebert_jni {

void throw_status(JNIEnv* env, int status, const char* message) {
  if (env->ExceptionCheck()) return;
  jclass cls = env->FindClass("org/edgebert/EdgeBertException");
  if (!cls) return;  // NoClassDefFoundError pending
  jmethodID make = env->GetStaticMethodID(cls, "fromNative", "(I[B)Lorg/edgebert/EdgeBertException;");
  if (!make) return;
  jbyteArray bytes = utf8_bytes(env, message ? message : "");
  if (!bytes) return;
  jobject ex = env->CallStaticObjectMethod(cls, make, static_cast<jint>(status), bytes);
  if (ex && !env->ExceptionCheck()) env->Throw(static_cast<jthrowable>(ex));
}

void throw_session_error(JNIEnv* env, const eb_session* session, eb_status status) {
  const char* msg = eb_session_last_error(session);
  throw_status(env, status, (msg && *msg) ? msg : eb_status_string(status));
}

bool missing(JNIEnv* env, const void* fn, const char* name) {
  if (fn) return false;
  const std::string msg = std::string("the loaded libedgebert lacks ") + name + " (older than these bindings)";
  throw_status(env, EB_ERROR_UNSUPPORTED, msg.c_str());
  return true;
}

jbyteArray utf8_bytes(JNIEnv* env, const char* s) {
  const jsize n = static_cast<jsize>(std::strlen(s));
  jbyteArray a = env->NewByteArray(n);
  if (a) env->SetByteArrayRegion(a, 0, n, reinterpret_cast<const jbyte*>(s));
  return a;
}

}  // namespace edgebert_jni
