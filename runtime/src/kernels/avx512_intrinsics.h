// SPDX-License-Identifier: Apache-2.0
// <immintrin.h> for the AVX-512 kernel files. Include it before any other header that includes
// <immintrin.h>. GCC 12.2's AVX-512 intrinsics start from _mm512_undefined_*() values and then
// warn (-W(maybe-)uninitialized) inside its own header wherever they are inlined (GCC PR105593,
// fixed in 12.3 and 13); the warnings are silenced for the header's lines only: the pragmas act
// on the source locations that follow them, and the warnings point into the header.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
