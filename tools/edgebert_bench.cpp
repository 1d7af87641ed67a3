// SPDX-License-Identifier: Apache-2.0
// edgebert-bench: the on-device benchmark.
//   edgebert-bench (--model MODEL.ebm | --synthetic SPEC [--fp32]) --seq-len N [--threads N]
//                  [--warmup N] [--runs N] [--min-secs S] [--op-profile] [--json PATH]
//                  [--weight-cache PATH] [--sessions N]
// --weight-cache: the model's packed weights mapped from (or packed into) PATH; --sessions N: N
// sessions share the model, each on its own thread (with --threads workers), run at once.
//   edgebert-bench --head-sweep SPEC [--seq-lens 32,128,384] [--threads N] [--runs N]
//                  [--markdown PATH] [--json PATH]
//   edgebert-bench --model MODEL.ebm --texts FILE [--batch-tokens N] [--threads N] [--runs N]
//                  [--peak-gops G] [--write-ids PATH] [--op-profile] [--json PATH] [--query TEXT]
//     --query: each line is a passage run as the pair (TEXT, passage), as eb_session_rerank runs a
//     cross-encoder's pairs (its loop: packed pair runs; the score function and ranking are not timed);
//     one text per line, all run in packed runs of up to N tokens (0: one text per run); reports
//     sentences/s and tokens/s (best and median of --runs passes over the file), the GEMM share
//     (op profile of one more pass) and tokens/s as a fraction of the int8-peak limit (G GOPS
//     over the model's GEMM operations per token); --write-ids: each text's token ids, a line each;
//     --op-profile: the phase table of the profiled pass (tokenization, each op kind with its rows,
//     GOPS and fraction of G, XNNPACK reshape/setup, the executor and the loop around the runs).
// SPEC: hidden=768,heads=12,layers=12,intermediate=3072[,vocab=..,max_position=..,labels=..,seed=..]
// Timing uses the monotonic clock, excludes warmup, and the timed loop allocates nothing (the
// process-wide allocation count over the timed runs is measured and reported).
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cpuinfo.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.h"
#include "bench_stats.h"
#include "converter/converter.h"
#include "converter/synthetic_model.h"
#include "crc32c.h"
#include "json_writer.h"
#include "model.h"
#include "program/program.h"
#include "session.h"
#include "tool_common.h"

namespace {

using namespace edgebert;
using namespace edgebert::tools;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string model_path, synthetic, head_sweep, json_path, markdown_path, texts_path, ids_path, query;
  long batch_tokens = -1;  // --texts: -1 packed runs of the session maximum (the C API default), 0 one per run
  double peak_gops = 0;
  bool runs_given = false;
  bool fp32 = false, op_profile = false;
  std::string cache_path;
  long seq_len = 128, threads = 1, warmup = 3, runs = 20, sessions = 1;
  double min_secs = 0;
  std::vector<int32_t> seq_lens = {32, 128, 384};
};

int usage(FILE* f, int rc) {
  std::fprintf(f,
               "usage: edgebert-bench (--model MODEL.ebm | --synthetic SPEC [--fp32]) --seq-len N [--threads N]\n"
               "                      [--warmup N] [--runs N] [--min-secs S] [--op-profile] [--json PATH]\n"
               "                      [--weight-cache PATH] [--sessions N]\n"
               "       edgebert-bench --head-sweep SPEC [--seq-lens 32,128,384] [--threads N] [--runs N]\n"
               "                      [--markdown PATH] [--json PATH]\n"
               "       edgebert-bench --model MODEL.ebm --texts FILE [--batch-tokens N] [--threads N] [--runs N]\n"
               "                      [--peak-gops G] [--write-ids PATH] [--op-profile] [--json PATH] [--query TEXT]\n"
               "  --texts: packed runs of up to N tokens (default: the session maximum); --batch-tokens 0: one text per run\n"
               "SPEC: hidden=768,heads=12,layers=12,intermediate=3072[,vocab=N,max_position=N,labels=N,seed=N]\n");
  return rc;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// A line of /proc/self/status ("VmRSS", "RssAnon", "RssFile") in KiB; 0 if unavailable.
long status_kib(const char* key) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long kib = 0;
  const size_t k = std::strlen(key);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, key, k) == 0 && line[k] == ':' && std::sscanf(line + k + 1, "%ld", &kib) == 1) break;
  std::fclose(f);
  return kib;
}
// Resident memory now (VmRSS), and its dirty anonymous part (RssAnon), KiB.
long current_rss_kib() { return status_kib("VmRSS"); }
long current_rss_anon_kib() { return status_kib("RssAnon"); }

long peak_rss_kib() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

std::string cpu_description(std::string* features) {
  std::string name = "unknown CPU";
  if (cpuinfo_initialize()) {
    if (const cpuinfo_package* p = cpuinfo_get_package(0)) name = p->name;
#if defined(__x86_64__) || defined(__i386__)
    *features = std::string("SSE4.1 ") + (cpuinfo_has_x86_sse4_1() ? "yes" : "no") + ", AVX2 " +
                (cpuinfo_has_x86_avx2() ? "yes" : "no") + ", FMA3 " + (cpuinfo_has_x86_fma3() ? "yes" : "no") +
                ", AVX512F " + (cpuinfo_has_x86_avx512f() ? "yes" : "no") + ", AVX512-VNNI " +
                (cpuinfo_has_x86_avx512vnni() ? "yes" : "no");
#elif defined(__aarch64__) || defined(__arm__)
    *features = std::string("NEON ") + (cpuinfo_has_arm_neon() ? "yes" : "no") + ", dot product " +
                (cpuinfo_has_arm_neon_dot() ? "yes" : "no");
#endif
    if (name.empty()) name = "unknown CPU";
    name += " (" + std::to_string(cpuinfo_get_cores_count()) + " cores, " +
            std::to_string(cpuinfo_get_processors_count()) + " logical processors)";
  }
  return name;
}

// A model held in 64-byte aligned memory (synthetic) or mapped from a file.
struct LoadedModel {
  std::unique_ptr<Model> model;
  void* memory = nullptr;
  size_t file_bytes = 0;
  std::string description;
  ~LoadedModel() {
    model.reset();
    std::free(memory);
  }
};

