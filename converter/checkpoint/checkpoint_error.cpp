// SPDX-License-Identifier: Apache-2.0
// CheckpointError and the helper that makes untrusted names safe to print in one-line messages.
#include "converter/checkpoint/checkpoint_error.h"

namespace edgebert {
namespace convert {

namespace {

std::string escape_controls(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

CheckpointError::CheckpointError(const std::string& message)
    : std::runtime_error(escape_controls(message)) {}

std::string display_name(std::string_view name, size_t max_len) {
  if (name.size() <= max_len) return escape_controls(name);
  return escape_controls(name.substr(0, max_len)) + "...";
}

}  // namespace convert
}  // namespace edgebert
