// SPDX-License-Identifier: Apache-2.0
// registry.cpp: the list of architecture builders, most specific first.
#include "program/arch/registry.h"

namespace edgebert {

const ArchitectureBuilder* find_architecture(const Model& model) {
  static const ArchitectureBuilder* const kBuilders[] = {&kDistilBertBuilder, &kBertBuilder,   &kRobertaBuilder,
                                                         &kElectraBuilder,    &kAlbertBuilder, &kNomicBertBuilder,
                                                         &kModernbertBuilder, &kQwen3Builder,  &kGemma3Builder};
  for (const ArchitectureBuilder* b : kBuilders)
    if (b->matches(model)) return b;
  return nullptr;
}

}  // namespace edgebert
