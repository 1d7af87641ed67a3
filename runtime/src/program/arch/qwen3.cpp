// SPDX-License-Identifier: Apache-2.0
// qwen3.cpp: the Qwen3 builder (Qwen3Model / Qwen3ForCausalLM used as an encoder, as
// Qwen3-Embedding does): embed_tokens rows as they are (no position table, no embedding norm),
// pre-norm layers x += o_proj(attn(input_layernorm(x))), x += down(silu(gate(y)) * up(y)) with
// y = post_attention_layernorm(x), every norm an RMSNorm; the attention block's grouped-query
// heads of head_dim channels with per-head q/k RMSNorm before the rotary embedding, causal; the
// final norm, then the head (last-token pooling + Normalize for sentence embeddings).
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_qwen3(const Model& m) { return m.family == Family::kQwen3 && !m.layers.empty(); }

Status build_qwen3(ProgramBuilder& b) {
  // layer 0 normalizes the stream with its input_layernorm: the embeddings need no quantized copy
  blocks::pre_norm_family(b, nullptr);
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kQwen3Builder = {"qwen3", is_qwen3, build_qwen3};

}  // namespace edgebert