bool load_model(const Options& o, const std::string& synthetic, LoadedModel* lm, std::string* error) {
  if (!synthetic.empty()) {
    convert::SyntheticSpec spec;
    if (!convert::parse_synthetic_spec(synthetic, &spec, error)) return false;
    convert::FloatBert fb = convert::make_synthetic_bert(spec);
    convert::ConvertOptions co;
    co.fp32 = o.fp32;
    co.quiet = true;
    co.error_report = false;
    co.quick_calibration = true;
    convert::ConvertResult r;
    try {
      r = convert::convert_model(fb, nullptr, co);
    } catch (const std::exception& e) {
      *error = e.what();
      return false;
    }
    lm->file_bytes = r.buffer.size();
    lm->memory = std::aligned_alloc(64, (r.buffer.size() + 63) / 64 * 64);
    std::memcpy(lm->memory, r.buffer.data(), r.buffer.size());
    lm->description = "synthetic " + synthetic + (o.fp32 ? " (fp32)" : " (int8)");
    return Model::create(lm->memory, r.buffer.size(), nullptr, 0).move_to(&lm->model, error);
  }
  if (!Model::load_file(o.model_path.c_str()).move_to(&lm->model, error)) return false;
  lm->file_bytes = lm->model->file_size;
  lm->description = o.model_path;
  return true;
}

struct RunResult {
  LatencyStats latency;
  std::vector<double> samples_ms;
  double gemm_only_median_ms = 0;
  long allocations = 0;
  double first_run_ms = 0;  // the very first run of the session (cold caches, page faults)
  long rss_kib = 0;  // resident memory right after the timed runs
  long rss_anon_kib = 0;
  std::vector<double> op_ms;  // per OpKind, per run
  std::vector<std::vector<double>> layer_op_ms;
};

// Runs warmup + timed runs on random ids of length n; returns false on a runtime error.
bool measure(Session& s, size_t n, const Options& o, bool op_profile, bool progress, RunResult* out,
             std::string* error) {
  const ModelConfig& c = s.model().config;
  std::mt19937 rng(42);
  std::uniform_int_distribution<int32_t> id(std::min(1000, c.vocab - 1), c.vocab - 1);
  std::vector<int32_t> ids(n);
  for (auto& x : ids) x = id(rng);
  ids[0] = std::min(101, c.vocab - 1);
  std::vector<float> embeddings;  // encoder-only models run on precomputed embeddings
  if (!s.model().has_embeddings) embeddings.assign(n * c.hidden, 0.1f);
  auto run = [&] {
    if (s.model().has_embeddings) return s.run_ids(ids.data(), nullptr, nullptr, n);
    return s.run_embeddings(embeddings.data(), nullptr, n);
  };
  for (long i = 0; i < std::max(1L, o.warmup); ++i) {
    const auto t0 = Clock::now();
    if (run() != EB_OK) return *error = s.last_error(), false;
    if (i == 0) out->first_run_ms = ms_since(t0);
  }

  const size_t cap = 1 << 20;
  std::vector<double> samples;
  samples.reserve(cap);
  const auto start = Clock::now();
  auto last_progress = start;
  alloc_counter_start();
  while (samples.size() < cap && (static_cast<long>(samples.size()) < o.runs ||
                                  std::chrono::duration<double>(Clock::now() - start).count() < o.min_secs)) {
    const auto t0 = Clock::now();
    if (run() != EB_OK) {
      alloc_counter_stop();
      return *error = s.last_error(), false;
    }
    samples.push_back(ms_since(t0));
    if (progress && std::chrono::duration<double>(Clock::now() - last_progress).count() > 3.0) {
      last_progress = Clock::now();
      std::fprintf(stderr, "\r  ... %zu runs, %.1f s, last %.2f ms", samples.size(),
                   std::chrono::duration<double>(last_progress - start).count(), samples.back());
    }
  }
  out->allocations = alloc_counter_stop();
  out->rss_kib = current_rss_kib();
  out->rss_anon_kib = current_rss_anon_kib();
  if (progress && std::chrono::duration<double>(Clock::now() - start).count() > 3.0) std::fprintf(stderr, "\n");
  out->latency = compute_stats(samples);
  out->samples_ms = samples;

  // XNNPACK GEMMs alone on the same shapes: the floor this design can reach.
  std::vector<double> gemm(std::min<size_t>(samples.size(), 200));
  for (double& g : gemm) {
    const auto t0 = Clock::now();
    s.run_gemms_only();
    g = ms_since(t0);
  }
  out->gemm_only_median_ms = compute_stats(gemm).median;

  if (op_profile) {
    const int kinds = static_cast<int>(OpKind::kCount);
    s.reset_profile();
    s.enable_profiling(true);
    const long prof_runs = std::max(3L, std::min<long>(o.runs, 50));
    for (long i = 0; i < prof_runs; ++i) run();
    s.enable_profiling(false);
    out->op_ms.assign(kinds, 0);
    out->layer_op_ms.assign(c.layers + 1, std::vector<double>(kinds, 0));
    for (int l = 0; l <= c.layers; ++l)
      for (int k = 0; k < kinds; ++k) {
        const double v = s.profile_ns(l, static_cast<OpKind>(k)) / 1e6 / prof_runs;
        out->layer_op_ms[l][k] = v;
        out->op_ms[k] += v;
      }
  }
  return true;
}

// N sessions of one model, each on its own thread, running at once after a common start.
struct ConcurrentResult {
  double wall_ms = 0;
  size_t runs = 0;  // over all sessions
  std::vector<double> median_ms;
  long allocations = 0;
};

