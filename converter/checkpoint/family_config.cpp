// SPDX-License-Identifier: Apache-2.0
// config.json readers of RoBERTa, ELECTRA, ALBERT, nomic-bert, ModernBERT, Qwen3 and Gemma 3 (family_config.h).
#include "converter/checkpoint/family_config.h"

#include <cmath>

#include "converter/checkpoint/checkpoint_error.h"
#include "converter/checkpoint/config_fields.h"

namespace edgebert {
namespace convert {
namespace {

HiddenAct activation_of(const std::string& act, const std::string& path, const char* key) {
  if (act == "gelu") return HiddenAct::kGelu;
  if (act == "relu") return HiddenAct::kRelu;
  if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast") return HiddenAct::kGeluTanh;
  if (act == "silu" || act == "swish") return HiddenAct::kSilu;
  throw CheckpointError(path + ": unsupported " + key + " '" + act +
                        "' (gelu, relu, gelu_new, gelu_pytorch_tanh, gelu_fast or silu)");
}

void require_divisible(const BertConfig& c, const std::string& path);

// layer_types (newer transformers): one "full_attention" / "sliding_attention" per layer into
// `sliding`; false when absent (the family's own pattern applies).
bool read_layer_types(const JsonValue& cfg, const std::string& path, int L, std::vector<bool>& sliding) {
  sliding.assign(static_cast<size_t>(L), false);
  const JsonValue* types = cfg.find("layer_types");
  if (!types || types->is_null()) return false;
  if (!types->is_array() || static_cast<int>(types->size()) != L)
    throw CheckpointError(path + ": 'layer_types' must be an array of " + std::to_string(L) + " strings");
  for (int l = 0; l < L; ++l) {
    const JsonValue& t = (*types)[static_cast<size_t>(l)];
    const std::string s = t.is_string() ? t.as_string() : "";
    if (s != "full_attention" && s != "sliding_attention")
      throw CheckpointError(path + ": 'layer_types' entry " + std::to_string(l) +
                            " must be \"full_attention\" or \"sliding_attention\"");
    sliding[static_cast<size_t>(l)] = s == "sliding_attention";
  }
  return true;
}

// rope_parameters (newer transformers): {"full_attention": {...}, "sliding_attention": {...}},
// default rope only, their rope_theta into the global / local bases.
void read_rope_parameters(const JsonValue& cfg, const std::string& path, FamilyConfig& f) {
  const JsonValue* rp = cfg.find("rope_parameters");
  if (!rp || rp->is_null()) return;
  if (!rp->is_object()) throw CheckpointError(path + ": 'rope_parameters' must be an object");
  for (const char* part : {"full_attention", "sliding_attention"}) {
    const JsonValue* p = rp->find(part);
    if (!p || p->is_null()) continue;
    if (!p->is_object()) throw CheckpointError(path + ": 'rope_parameters." + part + "' must be an object");
    const std::string where = path + ": rope_parameters." + part;
    if (config_string(*p, where, "rope_type", "default") != "default")
      throw CheckpointError(where + ": unsupported rope_type (only default)");
    double& theta = std::string(part) == "full_attention" ? f.rotary_theta : f.rotary_local_theta;
    theta = config_positive(*p, where, "rope_theta", theta);
  }
}

// BERT's shape keys (RoBERTa, ELECTRA, ALBERT, ModernBERT, Qwen3 use them too); the head size is
// hidden / heads unless the family has its own head_dim (`divisible` false).
void read_bert_shape(const JsonValue& cfg, const std::string& path, int default_max_position, BertConfig& c,
                     bool divisible = true) {
  c.hidden_size = config_int(cfg, path, "hidden_size");
  c.num_attention_heads = config_int(cfg, path, "num_attention_heads");
  c.num_hidden_layers = config_int(cfg, path, "num_hidden_layers");
  c.intermediate_size = config_int(cfg, path, "intermediate_size");
  c.vocab_size = config_int(cfg, path, "vocab_size");
  c.max_position_embeddings = config_int(cfg, path, "max_position_embeddings", default_max_position);
  if (divisible) require_divisible(c, path);
}

void require_divisible(const BertConfig& c, const std::string& path) {
  if (c.hidden_size % c.num_attention_heads != 0)
    throw CheckpointError(path + ": hidden size " + std::to_string(c.hidden_size) + " is not divisible by " +
                          std::to_string(c.num_attention_heads) + " attention heads");
}

float eps_of(const JsonValue& cfg, const std::string& path, const char* key, double def) {
  return static_cast<float>(config_positive(cfg, path, key, def));
}

int non_negative(const JsonValue& cfg, const std::string& path, const char* key, int def) {
  const JsonValue* v = cfg.find(key);
  if (!v || v->is_null()) return def;
  if (!v->is_integer() || v->as_int64() < 0 || v->as_int64() > 1 << 30)
    throw CheckpointError(path + ": '" + key + "' must be a non-negative integer");
  return static_cast<int>(v->as_int64());
}

// RoBERTa / XLM-RoBERTa / CamemBERT, ELECTRA, ALBERT: BERT's keys plus the family's own.
void read_bert_like(const JsonValue& cfg, const std::string& path, Family family, BertConfig& c) {
  FamilyConfig& f = c.family;
  f.family = family;
  read_bert_shape(cfg, path, -1, c);
  c.type_vocab_size = config_int(cfg, path, "type_vocab_size", 2);
  c.hidden_act = config_string(cfg, path, "hidden_act", family == Family::kAlbert ? "gelu_new" : "gelu");
  c.activation = activation_of(c.hidden_act, path, "hidden_act");
  if (c.activation == HiddenAct::kSilu) throw CheckpointError(path + ": unsupported hidden_act 'silu'");
  c.layer_norm_eps = eps_of(cfg, path, "layer_norm_eps", 1e-12);
  f.pad_token_id = non_negative(cfg, path, "pad_token_id", family == Family::kRoberta ? 1 : 0);
  if (family == Family::kRoberta) {
    f.padding_offset_positions = true;
    if (f.pad_token_id + 2 > c.max_position_embeddings)
      throw CheckpointError(path + ": max_position_embeddings " + std::to_string(c.max_position_embeddings) +
                            " leaves no positions after padding_idx " + std::to_string(f.pad_token_id));
  }
  if (family == Family::kElectra || family == Family::kAlbert) {
    f.embedding_size = config_int(cfg, path, "embedding_size", 128);
  }
  if (family == Family::kAlbert) {
    f.num_hidden_groups = config_int(cfg, path, "num_hidden_groups", 1);
    f.inner_group_num = config_int(cfg, path, "inner_group_num", 1);
    if (f.num_hidden_groups > c.num_hidden_layers)
      throw CheckpointError(path + ": num_hidden_groups " + std::to_string(f.num_hidden_groups) +
                            " exceeds num_hidden_layers " + std::to_string(c.num_hidden_layers));
    for (const char* key : {"net_structure_type", "gap_size", "num_memory_blocks"})
      if (non_negative(cfg, path, key, 0) != 0)
        throw CheckpointError(path + ": unsupported ALBERT option '" + key + "' (only 0)");
  }
}

void read_nomic(const JsonValue& cfg, const std::string& path, BertConfig& c) {
  FamilyConfig& f = c.family;
  f.family = Family::kNomicBert;
  c.hidden_size = config_int(cfg, path, "n_embd");
  c.num_attention_heads = config_int(cfg, path, "n_head");
  c.num_hidden_layers = config_int(cfg, path, "n_layer");
  require_divisible(c, path);
  const JsonValue* inner = cfg.find("n_inner");
  const bool has_inner = inner && !inner->is_null();
  int width = has_inner ? config_int(cfg, path, "n_inner") : 4 * c.hidden_size;  // NomicBertMLP's default
  c.hidden_act = config_string(cfg, path, "activation_function", "gelu");
  const std::string& act = c.hidden_act;
  if (act == "swiglu" || act == "geglu" || act == "glu") {
    f.gated_ffn = true;
    if (!has_inner) width = 8 * c.hidden_size / 3;  // NomciBertGatedMLP's default, int(8 * n_embd / 3)
    width = (width + 255) / 256 * 256;  // which it rounds up to a multiple of 256, as any width
    c.activation = act == "swiglu" ? HiddenAct::kSilu : act == "geglu" ? HiddenAct::kGelu : HiddenAct::kSigmoid;
  } else if (act == "gelu" || act == "gelu_new" || act == "gelu_fast" || act == "gelu_pytorch_tanh") {
    c.activation = HiddenAct::kGelu;  // NomicBertMLP applies F.gelu (erf) for every gelu spelling
  } else {
    throw CheckpointError(path + ": unsupported activation_function '" + act +
                          "' (swiglu, geglu, glu, gelu, gelu_new, gelu_fast or gelu_pytorch_tanh)");
  }
  c.intermediate_size = width;
  const int multiple = config_int(cfg, path, "pad_vocab_size_multiple", 1);
  c.vocab_size = (config_int(cfg, path, "vocab_size") + multiple - 1) / multiple * multiple;
  c.type_vocab_size = non_negative(cfg, path, "type_vocab_size", 2);
  c.layer_norm_eps = eps_of(cfg, path, "layer_norm_epsilon", 1e-5);
  f.pad_token_id = non_negative(cfg, path, "pad_token_id", 0);
  f.attention_bias = config_bool(cfg, path, "qkv_proj_bias", true);
  f.mlp_in_bias = config_bool(cfg, path, "mlp_fc1_bias", true);
  f.mlp_out_bias = config_bool(cfg, path, "mlp_fc2_bias", true);
  f.pre_norm = config_bool(cfg, path, "prenorm", false);  // the encoder's end: see reference_bert.cpp
  for (const char* key : {"causal", "use_rms_norm", "parallel_block", "rotary_head_dim"})
    if (config_bool(cfg, path, key, false))
      throw CheckpointError(path + ": unsupported nomic-bert option '" + key + "' (only false)");
  if (const JsonValue* sb = cfg.find("rotary_emb_scale_base"); sb && !sb->is_null())
    throw CheckpointError(path + ": unsupported 'rotary_emb_scale_base' (xPos; only null)");
  const JsonValue* frac_v = cfg.find("rotary_emb_fraction");
  const double frac = (frac_v && frac_v->is_number()) ? frac_v->as_double() : 0.0;
  const int head_dim = c.hidden_size / c.num_attention_heads;
  if (frac > 0) {
    f.has_position_embeddings = false;
    // contrastors keeps head_dim * fraction as a float: 16 x 0.4 = 6.4 rotates 8 dims at
    // frequencies over 6.4, which no whole number of rotary dims expresses
    const double dims = head_dim * frac;
    f.rotary_dims = static_cast<int>(std::lround(dims));
    if (std::fabs(dims - f.rotary_dims) > 1e-6)
      throw CheckpointError(path + ": rotary_emb_fraction " + std::to_string(frac) + " x head dim " +
                            std::to_string(head_dim) + " is not a whole number of rotary dims");
    if (frac > 1 || f.rotary_dims % 2 != 0 || f.rotary_dims < 2)
      throw CheckpointError(path + ": rotary_emb_fraction " + std::to_string(frac) + " gives " +
                            std::to_string(f.rotary_dims) + " rotary dims of head dim " + std::to_string(head_dim) +
                            " (an even number >= 2 needed)");
    f.rotary_theta = config_positive(cfg, path, "rotary_emb_base", 10000.0);
    f.rotary_interleaved = config_bool(cfg, path, "rotary_emb_interleaved", false);
    f.rotary_ntk_factor = config_positive(cfg, path, "rotary_scaling_factor", 0.0);
    f.rotary_ntk_max_trained = config_int(cfg, path, "max_trained_positions", 2048);
    c.max_position_embeddings = config_int(cfg, path, "n_positions", 8192);
  } else {
    c.max_position_embeddings = config_int(cfg, path, "n_positions");
  }
}

void read_modernbert(const JsonValue& cfg, const std::string& path, BertConfig& c) {
  FamilyConfig& f = c.family;
  f.family = Family::kModernBert;
  read_bert_shape(cfg, path, 8192, c);
  c.type_vocab_size = 0;
  c.hidden_act = config_string(cfg, path, "hidden_activation", "gelu");
  c.activation = activation_of(c.hidden_act, path, "hidden_activation");
  c.layer_norm_eps = eps_of(cfg, path, "norm_eps", 1e-5);
  f.has_position_embeddings = false;
  f.pre_norm = true;
  f.gated_ffn = true;
  f.pad_token_id = non_negative(cfg, path, "pad_token_id", 50283);
  f.attention_bias = config_bool(cfg, path, "attention_bias", false);
  f.mlp_in_bias = f.mlp_out_bias = config_bool(cfg, path, "mlp_bias", false);
  f.norm_bias = config_bool(cfg, path, "norm_bias", false);
  f.classifier_bias = config_bool(cfg, path, "classifier_bias", false);
  f.classifier_activation = config_string(cfg, path, "classifier_activation", "gelu");
  f.head_activation = activation_of(f.classifier_activation, path, "classifier_activation");
  const std::string pooling = config_string(cfg, path, "classifier_pooling", "cls");
  if (pooling != "cls" && pooling != "mean")
    throw CheckpointError(path + ": unsupported classifier_pooling '" + pooling + "' (cls or mean)");
  f.classifier_mean_pooling = pooling == "mean";
  f.local_attention = config_int(cfg, path, "local_attention", 128);
  f.rotary_dims = c.hidden_size / c.num_attention_heads;
  if (f.rotary_dims % 2) throw CheckpointError(path + ": ModernBERT head dim must be even for rotary embeddings");
  const int L = c.num_hidden_layers;
  f.sliding_layers.assign(L, false);
  const int every = config_int(cfg, path, "global_attn_every_n_layers", 3);
  const bool explicit_every = cfg.find("global_attn_every_n_layers") != nullptr;
  if (read_layer_types(cfg, path, L, f.sliding_layers)) {
    // newer transformers still apply global_attn_every_n_layers to the flash-attention window
    for (int l = 0; l < L && explicit_every; ++l)
      if (f.sliding_layers[l] != (l % every != 0))
        throw CheckpointError(path + ": 'layer_types' entry " + std::to_string(l) +
                              " disagrees with global_attn_every_n_layers " + std::to_string(every));
  } else {
    for (int l = 0; l < L; ++l) f.sliding_layers[l] = l % every != 0;
  }
  if (const JsonValue* g = cfg.find("global_rope_theta"); g && g->is_null())
    throw CheckpointError(path + ": 'global_rope_theta' is null (a number is needed)");
  f.rotary_theta = config_positive(cfg, path, "global_rope_theta", 160000.0);
  // null: the global theta, as transformers' ModernBERT (4.48+) reads it; absent: 10000
  const JsonValue* local = cfg.find("local_rope_theta");
  f.rotary_local_theta =
      local && local->is_null() ? f.rotary_theta : config_positive(cfg, path, "local_rope_theta", 10000.0);
  read_rope_parameters(cfg, path, f);
  if (const JsonValue* rs = cfg.find("rope_scaling"); rs && !rs->is_null())
    throw CheckpointError(path + ": unsupported 'rope_scaling' (only null)");
}

// What the LLM-block families (Qwen3, Gemma 3) share: grouped-query heads of head_dim (default
// `default_head_dim`), word embeddings only, pre-norm RMSNorm layers without biases, q/k norms, a
// gated FFN, rotary over the whole head, attention_bias.
// Absent keys take the family's transformers config defaults (`default_head_dim`,
// `default_kv_heads`); num_key_value_heads null means one KV head per query head, as there.
void read_llm_blocks(const JsonValue& cfg, const std::string& path, int default_head_dim, int default_kv_heads,
                     BertConfig& c) {
  FamilyConfig& f = c.family;
  const JsonValue* kv = cfg.find("num_key_value_heads");
  f.num_key_value_heads =
      kv && kv->is_null() ? c.num_attention_heads : config_int(cfg, path, "num_key_value_heads", default_kv_heads);
  if (f.num_key_value_heads > c.num_attention_heads || c.num_attention_heads % f.num_key_value_heads != 0)
    throw CheckpointError(path + ": num_key_value_heads " + std::to_string(f.num_key_value_heads) +
                          (kv ? "" : " (absent: transformers' default)") + " does not divide num_attention_heads " +
                          std::to_string(c.num_attention_heads));
  f.head_dim = config_int(cfg, path, "head_dim", default_head_dim);
  if (f.head_dim % 2 != 0 || f.head_dim > 1024)
    throw CheckpointError(path + ": head_dim " + std::to_string(f.head_dim) + " must be even and at most 1024");
  f.has_position_embeddings = false;
  f.embedding_norm = false;
  f.pre_norm = true;
  f.gated_ffn = true;
  f.rms_norm = true;
  f.qk_norm = true;
  f.norm_bias = false;
  f.attention_bias = config_bool(cfg, path, "attention_bias", false);
  f.mlp_in_bias = f.mlp_out_bias = false;
  f.rotary_dims = f.head_dim;
}

// Qwen3 (Qwen3Model / Qwen3ForCausalLM, Qwen3-Embedding): transformers' Qwen3Config keys, absent
// ones at its defaults (head_dim 128, num_key_value_heads 32, rope_theta 10000). What its modeling
// code would compute differently from edgebert is refused: sliding-window layers, rope scaling, a
// partial rotary factor, an activation other than silu.
void read_qwen3(const JsonValue& cfg, const std::string& path, BertConfig& c) {
  FamilyConfig& f = c.family;
  f.family = Family::kQwen3;
  read_bert_shape(cfg, path, 32768, c, false);
  c.type_vocab_size = 0;
  c.hidden_act = config_string(cfg, path, "hidden_act", "silu");
  if (c.hidden_act != "silu") throw CheckpointError(path + ": unsupported hidden_act '" + c.hidden_act + "' (Qwen3: silu)");
  c.activation = HiddenAct::kSilu;
  c.layer_norm_eps = eps_of(cfg, path, "rms_norm_eps", 1e-6);
  read_llm_blocks(cfg, path, 128, 32, c);
  f.causal = true;
  f.rotary_theta = config_positive(cfg, path, "rope_theta", 10000.0);
  if (const JsonValue* rp = cfg.find("rope_parameters"); rp && !rp->is_null()) {  // newer transformers
    if (!rp->is_object()) throw CheckpointError(path + ": 'rope_parameters' must be an object");
    if (config_string(*rp, path + ": rope_parameters", "rope_type", "default") != "default")
      throw CheckpointError(path + ": rope_parameters: unsupported rope_type (only default)");
    f.rotary_theta = config_positive(*rp, path + ": rope_parameters", "rope_theta", f.rotary_theta);
  }
  if (const JsonValue* rs = cfg.find("rope_scaling"); rs && !rs->is_null())
    throw CheckpointError(path + ": unsupported 'rope_scaling' (only null)");
  if (const JsonValue* pr = cfg.find("partial_rotary_factor"); pr && !pr->is_null() && !(pr->is_number() && pr->as_double() == 1.0))
    throw CheckpointError(path + ": unsupported 'partial_rotary_factor' (only 1)");
  const JsonValue* types = cfg.find("layer_types");
  if ((!types || types->is_null()) && config_bool(cfg, path, "use_sliding_window", false)) {
    // without layer_types, transformers makes layers max_window_layers.. sliding ones
    const JsonValue* w = cfg.find("sliding_window");
    const int from = config_int(cfg, path, "max_window_layers", 28);
    if (!(w && w->is_null()) && from < c.num_hidden_layers)
      throw CheckpointError(path + ": unsupported 'use_sliding_window' true with max_window_layers " +
                            std::to_string(from) + " < num_hidden_layers " + std::to_string(c.num_hidden_layers) +
                            " (sliding-window Qwen3 layers)");
  }
  if (types && !types->is_null()) {
    if (!types->is_array()) throw CheckpointError(path + ": 'layer_types' must be an array");
    for (size_t l = 0; l < types->size(); ++l)
      if (!(*types)[l].is_string() || (*types)[l].as_string() != "full_attention")
        throw CheckpointError(path + ": 'layer_types' entry " + std::to_string(l) +
                              " is not \"full_attention\" (sliding-window Qwen3 layers are not supported)");
  }
}


// Gemma 3 text (Gemma3TextModel, EmbeddingGemma): transformers' Gemma3TextConfig keys, as
// modeling_gemma3.py of transformers >= 4.56.1 computes them (PR #40700 fixed the bidirectional
// window): use_bidirectional_attention true, full layers attend every key, sliding layers the keys
// with |i - j| <= sliding_window / 2 (the config's sliding_window // 2 + 1 as an exclusive bound).
// Refused: causal Gemma 3 (a decoder, not an encoder), attention logit soft-capping, rope scaling.
void read_gemma3(const JsonValue& cfg, const std::string& path, BertConfig& c) {
  FamilyConfig& f = c.family;
  f.family = Family::kGemma3;
  read_bert_shape(cfg, path, 131072, c, false);
  c.type_vocab_size = 0;
  c.hidden_act = config_string(cfg, path, "hidden_activation", config_string(cfg, path, "hidden_act", "gelu_pytorch_tanh").c_str());
  if (c.hidden_act != "gelu_pytorch_tanh" && c.hidden_act != "gelu_new" && c.hidden_act != "gelu_fast")
    throw CheckpointError(path + ": unsupported hidden_activation '" + c.hidden_act + "' (Gemma 3: gelu_pytorch_tanh)");
  c.activation = HiddenAct::kGeluTanh;
  c.layer_norm_eps = eps_of(cfg, path, "rms_norm_eps", 1e-6);
  read_llm_blocks(cfg, path, 256, 4, c);
  if (!config_bool(cfg, path, "use_bidirectional_attention", false))
    throw CheckpointError(path + ": unsupported causal Gemma 3 ('use_bidirectional_attention' is not true; "
                          "only the bidirectional encoder form, as EmbeddingGemma, is supported)");
  if (const JsonValue* sc = cfg.find("attn_logit_softcapping"); sc && !sc->is_null())
    throw CheckpointError(path + ": unsupported 'attn_logit_softcapping' (only null)");
  if (const JsonValue* rs = cfg.find("rope_scaling"); rs && !rs->is_null())
    throw CheckpointError(path + ": unsupported 'rope_scaling' (only null)");
  f.query_pre_attn_scalar = config_positive(cfg, path, "query_pre_attn_scalar", 256.0);
  f.embedding_scale = true;
  f.post_norms = true;
  f.one_plus_norm_weight = true;
  f.rotary_theta = config_positive(cfg, path, "rope_theta", 1000000.0);
  f.rotary_local_theta = config_positive(cfg, path, "rope_local_base_freq", 10000.0);
  read_rope_parameters(cfg, path, f);
  const int L = c.num_hidden_layers;
  if (!read_layer_types(cfg, path, L, f.sliding_layers)) {
    const int every = config_int(cfg, path, "sliding_window_pattern", 6);
    if (every < 1) throw CheckpointError(path + ": 'sliding_window_pattern' must be a positive integer");
    for (int l = 0; l < L; ++l) f.sliding_layers[static_cast<size_t>(l)] = (l + 1) % every != 0;
  }
  const int window = config_int(cfg, path, "sliding_window", 4096);
  if (window < 2)  // transformers keeps |i - j| <= 0: each token sees only itself, which no window here expresses
    throw CheckpointError(path + ": unsupported 'sliding_window' " + std::to_string(window) +
                          " (each token would attend only to itself; the smallest window supported is 2)");
  f.local_attention = 2 * (window / 2);  // keys with |i - j| <= sliding_window / 2
}

}  // namespace

bool read_family_config(const JsonValue& cfg, const std::string& path, BertConfig& c) {
  const std::string& t = c.model_type;
  if (t == "roberta" || t == "xlm-roberta" || t == "camembert") {
    read_bert_like(cfg, path, Family::kRoberta, c);
  } else if (t == "electra") {
    read_bert_like(cfg, path, Family::kElectra, c);
  } else if (t == "albert") {
    read_bert_like(cfg, path, Family::kAlbert, c);
  } else if (t == "nomic_bert") {
    read_nomic(cfg, path, c);
  } else if (t == "modernbert") {
    read_modernbert(cfg, path, c);
  } else if (t == "qwen3") {
    read_qwen3(cfg, path, c);
  } else if (t == "gemma3_text") {
    read_gemma3(cfg, path, c);
  } else {
    return false;
  }
  return true;
}

}  // namespace convert
}  // namespace edgebert
