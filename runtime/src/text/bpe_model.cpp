// SPDX-License-Identifier: Apache-2.0
// bpe_model.cpp
#include "text/bpe_model.h"

#include <algorithm>
#include <cstring>

#include "text/unicode.h"

namespace edgebert {
namespace text {
namespace {
uint64_t pair_hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}
constexpr uint64_t kNone = ~0ull;
Status fail(const std::string& m) { return Status(EB_ERROR_INVALID_MODEL, "BPE: " + m); }
}  // namespace

Status BpeModel::init(const VocabView& vocab, const Merge* merges, size_t num_merges, const BpeOptions& o,
                      const TokenTables* tables) {
  static_assert(sizeof(PairSlot) == kPairSlotBytes, "the model file's BpePairSlot");
  const int64_t n = static_cast<int64_t>(vocab.size());
  if (n > 0x7FFFFFFF) return fail("vocabulary too large");
  if (o.unk_id < -1 || o.unk_id >= n) return fail("unk id out of range");
  if (o.continuing_subword_prefix.size() > kMaxAffixBytes || o.end_of_word_suffix.size() > kMaxAffixBytes)
    return fail("continuing_subword_prefix / end_of_word_suffix longer than 64 bytes");
  vocab_size_ = static_cast<uint32_t>(n);
  if (tables) {
    const size_t cap = tables->pair_capacity;
    if (tables->indexes.size() != 1) return fail("tables: needs one index");
    const IndexTable& t = tables->indexes[0];
    if (!vocab_.adopt(t.slots, t.capacity, t.count, vocab))
      return fail("tables: the index is not a power of two of 16 slots or more, at most half full, aligned");
    if (!table_shape_ok(tables->pairs, cap, num_merges, alignof(PairSlot)))
      return fail("tables: the merge table is not a power of two of 16 slots or more, at most half full, aligned");
    owned_pairs_ = PageArray<PairSlot>();
    pairs_ = static_cast<const PairSlot*>(tables->pairs);
    pair_capacity_ = cap;
    pair_mask_ = cap - 1;
  } else {
    vocab_.reserve(vocab.size(), vocab);
    if (!vocab_.insert_ids()) return fail("vocabulary too large");  // the non-empty ones; an empty
    for (size_t id = 0; id < vocab.size(); ++id)                    // token never collides with them:
      if (vocab[id].empty()) vocab_.insert(static_cast<int32_t>(id));
    EB_RETURN_IF_ERROR(build_pairs(vocab, merges, num_merges, o.continuing_subword_prefix));
  }
  if (!fill_byte_ids(byte_ids_, tables, vocab.size(), [&](std::string_view k) { return vocab_.find(k); }))
    return fail("tables: a byte token id outside the vocabulary");
  options_ = o;
  return Status::ok();
}

void BpeModel::export_tables(TokenTables& out) const {
  out.indexes = {IndexTable{vocab_.slot_data(), vocab_.capacity(), vocab_.size()}};
  out.pairs = pairs_;
  out.pair_capacity = pair_capacity_;
  out.byte_ids = byte_ids_;
}

Status BpeModel::build_pairs(const VocabView& vocab, const Merge* merges, size_t num_merges, std::string_view pre) {
  const int64_t n = static_cast<int64_t>(vocab.size());
  size_t capacity = 16;
  while (capacity < 2 * num_merges) capacity *= 2;  // at most half full (one merge per slot at most)
  owned_pairs_.assign(capacity, PairSlot{kNone, 0});
  PairSlot* pairs = &owned_pairs_[0];
  pairs_ = pairs;
  pair_capacity_ = capacity;
  pair_mask_ = capacity - 1;
  // Each merge reads three vocabulary entries, their bytes and a slot of the table, all at random
  // places: 16 merges ahead the entries and the slot are prefetched, 8 ahead the entries' bytes
  // (EmbeddingGemma's 262,144 tokens and their merges otherwise wait on memory at every read).
  constexpr size_t kAhead = 16;
  auto in_range = [n](const Merge& m) {
    return m.left >= 0 && m.left < n && m.right >= 0 && m.right < n && m.merged >= 0 && m.merged < n;
  };
  auto prefetch_entries = [&](const Merge& m) {
    if (!in_range(m)) return;
    __builtin_prefetch(vocab.ends() + m.left);
    __builtin_prefetch(vocab.ends() + m.right);
    __builtin_prefetch(vocab.ends() + m.merged);
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(m.left)) << 32) | static_cast<uint32_t>(m.right);
    __builtin_prefetch(&pairs_[pair_hash(key) & pair_mask_]);
  };
  auto prefetch_bytes = [&](const Merge& m) {
    if (!in_range(m)) return;
    __builtin_prefetch(vocab[static_cast<size_t>(m.left)].data());
    __builtin_prefetch(vocab[static_cast<size_t>(m.right)].data());
    __builtin_prefetch(vocab[static_cast<size_t>(m.merged)].data());
  };
  for (size_t r = 0; r < num_merges; ++r) {
    if (r + kAhead < num_merges) prefetch_entries(merges[r + kAhead]);
    if (r + kAhead / 2 < num_merges) prefetch_bytes(merges[r + kAhead / 2]);
    const Merge& m = merges[r];
    if (!in_range(m))
      return fail("merge " + std::to_string(r) + " has a token id outside the vocabulary");
    const std::string_view l = vocab[m.left], rt = vocab[m.right], mg = vocab[m.merged];
    // the merged token is the concatenation, less the continuation prefix of the right part
    std::string_view right = rt;
    if (!pre.empty() && right.substr(0, pre.size()) == pre) right.remove_prefix(pre.size());
    if (mg.size() != l.size() + right.size() || mg.substr(0, l.size()) != l || mg.substr(l.size()) != right)
      return fail("merge " + std::to_string(r) + " does not produce the concatenation of its parts");
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(m.left)) << 32) | static_cast<uint32_t>(m.right);
    const uint64_t value = (static_cast<uint64_t>(r) << 32) | static_cast<uint32_t>(m.merged);
    for (size_t i = pair_hash(key) & pair_mask_;; i = (i + 1) & pair_mask_) {
      if (pairs[i].key == kNone || pairs[i].key == key) {
        pairs[i] = PairSlot{key, value};  // a later duplicate wins, as in the reference's map
        break;
      }
    }
  }
  return Status::ok();
}

