// SPDX-License-Identifier: Apache-2.0
// wordpiece_model.cpp
#include "text/wordpiece_model.h"

#include "text/unicode.h"

namespace edgebert {
namespace text {

Status WordPieceModel::init(const VocabView& vocab, int32_t unk_id, std::string_view prefix,
                            int max_input_chars_per_word, const TokenTables* tables) {
  if (unk_id < 0 || static_cast<size_t>(unk_id) >= vocab.size()) {
    return Status(EB_ERROR_INVALID_MODEL, "WordPiece: unk token missing from the vocabulary");
  }
  max_word_ = max_cont_ = 0;
  size_t conts = 0;
  for (size_t i = 0; i < vocab.size(); ++i) {
    const std::string_view t = vocab[i];
    if (t.size() > max_word_) max_word_ = t.size();
    if (!prefix.empty() && t.size() > prefix.size() && t.substr(0, prefix.size()) == prefix) {
      ++conts;
      if (t.size() - prefix.size() > max_cont_) max_cont_ = t.size() - prefix.size();
    }
  }
  if (tables) {
    if (tables->indexes.size() != 2) return Status(EB_ERROR_INVALID_MODEL, "WordPiece: tables: needs two indexes");
    const IndexTable& w = tables->indexes[0];
    const IndexTable& c = tables->indexes[1];
    if (!words_.adopt(w.slots, w.capacity, w.count, vocab) || !continuations_.adopt(c.slots, c.capacity, c.count, vocab, prefix))
      return Status(EB_ERROR_INVALID_MODEL, "WordPiece: tables: an index is not a power of two of 16 slots or more, at most half full, aligned");
  } else {
    words_.reserve(vocab.size(), vocab);
    continuations_.reserve(conts, vocab, prefix);
    if (!words_.insert_ids() || (!prefix.empty() && !continuations_.insert_ids()))
      return Status(EB_ERROR_INVALID_MODEL, "WordPiece: vocabulary too large");
  }
  unk_id_ = unk_id;
  max_chars_ = max_input_chars_per_word;
  return Status::ok();
}

void WordPieceModel::export_tables(TokenTables& out) const {
  out.indexes = {IndexTable{words_.slot_data(), words_.capacity(), words_.size()},
                 IndexTable{continuations_.slot_data(), continuations_.capacity(), continuations_.size()}};
}

void WordPieceModel::tokenize(const char* s, size_t n, std::vector<ModelToken>& out) const {
  const size_t first = out.size();
  size_t chars = 0;
  for (size_t i = 0; i < n; ++i) chars += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
  if (chars > static_cast<size_t>(max_chars_)) {
    out.push_back(ModelToken{unk_id_, 0, static_cast<uint32_t>(n)});
    return;
  }
  size_t start = 0;
  while (start < n) {
    const bool cont = start > 0;
    const TokenIndex& index = cont ? continuations_ : words_;
    const size_t longest = cont ? max_cont_ : max_word_;
    size_t end = n - start > longest ? start + longest : n;
    while (end > start && end < n && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    int32_t id = -2;
    while (end > start) {
      id = index.find(std::string_view(s + start, end - start));
      if (id >= 0) break;
      do {
        --end;
      } while (end > start && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80);
    }
    if (id < 0) {
      out.resize(first);
      out.push_back(ModelToken{unk_id_, 0, static_cast<uint32_t>(n)});
      return;
    }
    out.push_back(ModelToken{id, static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
    start = end;
  }
}

}  // namespace text
}  // namespace edgebert