bool measure_concurrent(const std::vector<Session*>& sessions, size_t n, const Options& o, ConcurrentResult* out,
                        std::string* error) {
  const ModelConfig& c = sessions[0]->model().config;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> id(std::min(1000, c.vocab - 1), c.vocab - 1);
  std::vector<int32_t> ids(n);
  for (auto& x : ids) x = id(rng);
  std::vector<float> embeddings;
  if (!sessions[0]->model().has_embeddings) embeddings.assign(n * c.hidden, 0.1f);
  const size_t count = sessions.size();
  std::vector<std::vector<double>> samples(count, std::vector<double>(static_cast<size_t>(o.runs)));
  std::vector<int> failed(count, 0);
  std::atomic<size_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < count; ++t)
    threads.emplace_back([&, t] {
      Session& s = *sessions[t];
      auto run = [&] {
        if (s.model().has_embeddings) return s.run_ids(ids.data(), nullptr, nullptr, n);
        return s.run_embeddings(embeddings.data(), nullptr, n);
      };
      for (long i = 0; i < std::max(1L, o.warmup); ++i) failed[t] |= run() != EB_OK;
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      for (double& ms : samples[t]) {
        const auto t0 = Clock::now();
        failed[t] |= run() != EB_OK;
        ms = ms_since(t0);
      }
    });
  while (ready.load() < count) std::this_thread::yield();
  alloc_counter_start();
  const auto start = Clock::now();
  go.store(true);
  for (std::thread& t : threads) t.join();
  out->wall_ms = ms_since(start);
  out->allocations = alloc_counter_stop();
  for (size_t t = 0; t < count; ++t) {
    if (failed[t]) return *error = std::string("session ") + std::to_string(t) + ": " + sessions[t]->last_error(), false;
    out->median_ms.push_back(compute_stats(samples[t]).median);
    out->runs += samples[t].size();
  }
  return true;
}

const char* cache_state_name(eb_weight_cache_state s) {
  switch (s) {
    case EB_WEIGHT_CACHE_NONE: return "none";
    case EB_WEIGHT_CACHE_LOADED: return "loaded";
    case EB_WEIGHT_CACHE_CREATED: return "created";
    case EB_WEIGHT_CACHE_UNAVAILABLE: return "unavailable";
  }
  return "?";
}

