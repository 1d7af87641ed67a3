// SPDX-License-Identifier: Apache-2.0
// MappedFile: RAII read-only memory map of a whole file. Checkpoint tensors are read straight from
// the mapping, so a multi-GB checkpoint costs address space, not heap. Empty files are supported
// (data() is a valid non-null pointer, size() is 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace edgebert {
namespace convert {

class MappedFile {
 public:
  // Throws CheckpointError "PATH: cannot open: strerror" (missing, unreadable, not a regular
  // file, mmap failure).
  static MappedFile open(const std::string& path);

  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const {
    return std::string_view(reinterpret_cast<const char*>(data_), size_);
  }
  const std::string& path() const { return path_; }

 private:
  void reset() noexcept;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // nullptr for empty files
  std::string path_;
};

// True if `path` names an existing regular file (following symlinks).
bool is_regular_file(const std::string& path);

}  // namespace convert
}  // namespace edgebert
