// SPDX-License-Identifier: Apache-2.0
// Int8 sliding-window attention, AVX2 build of the portable body (attention_window_impl.h): the
// usual head dims (32, 64, 128) as compile-time constants, so the int8 dot products over a key and
// the P.V sums over the channels compile to 256-bit integer code; other head dims run the body as
// the portable kernel does. Integer sums are exact and the float steps are the same scalar ones:
// the portable kernel's bytes (test_kernels_families).
#include "kernels/attention_window.h"
#include "kernels/attention_window_impl.h"

namespace edgebert {
namespace kernels {

void attention_s8_rows_window_avx2(const AttentionHeadS8& a, int window, int row_begin, int row_end) {
  switch (a.head_dim) {
    case 32: attention_s8_rows_window_body<32>(a, window, row_begin, row_end); break;
    case 64: attention_s8_rows_window_body<64>(a, window, row_begin, row_end); break;
    case 128: attention_s8_rows_window_body<128>(a, window, row_begin, row_end); break;
    default: attention_s8_rows_window_body<0>(a, window, row_begin, row_end); break;
  }
}

}  // namespace kernels
}  // namespace edgebert