int bench_one(const Options& o) {
  std::string features, err;
  const std::string cpu = cpu_description(&features);
  const auto t0 = Clock::now();
  // As eb_model_load_file_with_options does: the weight cache file is read ahead while the model loads.
  WeightCacheOptions cache_options;
  cache_options.prefetch = prefetch_weight_cache(o.cache_path, cache_options);
  LoadedModel lm;
  if (!load_model(o, o.synthetic, &lm, &err)) {
    std::fprintf(stderr, "edgebert-bench: error: %s\n", err.c_str());
    return 1;
  }
  const double load_ms = ms_since(t0);
  // The model's program with its shared packed weights: mapped from / packed into the cache file,
  // or an empty store the first session fills.
  const auto tw = Clock::now();
  Result<std::shared_ptr<const Program>> built =
      Program::build(*lm.model, XnnGemm::int8_float_output_supported(), o.cache_path, cache_options);
  if (!built) {
    std::fprintf(stderr, "edgebert-bench: error: %s\n", built.status().message().c_str());
    return 1;
  }
  const std::shared_ptr<const Program> program = built.take();
  const ModelWeights& weights = program->weights();
  const double weights_ms = ms_since(tw);
  // how the cache file's payload was checked: CRC32C on this CPU's fastest path, off, or no file
  const bool cache_file = weights.state == EB_WEIGHT_CACHE_LOADED || weights.state == EB_WEIGHT_CACHE_CREATED;
  const std::string payload_check = !cache_file                        ? std::string("none")
                                    : weight_cache_verify(cache_options) ? std::string("CRC32C, ") + crc32c_path()
                                                                         : std::string("off");
  if (!o.cache_path.empty())
    std::fprintf(stderr, "weight cache: %s%s%s%s%s\n", cache_state_name(weights.state), weights.message.empty() ? "" : ": ",
                 weights.message.c_str(), cache_file ? "; payload check: " : "", cache_file ? payload_check.c_str() : "");
  const auto t1 = Clock::now();
  SessionOptions so;
  so.threads = static_cast<int>(o.threads);
  so.max_seq_len = static_cast<int>(o.seq_len);
  std::vector<std::unique_ptr<Session>> more;  // --sessions: sessions 2..N
  std::unique_ptr<Session> s;
  if (o.seq_len > lm.model->config.max_position) {
    std::fprintf(stderr, "edgebert-bench: error: --seq-len %ld exceeds the model's maximum %d\n", o.seq_len,
                 lm.model->config.max_position);
    return 1;
  }
  {
    Result<std::unique_ptr<Session>> made = Session::create(program, so);
    if (!made) {
      std::fprintf(stderr, "edgebert-bench: error: %s\n", made.status().message().c_str());
      return 1;
    }
    s = made.take();
  }
  const double session_ms = ms_since(t1);
  const double init_ms = load_ms + weights_ms + session_ms;
  const long anon_after_first_kib = current_rss_anon_kib();
  auto packed_bytes = [&] { return weights.store ? weights.packed_bytes() : s->packed_weight_bytes(); };
  const ModelConfig& c = lm.model->config;
  std::printf("edgebert-bench %s\n", EDGEBERT_VERSION_STRING);
  std::printf("model: %s\n  %s, %s%s, %d layers, hidden %d, %d heads x %d, intermediate %d, vocab %d\n",
              lm.description.c_str(), lm.model->int8 ? "int8" : "fp32", lm.model->is_distilbert ? "DistilBERT " : "",
              task_name(lm.model->task), c.layers, c.hidden, c.heads, c.head_dim(), c.intermediate, c.vocab);
  std::printf("machine: %s\n  features: %s\n  threads: %ld\n", cpu.c_str(), features.c_str(), o.threads);
  std::printf("init: %.1f ms (%s %.1f ms + program and packed weights %.1f ms [weight cache: %s] + session %.1f ms)\n", init_ms,
              o.synthetic.empty() ? "load" : "build+convert+load", load_ms, weights_ms, cache_state_name(weights.state),
              session_ms);
  RunResult r;
  if (!measure(*s, static_cast<size_t>(o.seq_len), o, o.op_profile, true, &r, &err)) {
    std::fprintf(stderr, "edgebert-bench: error: %s\n", err.c_str());
    return 1;
  }
  std::printf("first run: %.3f ms (init + first run %.1f ms)\n", r.first_run_ms, init_ms + r.first_run_ms);
  // --sessions N: N - 1 more sessions on the same model, then all N at once on N threads
  std::vector<double> create_ms;
  std::vector<long> anon_kib{anon_after_first_kib};
  ConcurrentResult cr;
  if (o.sessions > 1) {
    for (long i = 1; i < o.sessions; ++i) {
      const auto tc = Clock::now();
      Result<std::unique_ptr<Session>> extra = Session::create(program, so);
      if (!extra) {
        std::fprintf(stderr, "edgebert-bench: error: session %ld: %s\n", i + 1, extra.status().message().c_str());
        return 1;
      }
      create_ms.push_back(ms_since(tc));
      more.push_back(extra.take());
      anon_kib.push_back(current_rss_anon_kib());
    }
    std::vector<Session*> all{s.get()};
    for (auto& m : more) all.push_back(m.get());
    if (!measure_concurrent(all, static_cast<size_t>(o.seq_len), o, &cr, &err)) {
      std::fprintf(stderr, "edgebert-bench: error: %s\n", err.c_str());
      return 1;
    }
  }
  const LatencyStats& L = r.latency;
  std::printf("latency (seq %ld, %zu runs, %ld warmup): min %.3f  median %.3f  mean %.3f  p90 %.3f  p99 %.3f  max %.3f ms\n",
              o.seq_len, L.count, o.warmup, L.min, L.median, L.mean, L.p90, L.p99, L.max);
  std::printf("throughput: %.0f tokens/s (median)\n", o.seq_len / (L.median / 1000.0));
  std::printf("XNNPACK GEMMs alone: %.3f ms median -> end-to-end is %.2fx the GEMM floor (non-GEMM overhead %.1f%%)\n",
              r.gemm_only_median_ms, L.median / r.gemm_only_median_ms,
              100.0 * (L.median - r.gemm_only_median_ms) / L.median);
  std::printf("memory: arena %zu bytes (planned) vs %zu naive sum of buffers; packed weights %zu bytes (%s); "
              "model file %zu bytes; RSS %ld KiB (anonymous %ld KiB, peak %ld KiB)\n",
              s->arena_bytes(), s->naive_bytes(), packed_bytes(),
              weights.store ? (weights.store->mapped_bytes() ? "mapped from the weight cache file" : "shared by the sessions")
                            : "this session's own copy",
              lm.file_bytes, r.rss_kib, r.rss_anon_kib, peak_rss_kib());
  size_t int4_requantized = 0;
  const size_t int4_gemms = program->int4_gemms(&int4_requantized);
  if (int4_gemms > 0)
    std::printf("int4 GEMMs: %zu, %zu of them requantized to int8 by this build on this machine%s\n", int4_gemms,
                int4_requantized, int4_requantized ? " (docs/int4.md says when)" : "");
  // runs the sessions sent to the caller alone: the cores were contended (thread_governor.h)
  long long serial_runs = s->thread_governor().serial_runs(), verdicts = s->thread_governor().contended_verdicts();
  for (const auto& m : more) {
    serial_runs += m->thread_governor().serial_runs();
    verdicts += m->thread_governor().contended_verdicts();
  }
  if (o.threads > 1)
    std::printf("runs on the caller alone (cores found contended %lld times): %lld%s\n", verdicts, serial_runs,
                ThreadGovernor::enabled_by_env() ? "" : " (EDGEBERT_ADAPTIVE_THREADS=0: always the pool)");
  std::printf("heap allocations during timed runs: %ld\n", r.allocations);
  if (o.sessions > 1) {
    std::printf("sessions: %ld on %ld threads each: %.0f tokens/s together (%zu runs in %.1f ms); medians", o.sessions,
                o.threads, cr.runs * o.seq_len / (cr.wall_ms / 1000.0), cr.runs, cr.wall_ms);
    for (double m : cr.median_ms) std::printf(" %.3f", m);
    std::printf(" ms\n  second session: created in %.1f ms, %+ld KiB anonymous memory (packed weights %zu bytes)\n",
                create_ms[0], anon_kib[1] - anon_kib[0], packed_bytes());
    std::printf("heap allocations during the concurrent runs: %ld\n", cr.allocations);
  }
  if (o.op_profile) {
    double total = 0;
    for (double v : r.op_ms) total += v;
    std::printf("\nop profile (ms per run, all layers):\n  %-24s %10s %7s\n", "op", "ms", "share");
    for (int k = 0; k < static_cast<int>(OpKind::kCount); ++k)
      std::printf("  %-24s %10.3f %6.1f%%\n", op_kind_name(static_cast<OpKind>(k)), r.op_ms[k],
                  total > 0 ? 100.0 * r.op_ms[k] / total : 0.0);
    std::printf("  %-24s %10.3f\n", "total (profiled)", total);
    std::printf("\nper layer (ms per run):\n  layer  ");
    for (int k = 1; k <= static_cast<int>(OpKind::kAddNorm2); ++k) std::printf("%9.9s ", op_kind_name(static_cast<OpKind>(k)));
    std::printf("\n");
    for (int l = 0; l < c.layers; ++l) {
      std::printf("  %5d  ", l);
      for (int k = 1; k <= static_cast<int>(OpKind::kAddNorm2); ++k) std::printf("%9.3f ", r.layer_op_ms[l][k]);
      std::printf("\n");
    }
  }
  if (!o.json_path.empty()) {
    JsonWriter j;
    j.begin_object();
    j.value("edgebert_version", EDGEBERT_VERSION_STRING);
    j.begin_object("model")
        .value("source", lm.description)
        .value("precision", lm.model->int8 ? "int8" : "fp32")
        .value("layers", c.layers)
        .value("hidden", c.hidden)
        .value("heads", c.heads)
        .value("intermediate", c.intermediate)
        .value("vocab", c.vocab)
        .value("file_bytes", lm.file_bytes)
        .end_object();
    j.begin_object("machine").value("cpu", cpu).value("features", features).value("threads", static_cast<int>(o.threads)).end_object();
    j.begin_object("thread_governor")
        .value("enabled", ThreadGovernor::enabled_by_env())
        .value("serial_runs", serial_runs)
        .value("contended_verdicts", verdicts)
        .end_object();
    j.value("seq_len", static_cast<int>(o.seq_len));
    j.value("init_ms", init_ms);
    j.value("first_run_ms", r.first_run_ms);
    j.begin_object("init")
        .value("load_ms", load_ms)
        .value("packed_weights_ms", weights_ms)
        .value("session_ms", session_ms)
        .value("first_run_ms", r.first_run_ms)
        .value("init_plus_first_run_ms", init_ms + r.first_run_ms)
        .value("weight_cache", cache_state_name(weights.state))
        .value("weight_cache_path", o.cache_path)
        .value("weight_cache_message", weights.message)
        .value("weight_cache_payload_check", payload_check)
        .end_object();
    j.begin_object("latency_ms")
        .value("runs", L.count)
        .value("warmup", static_cast<int>(o.warmup))
        .value("min", L.min)
        .value("median", L.median)
        .value("mean", L.mean)
        .value("p90", L.p90)
        .value("p99", L.p99)
        .value("max", L.max)
        .value("stddev", L.stddev)
        .end_object();
    j.begin_array("times_ms");
    for (double t : r.samples_ms) j.value(nullptr, t);
    j.end_array();
    j.value("tokens_per_second", o.seq_len / (L.median / 1000.0));
    j.value("gemm_only_median_ms", r.gemm_only_median_ms);
    j.begin_object("memory")
        .value("arena_bytes", s->arena_bytes())
        .value("naive_bytes", s->naive_bytes())
        .value("packed_weight_bytes", packed_bytes())
        .value("packed_weight_bytes_mapped", weights.store ? weights.store->mapped_bytes() : size_t(0))
        .value("model_file_bytes", lm.file_bytes)
        .value("int4_gemms", int4_gemms)
        .value("int4_gemms_requantized", int4_requantized)
        .value("rss_bytes", static_cast<long long>(r.rss_kib) * 1024)
        .value("rss_anon_bytes", static_cast<long long>(r.rss_anon_kib) * 1024)
        .value("peak_rss_bytes", static_cast<long long>(peak_rss_kib()) * 1024)
        .end_object();
    if (o.sessions > 1) {
      j.begin_object("sessions")
          .value("count", static_cast<int>(o.sessions))
          .value("threads_per_session", static_cast<int>(o.threads))
          .value("runs", cr.runs)
          .value("wall_ms", cr.wall_ms)
          .value("tokens_per_second", cr.runs * o.seq_len / (cr.wall_ms / 1000.0))
          .value("allocations_during_runs", static_cast<long long>(cr.allocations));
      j.begin_array("median_ms");
      for (double m : cr.median_ms) j.value(nullptr, m);
      j.end_array();
      j.begin_array("create_ms");
      for (double m : create_ms) j.value(nullptr, m);
      j.end_array();
      j.begin_array("rss_anon_bytes_after_each_session");
      for (long k : anon_kib) j.value(nullptr, static_cast<long long>(k) * 1024);
      j.end_array();
      j.value("second_session_anon_bytes", static_cast<long long>(anon_kib[1] - anon_kib[0]) * 1024);
      j.end_object();
    }
    j.value("allocations_during_runs", static_cast<long long>(r.allocations));
    j.value("task", task_name(lm.model->task));
    if (o.op_profile) {
      j.begin_object("op_profile_ms");
      for (int k = 0; k < static_cast<int>(OpKind::kCount); ++k) j.value(op_kind_name(static_cast<OpKind>(k)), r.op_ms[k]);
      j.end_object();
    }
    j.end_object();
    std::string werr;
    const std::string text = j.str() + "\n";
    if (!write_file_atomically(o.json_path, text.data(), text.size(), &werr)) {
      std::fprintf(stderr, "edgebert-bench: error: %s\n", werr.c_str());
      return 1;
    }
  }
  return r.allocations == 0 && cr.allocations == 0 ? 0 : 3;
}

