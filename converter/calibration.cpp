// SPDX-License-Identifier: Apache-2.0
// calibration.cpp: calibration inputs and activation statistics.
#include "converter/calibration.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <stdexcept>

#include "text/tokenizer.h"

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

// Synthetic embedding-layer outputs (builtin-v2, see calibration.h): per sequence, gamma/beta
// drawn per dimension from the model's encoder LayerNorms; per token, a layer-normalised
// Gaussian z (which callers may spike first) scaled and shifted by them.
struct SyntheticEmbeddings {
  SyntheticEmbeddings(const FloatBert& m, std::mt19937& r, TokenBatch& out)
      : H(m.config.hidden_size), rng(r), b(out), gamma(H), beta(H), z(H) {
    for (const FloatLayer& L : m.layers) {
      norms.push_back(&L.attention_norm);
      norms.push_back(&L.output_norm);
    }
    pick = std::uniform_int_distribution<size_t>(0, norms.size() - 1);
  }
  void draw_norm() {
    for (int c = 0; c < H; ++c) {
      const FloatLayerNorm* ln = norms[pick(rng)];
      gamma[c] = ln->gamma[c];
      beta[c] = ln->beta[c];
    }
  }
  // One token: z (already drawn, possibly with spikes) layer-normalised, then gamma/beta.
  void emit() {
    double mean = 0, var = 0;
    for (int c = 0; c < H; ++c) mean += z[c];
    mean /= H;
    for (int c = 0; c < H; ++c) var += (z[c] - mean) * (z[c] - mean);
    const double inv = 1.0 / std::sqrt(var / H + 1e-12);
    for (int c = 0; c < H; ++c) b.embeddings.push_back(static_cast<float>((z[c] - mean) * inv) * gamma[c] + beta[c]);
  }
  // A sequence of n plain tokens.
  void sequence(int n) {
    draw_norm();
    for (int t = 0; t < n; ++t) {
      for (int c = 0; c < H; ++c) z[c] = nd(rng);
      emit();
    }
    b.starts.push_back(b.starts.back() + n);
  }

  const int H;
  std::mt19937& rng;
  TokenBatch& b;
  std::normal_distribution<float> nd{0.f, 1.f};
  std::vector<const FloatLayerNorm*> norms;
  std::uniform_int_distribution<size_t> pick;
  std::vector<float> gamma, beta, z;
};

}  // namespace

TokenBatch make_extra_sequences(const FloatBert& m, uint32_t seed, int count, int len) {
  TokenBatch b;
  b.starts.push_back(0);
  std::mt19937 rng(seed);
  if (!m.has_embeddings) {
    SyntheticEmbeddings gen(m, rng, b);
    for (int s = 0; s < count; ++s) gen.sequence(len);
    return b;
  }
  std::uniform_int_distribution<int32_t> tok_dist(0, m.config.vocab_size - 1);
  // With a token-type table, every second sequence is laid out as a pair (its second half type 1):
  // GPTQ fitted on type-0 inputs only puts its rounding error where type 1's embedding points.
  const bool pairs = m.config.type_vocab_size >= 2 && !m.token_type_embeddings.empty();
  for (int s = 0; s < count; ++s) {
    for (int t = 0; t < len; ++t) {
      b.ids.push_back(tok_dist(rng));
      b.token_types.push_back(pairs && s % 2 == 1 && t >= len / 2 ? 1 : 0);
    }
    b.starts.push_back(b.starts.back() + len);
  }
  return b;
}

CalibrationInputs make_calibration_inputs(const FloatBert& m, const std::vector<std::string>* vocab,
                                          bool do_lower_case, const std::string& text_file, int max_len) {
  if (vocab == nullptr || vocab->empty()) return make_calibration_inputs(m, nullptr, text_file, max_len);
  text::BertVocabOptions opt;
  opt.lowercase = do_lower_case;
  text::Tokenizer tok;
  const Status st = tok.init_bert_vocab(std::vector<std::string_view>(vocab->begin(), vocab->end()), opt);
  if (!st.is_ok()) throw std::runtime_error("vocab.txt: " + st.message());
  return make_calibration_inputs(m, &tok, text_file, max_len);
}

