// SPDX-License-Identifier: Apache-2.0
// status.h: the one error convention inside the library. A function that can fail returns a
// Status (an eb_status code and a readable message) or a Result<T> (a value or a Status); both are
// [[nodiscard]], so a failure cannot be dropped by accident. No exception crosses a module
// boundary: allocation failures are caught where they happen and become EB_ERROR_OUT_OF_MEMORY.
// The one deliberate exception is the run path: a session's run entry points and the tasks over
// them return eb_status and write the message into the session's fixed buffer (Session::fail),
// because refusing a run (a text too long, an id out of range) must not allocate either. (The
// verifier inside model.cpp collects its first failure as an eb_status and a message, and hands
// it out as a Status.)
#pragma once

#include <string>
#include <utility>

#include "edgebert/edgebert.h"

namespace edgebert {

class [[nodiscard]] Status {
 public:
  Status() = default;  // EB_OK
  Status(eb_status code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == EB_OK; }
  explicit operator bool() const { return is_ok(); }
  eb_status code() const { return code_; }
  const std::string& message() const { return message_; }
  // "context: message" (keeps the code), for adding where a failure happened.
  Status with_context(const std::string& context) const {
    return is_ok() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  eb_status code_ = EB_OK;
  std::string message_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as a value is the common case
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: a failed Status
  bool is_ok() const { return status_.is_ok(); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const { return status_; }
  T& value() { return value_; }
  const T& value() const { return value_; }
  T take() { return std::move(value_); }
  // When ok: moves the value into *out; else writes the message into *error (if not null).
  // Returns is_ok() (for callers that keep a value and a message apart, e.g. tools).
  bool move_to(T* out, std::string* error = nullptr) {
    if (is_ok()) {
      *out = std::move(value_);
      return true;
    }
    if (error) *error = status_.message();
    return false;
  }

 private:
  T value_{};
  Status status_;
};

// Returns the Status of `expr` from the calling function when it failed.
#define EB_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::edgebert::Status eb_status_ = (expr);       \
    if (!eb_status_.is_ok()) return eb_status_;   \
  } while (0)

}  // namespace edgebert
