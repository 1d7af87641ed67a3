// SPDX-License-Identifier: Apache-2.0
// jni_model.cpp: native side of org.edgebert.Model (load from a file or a direct ByteBuffer, with
// or without a weight cache file; info, labels, weight cache state, shared memory, session
// creation, free) and NativeLibrary.version.
#include <cstdlib>
#include <cstring>
#include <new>

#include "jni_support.h"

using namespace edgebert_jni;

namespace {

// A loaded model and, when the caller's buffer was not 64-byte aligned, the aligned copy it uses.
struct JniModel {
  eb_model* model = nullptr;
  void* owned = nullptr;
};

constexpr size_t kAlign = 64;
constexpr size_t kErrorSize = 512;

JniModel* model_ptr(jlong h) { return reinterpret_cast<JniModel*>(static_cast<intptr_t>(h)); }

jlong wrap(JNIEnv* env, eb_status st, eb_model* m, void* owned, const char* err) {
  if (st != EB_OK) {
    std::free(owned);
    throw_status(env, st, *err ? err : eb_status_string(st));
    return 0;
  }
  JniModel* jm = new (std::nothrow) JniModel{m, owned};
  if (!jm) {
    eb_model_free(m);
    std::free(owned);
    throw_status(env, EB_ERROR_OUT_OF_MEMORY, "out of memory");
    return 0;
  }
  return static_cast<jlong>(reinterpret_cast<intptr_t>(jm));
}

}  // namespace

