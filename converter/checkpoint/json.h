// SPDX-License-Identifier: Apache-2.0
// A small strict JSON (RFC 8259) parser for checkpoint headers, config.json and tokenizer files:
// objects, arrays, strings (all escapes, \uXXXX with surrogate pairs -> UTF-8, UTF-8 validated),
// numbers, true/false/null. Nesting is limited to kMaxJsonDepth, duplicate object keys and
// trailing garbage are rejected. Errors are CheckpointError "SOURCE: malformed JSON at byte N:
// reason" with N the 0-based byte offset into the parsed text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace edgebert {
namespace convert {

constexpr int kMaxJsonDepth = 64;

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue() = default;  // null

  Type type() const { return type_; }
  static const char* type_name(Type t);  // "null", "bool", "number", "string", "array", "object"
  const char* type_name() const { return type_name(type_); }

  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }
  // A number whose value is an integer representable as int64 (e.g. 12, -3, 1e3, 4.0); integer
  // literals are exact over the whole int64 range.
  bool is_integer() const;

  // Typed accessors; a wrong type throws CheckpointError (callers that want a message naming
  // their file should check the type first).
  bool as_bool() const;
  double as_double() const;
  int64_t as_int64() const;
  const std::string& as_string() const;

  // Arrays and objects: number of elements / members (0 for scalars).
  size_t size() const;
  // Array element i (throws if not an array or out of range).
  const JsonValue& operator[](size_t i) const { return at(i); }
  const JsonValue& at(size_t i) const;
  const std::vector<JsonValue>& elements() const;  // array elements (throws if not an array)

  // Object member lookup (O(log n)); at() throws if missing, find() returns nullptr if missing
  // or if this is not an object.
  const JsonValue& at(std::string_view key) const;
  const JsonValue* find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  // Object members in document order.
  const std::string& key(size_t i) const;
  const JsonValue& value(size_t i) const;

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  bool has_int_ = false;  // integer literal that fits int64: int_ is exact
  int64_t int_ = 0;
  double num_ = 0.0;
  std::string str_;
  std::vector<JsonValue> items_;      // array elements or object values
  std::vector<std::string> keys_;     // object keys (document order), parallel to items_
  std::vector<size_t> sorted_;        // object member indices sorted by key
};

// Parses a complete JSON text (surrounding whitespace allowed, nothing else).
JsonValue parse_json(std::string_view text, const std::string& source_name);

}  // namespace convert
}  // namespace edgebert
