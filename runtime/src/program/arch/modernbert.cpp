// SPDX-License-Identifier: Apache-2.0
// modernbert.cpp: the ModernBERT builder: tok_embeddings + norm (no positions), pre-norm layers
// (x += attn(attn_norm(x)), layer 0 without attn_norm; x += mlp(mlp_norm(x))) with rotary Q/K at
// the global or local base, sliding-window attention on the local layers (|i - j| <= window / 2,
// cost n x window), GeGLU MLP, bias-free GEMMs and norms as the file says, final_norm, then the
// head: head.dense + act + head.norm on [CLS], the mask mean or every token, then the classifier.
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_modernbert(const Model& m) { return m.family == Family::kModernBert && !m.layers.empty(); }

Status build_modernbert(ProgramBuilder& b) {
  // layer 0 has no attn_norm: its QKV GEMM reads the embeddings' quantized copy
  blocks::pre_norm_family(b, &b.model().layers[0].qkv);
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kModernbertBuilder = {"modernbert", is_modernbert, build_modernbert};

}  // namespace edgebert
