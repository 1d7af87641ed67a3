// SPDX-License-Identifier: Apache-2.0
// Strict RFC 8259 JSON parser (see json.h). Recursive descent with a depth limit; every read is
// bounds-checked against the input, so malformed or truncated input only ever throws.
#include "converter/checkpoint/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "converter/checkpoint/checkpoint_error.h"

namespace edgebert {
namespace convert {

// ---------------------------------------------------------------------------------------------
// JsonValue accessors

const char* JsonValue::type_name(Type t) {
  switch (t) {
    case Type::kNull: return "null";
    case Type::kBool: return "bool";
    case Type::kNumber: return "number";
    case Type::kString: return "string";
    case Type::kArray: return "array";
    case Type::kObject: return "object";
  }
  return "?";
}

namespace {

[[noreturn]] void wrong_type(const char* wanted, JsonValue::Type got) {
  throw CheckpointError(std::string("JSON value is a ") + JsonValue::type_name(got) +
                        ", expected " + wanted);
}

// 2^63 as a double; doubles in [-2^63, 2^63) convert to int64 without UB.
constexpr double kTwo63 = 9223372036854775808.0;

bool double_is_int64(double d) {
  return std::isfinite(d) && d == std::floor(d) && d >= -kTwo63 && d < kTwo63;
}

}  // namespace

bool JsonValue::is_integer() const {
  return type_ == Type::kNumber && (has_int_ || double_is_int64(num_));
}

bool JsonValue::as_bool() const {
  if (type_ != Type::kBool) wrong_type("bool", type_);
  return bool_;
}

double JsonValue::as_double() const {
  if (type_ != Type::kNumber) wrong_type("number", type_);
  return num_;
}

int64_t JsonValue::as_int64() const {
  if (type_ != Type::kNumber) wrong_type("number", type_);
  if (has_int_) return int_;
  if (!double_is_int64(num_)) throw CheckpointError("JSON number is not an int64 integer");
  return static_cast<int64_t>(num_);
}

const std::string& JsonValue::as_string() const {
  if (type_ != Type::kString) wrong_type("string", type_);
  return str_;
}

size_t JsonValue::size() const {
  return (type_ == Type::kArray || type_ == Type::kObject) ? items_.size() : 0;
}

const JsonValue& JsonValue::at(size_t i) const {
  if (type_ != Type::kArray) wrong_type("array", type_);
  if (i >= items_.size()) {
    throw CheckpointError("JSON array index " + std::to_string(i) + " out of range (size " +
                          std::to_string(items_.size()) + ")");
  }
  return items_[i];
}

const std::vector<JsonValue>& JsonValue::elements() const {
  if (type_ != Type::kArray) wrong_type("array", type_);
  return items_;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (type_ != Type::kObject) return nullptr;
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), key,
                             [this](size_t idx, std::string_view k) { return keys_[idx] < k; });
  if (it == sorted_.end() || keys_[*it] != key) return nullptr;
  return &items_[*it];
}

const JsonValue& JsonValue::at(std::string_view key) const {
  if (type_ != Type::kObject) wrong_type("object", type_);
  const JsonValue* v = find(key);
  if (!v) throw CheckpointError("JSON object has no key '" + display_name(key) + "'");
  return *v;
}

const std::string& JsonValue::key(size_t i) const {
  if (type_ != Type::kObject) wrong_type("object", type_);
  if (i >= keys_.size()) throw CheckpointError("JSON object member index out of range");
  return keys_[i];
}

const JsonValue& JsonValue::value(size_t i) const {
  if (type_ != Type::kObject) wrong_type("object", type_);
  if (i >= items_.size()) throw CheckpointError("JSON object member index out of range");
  return items_[i];
}

// ---------------------------------------------------------------------------------------------
// Parser

