// SPDX-License-Identifier: Apache-2.0
// gemma3.cpp: the Gemma 3 text builder (Gemma3TextModel with bidirectional attention, as
// EmbeddingGemma): embed_tokens rows (the converter folded the sqrt(hidden) scale into them), then
// pre-norm layers with norms after each branch, x += PA(attn(IN(x))), x += PF(mlp(PRE(x))) with
// GeGLU (tanh GELU) and every norm an RMSNorm (Gemma's 1 + weight stored as gamma); grouped-query
// heads with per-head q/k RMSNorm before the rotary embedding (query_pre_attn_scalar folded into
// Q's norm), bidirectional, sliding-window layers (|i - j| <= sliding_window / 2, the local rope
// base) between global ones; the final norm, then the head (mean pooling, Dense, Normalize).
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_gemma3(const Model& m) { return m.family == Family::kGemma3 && !m.layers.empty(); }

Status build_gemma3(ProgramBuilder& b) {
  // layer 0 normalizes the stream with its input_layernorm: the embeddings need no quantized copy
  blocks::pre_norm_family(b, nullptr);
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kGemma3Builder = {"gemma3_text", is_gemma3, build_gemma3};

}  // namespace edgebert
