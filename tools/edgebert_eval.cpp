// SPDX-License-Identifier: Apache-2.0
// edgebert-eval: runs an fp32 reference and one or more int8 models side by side on the same
// inputs and reports how far int8 is from fp32, and where the error enters.
//
//   edgebert-eval --reference FP32.ebm --model INT8.ebm [--model INT8b.ebm]... INPUTS [options]
//   edgebert-eval --checkpoint HF_DIR [--schemes auto,minmax,per-tensor] INPUTS [options]
//   edgebert-eval --synthetic SPEC [--schemes ...] INPUTS [options]
// (--checkpoint / --synthetic convert the fp32 reference and one int8 model per scheme in memory.)
// INPUTS: --text FILE (one sentence per line) | --ids FILE (one sequence of token ids per line) |
//         --embeds FILE.safetensors (every float tensor [seq, hidden] is one input: precomputed
//         embedding outputs) | --random-ids N (N seeded random-token sequences, lengths 8..128)
// Prints, per int8 model: per-token cosine of the last hidden state (min / mean), the same over
// the ordinary dimensions (all but the --exclude-top K dimensions with the largest RMS in the
// fp32 hidden states), pooled-output cosine (the sentence embedding for sentence-embedding
// models), largest difference of the head's logits (sequence, QA start/end or per-token logits)
// and argmax agreement (the class; QA: start and end; tokens: every token's label); and
// per block (embeddings, each layer's attention and FFN block) the cumulative cosine of the
// hidden state and the block's local error: the block run on the fp32 model's input.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "accuracy_metrics.h"
#include "converter/checkpoint/safetensors.h"
#include "converter/converter.h"
#include "converter/synthetic_model.h"
#include "edgebert_generated.h"
#include "model.h"
#include "session.h"
#include "tool_common.h"

