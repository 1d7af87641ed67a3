// SPDX-License-Identifier: Apache-2.0
// Typed reads of config.json fields with one-line errors naming the file and key (shared by the
// BERT / DistilBERT reader and the other families' readers).
#pragma once

#include <string>

#include "converter/checkpoint/json.h"

namespace edgebert {
namespace convert {

// Parses `path` as a JSON object (error if not an object).
JsonValue read_json_file(const std::string& path);
// A positive int field; `def` < 0 means required.
int config_int(const JsonValue& cfg, const std::string& path, const char* key, int def = -1);
// A string field (default `def` when absent).
std::string config_string(const JsonValue& cfg, const std::string& path, const char* key, const char* def);
// A boolean field (default `def` when absent or null).
bool config_bool(const JsonValue& cfg, const std::string& path, const char* key, bool def);
// A finite positive number (default `def` when absent or null).
double config_positive(const JsonValue& cfg, const std::string& path, const char* key, double def);

}  // namespace convert
}  // namespace edgebert
