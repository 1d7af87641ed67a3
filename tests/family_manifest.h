// SPDX-License-Identifier: Apache-2.0
// family_manifest.h: the family test models and their golden cases, as listed by
// tests/reference/make_family_checkpoints.py in TESTDATA/families/families_manifest.txt
// (one "model family task case seq" line per case). Shared by the family tests.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace edgebert {
namespace test {

inline std::string families_dir() { return testdata_dir() + "/families"; }

struct ManifestLine {
  std::string model, family, task, name;
  int seq = 0;
};

inline std::vector<ManifestLine> family_manifest() {
  std::ifstream f(families_dir() + "/families_manifest.txt");
  std::vector<ManifestLine> out;
  ManifestLine l;
  while (f >> l.model >> l.family >> l.task >> l.name >> l.seq) out.push_back(l);
  return out;
}

}  // namespace test
}  // namespace edgebert
