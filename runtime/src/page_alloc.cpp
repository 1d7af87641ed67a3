// SPDX-License-Identifier: Apache-2.0
// page_alloc.cpp: whole-page allocations from the kernel, huge pages for the large ones (page_alloc.h).
#include "page_alloc.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace edgebert {
namespace {

#ifndef MAP_POPULATE
#define MAP_POPULATE 0
#endif
size_t mapped_length(size_t n) {
  const long p = sysconf(_SC_PAGESIZE);
  const size_t page = p > 0 ? static_cast<size_t>(p) : 4096;
  return (n + page - 1) / page * page;
}
constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

void* allocate_pages(size_t n) {
  if (n == 0 || n > SIZE_MAX / 2) return nullptr;
  const size_t len = mapped_length(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (len >= kHugePage) {
    void* raw = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
    if (aligned > start) munmap(raw, aligned - start);  // the unaligned head and the tail past len
    if (aligned + len < start + len + kHugePage) munmap(reinterpret_cast<void*>(aligned + len), start + kHugePage - aligned);
    void* p = reinterpret_cast<void*>(aligned);
    madvise(p, len, MADV_HUGEPAGE);  // a hint: refused or unavailable, the pages stay 4 KiB
#ifdef MADV_POPULATE_WRITE
    madvise(p, len, MADV_POPULATE_WRITE);
#endif
    return p;
  }
#endif
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void free_pages(void* p, size_t n) {
  if (p) munmap(p, mapped_length(n));
}

}  // namespace edgebert
