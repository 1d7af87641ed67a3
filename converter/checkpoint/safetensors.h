// SPDX-License-Identifier: Apache-2.0
// Reader for the safetensors checkpoint format (single file or HuggingFace sharded directory).
// File layout: u64 little-endian header length N, N bytes of JSON header
//   {"NAME": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"key": "value", ...}}
// then the data section (offsets are relative to its start). Every length, offset and size is
// validated with overflow-safe arithmetic; malformed files throw CheckpointError naming the file
// and tensor. Files stay memory-mapped for the checkpoint's lifetime; TensorInfo::data points into
// the mapping (possibly unaligned).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "converter/checkpoint/mapped_file.h"

namespace edgebert {
namespace convert {

// All dtypes of the safetensors spec with a whole-byte element size. Only F32, F16 and BF16 can be
// converted (read_f32); the others are parsed and validated so that a checkpoint carrying e.g. an
// I64 position_ids buffer still opens.
enum class DType { BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64 };

const char* dtype_name(DType t);                   // "F32", "BF16", ...
size_t dtype_size(DType t);                        // bytes per element
bool parse_dtype(std::string_view name, DType* out);  // false if unknown

// IEEE binary16 (incl. subnormals, inf, nan) and bfloat16 to float; exact.
float f16_to_f32(uint16_t bits);
float bf16_to_f32(uint16_t bits);

// Largest header accepted (the JSON part), in bytes.
constexpr uint64_t kMaxSafetensorsHeader = 100ull * 1000 * 1000;

struct TensorInfo {
  std::string name;
  std::string file;  // path of the .safetensors file holding the tensor
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // into the mapped file; not necessarily aligned
  size_t nbytes = 0;              // == numel() * dtype_size(dtype)

  size_t numel() const { return nbytes / dtype_size(dtype); }
};

// "[a, b, c]"
std::string shape_to_string(const std::vector<int64_t>& shape);

class SafetensorsCheckpoint {
 public:
  // DIR/model.safetensors.index.json if present (its weight_map: tensor -> shard file in DIR;
  // each shard mapped once; every listed tensor must be in its shard; tensors in a shard but not
  // in weight_map are ignored), else DIR/model.safetensors.
  static SafetensorsCheckpoint open_dir(const std::string& dir);
  static SafetensorsCheckpoint open_file(const std::string& path);

  bool has(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted
  size_t size() const { return tensors_.size(); }
  const TensorInfo* find(const std::string& name) const;  // nullptr if missing
  // Throws "SOURCE: missing tensor 'NAME'".
  const TensorInfo& get(const std::string& name) const;

  // Converts tensor `name` (F32, F16 or BF16) to float, row-major, into `out` (resized).
  // Throws on a missing tensor, "FILE: tensor 'NAME': unsupported dtype I64 ..." or a value that
  // is not finite ("... holds a non-finite value (NaN) at element K").
  void read_f32(const std::string& name, std::vector<float>& out) const;

  // The file naming this checkpoint in messages: the .safetensors file, or the index.json.
  const std::string& source() const { return source_; }

 private:
  void read_f32_values(const std::string& name, std::vector<float>& out) const;  // read_f32 unchecked

  std::string source_;
  std::vector<MappedFile> files_;  // mappings don't move when the vector reallocates
  std::map<std::string, TensorInfo> tensors_;
};

}  // namespace convert
}  // namespace edgebert
