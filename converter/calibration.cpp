// calibration.cpp: calibration inputs and activation statistics.
#include "converter/calibration.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <stdexcept>

#include "tokenizer/wordpiece_tokenizer.h"

namespace edgebert::convert {
namespace {

const char* const kBuiltinSentences[] = {
    "the movie was a delight from start to finish .",
    "I did not enjoy this film at all; the plot was thin and the acting wooden.",
    "What time does the next train to the city leave?",
    "A quiet, moving portrait of a family that never quite works.",
    "The quick brown fox jumps over the lazy dog.",
    "Prices rose 3.5% in October, the largest increase in two years.",
    "She said that the results would be published next week.",
    "It's not a bad film, but it isn't a good one either.",
    "Please restart the device and try again in a few minutes.",
    "The committee approved the new budget after a long debate.",
    "An astonishing performance that will stay with you for days.",
    "Can you recommend a good restaurant near the station?",
    "The weather was cold and wet, so we stayed inside all day.",
    "This is the worst product I have ever bought!",
    "Researchers found that the treatment reduced symptoms in most patients.",
    "He walked slowly down the road, thinking about what she had said.",
    "The battery lasts about ten hours on a single charge.",
    "Funny, smart and surprisingly warm, it is one of the best comedies of the year.",
    "Our flight was delayed by three hours because of the storm.",
    "The software update fixes several bugs and improves performance.",
    "I love this song , it reminds me of summer .",
    "Nothing in the story makes sense, and the ending is even worse.",
    "The museum is open from nine to five, Monday through Saturday.",
    "They built a small house by the lake and lived there for twenty years.",
};

}  // namespace

void Range::update(const float* x, size_t n) {
  if (n == 0) return;
  auto [mn, mx] = std::minmax_element(x, x + n);
  if (!seen) {
    min = *mn;
    max = *mx;
    seen = true;
  } else {
    min = std::min(min, *mn);
    max = std::max(max, *mx);
  }
}

void StatsCollector::observe(int layer, GemmKind kind, const FloatLinear& l, const float* x, const float* y,
                             size_t rows) {
  GemmStats& s = stats_[layer][static_cast<int>(kind)];
  s.input.update(x, rows * l.in);
  s.output.update(y, rows * l.out);
  if (s.output_channel_absmax.empty()) s.output_channel_absmax.assign(l.out, 0.f);
  for (size_t r = 0; r < rows; ++r)
    for (int c = 0; c < l.out; ++c)
      s.output_channel_absmax[c] = std::max(s.output_channel_absmax[c], std::fabs(y[r * l.out + c]));
}

CalibrationInputs make_calibration_inputs(const FloatBert& m, const std::vector<std::string>* vocab,
                                          bool do_lower_case, const std::string& text_file, int max_len) {
  CalibrationInputs out;
  TokenBatch& b = out.batch;
  b.starts.push_back(0);
  const int H = m.config.hidden_size;
  std::mt19937 rng(20221129);
  max_len = std::max(2, max_len);

  if (!m.has_embeddings) {
    if (!text_file.empty())
      throw std::runtime_error(text_file + ": this checkpoint has no embedding tables, so text calibration is impossible");
    std::normal_distribution<float> nd(0.f, 1.f);
    for (int s = 0; s < 16; ++s) {
      const int n = std::min(max_len, 8 + 8 * s);
      for (int t = 0; t < n * H; ++t) b.embeddings.push_back(nd(rng));
      b.starts.push_back(b.starts.back() + n);
    }
    out.source = "builtin-v1 (random N(0,1) embeddings)";
    return out;
  }

  auto add_ids = [&](const int32_t* ids, size_t n) {
    b.ids.insert(b.ids.end(), ids, ids + n);
    b.token_types.insert(b.token_types.end(), n, 0);
    b.starts.push_back(b.starts.back() + n);
  };

  std::vector<std::string> lines;
  if (!text_file.empty()) {
    std::ifstream f(text_file, std::ios::binary);
    if (!f) throw std::runtime_error(text_file + ": cannot open calibration file");
    std::string line;
    while (std::getline(f, line) && lines.size() < 1024) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
    }
    if (lines.empty()) throw std::runtime_error(text_file + ": calibration file has no non-empty lines");
    out.source = text_file;
  } else {
    for (const char* s : kBuiltinSentences) lines.emplace_back(s);
    out.source = "builtin-v1";
  }

  if (vocab && !vocab->empty()) {
    std::vector<std::string_view> views(vocab->begin(), vocab->end());
    WordPieceTokenizer tok;
    TokenizerOptions opt;
    opt.do_lower_case = do_lower_case;
    std::string err;
    if (!tok.init(views, opt, &err)) throw std::runtime_error("vocab.txt: " + err);
    std::vector<int32_t> ids(max_len);
    for (const std::string& line : lines) {
      size_t n = tok.encode(line, ids.data(), ids.size(), true);
      n = std::min<size_t>(n, ids.size());
      if (n == static_cast<size_t>(max_len)) ids[n - 1] = tok.sep_id();
      for (size_t i = 0; i < n; ++i)
        if (ids[i] < 0 || ids[i] >= m.config.vocab_size) ids[i] = tok.unk_id();
      add_ids(ids.data(), n);
    }
    // Short prefixes ([CLS], [CLS] w1, [CLS] w1 w2) of the first sentences: with one or two keys
    // attention returns un-averaged V rows, the largest context vectors any input produces.
    const size_t first = b.starts.size() - 1 - std::min<size_t>(lines.size(), 8);
    const size_t seqs = b.starts.size() - 1;
    for (size_t s = first; s < seqs; ++s) {
      const std::vector<int32_t> seq(b.ids.begin() + b.starts[s], b.ids.begin() + b.starts[s + 1]);
      for (size_t len = 1; len <= 3 && len < seq.size(); ++len) add_ids(seq.data(), len);
    }
  } else if (!text_file.empty()) {
    throw std::runtime_error(text_file + ": the checkpoint has no vocab.txt to tokenize calibration text");
  }
  if (text_file.empty()) {
    // Seeded random-token sequences: the whole vocabulary, very short inputs (few keys give
    // un-averaged attention outputs) and every position up to max_len.
    std::uniform_int_distribution<int32_t> tok_dist(0, m.config.vocab_size - 1);
    std::vector<int> lengths = {1, 2, 3, 5, 8, 16, 32, 64, 128};
    if (max_len > 128) lengths.push_back(max_len);
    for (int len : lengths) {
      if (len > max_len) break;
      const int n = len;
      std::vector<int32_t> ids(n);
      for (int& id : ids) id = tok_dist(rng);
      add_ids(ids.data(), ids.size());
    }
  }
  return out;
}

}  // namespace edgebert::convert
