// SPDX-License-Identifier: Apache-2.0
// fuzz_tokenizer_json.cpp: libFuzzer target for the converter's tokenizer.json reader. The input
// is a tokenizer.json text up to the first NUL byte, then an input for check_encodings(). The
// reader either refuses the file with a message or produces tables that the runtime accepts
// (the reader runs the runtime's checks itself); the tokenizer they make is then run on the text.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "converter/tokenizer/tokenizer_json.h"
#include "text/tokenizer.h"
#include "tokenizer_samples.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  const std::string json(all.substr(0, nul));
  const std::string_view text = nul == std::string_view::npos ? std::string_view() : all.substr(nul + 1);
  edgebert::convert::TokenizerJson tj;
  try {
    tj = edgebert::convert::parse_tokenizer_json(json, "fuzz.json");
  } catch (const std::exception& e) {
    if (e.what()[0] == '\0') __builtin_trap();  // a refusal needs a message
    return 0;
  }
  edgebert::text::Tokenizer t;
  if (!t.init_from_buffer(edgebert::convert::tokenizer_spec_buffer(tj)).is_ok()) __builtin_trap();
  edgebert::fuzz::check_encodings(t, text);
  return 0;
}
