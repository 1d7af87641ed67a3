// SPDX-License-Identifier: Apache-2.0
// registry.h: the architecture builders, one per model family (program/arch/<family>.cpp) over
// the shared blocks of program/arch/blocks.h, and the choice of the builder for a model (by
// Model::family).
#pragma once

#include "model.h"
#include "program/program.h"
#include "status.h"

namespace edgebert {

struct ArchitectureBuilder {
  const char* name;                     // "bert", "distilbert"
  bool (*matches)(const Model& model);  // this builder handles the model
  Status (*build)(ProgramBuilder& b);   // the op list of b.model()
};

// Builders of the families (each defined in its own file).
extern const ArchitectureBuilder kBertBuilder;
extern const ArchitectureBuilder kDistilBertBuilder;
extern const ArchitectureBuilder kRobertaBuilder;
extern const ArchitectureBuilder kElectraBuilder;
extern const ArchitectureBuilder kAlbertBuilder;
extern const ArchitectureBuilder kNomicBertBuilder;
extern const ArchitectureBuilder kModernbertBuilder;
extern const ArchitectureBuilder kQwen3Builder;
extern const ArchitectureBuilder kGemma3Builder;

// The first builder that matches the model, or null.
const ArchitectureBuilder* find_architecture(const Model& model);

}  // namespace edgebert
