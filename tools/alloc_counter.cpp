// alloc_counter.cpp: process-wide allocation counting (see alloc_counter.h).
#include "alloc_counter.h"

#include <atomic>
#include <cstddef>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
inline void count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

namespace edgebert::tools {
void alloc_counter_start() {
  g_allocations = 0;
  g_counting = true;
}
long alloc_counter_stop() {
  g_counting = false;
  return g_allocations.load();
}
long alloc_counter_value() { return g_allocations.load(); }
}  // namespace edgebert::tools

#if defined(__SANITIZE_ADDRESS__)
// Declared here: GCC ships libasan but not always <sanitizer/allocator_interface.h>.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, size_t),
                                                         void (*free_hook)(const volatile void*));
namespace {
void on_malloc(const volatile void*, size_t) { count(); }
void on_free(const volatile void*) {}
const int g_hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}  // namespace
#else
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);

void* malloc(size_t n) {
  count();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  count();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  count();
  return __libc_realloc(p, n);
}
void free(void* p) { __libc_free(p); }
void* memalign(size_t al, size_t n) {
  count();
  return __libc_memalign(al, n);
}
void* aligned_alloc(size_t al, size_t n) {
  count();
  return __libc_memalign(al, n);
}
int posix_memalign(void** out, size_t al, size_t n) {
  count();
  void* p = __libc_memalign(al, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}
#endif
