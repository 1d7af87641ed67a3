// SPDX-License-Identifier: Apache-2.0
// test_weight_cache.cpp: packed weights shared through our xnn_weights_cache_provider
// (backend/packed_weights.h) and the weight cache file (backend/weight_cache_file.h), through
// XnnGemm on a real converted model (h192_3x64 int8: 3 layers x 4 GEMMs + the pooler):
//   - operators of one GEMM share one copy (bytes counted), also when created on two threads;
//   - outputs are bit-identical with and without the store and with a cache file (fresh, reloaded);
//     the reference is the model's own int8 arithmetic in float64 (the first GEMM) and operators
//     that pack their own copy, as before the store existed;
//   - a reloaded file packs nothing and never reads the GEMM weights (zeroed weights, same output);
//   - truncated, bit-flipped, garbage, wrong-content-id and wrong-build-id files are refused with a
//     reason (and then rebuilt); an unwritable path leaves the store working from memory;
//   - two forked processes creating one file at once both succeed and agree;
//   - runs allocate nothing with the store;
//   - the program layout (probed packed sizes, quantization digest); a file of another layout or
//     runtime version, crafted offsets (2^63 - 64, past the end), a short last entry, payload
//     flips (CRC32C) are rebuilt with bit-identical outputs; the payload opt-out;
//   - the path: a FIFO (no blocking), a foreign file, a symlink, the model file (also through a
//     hard link) are never replaced; no temporary file is left by a write or a killed writer,
//     stale ones of dead writers are removed at the next load;
//   - CRC32C against known values and a bitwise reference.
// On the 2022 API (Debian 12) it checks the documented "unavailable" behaviour instead.
#include <catch2/catch.hpp>

#include <pthreadpool.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.h"
#include "backend/packed_weights.h"
#include "backend/weight_cache.h"
#include "backend/weight_cache_file.h"
#include "crc32c.h"
#include "model.h"
#include "test_support.h"
#include "xnn_gemm.h"

using edgebert::ContentId;
using edgebert::LinearView;
using edgebert::Model;
using edgebert::PackedWeights;
using edgebert::XnnGemm;
namespace wcf = edgebert::weight_cache_file;

namespace {

constexpr size_t kRows = 7, kMaxRows = 32;

// The model's GEMMs as the session creates them: residual-feeding ones with float output where
// this XNNPACK has it.
struct GemmSpec {
  LinearView view;
  bool float_output = false;
};

struct Fixture {
  std::unique_ptr<Model> model;
  std::vector<GemmSpec> gemms;
  std::vector<std::vector<uint8_t>> inputs;  // kMaxRows rows per GEMM (int8 or float bytes)
};

const Fixture& fixture() {
  static Fixture f = [] {
    Fixture x;
    std::string err;
    REQUIRE(edgebert::xnn_ready().is_ok());
    const std::string path = edgebert::test::ebm_path("h192_3x64", "int8");
    REQUIRE(Model::load_file(path.c_str()).move_to(&x.model, &err));
    const bool fo = XnnGemm::int8_float_output_supported();
    for (const auto& L : x.model->layers) {
      x.gemms.push_back({L.qkv, false});
      x.gemms.push_back({L.attention_output, fo && L.attention_output.int8});
      x.gemms.push_back({L.intermediate, false});
      x.gemms.push_back({L.output, fo && L.output.int8});
    }
    if (x.model->has_pooler) x.gemms.push_back({x.model->pooler, false});
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> q(-128, 127);
    std::uniform_real_distribution<float> u(-2.f, 2.f);
    for (const GemmSpec& g : x.gemms) {
      const size_t n = kMaxRows * static_cast<size_t>(g.view.in);  // room for every row count used
      std::vector<uint8_t> in(g.view.int8 ? n : n * sizeof(float));
      if (g.view.int8) {
        for (auto& b : in) b = static_cast<uint8_t>(static_cast<int8_t>(q(rng)));
      } else {
        for (size_t i = 0; i < n; ++i) {
          const float v = u(rng);
          std::memcpy(in.data() + i * sizeof(float), &v, sizeof v);
        }
      }
      x.inputs.push_back(std::move(in));
    }
    return x;
  }();
  return f;
}

size_t output_bytes(const GemmSpec& g, size_t rows = kRows) {
  const size_t n = rows * static_cast<size_t>(g.view.out);
  return g.view.int8 && !g.float_output ? n : n * sizeof(float);
}

// One operator per GEMM of the model (GEMM key = its index), optionally through a store.
struct OperatorSet {
  std::vector<std::unique_ptr<XnnGemm>> ops;
  std::vector<std::vector<uint8_t>> out;
};

// Without Catch2 macros, so that a worker thread can call it (Catch2's INFO and assertions are not
// thread-safe: from two threads at once they race on its message stack). Null on failure, with
// the reason in *error.
std::unique_ptr<OperatorSet> build_set(PackedWeights* store, const std::vector<GemmSpec>& gemms, std::string* error) {
  auto set = std::make_unique<OperatorSet>();
  for (size_t i = 0; i < gemms.size(); ++i) {
    auto g = std::make_unique<XnnGemm>();
    const edgebert::Status made = g->create(gemms[i].view, gemms[i].float_output, kMaxRows, store, i);
    if (!made.is_ok()) {
      *error = "GEMM " + std::to_string(i) + ": " + made.message();
      return nullptr;
    }
    set->ops.push_back(std::move(g));
    set->out.emplace_back(output_bytes(gemms[i], kMaxRows) + 64, uint8_t(0x5A));
  }
  return set;
}

std::unique_ptr<OperatorSet> make_set(PackedWeights* store, const std::vector<GemmSpec>* specs = nullptr) {
  std::string error;
  auto set = build_set(store, specs ? *specs : fixture().gemms, &error);
  INFO(error);
  REQUIRE(set);
  return set;
}

// Runs every GEMM on its input; returns the outputs.
std::vector<std::vector<uint8_t>> run_set(OperatorSet& set, pthreadpool_t pool = nullptr) {
  const Fixture& f = fixture();
  for (size_t i = 0; i < set.ops.size(); ++i) {
    REQUIRE(set.ops[i]->setup(kRows, f.inputs[i].data(), set.out[i].data(), pool));
    REQUIRE(set.ops[i]->run(pool));
  }
  std::vector<std::vector<uint8_t>> r;
  for (size_t i = 0; i < set.ops.size(); ++i)
    r.emplace_back(set.out[i].begin(), set.out[i].begin() + static_cast<long>(output_bytes(f.gemms[i])));
  return r;
}

// Outputs of operators that pack their own copy (the path without a store).
const std::vector<std::vector<uint8_t>>& own_copy_outputs() {
  static const std::vector<std::vector<uint8_t>> r = [] {
    auto set = make_set(nullptr);
    return run_set(*set);
  }();
  return r;
}

std::string temp_dir() {
  static const std::string d = [] {
    char tmpl[] = "/tmp/eb_weight_cache_XXXXXX";
    const char* p = mkdtemp(tmpl);
    REQUIRE(p != nullptr);
    return std::string(p);
  }();
  return d;
}

std::unique_ptr<PackedWeights> new_store() {
  auto r = PackedWeights::create(fixture().gemms.size());
  REQUIRE(r.is_ok());
  return r.take();
}

#if EDGEBERT_XNN_SHARED_WEIGHTS
// The GEMMs as the program hands them to prepare_model_weights.
std::vector<edgebert::GemmToPack> to_pack(const std::vector<GemmSpec>& specs) {
  std::vector<edgebert::GemmToPack> g;
  for (const GemmSpec& s : specs) g.push_back({&s.view, s.float_output});
  return g;
}

// The program layout of `specs` (the fixture's GEMMs by default), as a cache file must match it.
wcf::Layout layout_of(const std::vector<GemmSpec>& specs) {
  auto store = new_store();
  auto r = edgebert::describe_layout(*fixture().model, to_pack(specs), store.get());
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  CHECK(store->entry_count() == 0);  // probing packs nothing
  CHECK(store->packs() == 0);
  return r.take();
}
const wcf::Layout& layout() {
  static const wcf::Layout l = layout_of(fixture().gemms);
  return l;
}
#endif

#if EDGEBERT_XNN_SHARED_WEIGHTS
std::vector<uint8_t> read_file(const std::string& path) { return edgebert::test::read_bytes(path); }
void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Packs the model's GEMMs into a new store and writes `path`.
void create_cache_file(const std::string& path, const ContentId& id) {
  auto store = new_store();
  { auto set = make_set(store.get()); }
  const edgebert::Status s = wcf::write(path, id, layout(), store.get(), false);
  INFO(s.message());
  REQUIRE(s.is_ok());
}
#endif

}  // namespace

