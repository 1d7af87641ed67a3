// SPDX-License-Identifier: Apache-2.0
// alloc_counter.cpp: process-wide allocation counting and single-allocation fault injection
// (see alloc_counter.h).
#include "alloc_counter.h"

#include <pthread.h>

#include <cerrno>
#include <cstddef>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define EB_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EB_UNDER_ASAN 1
#endif
#endif

// The interposed functions run before ASan has mapped its shadow memory (glibc allocates while
// ASan initializes), so they must not be instrumented themselves.
#if defined(EB_UNDER_ASAN)
#define EB_NOT_INSTRUMENTED __attribute__((no_sanitize_address))
#else
#define EB_NOT_INSTRUMENTED
#endif

namespace {
// Plain variables with __atomic builtins: std::atomic's member functions are out-of-line,
// instrumented code under ASan and cannot run before ASan has initialized.
bool g_counting = false;
long g_allocations = 0;
long g_fail_at = 0;
bool g_failed = false;
size_t g_largest = 0;
pthread_t g_failing_thread;  // the thread that called alloc_counter_start
// Counts one allocation of `bytes`; true when this one must fail.
EB_NOT_INSTRUMENTED inline bool count_and_fail(size_t bytes) {
  if (!__atomic_load_n(&g_counting, __ATOMIC_RELAXED)) return false;
  size_t largest = __atomic_load_n(&g_largest, __ATOMIC_RELAXED);
  while (bytes > largest &&
         !__atomic_compare_exchange_n(&g_largest, &largest, bytes, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  const long n = __atomic_add_fetch(&g_allocations, 1, __ATOMIC_RELAXED);
  if (n != __atomic_load_n(&g_fail_at, __ATOMIC_RELAXED) || !pthread_equal(pthread_self(), g_failing_thread))
    return false;
  __atomic_store_n(&g_failed, true, __ATOMIC_SEQ_CST);
  return true;
}
}  // namespace

namespace edgebert::tools {
void alloc_counter_start() {
  g_failing_thread = pthread_self();
  __atomic_store_n(&g_allocations, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_failed, false, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_largest, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g_counting, true, __ATOMIC_SEQ_CST);
}
long alloc_counter_stop() {
  __atomic_store_n(&g_counting, false, __ATOMIC_SEQ_CST);
  return __atomic_load_n(&g_allocations, __ATOMIC_SEQ_CST);
}
long alloc_counter_value() { return __atomic_load_n(&g_allocations, __ATOMIC_SEQ_CST); }
void alloc_fail_at(long n) { __atomic_store_n(&g_fail_at, n, __ATOMIC_SEQ_CST); }
bool alloc_failure_injected() { return __atomic_load_n(&g_failed, __ATOMIC_SEQ_CST); }
size_t alloc_counter_largest() { return __atomic_load_n(&g_largest, __ATOMIC_SEQ_CST); }
}  // namespace edgebert::tools

#if defined(EB_UNDER_ASAN)
// The sanitizer's implementations (exported next to the malloc it defines).
#define EB_REAL(name) __interceptor_##name
#else
#define EB_REAL(name) __libc_##name
#endif

extern "C" {
void* EB_REAL(malloc)(size_t);
void* EB_REAL(calloc)(size_t, size_t);
void* EB_REAL(realloc)(void*, size_t);
void* EB_REAL(memalign)(size_t, size_t);
void EB_REAL(free)(void*);

EB_NOT_INSTRUMENTED void* malloc(size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(malloc)(n);
}
EB_NOT_INSTRUMENTED void* calloc(size_t a, size_t b) {
  if (count_and_fail(a * b)) return errno = ENOMEM, nullptr;
  return EB_REAL(calloc)(a, b);
}
EB_NOT_INSTRUMENTED void* realloc(void* p, size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(realloc)(p, n);
}
EB_NOT_INSTRUMENTED void free(void* p) { EB_REAL(free)(p); }
EB_NOT_INSTRUMENTED void* memalign(size_t al, size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(memalign)(al, n);
}
EB_NOT_INSTRUMENTED void* aligned_alloc(size_t al, size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(memalign)(al, n);
}
EB_NOT_INSTRUMENTED void* valloc(size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(memalign)(4096, n);
}
EB_NOT_INSTRUMENTED int posix_memalign(void** out, size_t al, size_t n) {
  if (count_and_fail(n)) return ENOMEM;
  void* p = EB_REAL(memalign)(al, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
}

#if defined(EB_UNDER_ASAN)
// ASan's operator new does not call malloc: route every form through the interposed functions.
namespace {
void* new_or_throw(size_t n, size_t al) {
  void* p = al > alignof(std::max_align_t) ? aligned_alloc(al, (n + al - 1) / al * al) : malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
void* new_or_null(size_t n, size_t al) noexcept {
  try {
    return new_or_throw(n, al);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
constexpr size_t kDefault = alignof(std::max_align_t);
}  // namespace
void* operator new(size_t n) { return new_or_throw(n, kDefault); }
void* operator new[](size_t n) { return new_or_throw(n, kDefault); }
void* operator new(size_t n, std::align_val_t al) { return new_or_throw(n, static_cast<size_t>(al)); }
void* operator new[](size_t n, std::align_val_t al) { return new_or_throw(n, static_cast<size_t>(al)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return new_or_null(n, kDefault); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return new_or_null(n, kDefault); }
void* operator new(size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return new_or_null(n, static_cast<size_t>(al));
}
void* operator new[](size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return new_or_null(n, static_cast<size_t>(al));
}
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { free(p); }
#endif
