// SPDX-License-Identifier: Apache-2.0
// packing.cpp: laying out the sequences of a packed run (packing.h).
#include "tasks/packing.h"

#include <algorithm>
#include <cstring>

#include "tasks/text_layout.h"

namespace edgebert::tasks {

eb_status check_ids(const PackLimits& limits, RunInputs& in, size_t first, size_t n) {
  for (size_t t = first; t < first + n; ++t) {
    if (!limits.token_types) in.types[t] = 0;
    if (in.ids[t] < 0 || in.ids[t] >= limits.vocab || in.types[t] < 0 ||
        (in.types[t] != 0 && in.types[t] >= limits.type_vocab))
      return EB_ERROR_INVALID_ARGUMENT;
  }
  return EB_OK;
}

size_t pack_texts(const TextEncoder& text, const PackLimits& limits, Truncation truncation, const char* const* texts_a,
                  const char* const* texts_b, size_t count, RunInputs& in, SequenceInfo* sequences,
                  const Expansion& expansion) {
  size_t at = 0, k = 0;
  for (; k < count && k < limits.max_rows; ++k) {
    const char* a = texts_a[k];
    const char* b = texts_b ? texts_b[k] : nullptr;
    SequenceInfo& q = sequences[k];
    q = SequenceInfo{};
    q.first_token = at;
    if (!a || (texts_b && !b)) {
      q.status = EB_ERROR_INVALID_ARGUMENT;
      continue;
    }
    const size_t cap = std::min(limits.max_rows - at, limits.max_len);
    size_t na = 0, cut = 0;
    const size_t need =
        lay_out_sequence(text, limits.token_types, limits.max_len, in, a, b, at, cap, &na, truncation, &cut);
    if (need == 0) {  // (a tokenizer without special tokens, on a text with no token)
      q.status = EB_ERROR_INVALID_ARGUMENT;
      continue;
    }
    if (need <= cap && (expansion.id < 0 || expansion.length <= cap)) {
      q.status = check_ids(limits, in, at, need);
      if (q.status == EB_OK) q.tokens = expand_sequence(in, at, need, expansion), q.truncated = cut, at += q.tokens;
      continue;
    }
    if (need > limits.max_len) {
      q.status = EB_ERROR_SEQUENCE_TOO_LONG;
      continue;
    }
    break;  // fits only a run of its own: the caller's next call
  }
  return k;
}

size_t pack_ids(const PackLimits& limits, const int32_t* ids, const int32_t* token_types, const int32_t* mask,
                const size_t* lengths, size_t count, RunInputs& in, SequenceInfo* sequences) {
  size_t at = 0, src = 0, k = 0;
  for (; k < count && k < limits.max_rows; ++k) {
    const size_t len = lengths[k];
    SequenceInfo& q = sequences[k];
    q = SequenceInfo{};
    q.first_token = at;
    if (len == 0) {
      q.status = EB_ERROR_INVALID_ARGUMENT;
    } else if (len > limits.max_len) {
      q.status = EB_ERROR_SEQUENCE_TOO_LONG;
    } else if (len > limits.max_rows - at) {
      break;  // the caller's next call
    } else {
      std::memcpy(in.ids.data() + at, ids + src, len * sizeof(int32_t));
      for (size_t i = 0; i < len; ++i) in.types[at + i] = token_types ? token_types[src + i] : 0;
      q.status = check_ids(limits, in, at, len);
      for (size_t i = 0; i < len && q.status == EB_OK; ++i) {
        const int32_t m = mask ? mask[src + i] : 1;
        if (m != 0 && m != 1) q.status = EB_ERROR_INVALID_ARGUMENT;
        in.key_mask[at + i] = static_cast<uint8_t>(m);
      }
      if (q.status == EB_OK) q.tokens = len, at += len;
    }
    src += len;
  }
  return k;
}

}  // namespace edgebert::tasks