#if EDGEBERT_XNN_SHARED_WEIGHTS

TEST_CASE("the store's first GEMM matches the model's int8 arithmetic in float64", "[weight_cache]") {
  const Fixture& f = fixture();
  const LinearView& v = f.gemms[0].view;  // layer 0 qkv, int8 output
  REQUIRE(v.int8);
  auto store = new_store();
  auto set = make_set(store.get());
  const auto out = run_set(*set);
  int worst = 0;
  const auto* x = reinterpret_cast<const int8_t*>(f.inputs[0].data());
  for (size_t r = 0; r < kRows; ++r)
    for (int c = 0; c < v.out; ++c) {
      double acc = 0;
      for (int k = 0; k < v.in; ++k)
        acc += double(x[r * v.in + k] - v.input_zero_point) * v.weight_s8[size_t(c) * v.in + k];
      const double y = acc * v.input_scale * v.weight_scales[c] + v.bias[c];
      const double q = std::nearbyint(y / v.output_channel_scale(c)) + v.output_zero_point;
      const int ref = static_cast<int>(std::min(127.0, std::max(-128.0, q)));
      worst = std::max(worst, std::abs(int(static_cast<int8_t>(out[0][r * v.out + c])) - ref));
    }
  CHECK(worst <= 1);  // XNNPACK's fixed-point requantization vs float64 rounding
}

TEST_CASE("operators of one GEMM share one packed copy", "[weight_cache]") {
  const Fixture& f = fixture();
  const size_t n = f.gemms.size();
  auto store = new_store();
  const size_t xnn0 = edgebert::xnn_bytes_allocated();
  auto a = make_set(store.get());
  const size_t xnn_a = edgebert::xnn_bytes_allocated() - xnn0;
  CHECK(store->packs() == n);
  CHECK(store->entry_count() == n);
  CHECK(store->hits() == 0);
  const size_t packed = store->packed_bytes();
  // at least every weight byte once (int8: 1 byte, fp32: 4 bytes per weight)
  size_t weights = 0;
  for (const GemmSpec& g : f.gemms) weights += size_t(g.view.in) * g.view.out * (g.view.int8 ? 1 : 4);
  CHECK(packed >= weights);
  CHECK(packed < weights + weights / 4);
  CHECK(store->heap_bytes() == packed);
  CHECK(xnn_a < packed / 10);  // XNNPACK's own allocations are the operator structs, not the weights

  // an own-copy set holds about the same bytes through XNNPACK's allocator
  const size_t xnn1 = edgebert::xnn_bytes_allocated();
  auto own = make_set(nullptr);
  const size_t xnn_own = edgebert::xnn_bytes_allocated() - xnn1;
  CHECK(xnn_own >= packed);

  const size_t xnn2 = edgebert::xnn_bytes_allocated();
  auto b = make_set(store.get());
  CHECK(edgebert::xnn_bytes_allocated() - xnn2 < packed / 10);
  CHECK(store->packs() == n);  // nothing packed again
  CHECK(store->hits() == n);
  CHECK(store->packed_bytes() == packed);
  CHECK(store->users() == 2 * n);

  const auto& ref = own_copy_outputs();
  CHECK(run_set(*a) == ref);
  CHECK(run_set(*b) == ref);
  CHECK(run_set(*own) == ref);
  a.reset();
  CHECK(store->users() == n);
  CHECK(run_set(*b) == ref);  // b still reads the shared copy after a is gone
}

TEST_CASE("operators created on two threads at once pack each GEMM once", "[weight_cache]") {
  const size_t n = fixture().gemms.size();
  auto store = new_store();
  std::unique_ptr<OperatorSet> sets[2];
  std::string errors[2];
  std::thread t([&] {  // no Catch2 macro in this thread
    try {
      sets[1] = build_set(store.get(), fixture().gemms, &errors[1]);
    } catch (const std::exception& e) {
      errors[1] = e.what();
    }
  });
  sets[0] = build_set(store.get(), fixture().gemms, &errors[0]);
  t.join();
  INFO(errors[0] << " | " << errors[1]);
  REQUIRE(sets[0]);
  REQUIRE(sets[1]);
  CHECK(store->packs() == n);
  CHECK(store->hits() == n);
  {
    pthreadpool_t pool = pthreadpool_create(2);
    CHECK(run_set(*sets[0], pool) == own_copy_outputs());
    CHECK(run_set(*sets[1], pool) == own_copy_outputs());
    pthreadpool_destroy(pool);
  }
}

TEST_CASE("runs allocate nothing with the store, in memory or mapped", "[weight_cache]") {
  const std::string path = temp_dir() + "/noalloc.ebwc";
  create_cache_file(path, fixture().model->content_id_or_hash());
  for (bool mapped : {false, true}) {
    auto store = new_store();
    if (mapped) REQUIRE(wcf::load(path, fixture().model->content_id_or_hash(), layout(), store.get()).outcome == wcf::LoadOutcome::kLoaded);
    auto set = make_set(store.get());
    pthreadpool_t pool = pthreadpool_create(2);
    const Fixture& f = fixture();
    const size_t rows[] = {7, 32, 1, 7};
    for (int pass = 0; pass < 2; ++pass) {
      edgebert::tools::alloc_counter_start();
      bool ok = true;
      for (size_t r : rows)
        for (size_t i = 0; i < set->ops.size(); ++i)
          ok = ok && set->ops[i]->setup(r, f.inputs[i].data(), set->out[i].data(), pool) && set->ops[i]->run(pool);
      const long allocations = edgebert::tools::alloc_counter_stop();
      REQUIRE(ok);
      INFO("mapped " << mapped << ", pass " << pass);
      if (pass == 1) CHECK(allocations == 0);
    }
    pthreadpool_destroy(pool);
  }
}

