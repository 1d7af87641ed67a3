// SPDX-License-Identifier: Apache-2.0
// target_clones.h: EB_CLONES_AVX2 marks a hot converter loop for an AVX2 clone next to the
// baseline one (picked at load time) on x86; elsewhere (ARM) it expands to nothing. Not under GCC's
// ThreadSanitizer: the clone's resolver runs while the dynamic linker relocates the program, before
// the TSan runtime is set up, and GCC instruments it (the test programs crashed before main).
#pragma once

#if (defined(__x86_64__) || defined(__i386__)) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define EB_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define EB_CLONES_AVX2
#endif
