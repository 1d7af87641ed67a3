// SPDX-License-Identifier: Apache-2.0
// safetensors reader (see safetensors.h): header validation, sharded index.json handling, and
// conversion of F32/F16/BF16 tensor data to float.
#include "converter/checkpoint/safetensors.h"

#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/json.h"

namespace edgebert {
namespace convert {

namespace {

struct DTypeEntry {
  DType type;
  const char* name;
  size_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::BOOL, "BOOL", 1},   {DType::U8, "U8", 1},   {DType::I8, "I8", 1},
    {DType::F8_E5M2, "F8_E5M2", 1}, {DType::F8_E4M3, "F8_E4M3", 1},
    {DType::I16, "I16", 2},     {DType::U16, "U16", 2}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},   {DType::I32, "I32", 4}, {DType::U32, "U32", 4},
    {DType::F32, "F32", 4},     {DType::F64, "F64", 8}, {DType::I64, "I64", 8},
    {DType::U64, "U64", 8},
};

const DTypeEntry& entry(DType t) {
  for (const auto& e : kDTypes) {
    if (e.type == t) return e;
  }
  return kDTypes[0];  // unreachable for valid enum values
}

std::string quoted(std::string_view name) { return "'" + display_name(name) + "'"; }

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  if (dir.back() == '/') return dir + file;
  return dir + "/" + file;
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Reads a JSON array of non-negative int64 into `out`; false on any type error.
bool read_nonneg_ints(const JsonValue& v, std::vector<int64_t>& out) {
  if (!v.is_array()) return false;
  out.clear();
  out.reserve(v.size());
  for (const JsonValue& e : v.elements()) {
    if (!e.is_integer()) return false;
    const int64_t x = e.as_int64();
    if (x < 0) return false;
    out.push_back(x);
  }
  return true;
}

// Parses and validates one safetensors file; adds its tensors to `out` (keyed by name).
void parse_file(const MappedFile& f, std::map<std::string, TensorInfo>& out) {
  const std::string& path = f.path();
  const size_t size = f.size();
  if (size < 8) {
    throw CheckpointError(path + ": file too small for a safetensors header (" +
                          std::to_string(size) + " bytes, need at least 8)");
  }
  const uint64_t n = read_u64_le(f.data());
  if (n == 0) throw CheckpointError(path + ": safetensors header length is 0");
  if (n > kMaxSafetensorsHeader) {
    throw CheckpointError(path + ": safetensors header length " + std::to_string(n) +
                          " exceeds the limit of " + std::to_string(kMaxSafetensorsHeader) +
                          " bytes (not a safetensors file?)");
  }
  if (n > size - 8) {
    throw CheckpointError(path + ": safetensors header length " + std::to_string(n) +
                          " exceeds the file size (" + std::to_string(size) + " bytes)");
  }
  const std::string_view header_text(reinterpret_cast<const char*>(f.data()) + 8,
                                     static_cast<size_t>(n));
  const uint8_t* data_start = f.data() + 8 + n;
  const uint64_t data_size = size - 8 - n;

  const JsonValue header = parse_json(header_text, path + ": header");
  if (!header.is_object()) {
    throw CheckpointError(path + ": safetensors header is a JSON " + header.type_name() +
                          ", expected an object");
  }

  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& name = header.key(i);
    const JsonValue& v = header.value(i);
    if (name == "__metadata__") {
      bool ok = v.is_object();
      for (size_t j = 0; ok && j < v.size(); ++j) ok = v.value(j).is_string();
      if (!ok) throw CheckpointError(path + ": __metadata__ must be an object of strings");
      continue;
    }
    const std::string where = path + ": tensor " + quoted(name);
    if (name.empty()) throw CheckpointError(path + ": empty tensor name in header");
    if (!v.is_object()) {
      throw CheckpointError(where + ": header entry is a JSON " + v.type_name() +
                            ", expected an object");
    }

    const JsonValue* jd = v.find("dtype");
    if (!jd) throw CheckpointError(where + ": missing 'dtype'");
    if (!jd->is_string()) throw CheckpointError(where + ": 'dtype' is not a string");
    DType dtype;
    if (!parse_dtype(jd->as_string(), &dtype)) {
      throw CheckpointError(where + ": unknown dtype " + quoted(jd->as_string()));
    }

    const JsonValue* js = v.find("shape");
    if (!js) throw CheckpointError(where + ": missing 'shape'");
    std::vector<int64_t> shape;
    if (!read_nonneg_ints(*js, shape)) {
      throw CheckpointError(where + ": 'shape' must be an array of non-negative integers");
    }

    const JsonValue* jo = v.find("data_offsets");
    if (!jo) throw CheckpointError(where + ": missing 'data_offsets'");
    std::vector<int64_t> offs;
    if (!read_nonneg_ints(*jo, offs) || offs.size() != 2) {
      throw CheckpointError(where +
                            ": 'data_offsets' must be an array of two non-negative integers");
    }
    const uint64_t begin = static_cast<uint64_t>(offs[0]);
    const uint64_t end = static_cast<uint64_t>(offs[1]);
    const std::string offs_str = "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
    if (begin > end) {
      throw CheckpointError(where + ": data_offsets " + offs_str + " have begin > end");
    }
    if (end > data_size) {
      throw CheckpointError(where + ": data_offsets " + offs_str +
                            " exceed the file's data section (" + std::to_string(data_size) +
                            " bytes)");
    }

    // Expected byte size = product(shape) * dtype size, overflow-checked.
    uint64_t numel = 1;
    bool overflow = false;
    bool has_zero = false;
    for (int64_t d : shape) has_zero = has_zero || d == 0;
    if (has_zero) {
      numel = 0;
    } else {
      for (int64_t d : shape) {
        if (__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel)) overflow = true;
      }
    }
    uint64_t expected = 0;
    if (!overflow && __builtin_mul_overflow(numel, static_cast<uint64_t>(dtype_size(dtype)),
                                            &expected)) {
      overflow = true;
    }
    if (overflow) {
      throw CheckpointError(where + ": shape " + shape_to_string(shape) + " is too large");
    }
    if (expected != end - begin) {
      throw CheckpointError(where + ": shape " + shape_to_string(shape) + " with dtype " +
                            dtype_name(dtype) + " needs " + std::to_string(expected) +
                            " bytes but data_offsets " + offs_str + " span " +
                            std::to_string(end - begin) + " bytes");
    }

