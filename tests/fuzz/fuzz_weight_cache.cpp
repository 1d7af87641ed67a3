// SPDX-License-Identifier: Apache-2.0
// fuzz_weight_cache.cpp: libFuzzer target for the weight cache file's header and entry table. The
// input is one control byte and a cache file; with the control byte odd, the file's seeds digest
// and header checksum are first recomputed (weight_cache_file::reseal: what a forger can do, so the
// fuzzer gets past them). It is
// checked by verify_payload (any build), then given as the weight cache of the fuzzers' tiny int8
// model: the model must load (the file is used, rebuilt or refused, never trusted), and a
// session must run on it and give the outputs of the model loaded without a cache.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "backend/weight_cache_file.h"
#include "edgebert/edgebert.h"
#include "tiny_model.h"

namespace {

struct Run {
  bool ok = false;
  std::vector<float> hidden;
};

Run run_model(const edgebert::fuzz::AlignedCopy& model, const char* cache_path) {
  Run r;
  eb_load_options o;
  eb_load_options_init(&o);
  o.weight_cache_path = cache_path;
  eb_model* m = nullptr;
  char error[256];
  if (eb_model_load_memory_with_options(model.data(), model.size(), &o, &m, error, sizeof error) != EB_OK) return r;
  if (cache_path && std::getenv("EB_FUZZ_VERBOSE")) {  // what happened to the file (replaying by hand)
    eb_weight_cache_state state;
    const char* message = nullptr;
    if (eb_model_get_weight_cache(m, &state, &message) == EB_OK)
      std::fprintf(stderr, "weight cache state %d: %s\n", static_cast<int>(state), message ? message : "");
  }
  eb_session* s = nullptr;
  if (eb_session_create(m, nullptr, &s, error, sizeof error) == EB_OK) {
    const int32_t ids[5] = {2, 5, 31, 1, 3};
    const float* out = nullptr;
    int64_t shape[2] = {0, 0};
    if (eb_session_run_ids(s, ids, nullptr, nullptr, 5) == EB_OK &&
        eb_session_get_output(s, EB_OUTPUT_LAST_HIDDEN_STATE, &out, shape, nullptr) == EB_OK) {
      r.hidden.assign(out, out + shape[0] * shape[1]);
      r.ok = true;
    }
    eb_session_destroy(s);
  }
  eb_model_free(m);
  return r;
}

struct Setup {
  std::vector<uint8_t> bytes = edgebert::fuzz::make_tiny_model(true);
  edgebert::fuzz::AlignedCopy model{bytes.data(), bytes.size()};
  // EB_FUZZ_WEIGHT_CACHE_PATH keeps the file (the seed corpus' valid file is one rebuilt here)
  const char* keep = std::getenv("EB_FUZZ_WEIGHT_CACHE_PATH");
  std::string path = keep ? keep : "/tmp/fuzz_weight_cache." + std::to_string(::getpid()) + ".ebwc";
  Run reference = run_model(model, nullptr);
  ~Setup() {
    if (!keep) std::remove(path.c_str());
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Setup setup;
  if (!setup.reference.ok) __builtin_trap();
  if (size == 0) return 0;
  std::vector<uint8_t> file(data + 1, data + size);
  if (data[0] & 1) (void)edgebert::weight_cache_file::reseal(file.data(), file.size());
  {
    std::remove(setup.path.c_str());
    std::ofstream out(setup.path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  }
  (void)edgebert::weight_cache_file::verify_payload(setup.path);
  const Run r = run_model(setup.model, setup.path.c_str());
  if (!r.ok || r.hidden != setup.reference.hidden) __builtin_trap();  // the cache never changes a result
  return 0;
}
