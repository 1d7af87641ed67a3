// SPDX-License-Identifier: Apache-2.0
// tool_common.h: small helpers shared by the command-line tools (argument parsing, atomic file
// output). Header-only; not part of the runtime library.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace edgebert::tools {

inline bool parse_int(const char* s, long lo, long hi, long* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// Parses whitespace/comma separated integers; false on any non-integer token.
inline bool parse_int_list(const std::string& s, std::vector<int32_t>* out) {
  out->clear();
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',' || s[i] == '\t' || s[i] == '\n')) ++i;
    if (i >= s.size()) break;
    size_t j = i;
    while (j < s.size() && !(s[j] == ' ' || s[j] == ',' || s[j] == '\t' || s[j] == '\n')) ++j;
    long v;
    if (!parse_int(s.substr(i, j - i).c_str(), INT32_MIN, INT32_MAX, &v)) return false;
    out->push_back(static_cast<int32_t>(v));
    i = j;
  }
  return true;
}

// Writes via a temporary file + rename so a failure never leaves a partial file at `path`.
inline bool write_file_atomically(const std::string& path, const void* data, size_t size, std::string* error) {
  std::string tmpl = path + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) {
    *error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  const auto* p = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t w = ::write(fd, p + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      *error = path + ": write failed: " + std::strerror(errno);
      ::close(fd);
      ::unlink(name.data());
      return false;
    }
    done += static_cast<size_t>(w);
  }
  fchmod(fd, 0644);
  if (::close(fd) != 0 || std::rename(name.data(), path.c_str()) != 0) {
    *error = path + ": cannot finish writing: " + std::strerror(errno);
    ::unlink(name.data());
    return false;
  }
  return true;
}

inline bool read_file(const std::string& path, std::vector<uint8_t>* out, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  out->clear();
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  if (!ok) *error = path + ": read error";
  return ok;
}

// Every line of `path` (without its line end), or false.
inline bool read_lines(const std::string& path, std::vector<std::string>* lines) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  std::string cur;
  for (int ch; (ch = std::fgetc(f)) != EOF;) {
    if (ch != '\n') {
      cur += static_cast<char>(ch);
      continue;
    }
    if (!cur.empty() && cur.back() == '\r') cur.pop_back();
    lines->push_back(cur);
    cur.clear();
  }
  if (!cur.empty()) lines->push_back(cur);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

}  // namespace edgebert::tools
