// SPDX-License-Identifier: Apache-2.0
// bge_m3_heads.cpp: bge-m3's sparse_linear / colbert_linear heads and unused token ids (see
// bge_m3_heads.h).
#include "converter/bge_m3_heads.h"

#include <algorithm>
#include <stdexcept>

#include "converter/checkpoint/config_fields.h"
#include "converter/checkpoint/mapped_file.h"
#include "converter/checkpoint/safetensors.h"
#include "converter/tokenizer/tokenizer_json.h"
#include "text/tokenizer.h"

namespace edgebert::convert {
namespace {

constexpr const char* kHeads[] = {"sparse_linear", "colbert_linear"};

// torch.nn.Linear's state dict "weight" [out, H] + "bias" [out] from DIR/HEAD.safetensors; `out`
// 0: any (colbert_dim), read from the file.
FloatLinear load_linear_head(const std::string& dir, const char* head, int hidden, int out, const char* name) {
  const std::string path = dir + "/" + head + ".safetensors";
  const SafetensorsCheckpoint ck = SafetensorsCheckpoint::open_file(path);
  const TensorInfo& w = ck.get("weight");
  if (w.shape.size() != 2 || w.shape[1] != hidden || w.shape[0] <= 0 || (out > 0 && w.shape[0] != out))
    throw std::runtime_error(path + ": tensor 'weight' has shape " + shape_to_string(w.shape) + ", expected [" +
                             (out > 0 ? std::to_string(out) : std::string("dim")) + ", " + std::to_string(hidden) +
                             "] (hidden size " + std::to_string(hidden) + ")");
  FloatLinear l;
  l.name = name;
  l.in = hidden;
  l.out = static_cast<int>(w.shape[0]);
  const std::vector<int64_t> b_shape = {l.out};
  const TensorInfo& b = ck.get("bias");
  if (b.shape != b_shape)
    throw std::runtime_error(path + ": tensor 'bias' has shape " + shape_to_string(b.shape) + ", expected " +
                             shape_to_string(b_shape));
  ck.read_f32("weight", l.weight);
  ck.read_f32("bias", l.bias);
  for (const std::string& n : ck.names())
    if (n != "weight" && n != "bias")
      throw std::runtime_error(path + ": tensor '" + n + "' is not used by bge-m3's " + head + " (a torch.nn.Linear)");
  return l;
}

// A special token's text in a tokenizer_config.json / special_tokens_map.json object: a string or
// an AddedToken object {"content": ...}; "" when absent or null.
std::string special_token(const JsonValue& cfg, const std::string& path, const char* key) {
  const JsonValue* v = cfg.find(key);
  if (!v || v->is_null()) return "";
  if (v->is_string()) return v->as_string();
  if (v->is_object()) {
    const JsonValue* c = v->find("content");
    if (c && c->is_string()) return c->as_string();
  }
  throw std::runtime_error(path + ": '" + key + "' must be a token string or an object with \"content\"");
}

}  // namespace

bool has_bge_m3_heads(const std::string& dir) {
  int found = 0;
  for (const char* head : kHeads) {
    const std::string pt = dir + "/" + head + ".pt", st = dir + "/" + head + ".safetensors";
    if (is_regular_file(pt) && !is_regular_file(st))
      throw std::runtime_error(dir + ": has " + head + ".pt (a pickle, never executed here) but no " + head +
                               ".safetensors; convert it once with torch: python3 -c \"import torch,safetensors.torch as s; "
                               "s.save_file(torch.load('" + pt + "', map_location='cpu', weights_only=True), '" + st + "')\"");
    found += is_regular_file(st) ? 1 : 0;
  }
  if (found == 1)
    throw std::runtime_error(dir + ": has only one of sparse_linear.safetensors and colbert_linear.safetensors; "
                             "a bge-m3 folder needs both (move both out of the folder to convert the dense model only)");
  return found == 2;
}

void load_bge_m3_heads(const std::string& dir, FloatBert& m) {
  const int hidden = m.config.hidden_size;
  m.sparse_linear = load_linear_head(dir, "sparse_linear", hidden, 1, "sparse_linear");
  m.classifier = load_linear_head(dir, "colbert_linear", hidden, 0, "colbert_linear");
  m.num_labels = m.classifier.out;
  m.pooling = PoolingMode::kCls;  // BGEM3FlagModel: dense = normalize(last_hidden_state[:, 0])
  m.normalize = true;
}

std::vector<int32_t> bge_m3_unused_ids(const std::string& dir, const TokenizerJson& t) {
  std::vector<std::pair<std::string, JsonValue>> configs;
  for (const char* f : {"tokenizer_config.json", "special_tokens_map.json"}) {
    const std::string path = dir + "/" + f;
    if (is_regular_file(path)) configs.emplace_back(path, read_json_file(path));
  }
  if (configs.empty())
    throw std::runtime_error(dir + ": bge-m3 needs tokenizer_config.json or special_tokens_map.json (the cls, eos, pad "
                             "and unk tokens its sparse weights leave out)");
  text::Tokenizer tok;
  const Status st = tok.init_from_buffer(tokenizer_spec_buffer(t));
  if (!st.is_ok()) throw std::runtime_error(t.source + ": " + st.message());
  std::vector<int32_t> ids;
  for (const char* key : {"cls_token", "eos_token", "pad_token", "unk_token"}) {
    std::string text, where;
    for (const auto& [path, cfg] : configs) {
      text = special_token(cfg, path, key);
      where = path;
      if (!text.empty()) break;
    }
    if (text.empty())
      throw std::runtime_error(configs.front().first + ": names no " + key + " (bge-m3 leaves the cls, eos, pad and unk "
                               "tokens out of its sparse weights)");
    int32_t id = -1;
    for (size_t i = 0; i < tok.vocab_size() && id < 0; ++i)
      if (tok.token_text(static_cast<int32_t>(i)) == text) id = static_cast<int32_t>(i);
    if (id < 0) throw std::runtime_error(where + ": " + key + " '" + text + "' is not in " + t.source);
    ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace edgebert::convert
