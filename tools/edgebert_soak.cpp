// SPDX-License-Identifier: Apache-2.0
// edgebert_soak.cpp: long-run reliability check (edgebert-soak). One session (2 worker threads
// by default) runs N inferences through the C API on a fixed set of inputs whose lengths cover
// 1..max (ids from a seeded generator), in a shuffled order. After a warm-up that runs every input
// once (and records a 64-bit hash of each input's last_hidden_state and pooler output), it
// reports:
//   - heap allocations during the N runs (must be 0; tools/alloc_counter.cpp counts them);
//   - anonymous resident memory (RssAnon) after minus before the N runs (must be 0 kB), and the
//     file-backed resident memory (RssFile, the mapped model) for information;
//   - outputs that differ by even one bit from the warm-up's for the same input (must be 0).
// Exit status 0 only when all three hold.
//   edgebert-soak --model MODEL.ebm [--runs N (10000)] [--threads T (2)] [--max-len L (model max)]
//                 [--inputs K (= L, max 512)] [--seed S (1)]
#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "edgebert/edgebert.h"
#include "tool_common.h"

namespace {

using namespace edgebert::tools;

// "RssAnon:" / "RssFile:" from /proc/self/status, in kB (-1 if unavailable). Read with open/read
// into a stack buffer: the measurement itself must not touch heap pages (an ifstream's 8 kB buffer,
// placed differently by malloc before and after the runs, showed up as a 4 kB "growth").
long status_kib(const char* key) {
  char buf[8192];
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = 0;
  for (ssize_t got; len + 1 < sizeof buf && (got = ::read(fd, buf + len, sizeof buf - 1 - len)) > 0;)
    len += static_cast<size_t>(got);
  ::close(fd);
  buf[len] = '\0';
  const size_t klen = std::strlen(key);
  for (const char* line = buf; *line;) {
    if (std::strncmp(line, key, klen) == 0) return std::strtol(line + klen, nullptr, 10);
    const char* nl = std::strchr(line, '\n');
    if (!nl) break;
    line = nl + 1;
  }
  return -1;
}

uint64_t fnv1a(const void* data, size_t bytes, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Hash of every output this session produced in its last run (the outputs it does not have are
// skipped). Reading outputs allocates nothing.
uint64_t output_hash(eb_session* s) {
  uint64_t h = 14695981039346656037ull;
  for (int which = 0; which < 3; ++which) {
    const float* p = nullptr;
    int64_t shape[2] = {0, 0};
    int32_t rank = 0;
    if (eb_session_get_output(s, static_cast<eb_output>(which), &p, shape, &rank) != EB_OK) continue;
    h = fnv1a(p, static_cast<size_t>(rank == 2 ? shape[0] * shape[1] : shape[0]) * sizeof(float), h);
  }
  return h;
}

int usage() {
  std::fprintf(stderr,
               "usage: edgebert-soak --model MODEL.ebm [--runs N] [--threads T] [--max-len L] [--inputs K] [--seed S] [--max-rss-growth-kib G]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path;
  long runs = 10000, threads = 2, max_len = 0, inputs = 0, seed = 1, max_rss_growth_kib = 0;
  for (int i = 1; i < argc; i += 2) {  // every option takes a value
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = v != nullptr;
    if (a == "--model" && v) model_path = v;
    else if (a == "--runs") ok = parse_int(v, 1, 1000000000L, &runs);
    else if (a == "--threads") ok = parse_int(v, 1, 64, &threads);
    else if (a == "--max-len") ok = parse_int(v, 1, 1 << 16, &max_len);
    else if (a == "--inputs") ok = parse_int(v, 1, 4096, &inputs);
    else if (a == "--seed") ok = parse_int(v, 0, UINT32_MAX, &seed);
    else if (a == "--max-rss-growth-kib") ok = parse_int(v, 0, 1 << 20, &max_rss_growth_kib);
    else return usage();
    if (!ok) return usage();
  }
  if (model_path.empty()) return usage();

  char err[512];
  eb_model* model = nullptr;
  if (eb_model_load_file(model_path.c_str(), &model, err, sizeof err) != EB_OK) {
    std::fprintf(stderr, "edgebert-soak: %s\n", err);
    return 1;
  }
  eb_model_info info;
  if (eb_model_get_info(model, &info) != EB_OK) {
    std::fprintf(stderr, "edgebert-soak: model information unavailable\n");
    return 1;
  }
  if (max_len == 0 || max_len > info.max_position_embeddings) max_len = info.max_position_embeddings;
  if (inputs == 0) inputs = max_len < 512 ? max_len : 512;
  eb_session_options o;
  eb_session_options_init(&o);
  o.num_threads = static_cast<int32_t>(threads);
  o.max_sequence_length = static_cast<int32_t>(max_len);
  eb_session* s = nullptr;
  if (eb_session_create(model, &o, &s, err, sizeof err) != EB_OK) {
    std::fprintf(stderr, "edgebert-soak: %s\n", err);
    eb_model_free(model);
    return 1;
  }

  // Inputs: lengths spread evenly over 1..max_len (both ends included), random ids.
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_int_distribution<int32_t> id(0, info.vocab_size - 1);
  std::vector<std::vector<int32_t>> input_ids(inputs);
  std::vector<std::vector<float>> input_embeddings(info.has_embeddings ? 0 : inputs);
  for (long k = 0; k < inputs; ++k) {
    const long len = inputs == 1 ? max_len : 1 + k * (max_len - 1) / (inputs - 1);
    input_ids[k].resize(len);
    for (auto& x : input_ids[k]) x = id(rng);
    if (!info.has_embeddings) {
      input_embeddings[k].resize(static_cast<size_t>(len) * info.hidden_size);
      for (auto& x : input_embeddings[k]) x = static_cast<float>(id(rng) % 200 - 100) / 64.f;
    }
  }
  std::vector<uint32_t> order(static_cast<size_t>(runs));
  for (auto& x : order) x = static_cast<uint32_t>(rng() % inputs);
  auto run = [&](long k) {
    const auto& ids = input_ids[k];
    return info.has_embeddings ? eb_session_run_ids(s, ids.data(), nullptr, nullptr, ids.size())
                               : eb_session_run_embeddings(s, input_embeddings[k].data(), nullptr, ids.size());
  };

  // Warm-up: every input once (touches every arena page any length uses), reference hashes.
  std::vector<uint64_t> reference(inputs);
  for (long k = 0; k < inputs; ++k) {
    if (run(k) != EB_OK) {
      std::fprintf(stderr, "edgebert-soak: warm-up run failed: %s\n", eb_session_last_error(s));
      return 1;
    }
    reference[k] = output_hash(s);
  }
  const long anon_before = status_kib("RssAnon:"), file_before = status_kib("RssFile:");
  long failures = 0, mismatches = 0;
  alloc_counter_start();
  for (long r = 0; r < runs; ++r) {
    const long k = order[r];
    if (run(k) != EB_OK) ++failures;
    else if (output_hash(s) != reference[k]) ++mismatches;
  }
  const long allocations = alloc_counter_stop();
  const long anon_after = status_kib("RssAnon:"), file_after = status_kib("RssFile:");
  std::printf("edgebert-soak: %s, %ld threads, %ld runs over %ld inputs of length 1..%ld\n", model_path.c_str(),
              threads, runs, inputs, max_len);
  std::printf("failed runs: %ld\nbit mismatches: %ld\nheap allocations: %ld\n", failures, mismatches, allocations);
  std::printf("RssAnon: %ld kB -> %ld kB (delta %ld kB)\nRssFile: %ld kB -> %ld kB (delta %ld kB)\n", anon_before,
              anon_after, anon_after - anon_before, file_before, file_after, file_after - file_before);
  eb_session_destroy(s);
  eb_model_free(model);
  const bool ok = failures == 0 && mismatches == 0 && allocations == 0 && anon_after - anon_before <= max_rss_growth_kib;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