// One pass over all texts: packed runs of up to the session's max_batch_tokens, or (one_by_one)
// a run per text; with `firsts` (--query) each text is the second of the pair (firsts[i], texts[i]).
// Counts the tokens run and the texts that failed alone.
eb_status run_all_texts(Session& s, const std::vector<const char*>& texts, const std::vector<const char*>& firsts,
                        bool one_by_one, size_t* tokens, size_t* failed) {
  const bool pairs = !firsts.empty();
  *tokens = 0;
  *failed = 0;
  for (size_t done = 0, n = 0; done < texts.size(); done += n) {
    if (one_by_one) {
      n = 1;
      const eb_status st = pairs ? s.run_text_pair(firsts[done], texts[done]) : s.run_text(texts[done]);
      if (st == EB_ERROR_SEQUENCE_TOO_LONG) {
        ++*failed;
        continue;
      }
      if (st != EB_OK) return st;
      *tokens += s.seq_len();
      continue;
    }
    const eb_status st = pairs ? s.run_texts(firsts.data() + done, texts.data() + done, texts.size() - done, &n)
                               : s.run_texts(texts.data() + done, nullptr, texts.size() - done, &n);
    if (st != EB_OK) return st;
    *tokens += s.seq_len();
    for (size_t i = 0; i < n; ++i) *failed += s.sequence(i).status != EB_OK;
  }
  return EB_OK;
}

