// calibration.h: chooses the calibration inputs (a user text file, or the documented built-in
// set) and collects the activation statistics of every GEMM while the float reference runs.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "converter/reference_bert.h"

namespace edgebert::convert {

struct CalibrationInputs {
  TokenBatch batch;
  std::string source;  // "builtin-v1" or the file name
};

// Built-in calibration ("builtin-v1"): 24 fixed English sentences tokenized with the model's
// vocabulary, plus seeded pseudo-random token sequences of lengths 1, 2, 3, 5, 8, 16, 32, 64, 128
// and max_len (capped at max_len): they exercise the whole embedding table, very short inputs
// and every position. Encoder-only models (no embedding tables) get 16 seeded sequences of
// N(0, 1) vectors instead.
// Sentences also contribute their 1-, 2- and 3-token prefixes (first 8 sentences): short inputs
// give attention's extreme (un-averaged) outputs, which long sentences never show.
// With `text_file`: one sentence per line (blank lines skipped), at most 1024 lines, each
// truncated to max_len tokens; positions beyond the longest line are not calibrated, so the file
// should contain inputs as long as those the model will see. Throws std::runtime_error on an
// unreadable or empty file.
CalibrationInputs make_calibration_inputs(const FloatBert& model, const std::vector<std::string>* vocab,
                                          bool do_lower_case, const std::string& text_file, int max_len);

struct Range {
  float min = 0.f, max = 0.f;
  bool seen = false;
  void update(const float* x, size_t n);
};

struct GemmStats {
  Range input;
  Range output;
  std::vector<float> output_channel_absmax;  // per output channel
};

// Observer that accumulates GemmStats for every layer and GEMM.
class StatsCollector : public GemmObserver {
 public:
  explicit StatsCollector(size_t num_layers) : stats_(num_layers) {}
  void observe(int layer, GemmKind kind, const FloatLinear& linear, const float* x, const float* y,
               size_t rows) override;
  const GemmStats& at(int layer, GemmKind kind) const { return stats_[layer][static_cast<int>(kind)]; }

 private:
  std::vector<std::array<GemmStats, kGemmsPerLayer>> stats_;
};

}  // namespace edgebert::convert