extern "C" {

JNIEXPORT jstring JNICALL Java_org_edgebert_NativeLibrary_version(JNIEnv* env, jclass) {
  return env->NewStringUTF(eb_version());  // "MAJOR.MINOR.PATCH" is ASCII
}

JNIEXPORT jlong JNICALL Java_org_edgebert_Model_nLoadFile(JNIEnv* env, jclass, jbyteArray path) {
  PinnedBytes p(env, path);
  if (!p.ok()) return 0;
  eb_model* m = nullptr;
  char err[kErrorSize] = "";
  const eb_status st = eb_model_load_file(reinterpret_cast<const char*>(p.get()), &m, err, sizeof err);
  return wrap(env, st, m, nullptr, err);
}

// cache == null: the plain load (every library has it); else with eb_load_options.
JNIEXPORT jlong JNICALL Java_org_edgebert_Model_nLoadFileCached(JNIEnv* env, jclass, jbyteArray path,
                                                                 jbyteArray cache) {
  if (missing(env, reinterpret_cast<const void*>(&eb_model_load_file_with_options), "eb_model_load_file_with_options"))
    return 0;
  PinnedBytes p(env, path), c(env, cache);
  if (!p.ok() || !c.ok()) return 0;
  eb_load_options o;
  eb_load_options_init(&o);
  o.weight_cache_path = reinterpret_cast<const char*>(c.get());
  eb_model* m = nullptr;
  char err[kErrorSize] = "";
  const eb_status st = eb_model_load_file_with_options(reinterpret_cast<const char*>(p.get()), &o, &m, err, sizeof err);
  return wrap(env, st, m, nullptr, err);
}

JNIEXPORT jlong JNICALL Java_org_edgebert_Model_nLoadBuffer(JNIEnv* env, jclass, jobject buffer, jint offset,
                                                             jint size, jbyteArray cache) {
  if (cache && missing(env, reinterpret_cast<const void*>(&eb_model_load_memory_with_options),
                       "eb_model_load_memory_with_options"))
    return 0;
  PinnedBytes c(env, cache);
  if (!c.ok()) return 0;
  auto* base = static_cast<uint8_t*>(env->GetDirectBufferAddress(buffer));
  const jlong capacity = env->GetDirectBufferCapacity(buffer);
  if (!base || capacity < 0 || offset < 0 || size < 0 || offset + static_cast<jlong>(size) > capacity) {
    throw_status(env, EB_ERROR_INVALID_ARGUMENT, "not a usable direct ByteBuffer");
    return 0;
  }
  const uint8_t* data = base + offset;
  void* owned = nullptr;
  if (reinterpret_cast<uintptr_t>(data) % kAlign != 0) {
    owned = std::aligned_alloc(kAlign, (static_cast<size_t>(size) + kAlign) / kAlign * kAlign);
    if (!owned) {
      throw_status(env, EB_ERROR_OUT_OF_MEMORY, "cannot copy the model into aligned memory");
      return 0;
    }
    std::memcpy(owned, data, static_cast<size_t>(size));
    data = static_cast<const uint8_t*>(owned);
  }
  eb_model* m = nullptr;
  char err[kErrorSize] = "";
  eb_status st;
  if (cache) {
    eb_load_options o;
    eb_load_options_init(&o);
    o.weight_cache_path = reinterpret_cast<const char*>(c.get());
    st = eb_model_load_memory_with_options(data, static_cast<size_t>(size), &o, &m, err, sizeof err);
  } else {
    st = eb_model_load_memory(data, static_cast<size_t>(size), &m, err, sizeof err);
  }
  return wrap(env, st, m, owned, err);
}

// state[0] = eb_weight_cache_state; returns the message's UTF-8 bytes.
JNIEXPORT jbyteArray JNICALL Java_org_edgebert_Model_nWeightCache(JNIEnv* env, jclass, jlong h, jintArray state) {
  if (missing(env, reinterpret_cast<const void*>(&eb_model_get_weight_cache), "eb_model_get_weight_cache"))
    return nullptr;
  eb_weight_cache_state s = EB_WEIGHT_CACHE_NONE;
  const char* message = nullptr;
  const eb_status st = eb_model_get_weight_cache(model_ptr(h)->model, &s, &message);
  if (st != EB_OK) {
    throw_status(env, st, eb_status_string(st));
    return nullptr;
  }
  const jint v = static_cast<jint>(s);
  env->SetIntArrayRegion(state, 0, 1, &v);
  return utf8_bytes(env, message ? message : "");
}

// out = {packed weight bytes, model file bytes}
JNIEXPORT void JNICALL Java_org_edgebert_Model_nMemory(JNIEnv* env, jclass, jlong h, jlongArray out) {
  if (missing(env, reinterpret_cast<const void*>(&eb_model_get_memory), "eb_model_get_memory")) return;
  size_t packed = 0, file = 0;
  const eb_status st = eb_model_get_memory(model_ptr(h)->model, &packed, &file);
  if (st != EB_OK) return throw_status(env, st, eb_status_string(st));
  const jlong v[2] = {static_cast<jlong>(packed), static_cast<jlong>(file)};
  env->SetLongArrayRegion(out, 0, 2, v);
}

JNIEXPORT void JNICALL Java_org_edgebert_Model_nInfo(JNIEnv* env, jclass, jlong h, jintArray out) {
  eb_model_info info{};  // zero: fields an older library does not fill
  const eb_status st = eb_model_get_info(model_ptr(h)->model, &info);
  if (st != EB_OK) return throw_status(env, st, eb_status_string(st));
  static_assert(sizeof(eb_model_info) == 14 * sizeof(int32_t), "eb_model_info is 14 int32 fields");
  jint v[14];
  std::memcpy(v, &info, sizeof v);
  env->SetIntArrayRegion(out, 0, 14, v);
}

JNIEXPORT jbyteArray JNICALL Java_org_edgebert_Model_nLabel(JNIEnv* env, jclass, jlong h, jint index) {
  if (missing(env, reinterpret_cast<const void*>(&eb_model_get_label), "eb_model_get_label")) return nullptr;
  const char* name = nullptr;
  const eb_status st = eb_model_get_label(model_ptr(h)->model, index, &name);
  if (st != EB_OK || !name) {
    throw_status(env, st != EB_OK ? st : EB_ERROR_INVALID_MODEL, st != EB_OK ? "no such label" : "label has no name");
    return nullptr;
  }
  return utf8_bytes(env, name);
}

JNIEXPORT jlong JNICALL Java_org_edgebert_Model_nCreateSession(JNIEnv* env, jclass, jlong h, jint threads,
                                                                jint max_seq, jint split_special, jlong max_memory,
                                                                jint max_batch_tokens) {
  eb_session_options o;
  eb_session_options_init(&o);
  o.num_threads = threads;
  o.max_sequence_length = max_seq;
  o.split_special_tokens = split_special;
  o.max_memory_bytes = static_cast<uint64_t>(max_memory);
  o.max_batch_tokens = max_batch_tokens;
  eb_session* s = nullptr;
  char err[kErrorSize] = "";
  const eb_status st = eb_session_create(model_ptr(h)->model, &o, &s, err, sizeof err);
  if (st != EB_OK) {
    throw_status(env, st, *err ? err : eb_status_string(st));
    return 0;
  }
  return static_cast<jlong>(reinterpret_cast<intptr_t>(s));
}

JNIEXPORT void JNICALL Java_org_edgebert_Model_nFree(JNIEnv*, jclass, jlong h) {
  JniModel* jm = model_ptr(h);
  eb_model_free(jm->model);
  std::free(jm->owned);
  delete jm;
}

}  // extern "C"
