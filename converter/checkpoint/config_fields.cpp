// SPDX-License-Identifier: Apache-2.0
// Typed config.json field reads (see config_fields.h).
#include "converter/checkpoint/config_fields.h"

#include <climits>
#include <cmath>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/mapped_file.h"

namespace edgebert {
namespace convert {

JsonValue read_json_file(const std::string& path) {
  const MappedFile f = MappedFile::open(path);
  JsonValue v = parse_json(f.view(), path);
  if (!v.is_object()) {
    throw CheckpointError(path + ": top-level JSON value is a " + std::string(v.type_name()) +
                          ", expected an object");
  }
  return v;
}


int config_int(const JsonValue& cfg, const std::string& path, const char* key, int def) {
  const JsonValue* v = cfg.find(key);
  if (!v) {
    if (def < 0) throw CheckpointError(path + ": missing '" + key + "'");
    return def;
  }
  if (!v->is_integer()) {
    throw CheckpointError(path + ": '" + key + "' must be an integer, got a " + v->type_name());
  }
  const int64_t x = v->as_int64();
  if (x <= 0 || x > INT_MAX) {
    throw CheckpointError(path + ": '" + key + "' must be a positive integer, got " +
                          std::to_string(x));
  }
  return static_cast<int>(x);
}

std::string config_string(const JsonValue& cfg, const std::string& path, const char* key,
                          const char* def) {
  const JsonValue* v = cfg.find(key);
  if (!v) return def;
  if (!v->is_string()) {
    throw CheckpointError(path + ": '" + key + "' must be a string, got a " + v->type_name());
  }
  return v->as_string();
}

bool config_bool(const JsonValue& cfg, const std::string& path, const char* key, bool def) {
  const JsonValue* v = cfg.find(key);
  if (!v || v->is_null()) return def;
  if (!v->is_bool()) throw CheckpointError(path + ": '" + key + "' must be true or false, got a " + v->type_name());
  return v->as_bool();
}

double config_positive(const JsonValue& cfg, const std::string& path, const char* key, double def) {
  const JsonValue* v = cfg.find(key);
  if (!v || v->is_null()) return def;
  if (!v->is_number()) throw CheckpointError(path + ": '" + key + "' must be a number, got a " + v->type_name());
  const double d = v->as_double();
  if (!(d > 0) || !std::isfinite(d) || !std::isfinite(static_cast<float>(d)))
    throw CheckpointError(path + ": '" + key + "' must be a positive number, got " + std::to_string(d));
  return d;
}

}  // namespace convert
}  // namespace edgebert