int bench_texts(const Options& o) {
  auto die = [](const std::string& m) {
    std::fprintf(stderr, "edgebert-bench: error: %s\n", m.c_str());
    return 1;
  };
  std::string features, err;
  const std::string cpu = cpu_description(&features);
  std::vector<std::string> lines;
  if (!read_lines(o.texts_path, &lines)) return die("cannot read --texts " + o.texts_path);
  if (lines.empty()) return die("--texts " + o.texts_path + " has no lines");
  std::vector<const char*> texts;
  for (const std::string& l : lines) texts.push_back(l.c_str());
  const std::vector<const char*> firsts(o.query.empty() ? 0 : texts.size(), o.query.c_str());  // --query
  LoadedModel lm;
  if (!load_model(o, o.synthetic, &lm, &err)) return die(err);
  const ModelConfig& c = lm.model->config;
  SessionOptions so;
  so.threads = static_cast<int>(o.threads);
  // packed (the default, as the C API): sequences of at most N tokens, N per run, or without
  // --batch-tokens the model's maximum per run; --batch-tokens 0: one text per run
  so.max_seq_len = o.batch_tokens > 0 ? static_cast<int>(std::min<long>(o.batch_tokens, c.max_position)) : 0;
  so.max_batch_tokens = o.batch_tokens > 0 ? static_cast<int>(std::max<long>(o.batch_tokens, so.max_seq_len)) : 0;
  std::unique_ptr<Session> s;
  if (!Session::create(*lm.model, so).move_to(&s, &err)) return die(err);
  const bool one_by_one = o.batch_tokens == 0;
  size_t tokens = 0, failed = 0;
  if (!o.ids_path.empty()) {  // each text's ids, for peers that take token ids
    std::string out;
    for (const char* t : texts) {
      if ((firsts.empty() ? s->run_text(t) : s->run_text_pair(o.query.c_str(), t)) != EB_OK)
        return die(std::string("--write-ids: ") + s->last_error());
      for (size_t i = 0; i < s->seq_len(); ++i) out += (i ? " " : "") + std::to_string(s->input_ids()[i]);
      out += "\n";
    }
    std::string werr;
    if (!write_file_atomically(o.ids_path, out.data(), out.size(), &werr)) return die(werr);
  }
  // warmup: one pass
  if (run_all_texts(*s, texts, firsts, one_by_one, &tokens, &failed) != EB_OK) return die(s->last_error());
  const long passes = o.runs_given ? o.runs : 3;
  std::vector<double> secs;
  secs.reserve(static_cast<size_t>(passes));  // the timed passes allocate nothing
  alloc_counter_start();
  for (long p = 0; p < passes; ++p) {
    const auto t0 = Clock::now();
    if (run_all_texts(*s, texts, firsts, one_by_one, &tokens, &failed) != EB_OK) {
      alloc_counter_stop();
      return die(s->last_error());
    }
    secs.push_back(ms_since(t0) / 1000.0);
  }
  const long allocations = alloc_counter_stop();
  const LatencyStats L = compute_stats(secs);
  // the op profile of one more pass (the GEMM share, and with --op-profile the phase table)
  const int kinds = static_cast<int>(OpKind::kCount);
  s->reset_profile();
  s->enable_profiling(true);
  const auto tp = Clock::now();
  run_all_texts(*s, texts, firsts, one_by_one, &tokens, &failed);
  const double profiled_pass_ms = ms_since(tp);
  s->enable_profiling(false);
  std::vector<double> kind_ms(static_cast<size_t>(kinds), 0.0);
  for (int l = 0; l <= c.layers; ++l)
    for (int k = 0; k < kinds; ++k) kind_ms[static_cast<size_t>(k)] += s->profile_ns(l, static_cast<OpKind>(k)) / 1e6;
  // GEMM operations per token of each profiling kind, from the program's per-token GEMMs (2 per
  // multiply-add); the once-per-sequence heads are left out
  std::vector<double> kind_ops(static_cast<size_t>(kinds), 0.0);
  for (const Op& op : s->program().ops())
    if (op.type == OpType::kGemm && !op.per_sequence && op.linear)
      kind_ops[static_cast<size_t>(op.profile)] += 2.0 * op.linear->in * op.linear->out;
  double total_ms = 0, gemm_ms = 0, ops_per_token = 0;
  for (int k = 0; k < kinds; ++k) {
    total_ms += kind_ms[static_cast<size_t>(k)];
    if (kind_ops[static_cast<size_t>(k)] > 0) gemm_ms += kind_ms[static_cast<size_t>(k)];
    ops_per_token += kind_ops[static_cast<size_t>(k)];
  }
  const double ran = static_cast<double>(texts.size() - failed);
  const double best_sps = ran / L.min, median_sps = ran / L.median, best_tps = tokens / L.min;
  const double limit_tps = o.peak_gops > 0 ? o.peak_gops * 1e9 / ops_per_token : 0;
  std::printf("edgebert-bench %s\n", EDGEBERT_VERSION_STRING);
  std::printf("model: %s\n  %s, %d layers, hidden %d, %d heads, intermediate %d\n", lm.description.c_str(),
              lm.model->int8 ? "int8" : "fp32", c.layers, c.hidden, c.heads, c.intermediate);
  std::printf("machine: %s\n  features: %s\n  threads: %ld\n", cpu.c_str(), features.c_str(), o.threads);
  std::printf("texts: %s: %zu texts, %zu tokens (%.1f per text), %zu too long for the session\n", o.texts_path.c_str(),
              texts.size(), tokens, tokens / std::max(1.0, ran), failed);
  if (!firsts.empty()) std::printf("pairs: (--query \"%s\", each text), as eb_session_rerank runs them\n", o.query.c_str());
  if (one_by_one)
    std::printf("runs: one text per run\n");
  else
    std::printf("runs: packed, up to %zu tokens per run (texts of at most %d tokens)\n", s->max_batch_tokens(),
                s->max_seq_len());
  std::printf("passes: %zu (after 1 warmup): best %.3f s, median %.3f s\n", secs.size(), L.min, L.median);
  std::printf("throughput: %.1f sentences/s, %.0f tokens/s (best pass; median pass %.1f sentences/s)\n", best_sps,
              best_tps, median_sps);
  std::printf("GEMM share: %.1f%% of the profiled op time\n", total_ms > 0 ? 100.0 * gemm_ms / total_ms : 0.0);
  std::printf("GEMM operations per token: %.1f MOP\n", ops_per_token / 1e6);
  if (limit_tps > 0)
    std::printf("int8-peak limit at %.0f GOPS: %.0f tokens/s -> %.1f%% of it\n", o.peak_gops, limit_tps,
                100.0 * best_tps / limit_tps);
  const Session::RunPhases& ph = s->run_phases();
  const double tok_ms = ph.tokenize_ns / 1e6, fwd_ms = ph.forward_ns / 1e6, setup_ms = ph.setup_ns / 1e6;
  if (o.op_profile) {
    std::printf("\nphase profile of one more pass (%zu runs, %.0f rows per run; ms per pass; of peak: of %ld x G):\n",
                static_cast<size_t>(ph.runs), ph.runs ? static_cast<double>(ph.rows) / ph.runs : 0.0, o.threads);
    std::printf("  %-26s %10s %7s %12s %8s %8s\n", "phase", "ms", "share", "rows", "GOPS", "of peak");
    auto row = [&](const char* name, double ms, double rows, double ops) {
      std::printf("  %-26s %10.2f %6.1f%%", name, ms, 100.0 * ms / profiled_pass_ms);
      if (ops > 0) {
        const double gops = ops / (ms * 1e6);
        std::printf(" %12.0f %8.1f", rows, gops);
        if (o.peak_gops > 0) std::printf(" %7.1f%%", 100.0 * gops / (o.peak_gops * static_cast<double>(o.threads)));
      }
      std::printf("\n");
    };
    row("checks+tokenize+pack", tok_ms, 0, 0);
    for (int k = 0; k < kinds; ++k) {
      const double ops = kind_ops[static_cast<size_t>(k)] * static_cast<double>(ph.rows);
      row(op_kind_name(static_cast<OpKind>(k)), kind_ms[static_cast<size_t>(k)], static_cast<double>(ph.rows), ops);
    }
    row("  of which XNNPACK setup", setup_ms, 0, 0);
    row("executor (between ops)", fwd_ms - total_ms, 0, 0);
    row("outside (outputs, loop)", profiled_pass_ms - fwd_ms - tok_ms, 0, 0);
    row("all GEMMs", gemm_ms, static_cast<double>(ph.rows), ops_per_token * static_cast<double>(ph.rows));
    row("pass", profiled_pass_ms, 0, 0);
  }
  std::printf("heap allocations during timed passes: %ld\n", allocations);
  if (!o.json_path.empty()) {
    JsonWriter j;
    j.begin_object();
    j.value("edgebert_version", EDGEBERT_VERSION_STRING);
    j.value("model", lm.description).value("precision", lm.model->int8 ? "int8" : "fp32");
    j.begin_object("machine").value("cpu", cpu).value("features", features).value("threads", static_cast<int>(o.threads)).end_object();
    j.value("texts", o.texts_path).value("count", texts.size()).value("tokens", tokens).value("too_long", failed);
    j.value("batch_tokens", one_by_one ? 0 : static_cast<int>(s->max_batch_tokens()));
    if (!firsts.empty()) j.value("query", o.query);
    j.begin_array("pass_seconds");
    for (double t : secs) j.value(nullptr, t);
    j.end_array();
    j.value("sentences_per_second", best_sps);
    j.value("sentences_per_second_median", median_sps);
    j.value("tokens_per_second", best_tps);
    j.value("gemm_share", total_ms > 0 ? gemm_ms / total_ms : 0.0);
    j.value("gemm_ops_per_token", ops_per_token);
    if (limit_tps > 0) j.value("peak_gops", o.peak_gops).value("fraction_of_int8_peak_limit", best_tps / limit_tps);
    if (o.op_profile) {
      j.begin_object("phase_profile_ms");
      j.value("profiled_pass", profiled_pass_ms).value("runs", static_cast<long long>(ph.runs));
      j.value("rows", static_cast<long long>(ph.rows)).value("tokenize", tok_ms).value("xnnpack_setup", setup_ms);
      j.value("executor_between_ops", fwd_ms - total_ms).value("outside_runs", profiled_pass_ms - fwd_ms - tok_ms);
      for (int k = 0; k < kinds; ++k) j.value(op_kind_name(static_cast<OpKind>(k)), kind_ms[static_cast<size_t>(k)]);
      j.end_object();
    }
    j.value("allocations_during_runs", static_cast<long long>(allocations));
    j.end_object();
    std::string werr;
    const std::string text = j.str() + "\n";
    if (!write_file_atomically(o.json_path, text.data(), text.size(), &werr)) return die(werr);
  }
  return allocations == 0 ? 0 : 3;
}

