// SPDX-License-Identifier: Apache-2.0
// CheckpointError: the single exception type thrown by the checkpoint readers (json, mapped file,
// safetensors, HuggingFace BERT directory). Its message is always one line naming the file and,
// where relevant, the tensor; the converter CLI prints it as is.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace edgebert {
namespace convert {

class CheckpointError : public std::runtime_error {
 public:
  // Control characters in `message` (e.g. a newline inside a tensor name coming from a hostile
  // header) are escaped as \xNN so that what() is always a single line.
  explicit CheckpointError(const std::string& message);
};

// A name (tensor name, key, file name) from untrusted input made fit for an error message:
// control characters escaped as \xNN and cut to at most `max_len` bytes (then "...").
std::string display_name(std::string_view name, size_t max_len = 200);

}  // namespace convert
}  // namespace edgebert