namespace {

using namespace edgebert;
using edgebert::tools::MinMean;
using edgebert::tools::TokenCosines;

void usage(FILE* f) {
  std::fprintf(
      f,
      "usage: edgebert-eval (--reference FP32.ebm --model INT8.ebm [--model ...] |\n"
      "                      --checkpoint HF_DIR [--schemes LIST] [--calibration FILE] |\n"
      "                      --synthetic SPEC [--schemes LIST])\n"
      "                     (--text FILE | --ids FILE | --embeds FILE.safetensors | --random-ids N)\n"
      "                     [--threads N] [--exclude-top K] [--max-inputs N] [--max-seq-len N] [--per-input] [--worst N]\n"
      "                     [--weight-cache PATH]\n"
      "  --weight-cache PATH  packed weights of the (first) --model kept in PATH; further models use PATH.2, PATH.3 ...\n"
      "  --schemes LIST   int8 schemes to convert and compare (default auto,minmax,per-tensor); NAME+int4:\n"
      "                   that scheme with --weights int4 (the converter's default int4 policy)\n"
      "  --exclude-top K  ordinary dimensions = all but the K with the largest RMS (default 3)\n"
      "  --per-input      also print one row per input\n"
      "  --worst N        also list the N tokens with the lowest cosine (and their worst dimensions)\n");
}

int die(const std::string& msg) {
  std::fprintf(stderr, "edgebert-eval: error: %s\n", msg.c_str());
  return 1;
}

struct Input {
  std::string name;
  std::vector<int32_t> ids;
  std::vector<float> embeds;  // [n, hidden] when not empty
  size_t n = 0;
};

struct EvalModel {
  std::string label, method;
  void* memory = nullptr;
  std::unique_ptr<Model> model;
  std::shared_ptr<const Program> program;  // with the shared packed weights (--weight-cache)
  ~EvalModel() {
    program.reset();
    model.reset();
    std::free(memory);
  }
};

bool from_buffer(const convert::ModelBytes& b, EvalModel* m, std::string* err) {
  const size_t size = (b.size() + 63) / 64 * 64;
  m->memory = std::aligned_alloc(64, size);
  std::memcpy(m->memory, b.data(), b.size());
  return Model::create(m->memory, b.size(), nullptr, 0).move_to(&m->model, err);
}

std::string method_of(const Model& m) {
  const fb::Model* f = fb::GetModel(m.buffer);
  if (!m.int8) return "fp32";
  return f->calibration() && f->calibration()->method() ? f->calibration()->method()->str() : "?";
}

// Stage index: 0 embeddings, 1 + 2 l + s for layer l block s (0 attention, 1 FFN).
int stage_index(int layer, int stage) { return layer < 0 ? 0 : 1 + 2 * layer + stage; }
std::string stage_name(int s) {
  if (s == 0) return "embeddings";
  return "layer." + std::to_string((s - 1) / 2) + ((s - 1) % 2 ? ".ffn" : ".attention");
}

struct StageStats {
  TokenCosines cumulative, local;
};

struct HookState {
  enum Mode { kSumSquares, kRecord, kCompare, kForce } mode = kRecord;
  size_t hidden = 0, max_n = 0;
  std::vector<std::vector<double>> sum_squares;  // [stage][hidden] over the fp32 reference
  std::vector<std::vector<float>> recorded;      // [stage][max_n * hidden]: fp32 of the current input
  std::vector<std::vector<uint8_t>> keep;        // [stage] ordinary-dimension masks
  std::vector<StageStats>* stats = nullptr;      // [stage] of the model being compared
};

bool hook(void* ctx, int layer, int stage, float* h, size_t n) {
  HookState& st = *static_cast<HookState*>(ctx);
  const int s = stage_index(layer, stage);
  const size_t H = st.hidden;
  switch (st.mode) {
    case HookState::kSumSquares:
      for (size_t t = 0; t < n; ++t)
        for (size_t i = 0; i < H; ++i) st.sum_squares[s][i] += double(h[t * H + i]) * h[t * H + i];
      return false;
    case HookState::kRecord:
      std::memcpy(st.recorded[s].data(), h, n * H * sizeof(float));
      return false;
    case HookState::kCompare:
      (*st.stats)[s].cumulative.add(h, st.recorded[s].data(), n, H, st.keep[s].data());
      return false;
    case HookState::kForce:
      (*st.stats)[s].local.add(h, st.recorded[s].data(), n, H, st.keep[s].data());
      std::memcpy(h, st.recorded[s].data(), n * H * sizeof(float));
      return true;
  }
  return false;
}

struct Outputs {
  std::vector<float> hidden, pooled, logits;  // pooled: pooler or sentence embedding
  size_t logit_rows = 0;                      // logits: rows of logit_width, argmax per row
};

bool run(Session& s, const Input& in, Outputs* out, std::string* err) {
  const eb_status st = in.embeds.empty() ? s.run_ids(in.ids.data(), nullptr, nullptr, in.n)
                                         : s.run_embeddings(in.embeds.data(), nullptr, in.n);
  if (st != EB_OK) {
    *err = in.name + ": " + s.last_error();
    return false;
  }
  if (!out) return true;
  const size_t H = static_cast<size_t>(s.model().config.hidden);
  out->hidden.assign(s.last_hidden_state(), s.last_hidden_state() + in.n * H);
  if (s.model().has_pooler) out->pooled.assign(s.pooler_output(), s.pooler_output() + H);
  if (s.sentence_embedding()) out->pooled.assign(s.sentence_embedding(), s.sentence_embedding() + H);
  const size_t L = static_cast<size_t>(s.model().config.num_labels);
  out->logits.clear();
  if (s.logits()) out->logits.assign(s.logits(), s.logits() + L), out->logit_rows = 1;
  if (s.token_logits()) out->logits.assign(s.token_logits(), s.token_logits() + in.n * L), out->logit_rows = in.n;
  if (s.start_logits()) {
    out->logits.assign(s.start_logits(), s.start_logits() + in.n);
    out->logits.insert(out->logits.end(), s.end_logits(), s.end_logits() + in.n);
    out->logit_rows = 2;
  }
  return true;
}

struct ModelReport {
  TokenCosines final_hidden;
  MinMean pooled;
  double max_logit_diff = 0;
  int argmax_agree = 0, classified = 0;
  std::vector<StageStats> stages;
  std::vector<std::string> per_input_rows;
  struct Worst {
    double cos;
    std::string where;
  };
  std::vector<Worst> worst;
};

// True when every row of the two [rows, width] logit arrays has the same argmax.
bool same_argmax(const Outputs& a, const Outputs& b) {
  const size_t w = a.logits.size() / std::max<size_t>(1, a.logit_rows);
  for (size_t r = 0; r < a.logit_rows; ++r) {
    const auto ra = a.logits.begin() + r * w, rb = b.logits.begin() + r * w;
    if (std::max_element(ra, ra + w) - ra != std::max_element(rb, rb + w) - rb) return false;
  }
  return true;
}

bool read_lines(const std::string& path, std::vector<std::string>* lines, std::string* err) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *err = path + ": cannot open";
    return false;
  }
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) lines->push_back(line);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string reference_path, checkpoint, synthetic, text_file, ids_file, embeds_file, calibration, cache_path;
  std::vector<std::string> model_paths;
  std::string schemes = "auto,minmax,per-tensor";
  long threads = 1, exclude_top = 3, max_inputs = 1 << 20, max_len = 0, random_ids = 0, worst_n = 0;
  bool per_input = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if (a == "--per-input") {
      per_input = true;
      continue;
    }
    if (i + 1 >= argc) {
      usage(stderr);
      return die(a + " needs a value") + 1;
    }
    const char* v = argv[++i];
    using edgebert::tools::parse_int;
    if (a == "--reference") reference_path = v;
    else if (a == "--model") model_paths.push_back(v);
    else if (a == "--weight-cache") cache_path = v;
    else if (a == "--checkpoint") checkpoint = v;
    else if (a == "--synthetic") synthetic = v;
    else if (a == "--schemes") schemes = v;
    else if (a == "--calibration") calibration = v;
    else if (a == "--text") text_file = v;
    else if (a == "--ids") ids_file = v;
    else if (a == "--embeds") embeds_file = v;
    else if (a == "--random-ids") {
      if (!parse_int(v, 1, 100000, &random_ids)) return die("--random-ids needs a positive integer") + 1;
    } else if (a == "--worst") {
      if (!parse_int(v, 0, 1 << 20, &worst_n)) return die("--worst needs a non-negative integer") + 1;
    } else if (a == "--threads") {
      if (!parse_int(v, 1, 256, &threads)) return die("--threads needs an integer in 1..256") + 1;
    } else if (a == "--exclude-top") {
      if (!parse_int(v, 0, 1 << 16, &exclude_top)) return die("--exclude-top needs a non-negative integer") + 1;
    } else if (a == "--max-inputs") {
      if (!parse_int(v, 1, 1 << 20, &max_inputs)) return die("--max-inputs needs a positive integer") + 1;
    } else if (a == "--max-seq-len") {
      if (!parse_int(v, 1, 1 << 16, &max_len)) return die("--max-seq-len needs a positive integer") + 1;
    } else {
      usage(stderr);
      return die("unknown argument '" + a + "'") + 1;
    }
  }
  const int sources = !reference_path.empty() + !checkpoint.empty() + !synthetic.empty();
  const int input_kinds = !text_file.empty() + !ids_file.empty() + !embeds_file.empty() + (random_ids > 0);
  if (sources != 1 || input_kinds != 1 || (!reference_path.empty() && model_paths.empty())) {
    usage(stderr);
    return die("give one of --reference (with --model), --checkpoint, --synthetic, and one input source") + 1;
  }

  // ---- models
  std::string err;
  EvalModel ref;
  std::vector<std::unique_ptr<EvalModel>> models;
  try {
    if (!reference_path.empty()) {
      if (!Model::load_file(reference_path.c_str()).move_to(&ref.model, &err)) return die(err);
      ref.label = reference_path;
      for (const std::string& p : model_paths) {
        auto m = std::make_unique<EvalModel>();
        if (!Model::load_file(p.c_str()).move_to(&m->model, &err)) return die(err);
        m->label = p;
        models.push_back(std::move(m));
      }
    } else {
      std::vector<std::string> names;
      {
        std::string item;
        for (char ch : schemes + ",") {
          if (ch == ',') {
            if (!item.empty()) names.push_back(item);
            item.clear();
          } else {
            item += ch;
          }
        }
      }
      convert::FloatBert synth;
      if (!synthetic.empty()) {
        convert::SyntheticSpec spec;
        if (!convert::parse_synthetic_spec(synthetic, &spec, &err)) return die("--synthetic: " + err);
        synth = convert::make_synthetic_bert(spec);
      }
      auto convert = [&](bool fp32, convert::Scheme scheme, bool int4) {
        convert::ConvertOptions o;
        o.input_dir = checkpoint;
        o.fp32 = fp32;
        o.int4 = int4;  // --weights int4 with the converter's default policy
        o.scheme = scheme;
        o.quiet = true;
        o.error_report = false;
        o.calibration_file = calibration;
        o.max_seq_len = static_cast<int>(max_len);
        const auto t0 = std::chrono::steady_clock::now();
        convert::ConvertResult r = checkpoint.empty() ? convert::convert_model(synth, nullptr, o)
                                                      : convert::convert_checkpoint(o);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "[edgebert-eval] converted %s%s in %.2f s: %zu bytes\n",
                     fp32 ? "fp32" : convert::scheme_name(scheme), int4 ? " with int4 weights" : "", secs, r.buffer.size());
        return r;
      };
      if (!from_buffer(convert(true, convert::Scheme::kAuto, false).buffer, &ref, &err)) return die(err);
      ref.label = "fp32";
      for (const std::string& item : names) {
        const std::string suffix = "+int4";
        const bool int4 = item.size() > suffix.size() && item.compare(item.size() - suffix.size(), suffix.size(), suffix) == 0;
        const std::string n = int4 ? item.substr(0, item.size() - suffix.size()) : item;
        convert::Scheme sc;
        if (!convert::parse_scheme(n, &sc))
          return die("--schemes: unknown scheme '" + item + "' (auto, minmax, per-tensor; NAME+int4 for int4 weights)");
        auto m = std::make_unique<EvalModel>();
        if (!from_buffer(convert(false, sc, int4).buffer, m.get(), &err)) return die(err);
        m->label = convert::scheme_name(sc) + std::string(int4 ? "+int4" : "");
        models.push_back(std::move(m));
      }
    }
  } catch (const std::exception& e) {
    return die(e.what());
  }
  const ModelConfig& cfg = ref.model->config;
  const size_t H = static_cast<size_t>(cfg.hidden);
  if (ref.model->int8) std::fprintf(stderr, "[edgebert-eval] warning: the reference model is int8, not fp32\n");
  for (auto& m : models) {
    m->method = method_of(*m->model);
    const ModelConfig& c = m->model->config;
    if (c.hidden != cfg.hidden || c.layers != cfg.layers || c.num_labels != cfg.num_labels || c.heads != cfg.heads)
      return die(m->label + ": config differs from the reference");
  }

  // ---- inputs
  std::vector<Input> inputs;
  const size_t model_max = static_cast<size_t>(cfg.max_position);
  std::string source;
  try {
    if (!text_file.empty() || !ids_file.empty()) {
      std::vector<std::string> lines;
      if (!read_lines(text_file.empty() ? ids_file : text_file, &lines, &err)) return die(err);
      // the model's own tokenizer, whatever its kind (vocab.txt WordPiece, tokenizer.json's pipeline)
      const edgebert::text::Tokenizer* tok = ref.model->text_tokenizer.get();
      if (!text_file.empty() && !tok) return die("--text: the reference model has no tokenizer");
      edgebert::text::TextWorkspace ws;
      std::vector<edgebert::text::TextToken> tokens(model_max);
      for (size_t i = 0; i < lines.size() && inputs.size() < static_cast<size_t>(max_inputs); ++i) {
        Input in;
        in.name = (text_file.empty() ? "ids:" : "line ") + std::to_string(i + 1);
        if (!text_file.empty()) {
          const size_t total = tok->encode(lines[i], nullptr, 0, ws, tokens.data(), tokens.size());
          if (total > model_max) return die(text_file + ": line " + std::to_string(i + 1) + " is longer than the model's maximum");
          for (size_t t = 0; t < total; ++t) in.ids.push_back(tokens[t].id);
        } else if (!edgebert::tools::parse_int_list(lines[i], &in.ids) || in.ids.empty()) {
          return die(ids_file + ": line " + std::to_string(i + 1) + ": expected token ids");
        }
        in.n = in.ids.size();
        inputs.push_back(std::move(in));
      }
      source = text_file.empty() ? ids_file : text_file;
    } else if (!embeds_file.empty()) {
      convert::SafetensorsCheckpoint st = convert::SafetensorsCheckpoint::open_file(embeds_file);
      for (const std::string& name : st.names()) {
        if (inputs.size() >= static_cast<size_t>(max_inputs)) break;
        const convert::TensorInfo& t = st.get(name);
        std::vector<int64_t> shape = t.shape;
        if (shape.size() == 3 && shape[0] == 1) shape.erase(shape.begin());
        if (shape.size() != 2 || shape[1] != cfg.hidden)
          return die(embeds_file + ": tensor '" + name + "' has shape " + convert::shape_to_string(t.shape) +
                     ", expected [seq, " + std::to_string(cfg.hidden) + "]");
        Input in;
        in.name = name;
        st.read_f32(name, in.embeds);
        in.n = static_cast<size_t>(shape[0]);
        inputs.push_back(std::move(in));
      }
      source = embeds_file;
    } else {
      if (!ref.model->has_embeddings) return die("--random-ids: the model has no embedding tables (use --embeds)");
      std::mt19937 rng(7);  // not the converter's calibration seed
      std::uniform_int_distribution<int32_t> tok(0, cfg.vocab - 1);
      const size_t lengths[] = {8, 16, 32, 64, 128};
      for (long i = 0; i < random_ids; ++i) {
        Input in;
        in.n = std::min(lengths[i % 5], max_len > 0 ? static_cast<size_t>(max_len) : model_max);
        in.n = std::min(in.n, model_max);
        in.ids.resize(in.n);
        for (int32_t& id : in.ids) id = tok(rng);
        in.name = "random " + std::to_string(i + 1);
        inputs.push_back(std::move(in));
      }
      source = "seeded random token ids (seed 7)";
    }
  } catch (const std::exception& e) {
    return die(e.what());
  }
  if (inputs.empty()) return die("no inputs");
  size_t max_n = 0, total_tokens = 0;
  for (const Input& in : inputs) {
    if (in.embeds.empty() && !ref.model->has_embeddings)
      return die("the model has no embedding tables; give precomputed embeddings (--embeds)");
    if (in.n == 0 || in.n > model_max) return die(in.name + ": length " + std::to_string(in.n) + " is outside 1.." + std::to_string(model_max));
    max_n = std::max(max_n, in.n);
    total_tokens += in.n;
  }

  // ---- programs with shared packed weights (the int8 models' weight cache files)
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string path =
        cache_path.empty() ? std::string() : i == 0 ? cache_path : cache_path + "." + std::to_string(i + 1);
    auto p = Program::build(*models[i]->model, XnnGemm::int8_float_output_supported(), path);
    if (!p) return die(models[i]->label + ": " + p.status().message());
    models[i]->program = p.take();
    static const char* const kStates[] = {"none", "loaded", "created", "unavailable"};
    const ModelWeights& w = models[i]->program->weights();
    if (!path.empty())
      std::fprintf(stderr, "%s: weight cache %s%s%s\n", models[i]->label.c_str(), kStates[w.state],
                   w.message.empty() ? "" : ": ", w.message.c_str());
  }

  // ---- sessions
  SessionOptions so;
  so.threads = static_cast<int>(threads);
  so.max_seq_len = static_cast<int>(max_n);
  std::unique_ptr<Session> ref_s;
  if (!Session::create(*ref.model, so).move_to(&ref_s, &err)) return die(ref.label + ": " + err);
  std::vector<std::unique_ptr<Session>> sess(models.size());
  for (size_t i = 0; i < models.size(); ++i) {
    auto made = Session::create(models[i]->program, so);
    if (!made) return die(models[i]->label + ": " + made.status().message());
    sess[i] = made.take();
  }

  const int S = 1 + 2 * cfg.layers;
  HookState hs;
  hs.hidden = H;
  hs.max_n = max_n;
  hs.sum_squares.assign(S, std::vector<double>(H, 0.0));
  hs.recorded.assign(S, std::vector<float>(max_n * H, 0.f));
  ref_s->set_hidden_state_hook(hook, &hs);
  // pass 1: which dimensions are outliers (RMS of the fp32 hidden states, per block)
  hs.mode = HookState::kSumSquares;
  for (const Input& in : inputs)
    if (!run(*ref_s, in, nullptr, &err)) return die(err);
  for (int s = 0; s < S; ++s) hs.keep.push_back(edgebert::tools::ordinary_dims(hs.sum_squares[s], static_cast<int>(exclude_top)));
  const std::vector<uint8_t>& final_keep = hs.keep[S - 1];

  std::vector<ModelReport> reports(models.size());
  for (ModelReport& r : reports) r.stages.resize(S);
  for (const Input& in : inputs) {
    Outputs ro, mo;
    hs.mode = HookState::kRecord;
    if (!run(*ref_s, in, &ro, &err)) return die(err);
    for (size_t i = 0; i < models.size(); ++i) {
      ModelReport& r = reports[i];
      Session& s = *sess[i];
      hs.stats = &r.stages;
      s.set_hidden_state_hook(hook, &hs);
      hs.mode = HookState::kCompare;
      if (!run(s, in, &mo, &err)) return die(err);
      hs.mode = HookState::kForce;
      if (!run(s, in, nullptr, &err)) return die(err);
      s.set_hidden_state_hook(nullptr, nullptr);

      TokenCosines tc;
      tc.add(mo.hidden.data(), ro.hidden.data(), in.n, H, final_keep.data());
      for (size_t t = 0; worst_n > 0 && t < in.n; ++t) {
        const float* a = mo.hidden.data() + t * H;
        const float* b = ro.hidden.data() + t * H;
        const double cs = edgebert::tools::cosine(a, b, H);
        std::vector<std::pair<float, size_t>> dims;
        for (size_t i = 0; i < H; ++i) dims.push_back({std::fabs(a[i] - b[i]), i});
        std::partial_sort(dims.begin(), dims.begin() + std::min<size_t>(3, H), dims.end(), std::greater<>());
        char where[512];
        int len = std::snprintf(where, sizeof where, "%s token %zu, worst dims:", in.name.c_str(), t);
        for (size_t k = 0; k < std::min<size_t>(3, H) && len < 400; ++k)
          len += std::snprintf(where + len, sizeof where - len, " %zu (fp32 %.3f, int8 %.3f)", dims[k].second, b[dims[k].second],
                               a[dims[k].second]);
        r.worst.push_back({cs, where});
      }
      r.final_hidden.add(mo.hidden.data(), ro.hidden.data(), in.n, H, final_keep.data());
      double pooled = 1, dlogit = 0;
      std::string agree = "-";
      if (!ro.pooled.empty()) {
        pooled = edgebert::tools::cosine(mo.pooled.data(), ro.pooled.data(), H);
        r.pooled.add(pooled);
      }
      if (!ro.logits.empty()) {
        for (size_t k = 0; k < ro.logits.size(); ++k) dlogit = std::max(dlogit, double(std::fabs(mo.logits[k] - ro.logits[k])));
        r.max_logit_diff = std::max(r.max_logit_diff, dlogit);
        const bool same = same_argmax(mo, ro);
        r.argmax_agree += same;
        ++r.classified;
        agree = same ? "yes" : "NO";
      }
      char row[512];
      std::snprintf(row, sizeof row, "| %s | %zu | %.5f | %.5f | %.5f | %.5f | %.5f | %.4f | %s |\n", in.name.c_str(), in.n,
                    tc.all.min, tc.all.mean(), tc.ordinary.min, tc.ordinary.mean(), pooled, dlogit, agree.c_str());
      r.per_input_rows.push_back(row);
    }
  }

  // ---- report
  std::printf("edgebert-eval: %zu inputs (%zu tokens) from %s\n", inputs.size(), total_tokens, source.c_str());
  std::printf("reference: %s (%s); ordinary dimensions: all but the %ld with the largest RMS in the fp32 hidden states\n\n",
              ref.label.c_str(), method_of(*ref.model).c_str(), exclude_top);
  std::printf("| model | scheme | tok.cos min | tok.cos mean | ord.cos min | ord.cos mean | pooled cos min | max abs logit diff | argmax agree |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < models.size(); ++i) {
    const ModelReport& r = reports[i];
    char pooled[32] = "-", logit[32] = "-", agree[32] = "-";
    if (r.pooled.count) std::snprintf(pooled, sizeof pooled, "%.5f", r.pooled.min);
    if (r.classified) {
      std::snprintf(logit, sizeof logit, "%.4f", r.max_logit_diff);
      std::snprintf(agree, sizeof agree, "%d/%d", r.argmax_agree, r.classified);
    }
    std::printf("| %s | %s | %.5f | %.5f | %.5f | %.5f | %s | %s | %s |\n", models[i]->label.c_str(), models[i]->method.c_str(),
                r.final_hidden.all.min, r.final_hidden.all.mean(), r.final_hidden.ordinary.min,
                r.final_hidden.ordinary.mean(), pooled, logit, agree);
  }
  for (size_t i = 0; i < models.size(); ++i) {
    const ModelReport& r = reports[i];
    if (per_input) {
      std::printf("\n%s: per input\n\n| input | tokens | tok.cos min | tok.cos mean | ord.cos min | ord.cos mean | pooled cos | max abs logit diff | argmax agree |\n",
                  models[i]->label.c_str());
      std::printf("|---|---|---|---|---|---|---|---|---|\n");
      for (const std::string& row : r.per_input_rows) std::fputs(row.c_str(), stdout);
    }
    if (worst_n > 0) {
      std::vector<ModelReport::Worst> w = r.worst;
      std::sort(w.begin(), w.end(), [](const auto& x, const auto& y) { return x.cos < y.cos; });
      std::printf("\n%s: the %ld tokens with the lowest cosine\n\n", models[i]->label.c_str(), worst_n);
      for (size_t k = 0; k < w.size() && k < static_cast<size_t>(worst_n); ++k)
        std::printf("  cos %.5f  %s\n", w[k].cos, w[k].where.c_str());
    }
    std::printf("\n%s: per block (cumulative: the int8 model's hidden state after the block; local: the block alone, "
                "fed the fp32 model's input)\n\n",
                models[i]->label.c_str());
    std::printf("| block | cum. cos min | cum. cos mean | cum. ord.cos min | cum. ord.cos mean | local cos min | local ord.cos min | local ord.cos mean | local rel.err |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int s = 0; s < S; ++s) {
      const StageStats& st = r.stages[s];
      std::printf("| %s | %.5f | %.5f | %.5f | %.5f | %.5f | %.5f | %.5f | %.4f |\n", stage_name(s).c_str(),
                  st.cumulative.all.min, st.cumulative.all.mean(), st.cumulative.ordinary.min,
                  st.cumulative.ordinary.mean(), st.local.all.min, st.local.ordinary.min, st.local.ordinary.mean(),
                  st.local.rel_error());
    }
  }
  return 0;
}