    TensorInfo t;
    t.name = name;
    t.file = path;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data = data_start + begin;
    t.nbytes = static_cast<size_t>(end - begin);
    // JSON duplicate keys are rejected by the parser, so names within a file are unique.
    out[name] = std::move(t);
  }
}

}  // namespace

const char* dtype_name(DType t) { return entry(t).name; }
size_t dtype_size(DType t) { return entry(t).size; }

bool parse_dtype(std::string_view name, DType* out) {
  for (const auto& e : kDTypes) {
    if (name == e.name) {
      *out = e.type;
      return true;
    }
  }
  return false;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float mag = std::ldexp(static_cast<float>(mant), -24);
    std::memcpy(&bits, &mag, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf, or nan keeping its payload
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_f32(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

SafetensorsCheckpoint SafetensorsCheckpoint::open_file(const std::string& path) {
  SafetensorsCheckpoint ck;
  ck.source_ = path;
  ck.files_.push_back(MappedFile::open(path));
  parse_file(ck.files_.back(), ck.tensors_);
  return ck;
}

SafetensorsCheckpoint SafetensorsCheckpoint::open_dir(const std::string& dir) {
  const std::string index_path = join_path(dir, "model.safetensors.index.json");
  const std::string single_path = join_path(dir, "model.safetensors");
  if (!is_regular_file(index_path)) {
    if (is_regular_file(single_path)) return open_file(single_path);
    std::string msg = dir + ": no model.safetensors or model.safetensors.index.json";
    if (is_regular_file(join_path(dir, "pytorch_model.bin"))) {
      msg += " (found pytorch_model.bin: re-save the model with safe_serialization=True)";
    }
    throw CheckpointError(msg);
  }

  SafetensorsCheckpoint ck;
  ck.source_ = index_path;
  JsonValue index;
  {
    const MappedFile f = MappedFile::open(index_path);
    index = parse_json(f.view(), index_path);
  }
  if (!index.is_object()) throw CheckpointError(index_path + ": not a JSON object");
  const JsonValue* wm = index.find("weight_map");
  if (!wm || !wm->is_object()) {
    throw CheckpointError(index_path + ": missing 'weight_map' object");
  }
  if (wm->size() == 0) throw CheckpointError(index_path + ": 'weight_map' is empty");

  // Validate the map and open each distinct shard once.
  std::map<std::string, std::map<std::string, TensorInfo>> shards;  // shard file -> tensors
  for (size_t i = 0; i < wm->size(); ++i) {
    const std::string& tensor = wm->key(i);
    const JsonValue& v = wm->value(i);
    if (!v.is_string()) {
      throw CheckpointError(index_path + ": weight_map entry for tensor " + quoted(tensor) +
                            " is not a string");
    }
    const std::string& shard = v.as_string();
    if (shard.empty() || shard == "." || shard == ".." ||
        shard.find_first_of("/\\") != std::string::npos || shard.find('\0') != std::string::npos) {
      throw CheckpointError(index_path + ": weight_map entry for tensor " + quoted(tensor) +
                            " names shard " + quoted(shard) + ", which is not a plain file name");
    }
    if (shards.count(shard)) continue;
    const std::string shard_path = join_path(dir, shard);
    MappedFile mf;
    try {
      mf = MappedFile::open(shard_path);
    } catch (const CheckpointError& e) {
      throw CheckpointError(index_path + ": tensor " + quoted(tensor) + " is in shard " +
                            quoted(shard) + " which cannot be opened (" + e.what() + ")");
    }
    ck.files_.push_back(std::move(mf));
    parse_file(ck.files_.back(), shards[shard]);
  }

  for (size_t i = 0; i < wm->size(); ++i) {
    const std::string& tensor = wm->key(i);
    const std::string& shard = wm->value(i).as_string();
    auto& in_shard = shards[shard];
    auto it = in_shard.find(tensor);
    if (it == in_shard.end()) {
      throw CheckpointError(join_path(dir, shard) + ": missing tensor " + quoted(tensor) +
                            " (listed in " + index_path + ")");
    }
    ck.tensors_.emplace(tensor, it->second);
  }
  return ck;
}

bool SafetensorsCheckpoint::has(const std::string& name) const {
  return tensors_.count(name) != 0;
}

std::vector<std::string> SafetensorsCheckpoint::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& kv : tensors_) out.push_back(kv.first);
  return out;
}

const TensorInfo* SafetensorsCheckpoint::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const TensorInfo& SafetensorsCheckpoint::get(const std::string& name) const {
  const TensorInfo* t = find(name);
  if (!t) throw CheckpointError(source_ + ": missing tensor " + quoted(name));
  return *t;
}

void SafetensorsCheckpoint::read_f32(const std::string& name, std::vector<float>& out) const {
  read_f32_values(name, out);
  // A NaN or an infinity in a weight makes every output it reaches NaN in transformers; here it
  // would reach a calibrated scale, or an fp32 model that hides it: refused by name.
  for (size_t i = 0; i < out.size(); ++i)
    if (!std::isfinite(out[i]))
      throw CheckpointError(get(name).file + ": tensor " + quoted(name) + " holds a non-finite value (" +
                            (std::isnan(out[i]) ? "NaN" : out[i] > 0 ? "+Inf" : "-Inf") + ") at element " +
                            std::to_string(i));
}

void SafetensorsCheckpoint::read_f32_values(const std::string& name, std::vector<float>& out) const {
  const TensorInfo& t = get(name);
  const size_t n = t.numel();
  const uint8_t* p = t.data;
  switch (t.dtype) {
    case DType::F32:
      out.resize(n);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      if (n) std::memcpy(out.data(), p, n * 4);
#else
      for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = static_cast<uint32_t>(p[4 * i]) |
                              (static_cast<uint32_t>(p[4 * i + 1]) << 8) |
                              (static_cast<uint32_t>(p[4 * i + 2]) << 16) |
                              (static_cast<uint32_t>(p[4 * i + 3]) << 24);
        std::memcpy(&out[i], &bits, 4);
      }
#endif
      return;
    case DType::F16:
      out.resize(n);
      for (size_t i = 0; i < n; ++i) {
        out[i] = f16_to_f32(static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
      }
      return;
    case DType::BF16:
      out.resize(n);
      for (size_t i = 0; i < n; ++i) {
        out[i] = bf16_to_f32(static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
      }
      return;
    default:
      throw CheckpointError(t.file + ": tensor " + quoted(name) + ": unsupported dtype " +
                            dtype_name(t.dtype) + " (only F32, F16 and BF16 can be converted)");
  }
}

}  // namespace convert
}  // namespace edgebert
