// SPDX-License-Identifier: Apache-2.0
// family_manifest.h: the family test models and their golden cases, as listed by
// tests/reference/make_family_checkpoints.py in TESTDATA/families/families_manifest.txt
// (one "model family task case seq" line per case), and each model converted once per test
// process with the real edgebert-convert. Shared by the family and composition tests.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <stdlib.h>

#include "test_support.h"

namespace edgebert {
namespace test {

inline std::string families_dir() { return testdata_dir() + "/families"; }

struct ManifestLine {
  std::string model, family, task, name;
  int seq = 0;
};

// EDGEBERT_FAMILIES ("gemma3_text,qwen3"): only those families' lines, as the emulated CI subset's
// test_family_runtime_llm runs (docs/cross-compiling.md#ci-time); unset or empty: every family.
inline std::set<std::string> selected_families() {
  std::set<std::string> out;
  const char* env = std::getenv("EDGEBERT_FAMILIES");
  std::string name;
  for (const char* c = env ? env : ""; ; ++c) {
    if (*c == ',' || *c == ' ' || *c == '\0') {
      if (!name.empty()) out.insert(name);
      name.clear();
      if (*c == '\0') break;
    } else {
      name += *c;
    }
  }
  return out;
}

inline std::vector<ManifestLine> family_manifest() {
  std::ifstream f(families_dir() + "/families_manifest.txt");
  const std::set<std::string> only = selected_families();
  std::vector<ManifestLine> out;
  ManifestLine l;
  while (f >> l.model >> l.family >> l.task >> l.name >> l.seq)
    if (only.empty() || only.count(l.family)) out.push_back(l);
  return out;
}

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/eb_family_rt_XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

inline std::string bin_dir() {
  const char* b = std::getenv("EDGEBERT_BIN");
  return b ? b : "";
}

// MODEL converted once per test process with the real CLI (fp32, or int8 calibrated on the
// built-in set through the converter's fp32 reference) into a temporary folder.
inline std::string converted(const std::string& model, const std::string& kind = "fp32") {
  static TempDir tmp;
  static std::set<std::string> done;
  const std::string out = tmp.path + "/" + model + "." + kind + ".ebm";
  if (!done.count(out)) {
    // kinds: fp32, int8, or int8 with the gated FFN's up ("int8-fp32-up") or down ("int8-fp32-down")
    // GEMMs kept float (--keep-fp32: the gated op between an fp32 and an int8 GEMM)
    const std::string extra = kind == "fp32"             ? " --fp32"
                              : kind == "int8-fp32-up"   ? " --keep-fp32 '*.*.intermediate'"
                              : kind == "int8-fp32-down" ? " --keep-fp32 '*.*.output'"
                                                         : "";
    const std::string cmd = bin_dir() + "/edgebert-convert --input " + families_dir() + "/" + model + " --output " + out +
                            extra + " --quiet > /dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    done.insert(out);
  }
  return out;
}

}  // namespace test
}  // namespace edgebert
