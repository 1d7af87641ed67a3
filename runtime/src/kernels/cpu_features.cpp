// Run-time CPU feature detection for the kernel dispatchers.
#include "kernels/cpu_features.h"

namespace edgebert {
namespace kernels {

namespace {
bool detect_avx2_fma() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}
}  // namespace

bool cpu_has_avx2_fma() {
  static const bool has = detect_avx2_fma();  // thread-safe static init, no heap
  return has;
}

}  // namespace kernels
}  // namespace edgebert