uint64_t BpeModel::find_merge(int32_t left, int32_t right) const {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  size_t i = pair_hash(key) & pair_mask_;
  for (size_t probes = 0; probes < pair_capacity_; ++probes, i = (i + 1) & pair_mask_) {  // one lap at most
    if (pairs_[i].key == key)
      return static_cast<uint32_t>(pairs_[i].value) < vocab_size_ ? pairs_[i].value : kNone;
    if (pairs_[i].key == kNone) return kNone;
  }
  return kNone;
}

void BpeModel::tokenize(const char* s, size_t n, std::vector<ModelToken>& out, ModelScratch& sc) const {
  if (n == 0) return;
  if (options_.ignore_merges) {
    const int32_t id = vocab_.find(std::string_view(s, n));
    if (id >= 0) {
      out.push_back(ModelToken{id, 0, static_cast<uint32_t>(n)});
      return;
    }
  }
  auto& sym = sc.symbols;
  sym.clear();
  // HF's Word::add(id, byte_len): a symbol's offsets are the sum of the lengths before it, so a
  // character dropped (no unk, no byte token) shifts the offsets after it back, and byte tokens
  // are 1 byte each (prefix / suffix bytes included)
  uint32_t pos = 0;
  // (kept inside the word: byte tokens of a continuing_subword_prefix can count more bytes than
  // the word has)
  const uint32_t word_end = static_cast<uint32_t>(n);
  auto add = [&](int32_t id, uint32_t len) {
    const uint32_t e = std::min(pos + len, word_end), b = std::min(pos, e - 1);
    sym.push_back(ModelScratch::Symbol{id, b, e, -1, -1});
    pos += len;
  };
  const std::string_view pre = options_.continuing_subword_prefix, suf = options_.end_of_word_suffix;
  if (sc.key.size() < 2 * kMaxAffixBytes + 8) sc.key.resize(2 * kMaxAffixBytes + 8);
  bool have_unk = false;
  uint32_t unk_len = 0;
  for (size_t i = 0; i < n;) {
    size_t len;
    decode_utf8(s + i, n - i, &len);
    const bool first = i == 0, last = i + len == n;
    char* k = sc.key.data();
    size_t kl = 0;
    if (!first && !pre.empty()) {  // (an empty view's data() may be null: no memcpy from it)
      std::memcpy(k, pre.data(), pre.size());
      kl = pre.size();
    }
    std::memcpy(k + kl, s + i, len);
    kl += len;
    if (last && !suf.empty()) {
      std::memcpy(k + kl, suf.data(), suf.size());
      kl += suf.size();
    }
    const int32_t id = vocab_.find(std::string_view(k, kl));
    i += len;
    if (id >= 0) {
      if (have_unk) add(options_.unk_id, unk_len), have_unk = false;
      add(id, static_cast<uint32_t>(len));
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (size_t q = 0; q < kl; ++q) all &= byte_ids_[static_cast<unsigned char>(k[q])] >= 0;
      if (all) {
        // (the reference gives every byte token a length of 1 byte from the word start onwards)
        for (size_t q = 0; q < kl; ++q) add(byte_ids_[static_cast<unsigned char>(k[q])], 1);
        continue;
      }
    }
    if (options_.unk_id >= 0) {
      if (have_unk && options_.fuse_unk) {
        unk_len += static_cast<uint32_t>(len);
      } else {
        if (have_unk) add(options_.unk_id, unk_len);
        have_unk = true;
        unk_len = static_cast<uint32_t>(len);
      }
    }
  }
  if (have_unk) add(options_.unk_id, unk_len);
  const int32_t count = static_cast<int32_t>(sym.size());
  for (int32_t i = 0; i < count; ++i) {
    sym[i].prev = i - 1;
    sym[i].next = i + 1 < count ? i + 1 : -1;
  }
  // HF tokenizers' Word::merge_all: a min-heap of candidate merges on (rank, position of the left
  // symbol) over the linked symbols. A popped entry is stale when its left symbol was merged
  // away, is now last, or now forms a pair with a different merged token (HF compares the merged
  // id only, and so does this); each merge pushes the new pairs with its neighbours. At most
  // count - 1 + 2 * merges entries are pushed and every merge pops one: O(n log n) per word.
  using Candidate = ModelScratch::Candidate;
  auto& q = sc.queue;
  q.clear();
  const auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  };
  const auto candidate = [&](int32_t pos, Candidate* c) {
    const int32_t next = sym[pos].next;
    if (next < 0) return false;
    const uint64_t m = find_merge(sym[pos].id, sym[next].id);
    if (m == kNone) return false;
    *c = Candidate{static_cast<uint32_t>(m >> 32), static_cast<uint32_t>(pos), static_cast<int32_t>(m & 0xFFFFFFFFu)};
    return true;
  };
  Candidate c;
  for (int32_t i = 0; i + 1 < count; ++i)
    if (candidate(i, &c)) q.push_back(c);
  std::make_heap(q.begin(), q.end(), later);
  const auto push = [&](int32_t pos) {
    if (!candidate(pos, &c)) return;
    q.push_back(c);
    std::push_heap(q.begin(), q.end(), later);
  };
  while (!q.empty()) {
    std::pop_heap(q.begin(), q.end(), later);
    const Candidate top = q.back();
    q.pop_back();
    const int32_t pos = static_cast<int32_t>(top.pos);
    const int32_t right = sym[pos].next;
    if (sym[pos].id < 0 || right < 0) continue;  // merged into its left neighbour, or last
    const uint64_t m = find_merge(sym[pos].id, sym[right].id);
    if (m == kNone || static_cast<int32_t>(m & 0xFFFFFFFFu) != top.merged) continue;  // stale
    sym[pos].id = top.merged;
    sym[pos].end = sym[right].end;
    sym[pos].next = sym[right].next;
    sym[right].id = -1;  // removed
    if (sym[pos].next >= 0) sym[sym[pos].next].prev = pos;
    if (sym[pos].prev >= 0) push(sym[pos].prev);
    push(pos);
  }
  for (int32_t i = 0; i >= 0 && count > 0; i = sym[i].next) out.push_back(ModelToken{sym[i].id, sym[i].begin, sym[i].end});
}

}  // namespace text
}  // namespace edgebert
