// SPDX-License-Identifier: Apache-2.0
// Tensor layouts of the BERT families (family_layout.h), one function per family.
#include "converter/checkpoint/family_layout.h"

#include <array>

namespace edgebert {
namespace convert {
namespace {

std::string str(int i) { return std::to_string(i); }

// A post-LN layer whose tensors are p + parts: q, k, v, attention output, its norm, FFN in, FFN
// out, output norm.
LayerLayout post_ln(const std::string& p, const std::array<const char*, 8>& parts) {
  LayerLayout l;
  std::string* fields[8] = {&l.q, &l.k, &l.v, &l.attention_output, &l.attention_norm, &l.intermediate, &l.output,
                            &l.output_norm};
  for (size_t i = 0; i < parts.size(); ++i) *fields[i] = p + parts[i];
  return l;
}

// BERT, RoBERTa, ELECTRA: encoder.layer.N.{attention.self.*, attention.output.*, intermediate, output}.
LayerLayout bert_layer(int i) {
  return post_ln("encoder.layer." + str(i) + ".",
                 {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                  "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm"});
}

void bert_embeddings(FamilyLayout& f, bool token_types) {
  f.word = "embeddings.word_embeddings";
  f.position = "embeddings.position_embeddings";
  if (token_types) f.token_type = "embeddings.token_type_embeddings";
  f.embedding_norm = "embeddings.LayerNorm";
}

FamilyLayout bert(const BertConfig& c) {
  FamilyLayout f;
  bert_embeddings(f, c.has_token_types());
  for (int i = 0; i < c.num_hidden_layers; ++i) f.layers.push_back(bert_layer(i));
  f.pooler = "pooler.dense";
  return f;
}

FamilyLayout distilbert(const BertConfig& c) {
  FamilyLayout f;
  bert_embeddings(f, false);
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    f.layers.push_back(post_ln("transformer.layer." + str(i) + ".",
                               {"attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin",
                                "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm"}));
  }
  return f;
}

FamilyLayout electra(const BertConfig& c) {
  FamilyLayout f = bert(c);
  f.pooler.clear();  // ElectraModel has no pooler
  if (c.family.embedding_size != c.hidden_size) f.embedding_projection = "embeddings_project";
  return f;
}

// ALBERT: num_hidden_groups groups of inner_group_num layers; applied layer i runs group
// int(i / (num_hidden_layers / num_hidden_groups)) (all of its inner layers), as AlbertTransformer.
FamilyLayout albert(const BertConfig& c) {
  FamilyLayout f;
  bert_embeddings(f, c.has_token_types());
  f.embedding_projection = "encoder.embedding_hidden_mapping_in";
  const int G = c.family.num_hidden_groups, K = c.family.inner_group_num, L = c.num_hidden_layers;
  for (int g = 0; g < G; ++g) {
    for (int k = 0; k < K; ++k) {
      f.layers.push_back(post_ln("encoder.albert_layer_groups." + str(g) + ".albert_layers." + str(k) + ".",
                                 {"attention.query", "attention.key", "attention.value", "attention.dense",
                                  "attention.LayerNorm", "ffn", "ffn_output", "full_layer_layer_norm"}));
    }
  }
  for (int i = 0; i < L; ++i) {
    const int g = static_cast<int>(i / (static_cast<double>(L) / G));
    for (int k = 0; k < K; ++k) f.layer_map.push_back(g * K + k);
  }
  f.pooler = "pooler";
  return f;
}

FamilyLayout nomic(const BertConfig& c) {
  FamilyLayout f;
  f.word = "embeddings.word_embeddings";
  if (c.family.has_position_embeddings) f.position = "embeddings.position_embeddings";
  if (c.has_token_types()) f.token_type = "embeddings.token_type_embeddings";
  f.embedding_norm = "emb_ln";
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "encoder.layers." + str(i) + ".";
    LayerLayout l;
    l.qkv = p + "attn.Wqkv";
    l.attention_output = p + "attn.out_proj";
    l.attention_norm = p + "norm1";
    if (c.family.gated_ffn) {
      l.gate_act = p + "mlp.fc12";
      l.gate_value = p + "mlp.fc11";
    } else {
      l.intermediate = p + "mlp.fc1";
    }
    l.output = p + "mlp.fc2";
    l.output_norm = p + "norm2";
    f.layers.push_back(l);
  }
  f.pooler = "pooler.dense";
  return f;
}

FamilyLayout modernbert(const BertConfig& c) {
  FamilyLayout f;
  f.word = "embeddings.tok_embeddings";
  f.embedding_norm = "embeddings.norm";
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "layers." + str(i) + ".";
    LayerLayout l;
    l.qkv = p + "attn.Wqkv";
    l.attention_output = p + "attn.Wo";
    if (i > 0) l.attention_norm = p + "attn_norm";  // layer 0: the embedding norm's output directly
    l.intermediate = p + "mlp.Wi";
    l.output = p + "mlp.Wo";
    l.output_norm = p + "mlp_norm";
    f.layers.push_back(l);
  }
  f.final_norm = "final_norm";
  return f;
}

