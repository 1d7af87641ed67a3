// alloc_counter.h: counts every heap allocation of the whole process (all threads and shared
// libraries) while enabled. Link alloc_counter.cpp into an executable to use it: normally it
// interposes malloc/calloc/realloc/memalign/posix_memalign/aligned_alloc; under AddressSanitizer
// (which owns malloc) it uses the sanitizer's allocation hooks instead.
#pragma once

namespace edgebert::tools {

void alloc_counter_start();  // resets the count and starts counting
long alloc_counter_stop();   // stops counting, returns allocations since start
long alloc_counter_value();

}  // namespace edgebert::tools
