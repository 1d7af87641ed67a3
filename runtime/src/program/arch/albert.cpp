// SPDX-License-Identifier: Apache-2.0
// albert.cpp: the ALBERT family builder: factorized embeddings (embedding_size) + the
// embedding_hidden_mapping_in GEMM, post-norm layers shared through Config.layer_map (the applied
// layers running one stored layer reference its one weight set and share its buffers, so a
// session creates, and packs, its GEMMs once), the pooler tanh(dense(h[CLS])) feeding sequence
// classification.
#include "program/arch/blocks.h"
#include "program/arch/registry.h"

namespace edgebert {
namespace {

bool is_albert(const Model& m) { return m.family == Family::kAlbert && !m.layers.empty(); }

Status build_albert(ProgramBuilder& b) {
  blocks::post_norm_family(b);
  return Status::ok();
}

}  // namespace

const ArchitectureBuilder kAlbertBuilder = {"albert", is_albert, build_albert};

}  // namespace edgebert
