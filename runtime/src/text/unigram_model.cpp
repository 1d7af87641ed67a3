// SPDX-License-Identifier: Apache-2.0
// unigram_model.cpp: the reference's encode_optimized (best path ending at each byte, scores in
// double precision, ties keep the first candidate), then its tokenize (fused unknowns, byte
// fallback).
#include "text/unigram_model.h"

#include <cmath>

#include "text/unicode.h"

namespace edgebert {
namespace text {

Status UnigramModel::init(const VocabView& vocab, const double* scores, int32_t unk_id, bool byte_fallback,
                          const TokenTables* tables) {
  auto fail = [&](const std::string& m) {
    return Status(EB_ERROR_INVALID_MODEL, "Unigram: " + m);
  };
  if (vocab.empty()) return fail("empty vocabulary");
  if (unk_id < 0 || static_cast<size_t>(unk_id) >= vocab.size()) return fail("unk_id missing or outside the vocabulary");
  size_t prefixes = 0;
  double min_score = INFINITY;
  for (size_t i = 0; i < vocab.size(); ++i) {
    prefixes += vocab[i].size();
    if (!std::isfinite(scores[i])) return fail("score of piece " + std::to_string(i) + " is not finite");
    if (scores[i] < min_score) min_score = scores[i];
  }
  if (tables) {
    if (tables->indexes.size() != 1) return fail("tables: needs one index");
    const IndexTable& t = tables->indexes[0];
    if (!trie_.adopt(t.slots, t.capacity, t.count, vocab))
      return fail("tables: the index is not a power of two of 16 slots or more, at most half full, aligned");
  } else {
    trie_.reserve(prefixes, vocab);
    for (size_t id = 0; id < vocab.size(); ++id) {
      const std::string_view t = vocab[id];
      if (t.empty()) continue;
      for (size_t l = 1; l < t.size(); ++l) trie_.insert_prefix(static_cast<int32_t>(id), l);
      trie_.insert(static_cast<int32_t>(id));  // a later duplicate wins, as in the reference
    }
  }
  scores_ = scores;
  unk_score_ = min_score - 10.0;
  unk_id_ = unk_id;
  byte_fallback_ = byte_fallback;
  if (!fill_byte_ids(byte_ids_, tables, vocab.size(), [&](std::string_view k) { return trie_.find(k); }))
    return fail("tables: a byte token id outside the vocabulary");
  return Status::ok();
}

void UnigramModel::export_tables(TokenTables& out) const {
  out.indexes = {IndexTable{trie_.slot_data(), trie_.capacity(), trie_.size()}};
  out.byte_ids = byte_ids_;
}

void UnigramModel::tokenize(const char* s, size_t n, std::vector<ModelToken>& out, ModelScratch& sc) const {
  if (n == 0) return;
  auto& nodes = sc.nodes;
  nodes.assign(n + 1, ModelScratch::Node{0.0, -1, -1});
  nodes[0].start = 0;
  for (size_t start = 0; start < n;) {
    const double here = nodes[start].score;
    size_t mblen;
    decode_utf8(s + start, n - start, &mblen);
    bool single = false;
    uint64_t h = TokenIndex::kHashStart;
    for (size_t end = start; end < n;) {
      h = TokenIndex::extend(h, static_cast<unsigned char>(s[end]));
      ++end;
      const int32_t id = trie_.find(std::string_view(s + start, end - start), h);
      if (id == -2) break;
      if (id < 0) continue;
      ModelScratch::Node& t = nodes[end];
      const double cand = scores_[id] + here;
      if (t.start < 0 || cand > t.score) {
        t.score = cand;
        t.start = static_cast<int32_t>(start);
        t.id = id;
      }
      if (end - start == mblen) single = true;
    }
    if (!single) {
      ModelScratch::Node& t = nodes[start + mblen];
      const double cand = unk_score_ + here;
      if (t.start < 0 || cand > t.score) {
        t.score = cand;
        t.start = static_cast<int32_t>(start);
        t.id = unk_id_;
      }
    }
    start += mblen;
  }
  // back-track, fusing runs of unknowns, then emit in order
  const size_t first = out.size();
  for (size_t end = n; end > 0;) {
    const ModelScratch::Node& node = nodes[end];
    const size_t start = static_cast<size_t>(node.start);
    if (node.id == unk_id_ && out.size() > first && out.back().id == unk_id_ && out.back().begin == end) {
      out.back().begin = static_cast<uint32_t>(start);
    } else {
      out.push_back(ModelToken{node.id, static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
    }
    end = start;
  }
  for (size_t a = first, z = out.size(); a + 1 < z; ++a, --z) std::swap(out[a], out[z - 1]);
  // a fused run of unknowns can spell a vocabulary piece; unknowns may become byte tokens (one
  // per byte, all with the piece's offsets). Marked here, expanded below from the back in one
  // pass (inserting in place would move the rest of the word once per unknown: quadratic).
  constexpr int32_t kToBytes = -3;
  size_t extra = 0;
  for (size_t i = first; i < out.size(); ++i) {
    if (out[i].id != unk_id_) continue;
    const std::string_view piece(s + out[i].begin, out[i].end - out[i].begin);
    const int32_t id = trie_.find(piece);
    if (id >= 0) {
      out[i].id = id;
      continue;
    }
    if (!byte_fallback_) continue;
    bool all = true;
    for (unsigned char b : piece) all &= byte_ids_[b] >= 0;
    if (!all) continue;
    if (piece.size() == 1) {
      out[i].id = byte_ids_[static_cast<unsigned char>(piece[0])];
      continue;
    }
    out[i].id = kToBytes;
    extra += piece.size() - 1;
  }
  if (extra == 0) return;
  size_t from = out.size(), to = out.size() + extra;
  out.resize(to);
  while (from > first) {
    const ModelToken t = out[--from];
    if (t.id != kToBytes) {
      out[--to] = t;
      continue;
    }
    for (uint32_t k = t.end - t.begin; k > 0; --k)
      out[--to] = ModelToken{byte_ids_[static_cast<unsigned char>(s[t.begin + k - 1])], t.begin, t.end};
  }
}

}  // namespace text
}  // namespace edgebert