// Qwen3Model: embed_tokens, layers.i.{input_layernorm, self_attn.{q,k,v,o}_proj, self_attn.{q,k}_norm,
// post_attention_layernorm, mlp.{gate,up,down}_proj}, norm. The gated halves: [gate; up].
FamilyLayout qwen3(const BertConfig& c) {
  FamilyLayout f;
  f.word = "embed_tokens";
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "layers." + str(i) + ".";
    LayerLayout l;
    l.q = p + "self_attn.q_proj";
    l.k = p + "self_attn.k_proj";
    l.v = p + "self_attn.v_proj";
    l.q_norm = p + "self_attn.q_norm";
    l.k_norm = p + "self_attn.k_norm";
    l.attention_output = p + "self_attn.o_proj";
    l.attention_norm = p + "input_layernorm";
    l.gate_act = p + "mlp.gate_proj";
    l.gate_value = p + "mlp.up_proj";
    l.output = p + "mlp.down_proj";
    l.output_norm = p + "post_attention_layernorm";
    f.layers.push_back(l);
  }
  f.final_norm = "norm";
  return f;
}

// Gemma3TextModel: Qwen3's names, and the norms after the branches: input_layernorm (before
// attention), post_attention_layernorm (after it), pre_feedforward_layernorm (before the MLP),
// post_feedforward_layernorm (after it).
FamilyLayout gemma3(const BertConfig& c) {
  FamilyLayout f = qwen3(c);
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "layers." + str(i) + ".";
    LayerLayout& l = f.layers[static_cast<size_t>(i)];
    l.attention_post_norm = p + "post_attention_layernorm";
    l.output_norm = p + "pre_feedforward_layernorm";
    l.ffn_post_norm = p + "post_feedforward_layernorm";
  }
  return f;
}

}  // namespace

FamilyLayout family_layout(const BertConfig& c) {
  FamilyLayout f;
  switch (c.family.family) {
    case Family::kBert: f = bert(c); break;
    case Family::kDistilBert: f = distilbert(c); break;
    case Family::kRoberta: f = bert(c); break;  // same names; positions differ (FamilyConfig)
    case Family::kElectra: f = electra(c); break;
    case Family::kAlbert: f = albert(c); break;
    case Family::kNomicBert: f = nomic(c); break;
    case Family::kModernBert: f = modernbert(c); break;
    case Family::kQwen3: f = qwen3(c); break;
    case Family::kGemma3: f = gemma3(c); break;
  }
  if (f.layer_map.empty())
    for (size_t i = 0; i < f.layers.size(); ++i) f.layer_map.push_back(static_cast<int>(i));
  return f;
}

}  // namespace convert
}  // namespace edgebert
