// SPDX-License-Identifier: Apache-2.0
// fuzz_model.cpp: libFuzzer target for the model loader. The input is an .ebm file: it is loaded
// and verified from (64-byte aligned) memory; when it loads, one session is created and run on a
// few token ids and on a text, and every output it has is read in full (ASan checks the bounds).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "edgebert/edgebert.h"
#include "tiny_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  edgebert::fuzz::AlignedCopy copy(data, size);
  if (!copy.data()) return 0;
  eb_model* model = nullptr;
  char error[256];
  const eb_status s = eb_model_load_memory(copy.data(), copy.size(), &model, error, sizeof error);
  if (s != EB_OK) {
    if (model != nullptr || std::strlen(error) == 0) __builtin_trap();  // failure needs a message
    return 0;
  }
  eb_model_info info;
  if (eb_model_get_info(model, &info) != EB_OK) __builtin_trap();
  eb_session_options options;
  eb_session_options_init(&options);
  options.max_sequence_length = info.max_position_embeddings < 8 ? info.max_position_embeddings : 8;
  eb_session* session = nullptr;
  if (eb_session_create(model, &options, &session, error, sizeof error) == EB_OK) {
    const int32_t ids[5] = {2, 5, 31, 1, 3};
    const int32_t n = options.max_sequence_length < 5 ? options.max_sequence_length : 5;
    int32_t clamped[5];
    for (int i = 0; i < 5; ++i) clamped[i] = info.vocab_size > 0 ? ids[i] % info.vocab_size : 0;
    // (a run may fail on a fuzzed model; it must not crash, and a failure has a message)
    if (info.has_embeddings && eb_session_run_ids(session, clamped, nullptr, nullptr, static_cast<size_t>(n)) != EB_OK &&
        *eb_session_last_error(session) == '\0')
      __builtin_trap();
    if (info.has_vocab && eb_session_run_text(session, "the movie was good") != EB_OK && *eb_session_last_error(session) == '\0')
      __builtin_trap();
    for (int which = 0; which < 3; ++which) {
      const float* out = nullptr;
      int64_t shape[2] = {0, 0};
      int32_t rank = 0;
      if (eb_session_get_output(session, static_cast<eb_output>(which), &out, shape, &rank) != EB_OK) continue;
      const int64_t count = rank == 2 ? shape[0] * shape[1] : shape[0];
      volatile float sink = 0.f;
      for (int64_t i = 0; i < count; ++i) sink = sink + out[i];
    }
    eb_session_destroy(session);
  }
  eb_model_free(model);
  return 0;
}
