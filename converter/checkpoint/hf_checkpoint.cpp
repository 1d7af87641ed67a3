// SPDX-License-Identifier: Apache-2.0
// HuggingFace BERT / DistilBERT directory reader (see hf_checkpoint.h): config.json validation,
// canonical tensor-name resolution with shape checks and use tracking, and vocab.txt /
// tokenizer_config.json.
#include "converter/checkpoint/hf_checkpoint.h"

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/config_fields.h"
#include "converter/checkpoint/family_config.h"
#include "converter/checkpoint/json.h"
#include "converter/checkpoint/mapped_file.h"

namespace edgebert {
namespace convert {

namespace {

std::string quoted(std::string_view s) { return "'" + display_name(s) + "'"; }

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  if (dir.back() == '/') return dir + file;
  return dir + "/" + file;
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// id2label: an object whose keys are the ids 0..n-1 (as decimal strings) and whose values are
// strings; returns the names in id order.
std::vector<std::string> read_id2label(const JsonValue& obj, const std::string& path) {
  if (obj.size() > static_cast<size_t>(INT_MAX)) throw CheckpointError(path + ": 'id2label' is too large");
  const size_t n = obj.size();
  std::vector<std::string> labels(n);
  std::vector<bool> seen(n, false);
  for (size_t i = 0; i < n; ++i) {
    const std::string& key = obj.key(i);
    const JsonValue& value = obj.value(i);
    char* end = nullptr;
    const long id = key.empty() ? -1 : std::strtol(key.c_str(), &end, 10);
    const bool digits = !key.empty() && end == key.c_str() + key.size() && key[0] != '-' && key[0] != '+' &&
                        key[0] != ' ';
    if (!digits || id < 0 || static_cast<size_t>(id) >= n) {
      throw CheckpointError(path + ": 'id2label' key " + quoted(key) + " is not a label id in 0.." +
                            std::to_string(static_cast<long>(n) - 1));
    }
    if (seen[static_cast<size_t>(id)]) {
      throw CheckpointError(path + ": 'id2label' has label id " + std::to_string(id) + " twice");
    }
    if (!value.is_string()) {
      throw CheckpointError(path + ": 'id2label' value of id " + std::to_string(id) + " must be a string, got a " +
                            value.type_name());
    }
    seen[static_cast<size_t>(id)] = true;
    labels[static_cast<size_t>(id)] = value.as_string();
  }
  return labels;
}

HiddenAct parse_activation(const std::string& act, const std::string& path, const char* key, bool distilbert) {
  if (act == "gelu") return HiddenAct::kGelu;
  if (act == "relu") return HiddenAct::kRelu;
  if (!distilbert && (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")) return HiddenAct::kGeluTanh;
  throw CheckpointError(path + ": unsupported " + key + " " + quoted(act) +
                        (distilbert ? " (gelu or relu)" : " (gelu, relu, gelu_new, gelu_pytorch_tanh or gelu_fast)"));
}

// The shape keys of config.json: BERT's, or DistilBERT's (dim, n_heads, n_layers, hidden_dim).
struct ShapeKeys {
  const char *hidden, *heads, *layers, *intermediate, *activation;
};
constexpr ShapeKeys kBertKeys = {"hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
                                 "hidden_act"};
constexpr ShapeKeys kDistilBertKeys = {"dim", "n_heads", "n_layers", "hidden_dim", "activation"};

void read_shape(const JsonValue& cfg, const std::string& path, const ShapeKeys& k, BertConfig& c) {
  c.hidden_size = config_int(cfg, path, k.hidden);
  c.num_attention_heads = config_int(cfg, path, k.heads);
  c.num_hidden_layers = config_int(cfg, path, k.layers);
  c.intermediate_size = config_int(cfg, path, k.intermediate);
  c.vocab_size = config_int(cfg, path, "vocab_size");
  c.max_position_embeddings = config_int(cfg, path, "max_position_embeddings");
  if (c.hidden_size % c.num_attention_heads != 0) {
    throw CheckpointError(path + ": " + k.hidden + " " + std::to_string(c.hidden_size) + " is not divisible by " +
                          k.heads + " " + std::to_string(c.num_attention_heads));
  }
  c.hidden_act = config_string(cfg, path, k.activation, "gelu");
  c.activation = parse_activation(c.hidden_act, path, k.activation, c.is_distilbert());
}

// sentence-transformers' CrossEncoder activation (BertConfig::score_sigmoid): the class named by
// "sentence_transformers": {"activation_fn": NAME} (v4+) or "sbert_ce_default_activation_function"
// (older versions), Identity or Sigmoid (any other is refused: edgebert computes only these two);
// neither key: Sigmoid for one label, as CrossEncoder does.
bool read_score_sigmoid(const JsonValue& cfg, const std::string& path, int num_labels) {
  const JsonValue* fn = nullptr;
  const char* key = "sentence_transformers.activation_fn";
  if (const JsonValue* st = cfg.find("sentence_transformers"); st && st->is_object()) fn = st->find("activation_fn");
  if (!fn) {
    fn = cfg.find("sbert_ce_default_activation_function");
    key = "sbert_ce_default_activation_function";
  }
  if (!fn || fn->is_null()) return num_labels == 1;
  if (!fn->is_string()) throw CheckpointError(path + ": '" + key + "' must be a string");
  const std::string& name = fn->as_string();
  const auto ends_with = [&](const char* tail) {
    const size_t n = std::strlen(tail);
    return name.size() >= n && name.compare(name.size() - n, n, tail) == 0;
  };
  if (ends_with(".Sigmoid")) return true;
  if (ends_with(".Identity")) return false;
  throw CheckpointError(path + ": '" + key + "' " + quoted(name) +
                        " is not supported (torch.nn.modules.linear.Identity or torch.nn.modules.activation.Sigmoid)");
}

}  // namespace

BertConfig read_bert_config(const std::string& path) {
  const JsonValue cfg = read_json_file(path);
  BertConfig c;

  const JsonValue* mt = cfg.find("model_type");
  if (!mt) throw CheckpointError(path + ": missing 'model_type' (" + std::string(kSupportedModelTypes) + ")");
  const std::string model_type = mt->is_string() ? mt->as_string() : std::string(mt->type_name());
  c.model_type = model_type;
  if (model_type == "distilbert") {
    c.family.family = Family::kDistilBert;
    read_shape(cfg, path, kDistilBertKeys, c);
    c.type_vocab_size = 0;  // no token types
    // LayerNorm eps is fixed (1e-12) in DistilBERT's modeling code: the default stays.
  } else if (model_type == "bert") {
    read_shape(cfg, path, kBertKeys, c);
    c.type_vocab_size = config_int(cfg, path, "type_vocab_size", 2);
  } else if (!mt->is_string() || !read_family_config(cfg, path, c)) {
    throw CheckpointError(path + ": unsupported model_type " + quoted(model_type) + " (" +
                          std::string(kSupportedModelTypes) + ")");
  }

  if (const JsonValue* eps = c.is_bert_or_distilbert() && !c.is_distilbert() ? cfg.find("layer_norm_eps") : nullptr) {
    if (!eps->is_number()) {
      throw CheckpointError(path + ": 'layer_norm_eps' must be a number, got a " +
                            eps->type_name());
    }
    const double d = eps->as_double();
    const float f = static_cast<float>(d);
    if (!(d > 0) || !std::isfinite(f) || !(f > 0)) {
      throw CheckpointError(path + ": 'layer_norm_eps' must be a positive float, got " +
                            std::to_string(d));
    }
    c.layer_norm_eps = f;
  }

  const std::string pet = config_string(cfg, path, "position_embedding_type", "absolute");
  if (pet != "absolute") {
    throw CheckpointError(path + ": unsupported position_embedding_type " + quoted(pet) +
                          " (only absolute)");
  }
  if (const JsonValue* dec = cfg.find("is_decoder")) {
    if (!dec->is_bool() || dec->as_bool()) {
      throw CheckpointError(path + ": unsupported is_decoder (only encoder models)");
    }
  }

  if (const JsonValue* id2label = cfg.find("id2label"); id2label && !id2label->is_null()) {
    if (!id2label->is_object()) {
      throw CheckpointError(path + ": 'id2label' must be an object, got a " +
                            id2label->type_name());
    }
    c.id2label = read_id2label(*id2label, path);
    c.num_labels = static_cast<int>(c.id2label.size());
    c.has_id2label = true;
  } else if (const JsonValue* nl = cfg.find("num_labels")) {
    if (!nl->is_integer() || nl->as_int64() < 0 || nl->as_int64() > INT_MAX) {
      throw CheckpointError(path + ": 'num_labels' must be a non-negative integer");
    }
    c.num_labels = static_cast<int>(nl->as_int64());
  }

  if (const JsonValue* arch = cfg.find("architectures"); arch && !arch->is_null()) {
    if (!arch->is_array()) {
      throw CheckpointError(path + ": 'architectures' must be an array of strings");
    }
    for (const JsonValue& a : arch->elements()) {
      if (!a.is_string()) {
        throw CheckpointError(path + ": 'architectures' must be an array of strings");
      }
      c.architectures.push_back(a.as_string());
    }
  }
  c.score_sigmoid = read_score_sigmoid(cfg, path, c.num_labels);
  return c;
}

const char* family_name(Family family) {
  switch (family) {
    case Family::kBert: return "bert";
    case Family::kDistilBert: return "distilbert";
    case Family::kRoberta: return "roberta";
    case Family::kElectra: return "electra";
    case Family::kAlbert: return "albert";
    case Family::kNomicBert: return "nomic_bert";
    case Family::kModernBert: return "modernbert";
    case Family::kQwen3: return "qwen3";
    case Family::kGemma3: return "gemma3_text";
  }
  return "?";
}

const char* family_prefix(Family family) {
  switch (family) {
    case Family::kDistilBert: return "distilbert.";
    case Family::kRoberta: return "roberta.";
    case Family::kElectra: return "electra.";
    case Family::kAlbert: return "albert.";
    case Family::kModernBert: return "model.";
    case Family::kQwen3: return "model.";  // Qwen3ForCausalLM; Qwen3Model is unprefixed
    case Family::kGemma3: return "model.";  // as Qwen3; Gemma3TextModel is unprefixed
    case Family::kBert:
    case Family::kNomicBert: break;
  }
  return "bert.";
}

HfBertCheckpoint HfBertCheckpoint::open(const std::string& dir) {
  HfBertCheckpoint ck;
  ck.dir_ = dir;
  ck.config_ = read_bert_config(join_path(dir, "config.json"));
  ck.weights_ = SafetensorsCheckpoint::open_dir(dir);
  ck.prefix_ = family_prefix(ck.config_.family.family);
  for (const std::string& n : ck.weights_.names()) {
    if (starts_with(n, ck.prefix_)) {
      ck.prefixed_ = true;
      break;
    }
  }

  const TensorInfo* cls = ck.resolve("classifier.weight");
  if (!cls) cls = ck.resolve("classifier.out_proj.weight");  // RoBERTa / ELECTRA classification heads
  if (cls) {
    if (cls->shape.size() != 2 || cls->shape[0] <= 0 || cls->shape[0] > INT_MAX) {
      throw CheckpointError(cls->file + ": tensor " + quoted(cls->name) + " has shape " +
                            shape_to_string(cls->shape) + ", expected [num_labels, " +
                            std::to_string(ck.config_.hidden_size) + "]");
    }
    ck.num_labels_ = static_cast<int>(cls->shape[0]);
    if (ck.config_.has_id2label && ck.num_labels_ != ck.config_.num_labels) {
      throw CheckpointError(cls->file + ": tensor " + quoted(cls->name) + " has " +
                            std::to_string(ck.num_labels_) + " rows but " +
                            join_path(dir, "config.json") + " id2label has " +
                            std::to_string(ck.config_.num_labels) + " labels");
    }
  }
  return ck;
}

namespace {
bool is_head_tensor(const std::string& canonical) {
  return starts_with(canonical, "classifier.") || starts_with(canonical, "qa_outputs.") ||
         starts_with(canonical, "pre_classifier.") || starts_with(canonical, "head.");
}
}  // namespace

std::string HfBertCheckpoint::checkpoint_name(const std::string& canonical) const {
  return prefixed_ && !is_head_tensor(canonical) ? prefix_ + canonical : canonical;
}

const TensorInfo* HfBertCheckpoint::resolve(const std::string& canonical) const {
  std::vector<std::string> bases;
  if (is_head_tensor(canonical)) {
    bases.push_back(canonical);
  } else if (prefixed_) {
    bases = {prefix_ + canonical, canonical};
  } else {
    bases = {canonical, prefix_ + canonical};
  }
  for (const std::string& b : bases) {
    if (const TensorInfo* t = weights_.find(b)) return t;
  }
  // Legacy (TF-era) LayerNorm parameter names.
  for (const std::string& b : bases) {
    std::string legacy;
    if (ends_with(b, "LayerNorm.weight")) {
      legacy = b.substr(0, b.size() - 6) + "gamma";
    } else if (ends_with(b, "LayerNorm.bias")) {
      legacy = b.substr(0, b.size() - 4) + "beta";
    } else {
      continue;
    }
    if (const TensorInfo* t = weights_.find(legacy)) return t;
  }
  return nullptr;
}

bool HfBertCheckpoint::has(const std::string& canonical) const {
  return resolve(canonical) != nullptr;
}

bool HfBertCheckpoint::has_embeddings() const {
  return has("embeddings.word_embeddings.weight");
}

bool HfBertCheckpoint::has_pooler() const { return has("pooler.dense.weight"); }

void HfBertCheckpoint::load(const std::string& canonical,
                            const std::vector<int64_t>& expected_shape,
                            std::vector<float>& out) const {
  const TensorInfo* t = resolve(canonical);
  if (!t) throw CheckpointError(weights_.source() + ": missing tensor " + quoted(checkpoint_name(canonical)));
  if (t->shape != expected_shape) {
    throw CheckpointError(t->file + ": tensor " + quoted(t->name) + " has shape " +
                          shape_to_string(t->shape) + ", expected " +
                          shape_to_string(expected_shape) + " from config.json");
  }
  weights_.read_f32(t->name, out);
  used_.insert(t->name);
}

std::vector<std::string> HfBertCheckpoint::unused_tensors() const {
  std::vector<std::string> out;
  for (const std::string& n : weights_.names())
    if (!used_.count(n)) out.push_back(n);
  return out;
}

bool HfBertCheckpoint::is_training_only(const std::string& name) {
  for (const char* p : {"cls.predictions.", "cls.seq_relationship.", "vocab_transform.", "vocab_layer_norm.",
                        "vocab_projector.", "distilbert.vocab_transform.", "distilbert.vocab_layer_norm.",
                        "distilbert.vocab_projector."}) {
    if (starts_with(name, p)) return true;
  }
  for (const char* s : {"embeddings.position_ids", "embeddings.token_type_ids"}) {
    if (name == s || ends_with(name, std::string(".") + s)) return true;
  }
  return false;
}

bool HfBertCheckpoint::is_training_only_here(const std::string& name) const {
  if (is_training_only(name)) return true;
  const char* const* heads = nullptr;
  static const char* const kRoberta[] = {"lm_head.", nullptr};
  static const char* const kAlbert[] = {"predictions.", "sop_classifier.", nullptr};
  static const char* const kElectra[] = {"discriminator_predictions.", "generator_predictions.", "generator_lm_head.",
                                         nullptr};
  static const char* const kNomic[] = {"cls.", nullptr};
  static const char* const kModernBert[] = {"decoder.", nullptr};
  static const char* const kQwen3[] = {"lm_head.", nullptr};  // Qwen3ForCausalLM's LM head
  switch (config_.family.family) {
    case Family::kRoberta: heads = kRoberta; break;
    case Family::kAlbert: heads = kAlbert; break;
    case Family::kElectra: heads = kElectra; break;
    case Family::kNomicBert: heads = kNomic; break;
    case Family::kModernBert:
      heads = kModernBert;
      // ModernBertForMaskedLM's prediction head (head.dense / head.norm) only feeds the decoder
      if (!config_.architectures.empty() && config_.architectures.front() == "ModernBertForMaskedLM" &&
          starts_with(name, "head."))
        return true;
      break;
    case Family::kQwen3:
    case Family::kGemma3: heads = kQwen3; break;
    case Family::kBert:
    case Family::kDistilBert: break;
  }
  for (; heads && *heads; ++heads)
    if (starts_with(name, *heads)) return true;
  return false;
}

Vocab read_vocab(const std::string& dir) {
  const std::string path = join_path(dir, "vocab.txt");
  Vocab v;
  {
    const MappedFile f = MappedFile::open(path);
    std::string_view text = f.view();
    if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view line = text.substr(pos, nl - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      v.tokens.emplace_back(line);
      pos = nl + 1;
    }
  }
  if (v.tokens.empty()) throw CheckpointError(path + ": empty vocabulary");

  const std::string tc_path = join_path(dir, "tokenizer_config.json");
  if (is_regular_file(tc_path)) {
    const JsonValue tc = read_json_file(tc_path);
    auto flag = [&](const char* key) -> const JsonValue* {
      const JsonValue* f = tc.find(key);
      if (f && !f->is_bool()) throw CheckpointError(tc_path + ": '" + key + "' must be true or false");
      return f;
    };
    if (const JsonValue* cjk = flag("tokenize_chinese_chars")) v.tokenize_chinese_chars = cjk->as_bool();
    const JsonValue* strip = tc.find("strip_accents");
    if (strip && !strip->is_null() && !strip->is_bool())
      throw CheckpointError(tc_path + ": 'strip_accents' must be true, false or null");
    if (const JsonValue* lc = flag("do_lower_case")) {
      v.do_lower_case = lc->as_bool();
      if (strip && strip->is_bool() && strip->as_bool() != v.do_lower_case) {
        throw CheckpointError(tc_path + ": strip_accents " + (strip->as_bool() ? "true" : "false") +
                              " with do_lower_case " + (v.do_lower_case ? "true" : "false") +
                              " is not supported (accents are stripped exactly when lower-casing)");
      }
      return v;
    }
    if (strip && strip->is_bool()) {
      throw CheckpointError(tc_path + ": 'strip_accents' is set but 'do_lower_case' is not");
    }
  }

  // Heuristic (no tokenizer_config.json setting): cased vocabularies contain thousands of tokens
  // with uppercase letters, uncased ones none apart from bracketed specials like [CLS].
  size_t counted = 0, upper = 0;
  for (const std::string& t : v.tokens) {
    const bool special = t.size() >= 2 && ((t.front() == '[' && t.back() == ']') ||
                                           (t.front() == '<' && t.back() == '>'));
    if (special) continue;
    ++counted;
    for (char ch : t) {
      if (ch >= 'A' && ch <= 'Z') {
        ++upper;
        break;
      }
    }
  }
  v.do_lower_case = !(upper > 0 && upper * 100 > counted);
  return v;
}

}  // namespace convert
}  // namespace edgebert
