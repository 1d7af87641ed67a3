// alloc_counter.cpp: process-wide allocation counting and single-allocation fault injection
// (see alloc_counter.h).
#include "alloc_counter.h"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
std::atomic<long> g_fail_at{0};
std::atomic<bool> g_failed{false};
std::atomic<size_t> g_largest{0};
// Counts one allocation of `bytes`; true when this one must fail.
inline bool count_and_fail(size_t bytes) {
  if (!g_counting.load(std::memory_order_relaxed)) return false;
  size_t largest = g_largest.load(std::memory_order_relaxed);
  while (bytes > largest && !g_largest.compare_exchange_weak(largest, bytes, std::memory_order_relaxed)) {
  }
  const long n = g_allocations.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n != g_fail_at.load(std::memory_order_relaxed)) return false;
  g_failed = true;
  return true;
}
}  // namespace

namespace edgebert::tools {
void alloc_counter_start() {
  g_allocations = 0;
  g_failed = false;
  g_largest = 0;
  g_counting = true;
}
long alloc_counter_stop() {
  g_counting = false;
  return g_allocations.load();
}
long alloc_counter_value() { return g_allocations.load(); }
void alloc_fail_at(long n) { g_fail_at = n; }
bool alloc_failure_injected() { return g_failed.load(); }
size_t alloc_counter_largest() { return g_largest.load(); }
}  // namespace edgebert::tools

#if defined(__SANITIZE_ADDRESS__)
#define EB_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EB_UNDER_ASAN 1
#endif
#endif

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

void* malloc(size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(malloc)(n);
}
void* calloc(size_t a, size_t b) {
  if (count_and_fail(a * b)) return errno = ENOMEM, nullptr;
  return EB_REAL(calloc)(a, b);
}
void* realloc(void* p, size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(realloc)(p, n);
}
void free(void* p) { EB_REAL(free)(p); }
void* memalign(size_t al, size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(memalign)(al, n);
}
void* aligned_alloc(size_t al, size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(memalign)(al, n);
}
void* valloc(size_t n) {
  if (count_and_fail(n)) return errno = ENOMEM, nullptr;
  return EB_REAL(memalign)(4096, n);
}
int posix_memalign(void** out, size_t al, size_t n) {
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
