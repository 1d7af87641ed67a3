// SPDX-License-Identifier: Apache-2.0
// nomic_bert.cpp: the nomic-bert builder (nomic-embed-text): word + token-type embeddings (no
// position table), emb_ln, post-norm layers whose attention rotates Q and K after the fused Wqkv
// GEMM (rotary op, dynamic NTK beyond the trained length) and whose MLP is gated (SwiGLU
// fc2(fc11(x) * silu(fc12(x)))), the pooler for sequence classification. With config prenorm
// (as contrastors' NomicBertBlock runs it): r = emb_ln(x); per layer r += attn(norm1(r)), then
// h = mlp(norm2(r)), added to r by the next layer; the encoder returns the last layer's h (no
// residual add, no final norm).
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_nomic_bert(const Model& m) { return m.family == Family::kNomicBert && !m.layers.empty(); }

Status build_nomic_bert(ProgramBuilder& b) {
  const Model& m = b.model();
  if (!m.pre_norm) {
    blocks::post_norm_family(b);
    return Status::ok();
  }
  // layer 0 normalizes the stream with its norm1: the embeddings need no quantized copy
  blocks::Stream x = blocks::embeddings(b, m.embedding_norm, nullptr);
  const int layers = m.config.layers;
  for (int l = 0; l < layers; ++l)
    x = blocks::pre_norm_layer(b, l, m.layers[static_cast<size_t>(m.layer_map[static_cast<size_t>(l)])],
                               m.config.activation, x, l == layers - 1);
  blocks::family_head(b, x.hidden);
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kNomicBertBuilder = {"nomic_bert", is_nomic_bert, build_nomic_bert};

}  // namespace edgebert
