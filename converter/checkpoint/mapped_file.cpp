// SPDX-License-Identifier: Apache-2.0
// RAII read-only mmap of a whole file (see mapped_file.h).
#include "converter/checkpoint/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "converter/checkpoint/checkpoint_error.h"

namespace edgebert {
namespace convert {

namespace {
const uint8_t kEmpty[1] = {0};

[[noreturn]] void cannot_open(const std::string& path, const char* why) {
  throw CheckpointError(path + ": cannot open: " + why);
}
}  // namespace

MappedFile MappedFile::open(const std::string& path) {
  int fd;  // O_NONBLOCK: a FIFO must not hang the open (no effect on regular files)
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) cannot_open(path, std::strerror(errno));

  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    cannot_open(path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    cannot_open(path, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
  }
  if (st.st_size < 0 ||
      static_cast<uint64_t>(st.st_size) > static_cast<uint64_t>(std::numeric_limits<size_t>::max())) {
    ::close(fd);
    cannot_open(path, "file too large to map");
  }

  MappedFile f;
  f.path_ = path;
  f.size_ = static_cast<size_t>(st.st_size);
  if (f.size_ == 0) {
    f.data_ = kEmpty;
    ::close(fd);
    return f;
  }
  void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (p == MAP_FAILED) cannot_open(path, std::strerror(err));
  f.map_ = p;
  f.data_ = static_cast<const uint8_t*>(p);
  return f;
}

MappedFile::~MappedFile() { reset(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), map_(other.map_), path_(std::move(other.path_)) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.map_ = nullptr;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    map_ = std::exchange(other.map_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void MappedFile::reset() noexcept {
  if (map_) ::munmap(map_, size_);
  map_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace convert
}  // namespace edgebert
