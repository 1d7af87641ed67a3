// SPDX-License-Identifier: Apache-2.0
// json_writer.h: a minimal streaming JSON writer for the tools' --json output.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace edgebert::tools {

class JsonWriter {
 public:
  JsonWriter& begin_object(const char* key = nullptr) { return open(key, '{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(const char* key = nullptr) { return open(key, '['); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& value(const char* key, const std::string& v) {
    prefix(key);
    quote(v);
    return *this;
  }
  JsonWriter& value(const char* key, const char* v) { return value(key, std::string(v)); }
  JsonWriter& value(const char* key, double v) {
    prefix(key);
    if (!std::isfinite(v)) {
      out_ += "null";
    } else {
      char b[64];
      std::snprintf(b, sizeof b, "%.9g", v);
      out_ += b;
    }
    return *this;
  }
  JsonWriter& value(const char* key, long long v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(const char* key, int v) { return value(key, static_cast<long long>(v)); }
  JsonWriter& value(const char* key, size_t v) { return value(key, static_cast<long long>(v)); }
  JsonWriter& value(const char* key, bool v) {
    prefix(key);
    out_ += v ? "true" : "false";
    return *this;
  }
  const std::string& str() const { return out_; }

 private:
  JsonWriter& open(const char* key, char c) {
    prefix(key);
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    out_ += c;
    first_.pop_back();
    return *this;
  }
  void prefix(const char* key) {
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
    if (key) {
      quote(key);
      out_ += ':';
    }
  }
  void quote(const std::string& s) {
    out_ += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += static_cast<char>(c);
      } else if (c < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        out_ += b;
      } else {
        out_ += static_cast<char>(c);
      }
    }
    out_ += '"';
  }
  std::string out_;
  std::vector<bool> first_;
};

}  // namespace edgebert::tools
