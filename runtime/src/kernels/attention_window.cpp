// SPDX-License-Identifier: Apache-2.0
// Int8 attention with a sliding-window mask (see attention_window.h): portable implementation.
// Per row: scores of the window's valid keys, max, exp, the uint8 probabilities and P.V, each
// step the operation attention_s8_rows_portable performs, so window >= n gives its bytes.
#include "kernels/attention_window.h"

#include <cstddef>
#include <cstdint>

#include "kernels/attention_window_impl.h"
#include "kernels/dispatch.h"

namespace edgebert {
namespace kernels {

void attention_s8_rows_window_portable(const AttentionHeadS8& a, int window, int row_begin, int row_end) {
  attention_s8_rows_window_body<0>(a, window, row_begin, row_end);
}

void attention_s8_pack_window_in_place(const AttentionHeadS8&) {}

void attention_s8_pack_window(const AttentionHeadS8& args) { kernel_table().attention_s8_pack_window(args); }

void attention_s8_rows_window(const AttentionHeadS8& args, int window, int row_begin, int row_end) {
  kernel_table().attention_s8_rows_window(args, window, row_begin, row_end);
}

}  // namespace kernels
}  // namespace edgebert
