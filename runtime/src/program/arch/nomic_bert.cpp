// SPDX-License-Identifier: Apache-2.0
// nomic_bert.cpp: the nomic-bert builder (nomic-embed-text): word + token-type embeddings (no
// position table), emb_ln, post-norm layers whose attention rotates Q and K after the fused Wqkv
// GEMM (rotary op, dynamic NTK beyond the trained length) and whose MLP is gated (SwiGLU
// fc2(fc11(x) * silu(fc12(x)))), the pooler for sequence classification.
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_nomic_bert(const Model& m) { return m.family == Family::kNomicBert && !m.layers.empty(); }

Status build_nomic_bert(ProgramBuilder& b) {
  blocks::post_norm_family(b);
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kNomicBertBuilder = {"nomic_bert", is_nomic_bert, build_nomic_bert};

}  // namespace edgebert