class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& source) : s_(text), src_(source) {}

  JsonValue parse_document() {
    JsonValue v;
    skip_ws();
    parse_value(v, 0);
    skip_ws();
    if (pos_ != s_.size()) fail(pos_, "trailing characters after the JSON value");
    return v;
  }

 private:
  std::string_view s_;
  const std::string& src_;
  size_t pos_ = 0;

  [[noreturn]] void fail(size_t at, const std::string& reason) const {
    throw CheckpointError(src_ + ": malformed JSON at byte " + std::to_string(at) + ": " + reason);
  }

  [[noreturn]] void fail_unexpected(size_t at) const {
    if (at >= s_.size()) fail(at, "unexpected end of input");
    const unsigned char c = static_cast<unsigned char>(s_[at]);
    if (c >= 0x21 && c < 0x7f) fail(at, std::string("unexpected character '") + s_[at] + "'");
    static const char kHex[] = "0123456789abcdef";
    fail(at, std::string("unexpected byte 0x") + kHex[c >> 4] + kHex[c & 15]);
  }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return s_[pos_]; }  // only when !at_end()

  void skip_ws() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  void expect_literal(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) {
      // Point at the first differing byte.
      size_t i = 0;
      while (pos_ + i < s_.size() && i < lit.size() && s_[pos_ + i] == lit[i]) ++i;
      fail_unexpected(pos_ + i);
    }
    pos_ += lit.size();
  }

  void parse_value(JsonValue& out, int depth) {
    if (at_end()) fail_unexpected(pos_);
    switch (peek()) {
      case '{': parse_object(out, depth + 1); return;
      case '[': parse_array(out, depth + 1); return;
      case '"':
        out.type_ = JsonValue::Type::kString;
        parse_string(out.str_);
        return;
      case 't':
        expect_literal("true");
        out.type_ = JsonValue::Type::kBool;
        out.bool_ = true;
        return;
      case 'f':
        expect_literal("false");
        out.type_ = JsonValue::Type::kBool;
        out.bool_ = false;
        return;
      case 'n':
        expect_literal("null");
        out.type_ = JsonValue::Type::kNull;
        return;
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) {
          parse_number(out);
          return;
        }
        fail_unexpected(pos_);
    }
  }

  void check_depth(int depth) const {
    if (depth > kMaxJsonDepth) {
      fail(pos_, "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
  }

  void parse_array(JsonValue& out, int depth) {
    check_depth(depth);
    out.type_ = JsonValue::Type::kArray;
    ++pos_;  // '['
    skip_ws();
    if (!at_end() && peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_ws();
      out.items_.emplace_back();
      parse_value(out.items_.back(), depth);
      skip_ws();
      if (at_end()) fail_unexpected(pos_);
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return;
      }
      fail(pos_, "expected ',' or ']' in array");
    }
  }

  void parse_object(JsonValue& out, int depth) {
    check_depth(depth);
    out.type_ = JsonValue::Type::kObject;
    ++pos_;  // '{'
    skip_ws();
    if (!at_end() && peek() == '}') {
      ++pos_;
      return;
    }
    std::vector<size_t> key_pos;
    for (;;) {
      skip_ws();
      if (at_end() || peek() != '"') {
        if (at_end()) fail_unexpected(pos_);
        fail(pos_, "expected a string key in object");
      }
      key_pos.push_back(pos_);
      out.keys_.emplace_back();
      parse_string(out.keys_.back());
      skip_ws();
      if (at_end() || peek() != ':') {
        if (at_end()) fail_unexpected(pos_);
        fail(pos_, "expected ':' after object key");
      }
      ++pos_;
      skip_ws();
      out.items_.emplace_back();
      parse_value(out.items_.back(), depth);
      skip_ws();
      if (at_end()) fail_unexpected(pos_);
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        break;
      }
      fail(pos_, "expected ',' or '}' in object");
    }
    // Index for lookups; equal neighbours after a stable sort are duplicate keys.
    out.sorted_.resize(out.keys_.size());
    for (size_t i = 0; i < out.sorted_.size(); ++i) out.sorted_[i] = i;
    std::stable_sort(out.sorted_.begin(), out.sorted_.end(),
                     [&out](size_t a, size_t b) { return out.keys_[a] < out.keys_[b]; });
    for (size_t i = 1; i < out.sorted_.size(); ++i) {
      const size_t prev = out.sorted_[i - 1], cur = out.sorted_[i];
      if (out.keys_[prev] == out.keys_[cur]) {
        fail(key_pos[cur], "duplicate key '" + display_name(out.keys_[cur]) + "'");
      }
    }
  }

  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Reads the 4 hex digits of a \u escape starting at pos_ (just after "\u").
  uint32_t read_hex4(size_t escape_start) {
    if (s_.size() - pos_ < 4) fail(escape_start, "truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = hex_digit(s_[pos_ + i]);
      if (d < 0) fail(pos_ + i, "invalid hex digit in \\u escape");
      v = (v << 4) | static_cast<uint32_t>(d);
    }
    pos_ += 4;
    return v;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // Length of the valid UTF-8 sequence starting at s_[pos_] (a byte >= 0x80), or 0 if invalid
  // (bad lead byte, truncated, bad continuation, overlong, surrogate, > U+10FFFF).
  size_t utf8_sequence_length() const {
    const auto byte = [this](size_t i) { return static_cast<unsigned char>(s_[pos_ + i]); };
    const unsigned char c = byte(0);
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return 0;
    }
    if (s_.size() - pos_ < len) return 0;
    if (byte(1) < lo || byte(1) > hi) return 0;
    for (size_t i = 2; i < len; ++i) {
      if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
    }
    return len;
  }

  void parse_string(std::string& out) {
    const size_t start = pos_;
    ++pos_;  // opening quote
    for (;;) {
      if (at_end()) fail(start, "unterminated string");
      const unsigned char c = static_cast<unsigned char>(peek());
      if (c == '"') {
        ++pos_;
        return;
      }
      if (c < 0x20) fail(pos_, "unescaped control character in string");
      if (c == '\\') {
        const size_t esc = pos_;
        ++pos_;
        if (at_end()) fail(start, "unterminated string");
        const char e = peek();
        ++pos_;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            uint32_t cp = read_hex4(esc);
            if (cp >= 0xDC00 && cp <= 0xDFFF) fail(esc, "unpaired low surrogate in \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              if (s_.size() - pos_ < 2 || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') {
                fail(esc, "unpaired high surrogate in \\u escape");
              }
              pos_ += 2;
              const uint32_t lo = read_hex4(esc);
              if (lo < 0xDC00 || lo > 0xDFFF) fail(esc, "unpaired high surrogate in \\u escape");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            append_utf8(out, cp);
            break;
          }
          default:
            fail(esc, "invalid escape sequence in string");
        }
        continue;
      }
      if (c < 0x80) {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      const size_t len = utf8_sequence_length();
      if (len == 0) fail(pos_, "invalid UTF-8 in string");
      out.append(s_.data() + pos_, len);
      pos_ += len;
    }
  }

  void parse_number(JsonValue& out) {
    const size_t start = pos_;
    const auto digit = [this]() { return !at_end() && peek() >= '0' && peek() <= '9'; };
    bool integral = true;
    if (peek() == '-') ++pos_;
    if (!digit()) fail(pos_, at_end() ? "unexpected end of input in number" : "invalid number");
    if (peek() == '0') {
      ++pos_;
      if (digit()) fail(pos_, "leading zeros are not allowed in numbers");
    } else {
      while (digit()) ++pos_;
    }
    if (!at_end() && peek() == '.') {
      integral = false;
      ++pos_;
      if (!digit()) fail(pos_, "expected a digit after '.' in number");
      while (digit()) ++pos_;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      integral = false;
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (!digit()) fail(pos_, "expected a digit in number exponent");
      while (digit()) ++pos_;
    }
    const char* first = s_.data() + start;
    const char* last = s_.data() + pos_;
    out.type_ = JsonValue::Type::kNumber;
    if (integral) {
      int64_t iv = 0;
      auto r = std::from_chars(first, last, iv);
      if (r.ec == std::errc() && r.ptr == last) {
        out.has_int_ = true;
        out.int_ = iv;
        out.num_ = static_cast<double>(iv);
        return;
      }
      // Too large for int64: keep it as a (rounded) double.
    }
    double dv = 0.0;
    auto r = std::from_chars(first, last, dv);
    if (r.ptr != last) fail(start, "invalid number");
    if (r.ec == std::errc::result_out_of_range) {
      // Underflow (negative exponent, or a 0.000...x fraction) rounds to zero; overflow is an
      // error (JSON has no infinities).
      bool neg_exp = false;
      for (const char* p = first; p != last; ++p) {
        if ((*p == 'e' || *p == 'E') && p + 1 != last && p[1] == '-') neg_exp = true;
      }
      const char* int_part = (*first == '-') ? first + 1 : first;
      const bool zero_int = int_part != last && *int_part == '0';
      if (!neg_exp && !zero_int) fail(start, "number out of range");
      dv = (*first == '-') ? -0.0 : 0.0;
    } else if (r.ec != std::errc()) {
      fail(start, "invalid number");
    }
    out.num_ = dv;
  }
};

JsonValue parse_json(std::string_view text, const std::string& source_name) {
  JsonParser parser(text, source_name);
  return parser.parse_document();
}

}  // namespace convert
}  // namespace edgebert