TEST_CASE("a cache file: written, remapped, reloaded; the reload packs nothing", "[weight_cache]") {
  const Fixture& f = fixture();
  const size_t n = f.gemms.size();
  const ContentId id = f.model->content_id_or_hash();
  CHECK(f.model->has_content_id);  // converted by this converter (schema 3)
  const std::string path = temp_dir() + "/fresh.ebwc";
  std::remove(path.c_str());

  auto store = new_store();
  CHECK(wcf::load(path, id, layout(), store.get()).outcome == wcf::LoadOutcome::kMissing);
  { auto set = make_set(store.get()); }  // pack, then no operator is left
  const size_t packed = store->packed_bytes();
  REQUIRE(wcf::write(path, id, layout(), store.get(), true).is_ok());
  CHECK(store->heap_bytes() == 0);  // the heap copies were swapped for the file's pages
  CHECK(store->mapped_bytes() == packed);
  CHECK(wcf::verify_payload(path).is_ok());
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK(size_t(st.st_size) >= packed);
  CHECK(size_t(st.st_size) < packed + 64 * n + 8192);
  {
    auto set = make_set(store.get());
    CHECK(run_set(*set) == own_copy_outputs());
  }

  // reload, with the GEMM weights zeroed: the file alone must give the same outputs
  std::vector<GemmSpec> zeroed = f.gemms;
  std::vector<std::vector<int8_t>> zeros8;
  std::vector<std::vector<float>> zeros32;
  for (GemmSpec& g : zeroed) {
    const size_t count = size_t(g.view.in) * g.view.out;
    if (g.view.int8) {
      zeros8.emplace_back(count, int8_t(0));
      g.view.weight_s8 = zeros8.back().data();
    } else {
      zeros32.emplace_back(count, 0.f);
      g.view.weight_f32 = zeros32.back().data();
    }
  }
  auto reloaded = new_store();
  const wcf::LoadResult r = wcf::load(path, id, layout(), reloaded.get());
  INFO(r.message);
  REQUIRE(r.outcome == wcf::LoadOutcome::kLoaded);
  CHECK(reloaded->mapped_bytes() == packed);
  CHECK(reloaded->heap_bytes() == 0);
  auto set = make_set(reloaded.get(), &zeroed);
  CHECK(reloaded->packs() == 0);
  CHECK(reloaded->hits() == n);
  CHECK(run_set(*set) == own_copy_outputs());
  // and the zeroed weights do change the output of operators that pack
  auto packing = make_set(nullptr, &zeroed);
  CHECK(run_set(*packing) != own_copy_outputs());
}

TEST_CASE("damaged or foreign cache files are refused with a reason, then rebuilt", "[weight_cache]") {
  const Fixture& f = fixture();
  const ContentId id = f.model->content_id_or_hash();
  const std::string good = temp_dir() + "/good.ebwc";
  create_cache_file(good, id);
  const std::vector<uint8_t> bytes = read_file(good);
  REQUIRE(bytes.size() > 8192);

  struct Damage {
    const char* what;
    wcf::LoadOutcome outcome;
    std::vector<uint8_t> file;
  };
  std::vector<Damage> cases;
  cases.push_back({"empty", wcf::LoadOutcome::kCorrupt, {}});
  cases.push_back({"truncated header", wcf::LoadOutcome::kCorrupt, std::vector<uint8_t>(bytes.begin(), bytes.begin() + 100)});
  cases.push_back({"truncated payload", wcf::LoadOutcome::kCorrupt,
                   std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 2))});
  cases.push_back({"extended", wcf::LoadOutcome::kCorrupt, bytes});
  cases.back().file.resize(bytes.size() + 4096, 0);
  std::mt19937 rng(5);
  std::vector<uint8_t> garbage(bytes.size());
  for (auto& b : garbage) b = static_cast<uint8_t>(rng());
  cases.push_back({"garbage", wcf::LoadOutcome::kForeign, garbage});  // not a cache: never replaced
  {
    std::vector<uint8_t> flipped = bytes;
    flipped[0] ^= 0x10;  // the magic: no longer recognisable as ours
    cases.push_back({"bit flip in the magic", wcf::LoadOutcome::kForeign, flipped});
  }
  for (size_t at : {size_t(13), size_t(20), size_t(30), size_t(50), size_t(117), size_t(130), size_t(150),
                    size_t(170), size_t(250), wcf::kHeaderBytes + 5, wcf::kHeaderBytes + 12}) {
    std::vector<uint8_t> flipped = bytes;
    flipped[at] ^= 0x10;
    cases.push_back({"bit flip in header or table", wcf::LoadOutcome::kCorrupt, flipped});
  }
  {
    std::vector<uint8_t> other = bytes;  // a valid file of another model
    other[wcf::kContentIdOffset] ^= 1;
    const uint64_t c = wcf::header_checksum(other.data(), other.size());
    for (int i = 0; i < 8; ++i) other[wcf::kChecksumOffset + i] = static_cast<uint8_t>(c >> (8 * i));
    cases.push_back({"wrong content id", wcf::LoadOutcome::kMismatch, other});
  }
  {
    std::vector<uint8_t> other = bytes;  // a valid file of another XNNPACK build
    other[wcf::kBuildIdOffset + 3] ^= 0x40;
    if (wcf::identity().build_id.empty()) other[wcf::kBuildIdSizeOffset] = 32;
    const uint64_t c = wcf::header_checksum(other.data(), other.size());
    for (int i = 0; i < 8; ++i) other[wcf::kChecksumOffset + i] = static_cast<uint8_t>(c >> (8 * i));
    cases.push_back({"wrong build id", wcf::LoadOutcome::kMismatch, other});
  }
  {
    std::vector<uint8_t> other = bytes;  // made on a CPU with other features
    other[wcf::kCpuFeaturesOffset] ^= 0x02;
    const uint64_t c = wcf::header_checksum(other.data(), other.size());
    for (int i = 0; i < 8; ++i) other[wcf::kChecksumOffset + i] = static_cast<uint8_t>(c >> (8 * i));
    cases.push_back({"other CPU", wcf::LoadOutcome::kMismatch, other});
  }

  const std::string path = temp_dir() + "/damaged.ebwc";
  for (const Damage& d : cases) {
    INFO(d.what);
    write_file(path, d.file);
    {  // read ahead (as the C API does): the same outcome and message, nothing adopted
      auto store = new_store();
      wcf::Prefetch ahead(path, true);
      const wcf::LoadResult r = wcf::load(ahead, id, layout(), store.get(), wcf::FileId());
      CHECK(r.outcome == d.outcome);
      CHECK(r.message == wcf::load(path, id, layout(), new_store().get()).message);
      CHECK(store->entry_count() == 0);
    }
    auto store = new_store();
    const wcf::LoadResult r = wcf::load(path, id, layout(), store.get());
    INFO(r.message);
    CHECK(r.outcome == d.outcome);
    CHECK(r.message.find(path) != std::string::npos);
    CHECK(store->entry_count() == 0);  // untouched
    { auto set = make_set(store.get()); }
    if (d.outcome == wcf::LoadOutcome::kForeign) {  // never replaced, left byte for byte
      const edgebert::Status s = wcf::write(path, id, layout(), store.get(), true);
      CHECK(s.code() == EB_ERROR_IO);
      CHECK(s.message().find("not overwriting") != std::string::npos);
      CHECK(read_file(path) == d.file);
      continue;
    }
    // the caller rebuilds: pack, write over the damaged file, and the next load maps it
    REQUIRE(wcf::write(path, id, layout(), store.get(), true).is_ok());
    auto again = new_store();
    CHECK(wcf::load(path, id, layout(), again.get()).outcome == wcf::LoadOutcome::kLoaded);
    auto set = make_set(again.get());
    CHECK(again->packs() == 0);
    CHECK(run_set(*set) == own_copy_outputs());
  }

  // A flipped payload byte is seen at load (every entry's CRC32C) and by verify_payload.
  std::vector<uint8_t> payload_flip = bytes;
  payload_flip[bytes.size() - 5000] ^= 1;
  write_file(path, payload_flip);
  const edgebert::Status flipped = wcf::verify_payload(path);
  CHECK(!flipped.is_ok());
  CHECK(flipped.code() == EB_ERROR_INVALID_MODEL);
  CHECK_THAT(flipped.message(), Catch::Contains("are corrupt (CRC32C mismatch)"));
  CHECK(wcf::verify_payload(good).is_ok());
  auto store = new_store();
  const wcf::LoadResult loaded = wcf::load(path, id, layout(), store.get());
  CHECK(loaded.outcome == wcf::LoadOutcome::kCorrupt);
  CHECK(loaded.message == flipped.message());  // one message for both (Prefetch::State::bad_entry)
}

