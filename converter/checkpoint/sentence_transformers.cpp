// SPDX-License-Identifier: Apache-2.0
// sentence-transformers folder reader (see sentence_transformers.h): modules.json pipeline and
// the Pooling module's config.
#include "converter/checkpoint/sentence_transformers.h"

#include <utility>
#include <vector>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/json.h"
#include "converter/checkpoint/mapped_file.h"

namespace edgebert {
namespace convert {
namespace {

constexpr const char* kTransformer = "sentence_transformers.models.Transformer";
constexpr const char* kPooling = "sentence_transformers.models.Pooling";
constexpr const char* kNormalize = "sentence_transformers.models.Normalize";
constexpr const char* kDense = "sentence_transformers.models.Dense";
// ColBERT's Dense module: PyLate's names, or sentence-transformers' in older PyLate folders
bool is_token_dense(const std::string& type) {
  return type == "pylate.models.Dense.Dense" || type == "pylate.models.Dense" || type == kDense;
}

std::string join(const std::string& dir, const std::string& rel) {
  if (rel.empty() || rel == ".") return dir;
  if (dir.empty()) return rel;
  return dir.back() == '/' ? dir + rel : dir + "/" + rel;
}

JsonValue read_json(const std::string& path) {
  const MappedFile f = MappedFile::open(path);
  return parse_json(f.view(), path);
}

const std::string& string_member(const JsonValue& obj, const char* key, const std::string& where) {
  const JsonValue* v = obj.find(key);
  if (!v || !v->is_string()) throw CheckpointError(where + ": missing string '" + key + "'");
  return v->as_string();
}

PoolingMode read_pooling_config(const std::string& path, int* dimension, bool* include_prompt) {
  const JsonValue cfg = read_json(path);
  if (!cfg.is_object()) throw CheckpointError(path + ": top-level JSON value must be an object");
  const std::pair<const char*, PoolingMode> supported[] = {
      {"pooling_mode_cls_token", PoolingMode::kCls},
      {"pooling_mode_mean_tokens", PoolingMode::kMean},
      {"pooling_mode_max_tokens", PoolingMode::kMax},
      {"pooling_mode_mean_sqrt_len_tokens", PoolingMode::kMeanSqrtLen},
      {"pooling_mode_lasttoken", PoolingMode::kLastToken}};
  auto flag = [&](const char* key) {
    const JsonValue* v = cfg.find(key);
    if (!v || v->is_null()) return false;
    if (!v->is_bool()) throw CheckpointError(path + ": '" + key + "' must be true or false");
    return v->as_bool();
  };
  for (const char* key : {"pooling_mode_weightedmean_tokens"}) {
    if (flag(key)) throw CheckpointError(path + ": unsupported pooling mode '" + key + "'");
  }
  int count = 0;
  PoolingMode mode = PoolingMode::kMean;
  for (const auto& [key, m] : supported) {
    if (flag(key)) {
      ++count;
      mode = m;
    }
  }
  if (count == 0) {
    throw CheckpointError(path + ": no pooling mode is true (one of pooling_mode_cls_token, "
                          "pooling_mode_mean_tokens, pooling_mode_max_tokens, pooling_mode_mean_sqrt_len_tokens, pooling_mode_lasttoken)");
  }
  if (count > 1) throw CheckpointError(path + ": combined pooling modes (" + std::to_string(count) + " are true) are not supported");
  *include_prompt = true;
  if (const JsonValue* p = cfg.find("include_prompt"); p && !p->is_null()) {
    if (!p->is_bool()) throw CheckpointError(path + ": 'include_prompt' must be true or false");
    *include_prompt = p->as_bool();
  }
  *dimension = 0;
  if (const JsonValue* d = cfg.find("word_embedding_dimension")) {
    if (!d->is_integer() || d->as_int64() <= 0 || d->as_int64() > (1 << 24)) {
      throw CheckpointError(path + ": 'word_embedding_dimension' must be a positive integer");
    }
    *dimension = static_cast<int>(d->as_int64());
  }
  return mode;
}

// A Dense module's config.json: in/out features (positive), bias, Identity or Tanh activation.
DenseModule read_dense_config(const std::string& dir) {
  const std::string path = join(dir, "config.json");
  const JsonValue cfg = read_json(path);
  if (!cfg.is_object()) throw CheckpointError(path + ": top-level JSON value must be an object");
  DenseModule d;
  d.dir = dir;
  for (auto [key, out] : {std::pair<const char*, int*>{"in_features", &d.in_features}, {"out_features", &d.out_features}}) {
    const JsonValue* v = cfg.find(key);
    if (!v || !v->is_integer() || v->as_int64() <= 0 || v->as_int64() > (1 << 16))
      throw CheckpointError(path + ": '" + key + "' must be a positive integer");
    *out = static_cast<int>(v->as_int64());
  }
  if (const JsonValue* b = cfg.find("bias"); b && !b->is_null()) {
    if (!b->is_bool()) throw CheckpointError(path + ": 'bias' must be true or false");
    d.bias = b->as_bool();
  }
  std::string act = "torch.nn.modules.linear.Identity";
  if (const JsonValue* a = cfg.find("activation_function"); a && !a->is_null()) {
    if (!a->is_string()) throw CheckpointError(path + ": 'activation_function' must be a string");
    act = a->as_string();
  }
  if (act == "torch.nn.modules.activation.Tanh" || act == "torch.nn.Tanh") {
    d.tanh = true;
  } else if (act != "torch.nn.modules.linear.Identity" && act != "torch.nn.Identity") {
    throw CheckpointError(path + ": unsupported Dense activation_function '" + act + "' (Identity or Tanh)");
  }
  if (const JsonValue* r = cfg.find("use_residual"); r && r->is_bool() && r->as_bool())
    throw CheckpointError(path + ": use_residual true (a residual Dense) is not supported");
  return d;
}

// config_sentence_transformers.json: "prompts" {name: text} (strings, unique names, at most 64 of
// at most 4096 bytes) and "default_prompt_name" (null or one of them).
void read_prompts(const std::string& path, SentenceTransformersLayout* out) {
  const JsonValue cfg = read_json(path);
  if (!cfg.is_object()) throw CheckpointError(path + ": top-level JSON value must be an object");
  if (const JsonValue* p = cfg.find("prompts"); p && !p->is_null()) {
    if (!p->is_object()) throw CheckpointError(path + ": 'prompts' must be an object of strings");
    for (size_t i = 0; i < p->size(); ++i) {
      const std::string& name = p->key(i);
      const JsonValue& text = p->value(i);
      if (!text.is_string()) throw CheckpointError(path + ": prompt '" + name + "' must be a string");
      if (name.empty() || name.size() > 256 || text.as_string().size() > 4096)
        throw CheckpointError(path + ": prompt '" + name + "': names of 1..256 bytes, texts of at most 4096");
      out->prompts.emplace_back(name, text.as_string());
    }
    if (out->prompts.size() > 64) throw CheckpointError(path + ": more than 64 prompts");
  }
  if (const JsonValue* d = cfg.find("default_prompt_name"); d && !d->is_null()) {
    if (!d->is_string()) throw CheckpointError(path + ": 'default_prompt_name' must be a string or null");
    bool known = false;
    for (const auto& p : out->prompts) known = known || p.first == d->as_string();
    if (!known) throw CheckpointError(path + ": default_prompt_name '" + d->as_string() + "' is not one of 'prompts'");
    out->default_prompt_name = d->as_string();
  }
}

// config_sentence_transformers.json of a PyLate folder: query_prefix, document_prefix (strings),
// query_length, document_length (1..2^20), do_query_expansion, attend_to_expansion_tokens
// (booleans), skiplist_words (strings); a missing key keeps PyLate's default, a null one too.
void read_pylate_inputs(const std::string& path, SentenceTransformersLayout::PyLateInputs* out) {
  const JsonValue cfg = read_json(path);
  if (!cfg.is_object()) throw CheckpointError(path + ": top-level JSON value must be an object");
  auto present = [&](const char* key) {
    const JsonValue* v = cfg.find(key);
    if (v && !v->is_null()) out->present = true;
    return v && !v->is_null() ? v : nullptr;
  };
  for (auto [key, dst] : {std::pair<const char*, std::string*>{"query_prefix", &out->query_prefix},
                          {"document_prefix", &out->document_prefix}})
    if (const JsonValue* v = present(key)) {
      if (!v->is_string() || v->as_string().size() > 256)
        throw CheckpointError(path + ": '" + key + "' must be a string of at most 256 bytes");
      *dst = v->as_string();
    }
  for (auto [key, dst] : {std::pair<const char*, int*>{"query_length", &out->query_length},
                          {"document_length", &out->document_length}})
    if (const JsonValue* v = present(key)) {
      if (!v->is_integer() || v->as_int64() < 2 || v->as_int64() > (1 << 20))
        throw CheckpointError(path + ": '" + key + "' must be an integer of 2..1048576");
      *dst = static_cast<int>(v->as_int64());
    }
  for (auto [key, dst] : {std::pair<const char*, bool*>{"do_query_expansion", &out->do_query_expansion},
                          {"attend_to_expansion_tokens", &out->attend_to_expansion_tokens}})
    if (const JsonValue* v = present(key)) {
      if (!v->is_bool()) throw CheckpointError(path + ": '" + key + "' must be true or false");
      *dst = v->as_bool();
    }
  if (const JsonValue* v = present("skiplist_words")) {
    if (!v->is_array() || v->size() > 4096) throw CheckpointError(path + ": 'skiplist_words' must be an array of strings");
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) throw CheckpointError(path + ": 'skiplist_words' must be an array of strings");
      out->skiplist_words.push_back((*v)[i].as_string());
    }
    out->skiplist_given = true;
  }
  if (!out->skiplist_given)
    for (const char* c = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"; *c; ++c) out->skiplist_words.emplace_back(1, *c);
  if (!out->do_query_expansion) out->attend_to_expansion_tokens = false;  // as PyLate
}

}  // namespace

const char* pooling_mode_name(PoolingMode mode) {
  switch (mode) {
    case PoolingMode::kCls: return "cls";
    case PoolingMode::kMean: return "mean";
    case PoolingMode::kMax: return "max";
    case PoolingMode::kMeanSqrtLen: return "mean_sqrt_len";
    case PoolingMode::kLastToken: return "last_token";
  }
  return "?";
}

bool read_sentence_transformers(const std::string& dir, SentenceTransformersLayout* layout) {
  const std::string path = join(dir, "modules.json");
  if (!is_regular_file(path)) return false;
  const JsonValue modules = read_json(path);
  if (!modules.is_array()) throw CheckpointError(path + ": top-level JSON value must be an array of modules");
  SentenceTransformersLayout out;
  int stage = 0;  // 0: expect Transformer, 1: expect Pooling, 2: Dense or Normalize allowed, 3: done
  for (size_t i = 0; i < modules.size(); ++i) {
    const JsonValue& m = modules[i];
    const std::string where = path + ": module " + std::to_string(i);
    if (!m.is_object()) throw CheckpointError(where + " must be an object");
    const std::string& type = string_member(m, "type", where);
    const std::string& rel = string_member(m, "path", where);
    if (rel.find("..") != std::string::npos || (!rel.empty() && rel[0] == '/')) {
      throw CheckpointError(where + ": path '" + rel + "' must stay inside the model folder");
    }
    if (type == kTransformer && stage == 0) {
      out.transformer_dir = join(dir, rel);
      stage = 1;
    } else if (is_token_dense(type) && stage == 1) {  // ColBERT: every token projected, nothing after
      out.token_dense = read_dense_config(join(dir, rel));
      if (out.token_dense.tanh)
        throw CheckpointError(join(join(dir, rel), "config.json") +
                              ": activation_function Tanh is not supported on ColBERT token vectors (Identity only)");
      stage = 4;
    } else if (stage == 4) {
      throw CheckpointError(where + ": module '" + type + "' after a ColBERT Dense module is not supported");
    } else if (type == kPooling && stage == 1) {
      out.pooling_config = join(join(dir, rel), "config.json");
      out.pooling = read_pooling_config(out.pooling_config, &out.embedding_dimension, &out.include_prompt);
      stage = 2;
    } else if (type == kDense && stage == 2) {
      out.dense.push_back(read_dense_config(join(dir, rel)));
    } else if (type == kNormalize && stage == 2) {
      out.normalize = true;
      stage = 3;
    } else if (type == kTransformer || type == kPooling || type == kNormalize || type == kDense) {
      throw CheckpointError(where + ": module '" + type +
                            "' out of order (expected Transformer, Pooling, Dense modules, then optionally Normalize)");
    } else {
      throw CheckpointError(where + ": unsupported sentence-transformers module '" + type + "'");
    }
  }
  if (stage < 2) {
    throw CheckpointError(path + ": needs a Transformer and a Pooling module (" + std::to_string(modules.size()) +
                          " modules listed; ColBERT folders: a Transformer, then a Dense module)");
  }
  const std::string sb_path = join(dir, "sentence_bert_config.json");
  if (is_regular_file(sb_path)) {
    const JsonValue sb = read_json(sb_path);
    if (!sb.is_object()) throw CheckpointError(sb_path + ": top-level JSON value must be an object");
    if (const JsonValue* n = sb.find("max_seq_length"); n && !n->is_null()) {
      if (!n->is_integer() || n->as_int64() <= 0 || n->as_int64() > (1 << 24))
        throw CheckpointError(sb_path + ": 'max_seq_length' must be a positive integer");
      out.max_seq_length = static_cast<int>(n->as_int64());
    }
    if (const JsonValue* lc = sb.find("do_lower_case")) {
      if (!lc->is_bool()) throw CheckpointError(sb_path + ": 'do_lower_case' must be true or false");
      out.lowercase_input = lc->as_bool();
    }
  }
  const std::string cst_path = join(dir, "config_sentence_transformers.json");
  if (is_regular_file(cst_path)) {
    read_prompts(cst_path, &out);
    if (!out.token_dense.dir.empty()) read_pylate_inputs(cst_path, &out.pylate);
  }
  // sentence-transformers masks a prompt's tokens out of the pooling then; edgebert pools every
  // token of the prompted text, which for CLS and last-token pooling is the same
  const bool pools_tokens = out.pooling != PoolingMode::kCls && out.pooling != PoolingMode::kLastToken;
  if (!out.include_prompt && !out.prompts.empty() && pools_tokens)
    throw CheckpointError(out.pooling_config + ": unsupported 'include_prompt' false with prompts in " + cst_path +
                          " (sentence-transformers leaves the prompt's tokens out of the pooling; edgebert pools them)");
  *layout = std::move(out);
  return true;
}

}  // namespace convert
}  // namespace edgebert