int head_sweep(const Options& o) {
  convert::SyntheticSpec base;
  base.layers = 1;
  base.vocab = 2048;
  std::string err;
  if (!convert::parse_synthetic_spec(o.head_sweep, &base, &err)) {
    std::fprintf(stderr, "edgebert-bench: error: --head-sweep: %s\n", err.c_str());
    return 1;
  }
  int32_t max_seq = 0;
  for (int32_t n : o.seq_lens) max_seq = std::max(max_seq, n);
  base.max_position = std::max(base.max_position, max_seq);
  std::string features;
  const std::string cpu = cpu_description(&features);
  std::string md;
  char line[1024];
  std::snprintf(line, sizeof line,
                "Head sweep: hidden %d, %d layer(s), intermediate %d, int8, %ld thread(s), %ld runs per cell (median ms)\n"
                "Machine: %s\n\n",
                base.hidden, base.layers, base.intermediate, o.threads, o.runs, cpu.c_str());
  md += line;
  md += "| heads x dim | params | proj MACs @128 | attn-core MACs @128 | arena @" + std::to_string(max_seq) +
        " 1 thr | arena @" + std::to_string(max_seq) + " " + std::to_string(o.threads) + " thr | naive @" +
        std::to_string(max_seq) + " |";
  for (int32_t n : o.seq_lens) md += " ms @" + std::to_string(n) + " |";
  md += "\n|---|---:|---:|---:|---:|---:|---:|";
  for (size_t i = 0; i < o.seq_lens.size(); ++i) md += "---:|";
  md += "\n";
  JsonWriter j;
  j.begin_object().value("hidden", base.hidden).value("layers", base.layers).value("threads", static_cast<int>(o.threads));
  j.value("cpu", cpu).begin_array("rows");
  std::printf("%s", md.c_str());
  std::fflush(stdout);
  for (int heads = 1; heads <= base.hidden; ++heads) {
    if (base.hidden % heads || base.hidden / heads < 16) continue;
    convert::SyntheticSpec spec = base;
    spec.heads = heads;
    Options mo = o;
    mo.fp32 = false;
    LoadedModel lm;
    char specbuf[256];
    std::snprintf(specbuf, sizeof specbuf, "hidden=%d,heads=%d,layers=%d,intermediate=%d,vocab=%d,max_position=%d",
                  spec.hidden, heads, spec.layers, spec.intermediate, spec.vocab, spec.max_position);
    if (!load_model(mo, specbuf, &lm, &err)) {
      std::fprintf(stderr, "edgebert-bench: error: %s\n", err.c_str());
      return 1;
    }
    size_t arena[2] = {0, 0}, naive = 0;
    std::vector<double> ms;
    for (int t = 0; t < 2; ++t) {
      SessionOptions so;
      so.threads = t == 0 ? 1 : static_cast<int>(o.threads);
      so.max_seq_len = max_seq;
      std::unique_ptr<Session> s;
      if (!Session::create(*lm.model, so).move_to(&s, &err)) {
        std::fprintf(stderr, "edgebert-bench: error: %s\n", err.c_str());
        return 1;
      }
      arena[t] = s->arena_bytes();
      naive = s->naive_bytes();
      if (so.threads == static_cast<int>(o.threads) && (t == 1 || o.threads == 1) && ms.empty()) {
        for (int32_t n : o.seq_lens) {
          RunResult r;
          if (!measure(*s, static_cast<size_t>(n), o, false, false, &r, &err)) {
            std::fprintf(stderr, "edgebert-bench: error: %s\n", err.c_str());
            return 1;
          }
          ms.push_back(r.latency.median);
        }
      }
    }
    std::snprintf(line, sizeof line, "| %d x %d | %" PRId64 " | %" PRId64 " | %" PRId64 " | %zu | %zu | %zu |", heads,
                  base.hidden / heads, convert::bert_parameter_count(spec), convert::encoder_projection_macs(spec, 128),
                  convert::encoder_attention_core_macs(spec, 128), arena[0], arena[1], naive);
    std::string row = line;
    for (double v : ms) {
      std::snprintf(line, sizeof line, " %.2f |", v);
      row += line;
    }
    row += "\n";
    std::printf("%s", row.c_str());
    std::fflush(stdout);
    md += row;
    j.begin_object()
        .value("heads", heads)
        .value("head_dim", base.hidden / heads)
        .value("params", static_cast<long long>(convert::bert_parameter_count(spec)))
        .value("projection_macs_128", static_cast<long long>(convert::encoder_projection_macs(spec, 128)))
        .value("attention_core_macs_128", static_cast<long long>(convert::encoder_attention_core_macs(spec, 128)))
        .value("arena_bytes_1_thread", arena[0])
        .value("arena_bytes_T_threads", arena[1])
        .value("naive_bytes", naive);
    j.begin_object("median_ms");
    for (size_t i = 0; i < ms.size(); ++i) j.value(std::to_string(o.seq_lens[i]).c_str(), ms[i]);
    j.end_object().end_object();
  }
  j.end_array().end_object();
  std::string werr;
  if (!o.markdown_path.empty() && !write_file_atomically(o.markdown_path, md.data(), md.size(), &werr)) {
    std::fprintf(stderr, "edgebert-bench: error: %s\n", werr.c_str());
    return 1;
  }
  const std::string text = j.str() + "\n";
  if (!o.json_path.empty() && !write_file_atomically(o.json_path, text.data(), text.size(), &werr)) {
    std::fprintf(stderr, "edgebert-bench: error: %s\n", werr.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--help" || a == "-h") return usage(stdout, 0);
    if (a == "--fp32") {
      o.fp32 = true;
      continue;
    }
    if (a == "--op-profile") {
      o.op_profile = true;
      continue;
    }
    if (!(v = value())) return usage(stderr, 2);
    bool ok = true;
    if (a == "--model") o.model_path = v;
    else if (a == "--synthetic") o.synthetic = v;
    else if (a == "--head-sweep") o.head_sweep = v;
    else if (a == "--json") o.json_path = v;
    else if (a == "--weight-cache") o.cache_path = v;
    else if (a == "--sessions") ok = parse_int(v, 1, 64, &o.sessions);
    else if (a == "--markdown") o.markdown_path = v;
    else if (a == "--texts") o.texts_path = v;
    else if (a == "--write-ids") o.ids_path = v;
    else if (a == "--query") o.query = v;
    else if (a == "--batch-tokens") ok = parse_int(v, 0, 1 << 20, &o.batch_tokens);
    else if (a == "--peak-gops") {
      char* end = nullptr;
      o.peak_gops = std::strtod(v, &end);
      ok = *v && !*end && o.peak_gops > 0 && o.peak_gops < 1e7;
    }
    else if (a == "--seq-len") ok = parse_int(v, 1, 1 << 16, &o.seq_len);
    else if (a == "--threads") ok = parse_int(v, 1, 256, &o.threads);
    else if (a == "--warmup") ok = parse_int(v, 0, 1 << 20, &o.warmup);
    else if (a == "--runs") ok = parse_int(v, 1, 1 << 20, &o.runs), o.runs_given = true;
    else if (a == "--min-secs") {
      char* end = nullptr;
      o.min_secs = std::strtod(v, &end);
      ok = *v && !*end && o.min_secs >= 0 && o.min_secs < 1e6;
    } else if (a == "--seq-lens") {
      ok = parse_int_list(v, &o.seq_lens) && !o.seq_lens.empty();
      for (int32_t n : o.seq_lens) ok = ok && n >= 1 && n <= 65536;
    } else {
      std::fprintf(stderr, "edgebert-bench: error: unknown argument '%s'\n", a.c_str());
      return usage(stderr, 2);
    }
    if (!ok) {
      std::fprintf(stderr, "edgebert-bench: error: bad value for %s: '%s'\n", a.c_str(), v);
      return 2;
    }
  }
  const int modes = !o.model_path.empty() + !o.synthetic.empty() + !o.head_sweep.empty();
  if (modes != 1) {
    std::fprintf(stderr, "edgebert-bench: error: give exactly one of --model, --synthetic, --head-sweep\n");
    return usage(stderr, 2);
  }
  if (!o.texts_path.empty()) {
    if (o.model_path.empty()) {
      std::fprintf(stderr, "edgebert-bench: error: --texts needs --model (a model with a vocabulary)\n");
      return usage(stderr, 2);
    }
    return bench_texts(o);
  }
  if (!o.query.empty()) {
    std::fprintf(stderr, "edgebert-bench: error: --query needs --texts (the passages)\n");
    return usage(stderr, 2);
  }
  return o.head_sweep.empty() ? bench_one(o) : head_sweep(o);
}