TEST_CASE("a file read ahead: used once, or dropped at any point without harm", "[weight_cache]") {
  const ContentId id = fixture().model->content_id_or_hash();
  const std::string path = temp_dir() + "/ahead.ebwc";
  create_cache_file(path, id);
  for (bool verify : {true, false}) {
    INFO("verify " << verify);
    auto store = new_store();
    wcf::Prefetch ahead(path, verify);
    CHECK(ahead.path() == path);
    CHECK(ahead.verify() == verify);
    REQUIRE(wcf::load(ahead, id, layout(), store.get(), wcf::FileId()).outcome == wcf::LoadOutcome::kLoaded);
    auto set = make_set(store.get());
    CHECK(store->packs() == 0);
    CHECK(run_set(*set) == own_copy_outputs());
  }
  // dropped unused: at once, after a while, after cancel() (the threads stop; nothing is changed)
  const std::vector<uint8_t> before = read_file(path);
  for (int wait_us : {0, 200, 2000}) {
    wcf::Prefetch ahead(path, true);
    if (wait_us) std::this_thread::sleep_for(std::chrono::microseconds(wait_us));
    if (wait_us == 2000) ahead.cancel();
  }
  CHECK(read_file(path) == before);
  {  // the model file named as its own cache is recognised (st_dev / st_ino), not just its magic
    const std::string model = edgebert::test::ebm_path("h192_3x64", "int8");
    struct stat st;
    REQUIRE(stat(model.c_str(), &st) == 0);
    wcf::Prefetch ahead(model, true);
    auto store = new_store();
    const wcf::LoadResult r = wcf::load(ahead, id, layout(), store.get(), wcf::FileId{true, uint64_t(st.st_dev), uint64_t(st.st_ino)});
    CHECK(r.outcome == wcf::LoadOutcome::kForeign);
    CHECK(r.message.find("model file itself") != std::string::npos);
  }
  {  // a model that fails to load drops the read-ahead it started (ASan / TSan see the threads end)
    const std::string bad = temp_dir() + "/ahead_bad.ebm";
    write_file(bad, std::vector<uint8_t>(300, 0x5a));
    eb_load_options o;
    eb_load_options_init(&o);
    o.weight_cache_path = path.c_str();
    eb_model* m = nullptr;
    char err[256];
    CHECK(eb_model_load_file_with_options(bad.c_str(), &o, &m, err, sizeof err) != EB_OK);
    CHECK(m == nullptr);
    CHECK(read_file(path) == before);
  }
}

TEST_CASE("an unwritable cache path leaves the store working from memory", "[weight_cache]") {
  const ContentId id = fixture().model->content_id_or_hash();
  auto store = new_store();
  { auto set = make_set(store.get()); }
  const size_t packed = store->packed_bytes();
  for (const std::string& path : {std::string("/dev/null/cache.ebwc"), temp_dir() + "/no/such/dir/cache.ebwc"}) {
    const wcf::LoadResult r = wcf::load(path, id, layout(), store.get());
    CHECK(r.outcome != wcf::LoadOutcome::kLoaded);
    const edgebert::Status s = wcf::write(path, id, layout(), store.get(), true);
    CHECK(!s.is_ok());
    CHECK(s.code() == EB_ERROR_IO);
    CHECK(s.message().find(path) != std::string::npos);
  }
  CHECK(store->heap_bytes() == packed);
  auto set = make_set(store.get());
  CHECK(store->packs() == fixture().gemms.size());
  CHECK(run_set(*set) == own_copy_outputs());
}

