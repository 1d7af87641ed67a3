// SPDX-License-Identifier: Apache-2.0
// page_alloc.h: large allocations of whole pages straight from the kernel (anonymous mmap), for
// tables that are written at once and then read at random: the packed GEMM weights
// (backend/packed_weights.cpp) and the tokenizers' hash tables (text/token_index.h,
// text/bpe_model.h). Zero-filled, page-aligned and mapped in one call (MAP_POPULATE) instead of a
// page fault per 4 KiB. Allocations of 2 MiB and more are 2 MiB-aligned and asked for transparent
// huge pages (Linux, THP "madvise"), then populated with MADV_POPULATE_WRITE: with 4 KiB pages a
// table of tens of MB misses the TLB on nearly every access (in a VM each miss is a two-level
// walk). Where THP is off they are ordinary pages. Freeing returns the memory to the system.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace edgebert {

// `bytes` zero-filled bytes (rounded up to whole pages); null when bytes is 0 or the system refuses.
void* allocate_pages(size_t bytes);
// Frees what allocate_pages(bytes) returned (null: nothing).
void free_pages(void* p, size_t bytes);

// An array of n trivially copyable T in such pages, owned; move-only.
template <typename T>
class PageArray {
  static_assert(std::is_trivially_copyable<T>::value, "PageArray holds plain values");

 public:
  PageArray() = default;
  ~PageArray() { free_pages(data_, size_ * sizeof(T)); }
  PageArray(const PageArray&) = delete;
  PageArray& operator=(const PageArray&) = delete;
  PageArray(PageArray&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr, o.size_ = 0; }
  PageArray& operator=(PageArray&& o) noexcept {
    if (this != &o) {
      free_pages(data_, size_ * sizeof(T));
      data_ = o.data_, size_ = o.size_;
      o.data_ = nullptr, o.size_ = 0;
    }
    return *this;
  }
  // n elements, each `fill` (throws std::bad_alloc when the pages cannot be had).
  void assign(size_t n, const T& fill) {
    PageArray fresh;
    if (n > 0) {
      if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
      fresh.data_ = static_cast<T*>(allocate_pages(n * sizeof(T)));
      if (!fresh.data_) throw std::bad_alloc();
      fresh.size_ = n;
      static const T zero{};
      if (std::memcmp(&fill, &zero, sizeof(T)) != 0)  // the pages are zero already
        for (size_t i = 0; i < n; ++i) fresh.data_[i] = fill;
    }
    *this = std::move(fresh);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace edgebert
