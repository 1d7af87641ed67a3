// SPDX-License-Identifier: Apache-2.0
// alloc_counter.h: counts every heap allocation of the whole process (all threads and shared
// libraries) while enabled, and can make one chosen allocation fail (fault injection). Link
// alloc_counter.cpp into an executable to use it: it interposes malloc/calloc/realloc/memalign/
// posix_memalign/aligned_alloc/valloc (operator new reaches them through libstdc++), forwarding
// to glibc, or under AddressSanitizer (which owns malloc) to the sanitizer's allocator, in which
// case it also replaces operator new/delete (ASan's own would bypass malloc).
#pragma once

#include <cstddef>

namespace edgebert::tools {

void alloc_counter_start();  // resets the count and starts counting
long alloc_counter_stop();   // stops counting, returns allocations since start
long alloc_counter_value();

// While counting, allocation number n (1-based, counted from alloc_counter_start over all
// threads) returns NULL (operator new throws std::bad_alloc) if the thread that called
// alloc_counter_start makes it; all others succeed. (Other threads' allocations are glibc's and
// the sanitizers' own thread start-up, e.g. ASan's pthread_getattr_np, which cannot fail
// gracefully.) 0 (the default) fails none.
void alloc_fail_at(long n);
// Whether the allocation chosen by alloc_fail_at has been reached (and failed).
bool alloc_failure_injected();
// Largest single allocation request (bytes) since alloc_counter_start.
size_t alloc_counter_largest();

}  // namespace edgebert::tools