TEST_CASE("two processes creating one cache file at once both succeed and agree", "[weight_cache]") {
  const ContentId id = fixture().model->content_id_or_hash();
  const auto& ref = own_copy_outputs();
  const std::string path = temp_dir() + "/race.ebwc";
  std::remove(path.c_str());
  (void)layout();  // made before the children exist
  int go[2];
  REQUIRE(pipe(go) == 0);
  pid_t kids[2];
  for (pid_t& kid : kids) {
    kid = fork();
    REQUIRE(kid >= 0);
    if (kid == 0) {
      ::close(go[1]);
      char c;
      if (::read(go[0], &c, 1) != 1) _exit(10);
      auto rs = PackedWeights::create(fixture().gemms.size());
      if (!rs.is_ok()) _exit(11);
      auto store = rs.take();
      const wcf::LoadResult r = wcf::load(path, id, layout(), store.get());
      if (r.outcome != wcf::LoadOutcome::kLoaded) {
        std::vector<std::unique_ptr<XnnGemm>> ops;
        for (size_t i = 0; i < fixture().gemms.size(); ++i) {
          ops.push_back(std::make_unique<XnnGemm>());
          if (!ops.back()->create(fixture().gemms[i].view, fixture().gemms[i].float_output, kMaxRows, store.get(), i).is_ok())
            _exit(12);
        }
        ops.clear();
        if (!wcf::write(path, id, layout(), store.get(), true).is_ok()) _exit(13);
      }
      // its outputs must be the reference's
      std::vector<std::unique_ptr<XnnGemm>> ops;
      for (size_t i = 0; i < fixture().gemms.size(); ++i) {
        ops.push_back(std::make_unique<XnnGemm>());
        if (!ops.back()->create(fixture().gemms[i].view, fixture().gemms[i].float_output, kMaxRows, store.get(), i).is_ok())
          _exit(14);
        std::vector<uint8_t> out(output_bytes(fixture().gemms[i]));
        if (!ops.back()->setup(kRows, fixture().inputs[i].data(), out.data(), nullptr) || !ops.back()->run(nullptr))
          _exit(15);
        if (out != ref[i]) _exit(16);
      }
      _exit(0);
    }
  }
  ::close(go[0]);
  const char start[2] = {'x', 'x'};
  REQUIRE(::write(go[1], start, 2) == 2);  // both children start together
  ::close(go[1]);
  for (pid_t kid : kids) {
    int status = 0;
    REQUIRE(waitpid(kid, &status, 0) == kid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto store = new_store();
  CHECK(wcf::load(path, id, layout(), store.get()).outcome == wcf::LoadOutcome::kLoaded);
  CHECK(wcf::verify_payload(path).is_ok());
  // no temporary file left behind
  int leftovers = 0;
  for (const auto& e : std::filesystem::directory_iterator(temp_dir()))
    if (e.path().filename().string().find("race.ebwc.tmp") == 0) ++leftovers;
  CHECK(leftovers == 0);
}

namespace {

void put64_at(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get64_at(const std::vector<uint8_t>& b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(b[at + i]) << (8 * i);
  return v;
}
size_t entry_at(size_t k) { return wcf::kHeaderBytes + k * wcf::kEntryBytes; }

// Whether prepare() reads the file ahead, as the C API does (weight_cache_file::Prefetch, started
// before the layout is known); the tests of damaged, crafted and foreign files run both ways.
bool g_read_ahead = false;
struct ReadAhead {
  explicit ReadAhead(bool on) { g_read_ahead = on; }
  ~ReadAhead() { g_read_ahead = false; }
};

edgebert::ModelWeights prepare(const std::string& path, const std::vector<GemmSpec>& specs,
                               const edgebert::WeightCacheOptions& o = edgebert::WeightCacheOptions()) {
  edgebert::WeightCacheOptions options = o;
  if (g_read_ahead) {
    options.prefetch = edgebert::prefetch_weight_cache(path, options);
    REQUIRE(options.prefetch);
  }
  auto r = edgebert::prepare_model_weights(*fixture().model, to_pack(specs), path, options);
  INFO(r.status().message());
  REQUIRE(r.is_ok());
  return r.take();
}
edgebert::ModelWeights prepare(const std::string& path) { return prepare(path, fixture().gemms); }

std::vector<std::vector<uint8_t>> outputs_of(const edgebert::ModelWeights& w) {
  REQUIRE(w.store);
  auto set = make_set(w.store.get());
  return run_set(*set);
}

// A valid cache file of the fixture at `path`, made through prepare_model_weights; its bytes.
std::vector<uint8_t> fresh_cache(const std::string& path) {
  std::remove(path.c_str());
  const edgebert::ModelWeights w = prepare(path);
  REQUIRE(w.state == EB_WEIGHT_CACHE_CREATED);
  return read_file(path);
}

// `bytes` at `path`: prepare must rebuild it (message naming `why`), and then load what it wrote.
void expect_rebuilt(const std::string& path, const std::vector<uint8_t>& bytes, const char* why) {
  write_file(path, bytes);
  {
    const edgebert::ModelWeights w = prepare(path);
    INFO(w.message);
    CHECK(w.state == EB_WEIGHT_CACHE_CREATED);
    CHECK(w.message.find(why) != std::string::npos);
    CHECK(outputs_of(w) == own_copy_outputs());
  }
  const edgebert::ModelWeights again = prepare(path);
  INFO(again.message);
  CHECK(again.state == EB_WEIGHT_CACHE_LOADED);
  CHECK(again.store->packs() == 0);
  CHECK(outputs_of(again) == own_copy_outputs());
  CHECK(again.store->packs() == 0);  // every GEMM's operator found its packing in the file
  CHECK(again.store->hits() == fixture().gemms.size());
}

bool is_fifo(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

size_t temporaries_of(const std::string& path) {
  const std::string prefix = std::filesystem::path(path).filename().string() + ".tmp.";
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("the layout: one entry per GEMM with XNNPACK's exact packed size, digest of the quantization", "[weight_cache]") {
  const Fixture& f = fixture();
  const wcf::Layout& l = layout();
  REQUIRE(l.entries.size() == f.gemms.size());
  // the probed sizes are what packing then takes
  auto store = new_store();
  { auto set = make_set(store.get()); }
  const auto entries = store->entries();
  REQUIRE(entries.size() == l.entries.size());
  for (size_t k = 0; k < entries.size(); ++k) {
    CHECK(entries[k].gemm == l.entries[k].gemm);
    CHECK(entries[k].seed == l.entries[k].seed);
    CHECK(entries[k].size == l.entries[k].size);
  }
  CHECK(layout_of(f.gemms).digest == l.digest);  // deterministic
  // any of the quantization parameters XNNPACK bakes into the packed bytes changes the digest
  for (int what = 0; what < 5; ++what) {
    std::vector<GemmSpec> other = f.gemms;
    LinearView& v = other[0].view;
    std::vector<float> copy(v.out);
    switch (what) {
      case 0: v.output_scale *= 1.5f; v.output_scales = nullptr; break;
      case 1: v.input_scale *= 1.01f; break;
      case 2: v.input_zero_point += 1; break;
      case 3: std::copy(v.weight_scales, v.weight_scales + v.out, copy.begin()); copy[3] *= 2; v.weight_scales = copy.data(); break;
      case 4: std::copy(v.bias, v.bias + v.out, copy.begin()); copy[5] += 1; v.bias = copy.data(); break;
    }
    INFO("change " << what);
    CHECK(layout_of(other).digest != l.digest);
  }
}

TEST_CASE("a cache of another program layout or runtime version is rebuilt, never used", "[weight_cache]") {
  const bool ahead = GENERATE(false, true);
  INFO("read ahead: " << ahead);
  const ReadAhead read_ahead(ahead);
  const Fixture& f = fixture();
  const std::string path = temp_dir() + "/layout.ebwc";
  // written for a program whose first GEMM requantizes differently (its output scale)
  std::vector<GemmSpec> other = f.gemms;
  other[0].view.output_scale *= 1.25f;
  other[0].view.output_scales = nullptr;
  std::remove(path.c_str());
  {
    const edgebert::ModelWeights w = prepare(path, other);
    REQUIRE(w.state == EB_WEIGHT_CACHE_CREATED);
    CHECK(outputs_of(w)[0] != own_copy_outputs()[0]);  // its packed bytes really differ
  }
  expect_rebuilt(path, read_file(path), "another program layout");

  // recorded by another runtime version (checksum recomputed)
  std::vector<uint8_t> bytes = fresh_cache(path);
  char version[wcf::kRuntimeVersionBytes] = "0.0.1-elsewhere";
  std::memcpy(bytes.data() + wcf::kRuntimeVersionOffset, version, sizeof version);
  REQUIRE(wcf::reseal(bytes.data(), bytes.size()));
  {
    auto store = new_store();
    const wcf::LoadResult r = wcf::load(path + ".x", fixture().model->content_id_or_hash(), layout(), store.get());
    CHECK(r.outcome == wcf::LoadOutcome::kMissing);
  }
  expect_rebuilt(path, bytes, "made by edgebert 0.0.1-elsewhere");
  CHECK(std::string(wcf::runtime_version()).size() > 0);
}

TEST_CASE("crafted offsets and sizes are refused without overflow, then rebuilt", "[weight_cache]") {
  const bool ahead = GENERATE(false, true);
  INFO("read ahead: " << ahead);
  const ReadAhead read_ahead(ahead);
  const std::string path = temp_dir() + "/crafted.ebwc";
  const std::vector<uint8_t> bytes = fresh_cache(path);
  const size_t n = fixture().gemms.size();
  {  // an offset of 2^63 - 64: offset + size wraps
    std::vector<uint8_t> b = bytes;
    put64_at(b, entry_at(1) + wcf::kEntryOffsetField, (uint64_t(1) << 63) - 64);
    REQUIRE(wcf::reseal(b.data(), b.size()));
    expect_rebuilt(path, b, "lies outside the payload");
  }
  {  // the last entry a little past the end of the file
    std::vector<uint8_t> b = bytes;
    put64_at(b, entry_at(n - 1) + wcf::kEntryOffsetField, b.size() + 64);
    REQUIRE(wcf::reseal(b.data(), b.size()));
    expect_rebuilt(path, b, "lies outside the payload");
  }
  {  // the last entry 64 bytes long, the file cut after it (sizes and digests all made consistent)
    std::vector<uint8_t> b = bytes;
    const uint64_t off = get64_at(b, entry_at(n - 1) + wcf::kEntryOffsetField);
    put64_at(b, entry_at(n - 1) + wcf::kEntrySizeField, 64);
    b.resize(off + 64);
    put64_at(b, wcf::kFileBytesOffset, b.size());
    put64_at(b, 144, b.size() - get64_at(b, 136));  // payload bytes = size - payload offset
    REQUIRE(wcf::reseal(b.data(), b.size()));
    expect_rebuilt(path, b, "is not the packing GEMM");
  }
  {  // a misaligned entry
    std::vector<uint8_t> b = bytes;
    put64_at(b, entry_at(n - 1) + wcf::kEntryOffsetField, get64_at(b, entry_at(n - 1) + wcf::kEntryOffsetField) + 8);
    REQUIRE(wcf::reseal(b.data(), b.size()));
    expect_rebuilt(path, b, "lies outside the payload");
  }
  {  // a huge entry count
    std::vector<uint8_t> b = bytes;
    for (int i = 0; i < 4; ++i) b[116 + i] = 0xff;
    REQUIRE_FALSE(wcf::reseal(b.data(), b.size()));
    expect_rebuilt(path, b, "corrupt header");
  }
}

TEST_CASE("flipped payload bytes are caught by the CRC32C at load, then rebuilt", "[weight_cache]") {
  const bool ahead = GENERATE(false, true);
  INFO("read ahead: " << ahead);
  const ReadAhead read_ahead(ahead);
  const std::string path = temp_dir() + "/payload.ebwc";
  const std::vector<uint8_t> bytes = fresh_cache(path);
  const size_t n = fixture().gemms.size();
  for (size_t k : {size_t(0), n / 2, n - 1}) {
    const uint64_t off = get64_at(bytes, entry_at(k) + wcf::kEntryOffsetField);
    const uint64_t size = get64_at(bytes, entry_at(k) + wcf::kEntrySizeField);
    for (uint64_t at : {off, off + size / 2, off + size - 1}) {
      std::vector<uint8_t> b = bytes;
      b[at] ^= 0x04;
      INFO("entry " << k << " byte " << at - off);
      expect_rebuilt(path, b, "CRC32C mismatch");
    }
  }
  // the documented opt-out: the caller verifies the file itself (the flip is then not seen)
  std::vector<uint8_t> b = bytes;
  b[get64_at(bytes, entry_at(0) + wcf::kEntryOffsetField) + 10] ^= 0x04;
  write_file(path, b);
  edgebert::WeightCacheOptions trust;
  trust.verify_payload = false;
  CHECK(prepare(path, fixture().gemms, trust).state == EB_WEIGHT_CACHE_LOADED);
  setenv("EDGEBERT_WEIGHT_CACHE_VERIFY", "0", 1);
  CHECK(prepare(path).state == EB_WEIGHT_CACHE_LOADED);
  unsetenv("EDGEBERT_WEIGHT_CACHE_VERIFY");
  CHECK(prepare(path).state == EB_WEIGHT_CACHE_CREATED);
}

TEST_CASE("a cache path that cannot hurt: FIFO, foreign file, symlink, the model file", "[weight_cache]") {
  const bool ahead = GENERATE(false, true);
  INFO("read ahead: " << ahead);
  const ReadAhead read_ahead(ahead);
  const std::string dir = temp_dir();
  {  // a FIFO: no blocking open, never replaced
    const std::string path = dir + "/fifo.ebwc";
    std::remove(path.c_str());
    REQUIRE(mkfifo(path.c_str(), 0600) == 0);
    const edgebert::ModelWeights w = prepare(path);
    INFO(w.message);
    CHECK(w.state == EB_WEIGHT_CACHE_UNAVAILABLE);
    CHECK(w.message.find("not a regular file") != std::string::npos);
    CHECK(is_fifo(path));
    CHECK(outputs_of(w) == own_copy_outputs());
  }
  {  // a file that is not a weight cache: left byte for byte
    const std::string path = dir + "/notes.txt";
    std::vector<uint8_t> text(10000);
    for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<uint8_t>('a' + i % 26);
    write_file(path, text);
    const edgebert::ModelWeights w = prepare(path);
    INFO(w.message);
    CHECK(w.state == EB_WEIGHT_CACHE_UNAVAILABLE);
    CHECK(w.message.find("not a weight cache, not overwriting") != std::string::npos);
    CHECK(read_file(path) == text);
    CHECK(outputs_of(w) == own_copy_outputs());
  }
  {  // a symbolic link (to a valid cache, or to a file): the link and its target stay as they are
    const std::string target = dir + "/link_target.ebwc", link = dir + "/link.ebwc";
    const std::vector<uint8_t> cache = fresh_cache(target);
    std::remove(link.c_str());
    REQUIRE(symlink(target.c_str(), link.c_str()) == 0);
    const edgebert::ModelWeights w = prepare(link);
    INFO(w.message);
    CHECK(w.state == EB_WEIGHT_CACHE_UNAVAILABLE);
    CHECK(w.message.find("symbolic link") != std::string::npos);
    struct stat st;
    REQUIRE(lstat(link.c_str(), &st) == 0);
    CHECK(S_ISLNK(st.st_mode));
    CHECK(read_file(target) == cache);
    CHECK(outputs_of(w) == own_copy_outputs());
  }
  {  // the model file itself, through the C API: the model is untouched and still loads
    const std::string model = dir + "/model_copy.ebm";
    const std::vector<uint8_t> original = edgebert::test::read_bytes(edgebert::test::ebm_path("h192_3x64", "int8"));
    write_file(model, original);
    eb_load_options o;
    eb_load_options_init(&o);
    o.weight_cache_path = model.c_str();
    char err[512];
    for (int pass = 0; pass < 2; ++pass) {
      edgebert::test::ModelHandle m;
      REQUIRE(eb_model_load_file_with_options(model.c_str(), &o, &m.m, err, sizeof err) == EB_OK);
      eb_weight_cache_state state;
      const char* message = nullptr;
      REQUIRE(eb_model_get_weight_cache(m.m, &state, &message) == EB_OK);
      INFO(message);
      CHECK(state == EB_WEIGHT_CACHE_UNAVAILABLE);
      CHECK(std::string(message).find("model file itself") != std::string::npos);
      CHECK(read_file(model) == original);
    }
    // the same file reached through a hard link under a cache-like name
    const std::string hard = dir + "/model_link.ebwc";
    std::remove(hard.c_str());
    REQUIRE(link(model.c_str(), hard.c_str()) == 0);
    o.weight_cache_path = hard.c_str();
    edgebert::test::ModelHandle m;
    REQUIRE(eb_model_load_file_with_options(model.c_str(), &o, &m.m, err, sizeof err) == EB_OK);
    eb_weight_cache_state state;
    const char* message = nullptr;
    REQUIRE(eb_model_get_weight_cache(m.m, &state, &message) == EB_OK);
    CHECK(state == EB_WEIGHT_CACHE_UNAVAILABLE);
    CHECK(read_file(model) == original);
  }
}

TEST_CASE("temporary files: none left by a write, stale ones of dead writers removed at load", "[weight_cache]") {
  const bool ahead = GENERATE(false, true);
  INFO("read ahead: " << ahead);
  const ReadAhead read_ahead(ahead);
  const std::string path = temp_dir() + "/stale.ebwc";
  fresh_cache(path);
  CHECK(temporaries_of(path) == 0);  // O_TMPFILE (or a renamed temporary): nothing left
  pid_t dead = fork();
  REQUIRE(dead >= 0);
  if (dead == 0) _exit(0);
  REQUIRE(waitpid(dead, nullptr, 0) == dead);
  const std::string stale = path + ".tmp." + std::to_string(dead) + ".Ab12Cd";
  const std::string alive = path + ".tmp." + std::to_string(getppid()) + ".Ef34Gh";  // a live writer's
  const std::string other = path + ".tmp.notapid";
  for (const std::string& p : {stale, alive, other}) write_file(p, std::vector<uint8_t>(4096, 7));
  const edgebert::ModelWeights w = prepare(path);
  CHECK(w.state == EB_WEIGHT_CACHE_LOADED);
  struct stat st;
  CHECK(stat(stale.c_str(), &st) != 0);  // removed
  CHECK(stat(alive.c_str(), &st) == 0);  // kept: its writer may still be writing
  CHECK(stat(other.c_str(), &st) == 0);  // not one of ours
  std::remove(alive.c_str());
  std::remove(other.c_str());
}

TEST_CASE("a writer killed at any point leaves nothing that survives the next load", "[weight_cache]") {
  const std::string path = temp_dir() + "/killed.ebwc";
  (void)layout();
  for (int delay_us : {0, 2000, 8000, 20000, 50000}) {
    std::remove(path.c_str());
    pid_t kid = fork();
    REQUIRE(kid >= 0);
    if (kid == 0) {
      for (;;) {  // keep rewriting the file until killed
        auto r = edgebert::prepare_model_weights(*fixture().model, to_pack(fixture().gemms), path);
        (void)r;
        std::remove(path.c_str());
      }
    }
    usleep(static_cast<useconds_t>(delay_us));
    kill(kid, SIGKILL);
    REQUIRE(waitpid(kid, nullptr, 0) == kid);
    const edgebert::ModelWeights w = prepare(path);
    INFO("delay " << delay_us << ": " << w.message);
    CHECK((w.state == EB_WEIGHT_CACHE_CREATED || w.state == EB_WEIGHT_CACHE_LOADED));
    CHECK(temporaries_of(path) == 0);
    CHECK(outputs_of(w) == own_copy_outputs());
  }
}

#else  // the 2022 API: no weights-cache provider

TEST_CASE("without a weights-cache API the store reports it and operators pack their own copy", "[weight_cache]") {
  CHECK_FALSE(PackedWeights::supported());
  CHECK(std::string(PackedWeights::unsupported_reason()).find("2022") != std::string::npos);
  auto store = new_store();
  CHECK(store->provider(0) == nullptr);
  const size_t xnn0 = edgebert::xnn_bytes_allocated();
  auto a = make_set(store.get());
  auto b = make_set(store.get());
  const size_t held = edgebert::xnn_bytes_allocated() - xnn0;
  size_t weights = 0;
  for (const GemmSpec& g : fixture().gemms) weights += size_t(g.view.in) * g.view.out * (g.view.int8 ? 1 : 4);
  CHECK(held >= 2 * weights);  // two copies
  CHECK(store->packed_bytes() == 0);
  CHECK(store->entry_count() == 0);
  CHECK(run_set(*a) == own_copy_outputs());
  CHECK(run_set(*b) == own_copy_outputs());
  const std::string path = temp_dir() + "/unavailable.ebwc";
  const ContentId id = fixture().model->content_id_or_hash();
  const wcf::LoadResult r = wcf::load(path, id, wcf::Layout(), store.get());
  CHECK(r.outcome == wcf::LoadOutcome::kMismatch);
  CHECK(r.message.find("2022") != std::string::npos);
  const edgebert::Status s = wcf::write(path, id, wcf::Layout(), store.get(), false);
  CHECK(s.code() == EB_ERROR_UNSUPPORTED);
  struct stat st;
  CHECK(stat(path.c_str(), &st) != 0);  // nothing written
}

#endif

namespace {

// last_hidden_state of case `name` of h192_3x64 with one session of `m`.
std::vector<float> run_case(eb_model* m, const edgebert::test::Case& c) {
  edgebert::test::SessionHandle s;
  char err[512];
  REQUIRE(eb_session_create(m, nullptr, &s.s, err, sizeof err) == EB_OK);
  REQUIRE(eb_session_run_ids(s.s, c.ids.data(), c.types.data(), c.mask.data(), c.ids.size()) == EB_OK);
  const float* h = nullptr;
  int64_t shape[2] = {0, 0};
  REQUIRE(eb_session_get_output(s.s, EB_OUTPUT_LAST_HIDDEN_STATE, &h, shape, nullptr) == EB_OK);
  return std::vector<float>(h, h + shape[0] * shape[1]);
}

}  // namespace

TEST_CASE("C API: load options, weight cache state, model memory", "[weight_cache][c_api]") {
  using edgebert::test::ModelHandle;
  const std::string model = edgebert::test::ebm_path("h192_3x64", "int8");
  const edgebert::test::Case c = edgebert::test::read_case("h192_3x64", "len7");
  char err[512];
  eb_load_options o;
  eb_load_options_init(&o);
  CHECK(o.weight_cache_path == nullptr);
  o.reserved[2] = 1;
  {
    ModelHandle m;
    CHECK(eb_model_load_file_with_options(model.c_str(), &o, &m.m, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(m.m == nullptr);
  }
  eb_load_options_init(&o);

  o.skip_weight_cache_payload_check = 2;  // a flag: 0 or 1
  {
    ModelHandle m;
    CHECK(eb_model_load_file_with_options(model.c_str(), &o, &m.m, err, sizeof err) == EB_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(err).find("skip_weight_cache_payload_check") != std::string::npos);
  }
  eb_load_options_init(&o);
  CHECK(o.skip_weight_cache_payload_check == 0);

  ModelHandle plain;
  REQUIRE(eb_model_load_file(model.c_str(), &plain.m, err, sizeof err) == EB_OK);
  {  // the weights are packed with the program, during the load: before any session
    size_t at_load = 0;
    REQUIRE(eb_model_get_memory(plain.m, &at_load, nullptr) == EB_OK);
    CHECK((at_load > 0) == PackedWeights::supported());
  }
  eb_weight_cache_state state;
  const char* message = nullptr;
  REQUIRE(eb_model_get_weight_cache(plain.m, &state, &message) == EB_OK);
  CHECK(state == EB_WEIGHT_CACHE_NONE);
  const std::vector<float> ref = run_case(plain.m, c);
  // the independent reference: numpy's float model (int8 error stays small on this model)
  REQUIRE(ref.size() == c.hidden.size());
  CHECK(edgebert::test::cosine(ref.data(), c.hidden.data(), ref.size()) > 0.99);
  size_t packed = 0, file_bytes = 0;
  REQUIRE(eb_model_get_memory(plain.m, &packed, &file_bytes) == EB_OK);
  struct stat st;
  REQUIRE(stat(model.c_str(), &st) == 0);
  CHECK(file_bytes == size_t(st.st_size));
  if (PackedWeights::supported()) {
    CHECK(packed > 0);  // packed into the model's store at load
    const std::vector<float> second = run_case(plain.m, c);
    size_t again = 0;
    REQUIRE(eb_model_get_memory(plain.m, &again, nullptr) == EB_OK);
    CHECK(again == packed);  // a second session added no packed copy
    CHECK(second == ref);
  } else {
    CHECK(packed == 0);
  }

  const std::string path = temp_dir() + "/c_api.ebwc";
  std::remove(path.c_str());
  o.weight_cache_path = path.c_str();
  for (eb_weight_cache_state expect : {EB_WEIGHT_CACHE_CREATED, EB_WEIGHT_CACHE_LOADED}) {
    ModelHandle m;
    REQUIRE(eb_model_load_file_with_options(model.c_str(), &o, &m.m, err, sizeof err) == EB_OK);
    REQUIRE(eb_model_get_weight_cache(m.m, &state, &message) == EB_OK);
    INFO(message);
    if (PackedWeights::supported()) {
      CHECK(state == expect);
      size_t p = 0;
      REQUIRE(eb_model_get_memory(m.m, &p, nullptr) == EB_OK);
      CHECK(p == packed);
    } else {
      CHECK(state == EB_WEIGHT_CACHE_UNAVAILABLE);
      CHECK(std::string(message).find("2022") != std::string::npos);
    }
    CHECK(run_case(m.m, c) == ref);  // bit-identical with and without the cache
  }
#if EDGEBERT_XNN_SHARED_WEIGHTS
  {  // the payload check's opt-out: a flipped byte is then not seen
    std::vector<uint8_t> b = read_file(path);
    b[get64_at(b, entry_at(0) + wcf::kEntryOffsetField) + 10] ^= 0x04;
    write_file(path, b);
    o.skip_weight_cache_payload_check = 1;
    for (eb_weight_cache_state expect : {EB_WEIGHT_CACHE_LOADED, EB_WEIGHT_CACHE_CREATED}) {
      ModelHandle m;
      REQUIRE(eb_model_load_file_with_options(model.c_str(), &o, &m.m, err, sizeof err) == EB_OK);
      REQUIRE(eb_model_get_weight_cache(m.m, &state, &message) == EB_OK);
      INFO(message);
      CHECK(state == expect);  // trusted as it is; then, verified again, rebuilt
      o.skip_weight_cache_payload_check = 0;
    }
  }
#endif
  // from caller memory too
  {
    edgebert::test::AlignedBuffer buf(edgebert::test::read_bytes(model));
    ModelHandle m;
    REQUIRE(eb_model_load_memory_with_options(buf.data, buf.size, &o, &m.m, err, sizeof err) == EB_OK);
    REQUIRE(eb_model_get_weight_cache(m.m, &state, &message) == EB_OK);
    CHECK(state == (PackedWeights::supported() ? EB_WEIGHT_CACHE_LOADED : EB_WEIGHT_CACHE_UNAVAILABLE));
    CHECK(run_case(m.m, c) == ref);
  }
  // an unwritable cache path: the model loads without it, and says why
  o.weight_cache_path = "/dev/null/cache.ebwc";
  {
    ModelHandle m;
    REQUIRE(eb_model_load_file_with_options(model.c_str(), &o, &m.m, err, sizeof err) == EB_OK);
    REQUIRE(eb_model_get_weight_cache(m.m, &state, &message) == EB_OK);
    CHECK(state == EB_WEIGHT_CACHE_UNAVAILABLE);
    CHECK(std::string(message).size() > 0);
    CHECK(run_case(m.m, c) == ref);
  }
  CHECK(eb_model_get_weight_cache(nullptr, &state, &message) == EB_ERROR_INVALID_ARGUMENT);
  CHECK(eb_model_get_memory(nullptr, &packed, nullptr) == EB_ERROR_INVALID_ARGUMENT);
}

// A cache file of several 2 MiB write windows (write_contents assembles the file window by
// window, so that the page cache keeps it in 2 MiB folios): entries that straddle a window's edge
// come back whole (every entry's CRC32C, and the outputs bit-identical to the run without a
// cache), through the C API on a 2-layer BERT-base (about 14 MB of packed weights).
TEST_CASE("a cache file of many 2 MiB windows: written, verified and loaded bit-identical", "[weight_cache][c_api]") {
  if (!PackedWeights::supported()) return;  // no cache file without the 2024 API (tested above)
  using edgebert::test::ModelHandle;
  const std::string model = edgebert::test::ebm_path("base2_h12", "int8");
  const edgebert::test::Case c = edgebert::test::read_case("base2_h12", "len20_types");
  const std::string path = temp_dir() + "/windows.ebwc";
  std::remove(path.c_str());
  char err[512];
  ModelHandle plain;
  REQUIRE(eb_model_load_file(model.c_str(), &plain.m, err, sizeof err) == EB_OK);
  const std::vector<float> ref = run_case(plain.m, c);
  eb_load_options o;
  eb_load_options_init(&o);
  o.weight_cache_path = path.c_str();
  for (eb_weight_cache_state expect : {EB_WEIGHT_CACHE_CREATED, EB_WEIGHT_CACHE_LOADED}) {
    ModelHandle m;
    REQUIRE(eb_model_load_file_with_options(model.c_str(), &o, &m.m, err, sizeof err) == EB_OK);
    eb_weight_cache_state state;
    const char* message = nullptr;
    REQUIRE(eb_model_get_weight_cache(m.m, &state, &message) == EB_OK);
    INFO(message);
    CHECK(state == expect);
    CHECK(run_case(m.m, c) == ref);
  }
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK(st.st_size > 4 * (2 << 20));  // several windows
  CHECK(wcf::verify_payload(path).is_ok());
  std::remove(path.c_str());
}

TEST_CASE("CRC32C: known values, continuation, hardware and table agree", "[weight_cache]") {
  CHECK(edgebert::crc32c("123456789", 9) == 0xE3069283u);
  const std::vector<uint8_t> zeros(32, 0);
  CHECK(edgebert::crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
  std::vector<uint8_t> b(3 * 16384 * 3 + 77);  // three blocks of three 16 KiB lanes, and a tail
  std::mt19937 rng(3);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  // a bit-at-a-time reference
  auto bitwise = [](const uint8_t* p, size_t n, uint32_t crc) {
    uint32_t r = ~crc;
    for (size_t i = 0; i < n; ++i) {
      r ^= p[i];
      for (int k = 0; k < 8; ++k) r = r & 1 ? (r >> 1) ^ 0x82F63B78u : r >> 1;
    }
    return ~r;
  };
  const uint32_t ref = bitwise(b.data(), b.size(), 0);
  for (size_t skew : {size_t(0), size_t(1), size_t(5)}) {
    const uint32_t head = edgebert::crc32c(b.data(), skew);
    CHECK(edgebert::crc32c(b.data() + skew, b.size() - skew, head) == ref);
  }
  INFO("hardware: " << edgebert::crc32c_hardware() << ", path: " << edgebert::crc32c_path());
  CHECK(edgebert::crc32c(b.data(), b.size()) == ref);

  // Every path this CPU has, against the bitwise CRC: lengths around the folding path's 256-byte
  // block and the instruction path's 3 x 16 KiB block, unaligned starts, continued registers.
  using edgebert::Crc32cPath;
  int paths = 0;
  for (Crc32cPath path : {Crc32cPath::kTable, Crc32cPath::kInstruction, Crc32cPath::kFold512}) {
    uint32_t got = 0;
    if (!edgebert::crc32c_with(path, b.data(), 1, 0, &got)) continue;
    ++paths;
    for (size_t n : {size_t(0), size_t(1), size_t(255), size_t(256), size_t(257), size_t(511), size_t(512), size_t(4095),
                     size_t(65536 + 40), size_t(3 * 16384 + 255), b.size() - 63})
      for (size_t offset : {size_t(0), size_t(1), size_t(7), size_t(63)})
        for (uint32_t crc : {0u, ~0u, 0x12345678u}) {
          INFO("path " << static_cast<int>(path) << ", " << n << " bytes at offset " << offset << ", register " << crc);
          REQUIRE(edgebert::crc32c_with(path, b.data() + offset, n, crc, &got));
          CHECK(got == bitwise(b.data() + offset, n, crc));
        }
  }
  CHECK(paths >= 1);
}