CalibrationInputs make_calibration_inputs(const FloatBert& m, const text::Tokenizer* tok, const std::string& text_file,
                                          int max_len) {
  CalibrationInputs out;
  TokenBatch& b = out.batch;
  b.starts.push_back(0);
  const int H = m.config.hidden_size;
  std::mt19937 rng(20221129);
  max_len = std::max(2, max_len);

  if (!m.has_embeddings) {
    if (!text_file.empty())
      throw std::runtime_error(text_file + ": this checkpoint has no embedding tables, so text calibration is impossible");
    // Synthetic embedding outputs with the statistics an embedding LayerNorm produces: every token
    // z ~ N(0, I) normalised to mean 0 / variance 1, then x[c] = gamma[c] z[c] + beta[c]. The
    // embedding LayerNorm's own gamma/beta are missing, so (gamma[c], beta[c]) is taken per
    // dimension from one of the model's own encoder LayerNorms, chosen at random per dimension
    // and per sequence: the residual stream keeps its per-dimension scale and offset structure
    // across layers, and the draw per sequence covers the uncertainty about which one applies.
    SyntheticEmbeddings gen(m, rng, b);
    std::vector<int> lengths = {1, 2, 3, 5, 8, 12, 16, 24, 32, 48, 64, 96, 128, 128, 8, 16, 32, 64};
    if (max_len > 128) lengths.push_back(max_len);
    for (int len : lengths) gen.sequence(std::min(max_len, len));
    std::vector<float>& z = gen.z;
    auto& nd = gen.nd;
    auto draw_norm = [&] { gen.draw_norm(); };
    auto emit = [&] { gen.emit(); };
    // Special-token probes: real inputs start with [CLS] (and end with [SEP]), whose embedding
    // outputs are fixed vectors that trained models often concentrate in one or two dimensions
    // (close to the LayerNorm bound sqrt(H - 1) |gamma|), and to which the encoder responds with
    // its largest activations. Their directions are unknown here, so probe sequences (4 tokens)
    // start with a token dominated by dimension c (about 0.79 sqrt(H) before gamma) plus a second
    // random dimension (about 0.47 sqrt(H)), c running over a random permutation of the
    // dimensions with both signs (at most 256 probes).
    std::vector<int> perm(H);
    for (int c = 0; c < H; ++c) perm[c] = c;
    std::shuffle(perm.begin(), perm.end(), rng);
    std::uniform_int_distribution<int> any_dim(0, H - 1);
    const int probes = std::min(2 * H, 256);
    const float s1 = 2.f * std::sqrt(static_cast<float>(H)), s2 = 0.6f * s1;
    for (int p = 0; p < probes && max_len >= 1; ++p) {
      const int n = std::min(max_len, 4);
      draw_norm();
      for (int t = 0; t < n; ++t) {
        for (int c = 0; c < H; ++c) z[c] = nd(rng);
        if (t == 0) {
          z[perm[(p / 2) % H]] += (p % 2 ? -s1 : s1);
          z[any_dim(rng)] += (nd(rng) < 0 ? -s2 : s2);
        }
        emit();
      }
      b.starts.push_back(b.starts.back() + n);
    }
    out.source = "builtin-v2 (synthetic embedding outputs, LayerNorm statistics of the model's own encoder)";
    return out;
  }

  auto add_ids = [&](const int32_t* ids, size_t n, size_t type1_from = SIZE_MAX) {
    b.ids.insert(b.ids.end(), ids, ids + n);
    for (size_t i = 0; i < n; ++i) b.token_types.push_back(i >= type1_from && m.config.has_token_types() ? 1 : 0);
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

  if (tok != nullptr && tok->initialized()) {
    text::TextWorkspace ws;
    ws.reserve(4096);
    std::vector<text::TextToken> toks(static_cast<size_t>(max_len));
    std::vector<int32_t> ids(static_cast<size_t>(max_len));
    // The model's own encoding (its template's special tokens and type ids), truncated to max_len
    // with longest_first.
    auto add_text = [&](std::string_view a, const std::string_view* pair_b) {
      const size_t n = std::min(tok->encode(a, pair_b, static_cast<size_t>(max_len), ws, toks.data(), toks.size()),
                                toks.size());
      for (size_t i = 0; i < n; ++i) {
        ids[i] = toks[i].id;
        if (ids[i] < 0 || ids[i] >= m.config.vocab_size) ids[i] = std::max(tok->unk_id(), 0);
        b.token_types.push_back(m.config.has_token_types() ? toks[i].type_id : 0);
      }
      b.ids.insert(b.ids.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
      b.starts.push_back(b.starts.back() + n);
    };
    for (const std::string& line : lines) {
      const size_t tab = line.find('\t');
      if (tab == std::string::npos) {
        add_text(line, nullptr);
      } else {
        const std::string_view second(line.data() + tab + 1, line.size() - tab - 1);
        add_text(std::string_view(line.data(), tab), &second);
      }
    }
    // Short prefixes ([CLS], [CLS] w1, [CLS] w1 w2) of the last 8 sentences: with one or two keys
    // attention returns un-averaged V rows, the largest context vectors any input produces.
    const size_t seqs = b.num_sequences();
    const size_t first = seqs - std::min<size_t>(lines.size(), 8);
    for (size_t s = first; s < seqs; ++s) {
      const std::vector<int32_t> seq(b.ids.begin() + b.starts[s], b.ids.begin() + b.starts[s + 1]);
      for (size_t len = 1; len <= 3 && len < seq.size(); ++len) add_ids(seq.data(), len);
    }
    if (m.task == Task::kQuestionAnswering && m.config.has_token_types()) {  // QA inputs are pairs
      for (size_t i = 0; i + 1 < lines.size(); i += 2) {
        const std::string_view second(lines[i + 1]);
        add_text(lines[i], &second);
      }
    }
  } else if (!text_file.empty()) {
    throw std::runtime_error(text_file + ": the checkpoint has no tokenizer (tokenizer.json or vocab.txt) to tokenize calibration text");
  }
  if (text_file.empty()) {
    // Seeded random-token sequences: the whole vocabulary, very short inputs (few keys give
    // un-averaged attention outputs) and every position up to max_len.
    std::uniform_int_distribution<int32_t> tok_dist(0, m.config.vocab_size - 1);
    std::vector<int> lengths = {1, 2, 3, 5, 8, 16, 32, 64, 128};
    if (max_len > 128) lengths.push_back(max_len);
    // Without a vocabulary these sequences are the whole calibration set: add more of them.
    if (tok == nullptr || !tok->initialized())
      for (int len : {4, 24, 64, 128, 128}) lengths.push_back(len);
    size_t random_tokens = 0;
    auto add_random = [&](int n) {
      std::vector<int32_t> ids(static_cast<size_t>(n));
      for (int& id : ids) id = tok_dist(rng);
      add_ids(ids.data(), ids.size());
      random_tokens += ids.size();
    };
    for (int len : lengths)
      if (len <= max_len) add_random(len);
    // A model of fewer than 128 positions loses the longer sequences above: sequences of its full
    // length make up for them, to kMinShortModelTokens. (With 63 tokens at 24 positions, small
    // random Gemma 3 checkpoints clipped their static ranges: per-token cosines of 0.91-0.98.)
    constexpr size_t kMinShortModelTokens = 1024;
    if (max_len < 128)
      while (random_tokens < kMinShortModelTokens) add_random(max_len);
  }
  return out;
}

}  // namespace edgebert::convert
