// SPDX-License-Identifier: Apache-2.0
// tokenizer.cpp: the facade: table checks and model set-up in init(), then encode():
// added tokens in the raw text, normalization piece by piece, added tokens in the normalized
// text, pre-tokenization, the model on every word, offsets back to the original bytes through
// the alignments, byte-level offset trimming, longest_first truncation and the template; and
// init_bert_vocab(), the same pipeline set up for a vocabulary alone.
#include "text/tokenizer.h"

#include <algorithm>
#include <limits>
#include <new>
#include <unordered_map>
#include <utility>

#include "edgebert_generated.h"

namespace edgebert {
namespace text {
namespace {

Status invalid(const std::string& m) { return Status(EB_ERROR_INVALID_MODEL, "tokenizer: " + m); }

std::string_view view(const flatbuffers::String* s) {
  return s ? std::string_view(s->c_str(), s->size()) : std::string_view();
}

bool valid_utf8(std::string_view s) { return find_invalid_utf8(s.data(), s.size()) == s.size(); }

// A file's vocabulary: its strings (copied into *owned) or, schema_version 8, its one text and
// token ends (viewed in place); `what` names the table in messages.
Status read_vocabulary(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* strings,
                       const flatbuffers::Vector<uint8_t>* text, const flatbuffers::Vector<uint32_t>* ends,
                       const std::string& what, VocabText* owned, VocabView* vocab) {
  if ((text == nullptr) != (ends == nullptr)) return invalid(what + ": the one-text form needs both text and ends");
  const size_t strings_n = strings ? strings->size() : 0;
  if (ends && strings_n != 0) return invalid(what + ": a vocabulary both as strings and as one text");
  if (ends) {  // mapped as it is (each token checked where it is read)
    *vocab = VocabView(reinterpret_cast<const char*>(text->data()), text->size(), ends->data(), ends->size());
    return Status::ok();
  }
  owned->reserve(strings_n);
  for (size_t i = 0; i < strings_n; ++i)
    if (!owned->append(view(strings->Get(static_cast<flatbuffers::uoffset_t>(i)))))
      return invalid(what + ": vocabulary larger than 4 GiB");
  *vocab = owned->view();
  return Status::ok();
}

// The file's lookup tables when they were built by this runtime's scheme: *use points at `out`
// (else stays null and the models build their own). Only byte_ids' count is checked here; each
// model checks its tables' shapes (token_tables.h) and every lookup what it lands on.
Status read_file_tables(const fb::TokenizerTables* t, TokenTables* out, const TokenTables** use) {
  if (t == nullptr || t->scheme() != kTokenTableScheme) return Status::ok();
  static_assert(sizeof(fb::TokenIndexSlot) == TokenIndex::kSlotBytes, "TokenIndexSlot layout");
  static_assert(sizeof(fb::BpePairSlot) == BpeModel::kPairSlotBytes, "BpePairSlot layout");
  for (const fb::TokenIndexTable* x : *t->indexes())
    out->indexes.push_back(IndexTable{x->slots()->data(), x->slots()->size(), static_cast<size_t>(x->count())});
  if (const auto* p = t->bpe_pairs()) {
    out->pairs = p->data();
    out->pair_capacity = p->size();
  }
  if (const auto* b = t->byte_ids()) {
    if (b->size() != 256) return invalid("tables: byte_ids has " + std::to_string(b->size()) + " entries, not 256");
    out->byte_ids = b->data();
  }
  *use = out;
  return Status::ok();
}

}  // namespace

void TextWorkspace::reserve(size_t n) {
  const size_t bytes = 4 * n + 64;
  for (TextBuffer* b : {&piece, &norm, &pre[0], &pre[1], &normalizer.tmp}) {
    b->bytes.reserve(bytes);
    b->align.reserve(bytes);
  }
  for (auto& s : splits) s.reserve(n + 8);
  matches.reserve(n / 2 + 8);
  norm_matches.reserve(n / 2 + 8);
  normalizer.changes.reserve(bytes);
  normalizer.segment.reserve(64);
  normalizer.normalized.reserve(1024);
  normalizer.sources.reserve(1024);
  normalizer.composed.reserve(1024);
  normalizer.out_sources.reserve(1024);
  pre_tokenizer.segments.reserve(bytes);
  pre_tokenizer.merged.reserve(bytes);
  pre_tokenizer.changes.reserve(bytes);
  model.symbols.reserve(n + 8);
  model.queue.reserve(2 * n + 8);  // BPE: at most 2 x symbols entries at once (bpe_model.cpp)
  model.nodes.reserve(n + 8);
  model.key.reserve(256);
  pre_tokenizer.regex.reserve();
  model_tokens.reserve(2 * n + 8);
  for (auto& s : seq) s.reserve(2 * n + 8);
  reserved_bytes = n;
}

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

void Tokenizer::reset() {
  kind_ = Kind::kNone;
  tables_adopted_ = false;
  vocab_text_ = VocabText();
  vocab_ = VocabView();
  normalizers_.clear();
  pre_tokenizers_.clear();
  wordpiece_.reset();
  bpe_.reset();
  unigram_.reset();
  added_.clear();
  single_.clear();
  pair_.clear();
  specials_.clear();
  has_template_ = trim_offsets_ = trim_add_prefix_space_ = false;
  single_frame_ = Frame();
  pair_frame_ = Frame();
  word_local_ = split_whitespace_ = split_punctuation_ = split_cjk_ = any_cjk_added_ = false;
  std::fill(std::begin(in_added_), std::end(in_added_), false);
  pad_id_ = 0;
  unk_id_ = -1;
  mask_id_ = -1;
}

Status Tokenizer::init_from_buffer(std::vector<uint8_t> buffer) {
  flatbuffers::Verifier v(buffer.data(), buffer.size());
  if (!v.VerifyBuffer<fb::TokenizerSpec>(nullptr)) return invalid("tables are not a valid FlatBuffer");
  owned_ = std::move(buffer);
  return init(flatbuffers::GetRoot<fb::TokenizerSpec>(owned_.data()), 0);
}

Status Tokenizer::init_bert_vocab(std::vector<std::string_view> vocab, const BertVocabOptions& o) {
  reset();
  try {
    if (!vocab_text_.assign(vocab)) return invalid("vocabulary larger than 4 GiB");
  } catch (const std::bad_alloc&) {
    reset();
    return Status(EB_ERROR_OUT_OF_MEMORY, "tokenizer: out of memory");
  }
  vocab_ = vocab_text_.view();
  return set_up_bert(o, nullptr);
}

Status Tokenizer::init_vocabulary(const fb::Vocabulary* voc) {
  reset();
  if (voc == nullptr) return invalid("no vocabulary");
  BertVocabOptions o;
  o.lowercase = voc->do_lower_case();
  o.handle_chinese_chars = voc->tokenize_chinese_chars();
  o.unk_id = voc->unk_id();
  o.cls_id = voc->cls_id();
  o.sep_id = voc->sep_id();
  o.pad_id = voc->pad_id();
  o.max_input_chars_per_word = voc->max_chars_per_word();
  if (!voc->ends() && voc->tables()) return invalid("vocabulary: tables without the one-text form");
  TokenTables file_tables;
  const TokenTables* tables = nullptr;
  try {
    EB_RETURN_IF_ERROR(read_vocabulary(voc->tokens(), voc->text(), voc->ends(), "vocabulary", &vocab_text_, &vocab_));
    EB_RETURN_IF_ERROR(read_file_tables(voc->tables(), &file_tables, &tables));
  } catch (const std::bad_alloc&) {
    reset();
    return Status(EB_ERROR_OUT_OF_MEMORY, "tokenizer: out of memory");
  }
  return set_up_bert(o, tables);
}

Status Tokenizer::set_up_bert(const BertVocabOptions& o, const TokenTables* tables) {
  try {
    if (vocab_.empty()) return invalid("empty vocabulary");
    if (vocab_.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      return invalid("vocabulary has more than 2^31-1 tokens");
    if (o.max_input_chars_per_word < 0 || o.max_input_chars_per_word > kMaxInputCharsPerWord)
      return invalid("max_chars_per_word " + std::to_string(o.max_input_chars_per_word) + " out of range [0, " +
                     std::to_string(kMaxInputCharsPerWord) + "]");
    const int64_t n = static_cast<int64_t>(vocab_.size());
    for (int32_t id : {o.unk_id, o.cls_id, o.sep_id, o.pad_id})
      if (id < -1 || id >= n) return invalid("special token id " + std::to_string(id) + " outside the vocabulary");
    auto lookup = [&](int32_t given, std::string_view name) {
      if (given >= 0) return given;
      for (size_t i = vocab_.size(); i-- > 0;)  // a later duplicate wins
        if (vocab_[i] == name) return static_cast<int32_t>(i);
      return -1;
    };
    const int32_t unk = lookup(o.unk_id, "[UNK]"), cls = lookup(o.cls_id, "[CLS]"), sep = lookup(o.sep_id, "[SEP]");
    const int32_t pad = lookup(o.pad_id, "[PAD]"), mask = lookup(-1, "[MASK]");
    if (unk < 0) return invalid("vocabulary has no [UNK] token");
    if (cls < 0) return invalid("vocabulary has no [CLS] token");
    if (sep < 0) return invalid("vocabulary has no [SEP] token");
    wordpiece_ = std::make_unique<WordPieceModel>();
    EB_RETURN_IF_ERROR(wordpiece_->init(vocab_, unk, "##", o.max_input_chars_per_word, tables).with_context("tokenizer"));
    tables_adopted_ = tables != nullptr;
    Normalizer bert;
    bert.kind = NormalizerKind::kBert;
    bert.clean_text = true;
    bert.handle_chinese_chars = o.handle_chinese_chars;
    bert.strip_accents = bert.lowercase = o.lowercase;
    normalizers_.push_back(bert);
    PreTokenizer words;
    words.kind = PreTokenizerKind::kBert;
    pre_tokenizers_.push_back(words);
    for (int32_t id : {pad, unk, cls, sep, mask}) {  // special, matched in the raw text
      if (id < 0) continue;
      const std::string_view content = vocab_[static_cast<size_t>(id)];
      bool seen = content.empty() || !valid_utf8(content);
      for (const AddedToken& a : added_) seen |= a.content == content;
      if (!seen) added_.push_back(AddedToken{id, content, true, false, false, false, false});
    }
    raw_added_.init(added_, false);
    normalized_added_.init(added_, true);
    specials_ = {{cls}, {sep}};
    single_ = {{-1, 0, 0}, {0, -1, 0}, {-1, 1, 0}};
    pair_ = {{-1, 0, 0}, {0, -1, 0}, {-1, 1, 0}, {1, -1, 1}, {-1, 1, 1}};
    has_template_ = true;
    pad_id_ = pad < 0 ? 0 : pad;
    unk_id_ = unk;
    mask_id_ = mask;
    build_frames();
    word_local_ = find_word_local();
    kind_ = Kind::kWordPiece;
    return Status::ok();
  } catch (const std::bad_alloc&) {
    reset();
    return Status(EB_ERROR_OUT_OF_MEMORY, "tokenizer: out of memory");
  }
}

bool Tokenizer::find_word_local() {
  split_whitespace_ = split_punctuation_ = split_cjk_ = any_cjk_added_ = false;
  if (trim_offsets_) return false;  // its first-token rule looks at the offset in the whole text
  for (const Normalizer& n : normalizers_) {
    switch (n.kind) {
      case NormalizerKind::kBert: split_cjk_ |= n.handle_chinese_chars; break;
      case NormalizerKind::kLowercase:
      case NormalizerKind::kNFC:
      case NormalizerKind::kNFD:
      case NormalizerKind::kNFKC:
      case NormalizerKind::kNFKD:
      case NormalizerKind::kStripAccents: break;
      default: return false;  // Strip, Replace, Prepend, Precompiled see more than one character
    }
  }
  for (const PreTokenizer& p : pre_tokenizers_) {
    switch (p.kind) {
      case PreTokenizerKind::kBert: split_whitespace_ = split_punctuation_ = true; break;
      case PreTokenizerKind::kWhitespace:
      case PreTokenizerKind::kWhitespaceSplit: split_whitespace_ = true; break;
      case PreTokenizerKind::kPunctuation:
      case PreTokenizerKind::kDigits: break;
      default: return false;  // ByteLevel, Metaspace, Split
    }
  }
  if (!split_whitespace_) return false;
  for (const AddedToken& a : added_) {
    if (a.lstrip || a.rstrip) return false;
    for (unsigned char c : a.content) {
      if (c >= 0x80) {
        any_cjk_added_ = true;
        continue;
      }
      in_added_[c] = true;
      if (a.normalized) {  // the normalized text may have changed its case or its whitespace
        if (c >= 'a' && c <= 'z') in_added_[c - 'a' + 'A'] = true;
        if (c >= 'A' && c <= 'Z') in_added_[c - 'A' + 'a'] = true;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
          for (unsigned char w : {' ', '\t', '\n', '\r'}) in_added_[w] = true;
      }
    }
  }
  return true;
}

bool Tokenizer::is_cut(std::string_view text, size_t at) const {
  const unsigned char c = static_cast<unsigned char>(text[at]);
  if (c < 0x80) {
    if (in_added_[c]) return false;  // an added token could cross it
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return true;
    const bool punctuation = (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
    return split_punctuation_ && punctuation;
  }
  if (!split_cjk_ || any_cjk_added_ || (c & 0xC0) == 0x80) return false;
  size_t len;
  return is_cjk_ideograph(decode_utf8(text.data() + at, text.size() - at, &len));
}

Status Tokenizer::init(const fb::TokenizerSpec* spec, int64_t id_limit) {
  reset();
  try {
    if (spec == nullptr) return invalid("no TokenizerSpec");
    const fb::TokenModelSpec* m = spec->model();
    if (m == nullptr || m->vocab() == nullptr) return invalid("model: no vocabulary");
    EB_RETURN_IF_ERROR(read_vocabulary(m->vocab(), m->vocab_text(), m->vocab_ends(), "model", &vocab_text_, &vocab_));
    const size_t n = vocab_.size();
    if (n == 0) return invalid("model: empty vocabulary");
    if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) return invalid("model: vocabulary too large");
    if (id_limit > 0 && static_cast<int64_t>(n) > id_limit)
      return invalid("vocabulary has " + std::to_string(n) + " tokens, the embedding table " + std::to_string(id_limit));
    TokenTables file_tables;
    const TokenTables* tables = nullptr;
    EB_RETURN_IF_ERROR(read_file_tables(m->tables(), &file_tables, &tables));
    const int64_t limit = static_cast<int64_t>(n);
    auto id_ok = [&](int64_t id) { return id >= 0 && id < limit; };
    const int32_t unk = m->unk_id();
    if (unk < -1 || unk >= limit) return invalid("model: unk_id " + std::to_string(unk) + " outside the vocabulary");
    unk_id_ = unk;
    // The model's own vocabulary: ids past model_vocab_size are added tokens appended by the
    // converter, matched only as added tokens (HF's WordPiece / BPE never produce them).
    VocabView model_vocab = vocab_;
    if (const uint32_t own = m->model_vocab_size(); own > 0 && own < n) {
      if (m->kind() == fb::TokenModelKind::UNIGRAM) return invalid("model_vocab_size on a Unigram model");
      if (unk >= static_cast<int64_t>(own)) return invalid("model: unk_id " + std::to_string(unk) + " past the model's vocabulary");
      model_vocab = VocabView(vocab_.text(), vocab_.text_size(), vocab_.ends(), own);
    }
    switch (m->kind()) {
      case fb::TokenModelKind::WORDPIECE: {
        const int max_chars = m->max_input_chars_per_word();
        if (max_chars < 0) return invalid("WordPiece: negative max_input_chars_per_word");
        wordpiece_ = std::make_unique<WordPieceModel>();
        EB_RETURN_IF_ERROR(wordpiece_->init(model_vocab, unk, view(m->continuing_subword_prefix()), max_chars, tables).with_context("tokenizer"));
        kind_ = Kind::kWordPiece;
        break;
      }
      case fb::TokenModelKind::BPE: {
        BpeOptions o;
        o.unk_id = unk;
        o.continuing_subword_prefix = view(m->continuing_subword_prefix());
        o.end_of_word_suffix = view(m->end_of_word_suffix());
        o.byte_fallback = m->byte_fallback();
        o.fuse_unk = m->fuse_unk();
        o.ignore_merges = m->ignore_merges();
        static_assert(sizeof(BpeModel::Merge) == sizeof(fb::BpeMerge), "merge layout");
        const auto* merges = m->merges();
        bpe_ = std::make_unique<BpeModel>();
        EB_RETURN_IF_ERROR(bpe_->init(model_vocab, merges ? reinterpret_cast<const BpeModel::Merge*>(merges->data()) : nullptr,
                        merges ? merges->size() : 0, o, tables).with_context("tokenizer"));
        kind_ = Kind::kBpe;
        break;
      }
      case fb::TokenModelKind::UNIGRAM: {
        if (m->scores() == nullptr || m->scores()->size() != n)
          return invalid("Unigram: needs one score per vocabulary entry");
        unigram_ = std::make_unique<UnigramModel>();
        EB_RETURN_IF_ERROR(unigram_->init(vocab_, m->scores()->data(), unk, m->byte_fallback(), tables).with_context("tokenizer"));
        kind_ = Kind::kUnigram;
        break;
      }
      default:
        return invalid("unknown model kind " + std::to_string(static_cast<int>(m->kind())));
    }
    tables_adopted_ = tables != nullptr;
    const Kind model_kind = kind_;
    kind_ = Kind::kNone;  // until everything is checked

    if (const auto* list = spec->normalizers()) {
      for (const fb::NormalizerSpec* ns : *list) {
        Normalizer x;
        const int k = static_cast<int>(ns->kind());
        if (k < 0 || k > static_cast<int>(NormalizerKind::kPrecompiled))
          return invalid("unknown normalizer kind " + std::to_string(k));
        x.kind = static_cast<NormalizerKind>(k);
        x.clean_text = ns->clean_text();
        x.handle_chinese_chars = ns->handle_chinese_chars();
        x.strip_accents = ns->strip_accents();
        x.lowercase = ns->lowercase();
        x.strip_left = ns->strip_left();
        x.strip_right = ns->strip_right();
        x.pattern = view(ns->pattern());
        x.content = view(ns->content());
        x.min_repeat = ns->min_repeat();
        if (x.min_repeat < 0) return invalid("Replace: negative min_repeat");
        if (!valid_utf8(x.pattern) || !valid_utf8(x.content)) return invalid("normalizer strings must be UTF-8");
        if (x.kind == NormalizerKind::kPrecompiled) {
          if (ns->charsmap() == nullptr) return invalid("Precompiled normalizer without a charsmap");
          EB_RETURN_IF_ERROR(x.charsmap.init(ns->charsmap()->data(), ns->charsmap()->size()).with_context("tokenizer"));
        }
        normalizers_.push_back(x);
      }
    }
    if (const auto* list = spec->pre_tokenizers()) {
      for (const fb::PreTokenizerSpec* ps : *list) {
        PreTokenizer x;
        const int k = static_cast<int>(ps->kind());
        if (k < 0 || k > static_cast<int>(PreTokenizerKind::kSplit))
          return invalid("unknown pre-tokenizer kind " + std::to_string(k));
        x.kind = static_cast<PreTokenizerKind>(k);
        x.add_prefix_space = ps->add_prefix_space();
        x.use_regex = ps->use_regex();
        const std::string_view rep = view(ps->replacement());
        if (x.kind == PreTokenizerKind::kMetaspace) {
          size_t len = 0;
          if (rep.empty() || decode_utf8(rep.data(), rep.size(), &len) == kReplacementChar || len != rep.size())
            return invalid("Metaspace replacement must be one character");
          x.replacement = decode_utf8(rep.data(), rep.size(), &len);
        }
        const int scheme = static_cast<int>(ps->prepend_scheme());
        const int behavior = static_cast<int>(ps->behavior());
        if (scheme < 0 || scheme > 2) return invalid("unknown Metaspace prepend_scheme");
        if (behavior < 0 || behavior > 4) return invalid("unknown split behavior");
        x.prepend_scheme = static_cast<PrependScheme>(scheme);
        x.split = ps->split();
        x.individual_digits = ps->individual_digits();
        x.behavior = static_cast<SplitBehavior>(behavior);
        x.pattern = view(ps->pattern());
        if (x.kind == PreTokenizerKind::kSplit && x.pattern.empty()) return invalid("Split with an empty pattern");
        if (x.kind == PreTokenizerKind::kSplit && ps->regex()) {
          if (!valid_utf8(x.pattern)) return invalid("Split regex must be UTF-8");
          auto re = std::make_shared<Regex>();
          EB_RETURN_IF_ERROR(re->init(x.pattern).with_context("tokenizer"));
          x.regex = std::move(re);
        }
        x.invert = ps->invert();
        pre_tokenizers_.push_back(x);
      }
    }
    if (const auto* list = spec->added_tokens()) {
      added_.reserve(list->size());
      for (const fb::AddedTokenSpec* a : *list) {
        if (!id_ok(a->id())) return invalid("added token id " + std::to_string(a->id()) + " outside the vocabulary");
        const std::string_view content = view(a->content());
        if (content.empty() || !valid_utf8(content)) return invalid("added token content must be non-empty UTF-8");
        added_.push_back(AddedToken{a->id(), content, a->special(), a->lstrip(), a->rstrip(), a->single_word(),
                                    a->normalized()});
      }
    }
    {
      // entries of one content (so one id): HF keeps one token per id (added_tokens_map_r, the
      // last entry's) and reads single_word / lstrip / rstrip from it for a match of any of them
      // (each entry is still matched in its own pass, normalized or raw); the token is special if
      // any entry is (special_tokens_set). An entry after a special one of its content is in
      // neither of HF's lists (special_tokens, added_tokens), so never matched: its content is
      // cleared here (the matchers skip empty contents).
      std::unordered_map<int32_t, size_t> last;
      std::unordered_map<int32_t, bool> special_seen;
      for (size_t i = 0; i < added_.size(); ++i) last[added_[i].id] = i;
      for (AddedToken& a : added_) {
        bool& seen = special_seen[a.id];
        const bool earlier_special = seen;
        seen = seen || a.special;
        const AddedToken& l = added_[last[a.id]];
        a.lstrip = l.lstrip;
        a.rstrip = l.rstrip;
        a.single_word = l.single_word;
        if (earlier_special) a.content = std::string_view();
      }
      for (AddedToken& a : added_) a.special = special_seen[a.id];
    }
    if (!normalizers_.empty()) {
      // HF matches a normalized added token by its content run through the normalizer
      // (AddedVocabulary::refresh_added_tokens): "e\u0301" under NFC is found as "\u00e9"
      auto text = std::make_shared<std::string>();
      std::vector<std::pair<size_t, size_t>> spans(added_.size(), {0, 0});
      TextBuffer buf;
      NormalizerScratch scratch;
      for (size_t i = 0; i < added_.size(); ++i) {
        if (!added_[i].normalized) continue;
        buf.clear();
        const std::string_view c = added_[i].content;
        for (size_t k = 0; k < c.size(); ++k) {
          buf.bytes.push_back(c[k]);
          buf.align.push_back(Align{0, 0});
        }
        for (const Normalizer& n : normalizers_) apply_normalizer(n, buf, Align{0, 0}, scratch);
        spans[i] = {text->size(), buf.size()};
        text->append(buf.bytes.data(), buf.size());
      }
      for (size_t i = 0; i < added_.size(); ++i)
        if (added_[i].normalized) added_[i].content = std::string_view(text->data() + spans[i].first, spans[i].second);
      added_text_ = std::move(text);
    }
    raw_added_.init(added_, false);
    normalized_added_.init(added_, true);
    if (const fb::PostProcessorSpec* pp = spec->post_processor()) {
      if (const auto* sp = pp->specials()) {
        for (const fb::SpecialTokenSpec* s : *sp) {
          std::vector<int32_t> ids;
          for (int32_t id : *s->ids()) {
            if (!id_ok(id)) return invalid("template special token id " + std::to_string(id) + " outside the vocabulary");
            ids.push_back(id);
          }
          specials_.push_back(std::move(ids));
        }
      }
      auto read = [&](const flatbuffers::Vector<const fb::TemplatePiece*>* t, std::vector<Piece>& out, int max_seq) {
        if (t == nullptr) return Status::ok();
        bool seen[2] = {false, false};
        for (const fb::TemplatePiece* p : *t) {
          if (p->sequence() < -1 || p->sequence() > max_seq) return invalid("template piece refers to a missing sequence");
          if (p->sequence() < 0 && (p->special() < 0 || static_cast<size_t>(p->special()) >= specials_.size()))
            return invalid("template special token index out of range");
          if (p->type_id() < 0 || p->type_id() > 1023) return invalid("template type id out of range");
          if (p->sequence() >= 0) {
            if (seen[p->sequence()]) return invalid("template uses a sequence twice");
            if (p->sequence() == 1 && !seen[0]) return invalid("template puts sequence B before A");
            seen[p->sequence()] = true;
          }
          out.push_back(Piece{p->sequence(), p->special(), p->type_id()});
        }
        for (int s = 0; s <= max_seq; ++s)
          if (!seen[s]) return invalid("template does not use every sequence");
        return Status::ok();
      };
      EB_RETURN_IF_ERROR(read(pp->single(), single_, 0));
      EB_RETURN_IF_ERROR(read(pp->pair(), pair_, 1));
      has_template_ = pp->single() != nullptr && pp->pair() != nullptr;
      trim_offsets_ = pp->trim_offsets();
      trim_add_prefix_space_ = pp->add_prefix_space();
    }
    if (const auto* list = spec->added_tokens()) {  // (the contents as written: added_ has normalized ones)
      for (const fb::AddedTokenSpec* a : *list) {
        const std::string_view content = view(a->content());
        if (content == "<pad>" || content == "[PAD]") pad_id_ = a->id();
        if (a->special() && (content == "[MASK]" || content == "<mask>")) mask_id_ = a->id();
      }
    }
    build_frames();
    word_local_ = find_word_local();
    kind_ = model_kind;
    return Status::ok();
  } catch (const std::bad_alloc&) {
    reset();
    return Status(EB_ERROR_OUT_OF_MEMORY, "tokenizer: out of memory");
  }
}

void Tokenizer::build_frames() {
  single_frame_ = Frame();
  pair_frame_ = Frame();
  if (!has_template_) return;
  for (int pair = 0; pair < 2; ++pair) {
    Frame& f = pair ? pair_frame_ : single_frame_;
    int seen = 0;  // sequences passed so far
    for (const Piece& p : pair ? pair_ : single_) {
      if (p.sequence >= 0) {
        (p.sequence == 0 ? f.type_a : f.type_b) = p.type_id;
        ++seen;
        continue;
      }
      std::vector<int32_t>& ids = seen == 0 ? f.prefix : (seen == 1 && pair) ? f.middle : f.suffix;
      std::vector<int32_t>& types = seen == 0 ? f.prefix_types : (seen == 1 && pair) ? f.middle_types : f.suffix_types;
      for (int32_t id : specials_[static_cast<size_t>(p.special)]) {
        ids.push_back(id);
        types.push_back(p.type_id);
      }
    }
  }
}

size_t Tokenizer::encode_segment(std::string_view text, bool split_special, TextWorkspace& ws, TextToken* out,
                                 size_t capacity, size_t stop_after) const {
  ws.error = nullptr;
  if (kind_ == Kind::kNone || text.size() > std::numeric_limits<uint32_t>::max() / 8) return 0;
  if (word_local_ && ws.reserved_bytes > 0 && text.size() > ws.reserved_bytes)
    return encode_streamed(text, split_special, ws, out, capacity, stop_after);
  encode_sequence(text, split_special, ws, ws.seq[0], stop_after);
  if (ws.error) return 0;
  const size_t n = ws.seq[0].size();
  for (size_t i = 0; i < n && i < capacity; ++i) {
    const auto& t = ws.seq[0][i];
    out[i] = TextToken{t.id, 0, static_cast<int32_t>(t.begin), static_cast<int32_t>(t.end), t.word, 0};
  }
  return n;
}

size_t Tokenizer::encode_streamed(std::string_view text, bool split_special, TextWorkspace& ws, TextToken* out,
                                  size_t capacity, size_t stop_after) const {
  // pieces of at most reserved_bytes, each ending before a cut (is_cut): every piece's tokens
  // are the whole text's, its words follow the previous pieces' words
  const size_t limit = ws.reserved_bytes;
  size_t count = 0, from = 0;
  int32_t words = 0;
  while (from < text.size()) {
    size_t end = text.size();
    if (end - from > limit) {
      end = from + limit;
      while (end > from && !is_cut(text, end)) --end;
      if (end == from) return SIZE_MAX;  // no place to cut: refused rather than read whole
    }
    const size_t left = stop_after == SIZE_MAX ? SIZE_MAX : stop_after - count;
    const int32_t piece_words = encode_sequence(text.substr(from, end - from), split_special, ws, ws.seq[0], left);
    if (ws.error) return 0;
    for (const TextWorkspace::SeqToken& t : ws.seq[0]) {
      if (count < capacity)
        out[count] = TextToken{t.id, 0, static_cast<int32_t>(from + t.begin), static_cast<int32_t>(from + t.end),
                               words + t.word, 0};
      ++count;
    }
    words += piece_words;
    if (count > stop_after) break;
    from = end;
  }
  return count;
}

size_t Tokenizer::num_special_tokens(bool pair) const {
  size_t n = 0;
  for (const Piece& p : pair ? pair_ : single_)
    if (p.sequence < 0) n += specials_[static_cast<size_t>(p.special)].size();
  return n;
}

TokenTables Tokenizer::tables() const {
  TokenTables t;
  if (wordpiece_) wordpiece_->export_tables(t);
  if (bpe_) bpe_->export_tables(t);
  if (unigram_) unigram_->export_tables(t);
  return t;
}

std::string_view Tokenizer::token_text(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= vocab_.size()) return {};
  return vocab_[static_cast<size_t>(id)];
}

void Tokenizer::normalize_piece(std::string_view text, uint32_t b, uint32_t e, bool split_special,
                                TextWorkspace& ws) const {
  TextBuffer& piece = ws.piece;
  piece.clear();
  for (uint32_t i = b; i < e;) {
    size_t len;
    const uint32_t c = decode_utf8(text.data() + i, e - i, &len);
    // invalid bytes stay as they are, each its own character
    const Align a{i, static_cast<uint32_t>(i + len)};
    if (c == kReplacementChar && len == 1) {
      piece.push(kReplacementChar, a);
    } else {
      for (size_t k = 0; k < len; ++k) {
        piece.bytes.push_back(text[i + k]);
        piece.align.push_back(a);
      }
    }
    i += static_cast<uint32_t>(len);
  }
  const Align base{b, b};
  for (const Normalizer& n : normalizers_) apply_normalizer(n, piece, base, ws.normalizer);
  if (piece.size() == 0) return;
  std::vector<Split>& splits = ws.splits[0];
  const uint32_t at = static_cast<uint32_t>(ws.norm.size());
  ws.norm.append(piece, 0, piece.size());
  ws.norm_matches.clear();
  normalized_added_.find(piece.bytes.data(), piece.size(), ws.norm_matches, split_special);
  uint32_t pos = 0;
  for (const auto& m : ws.norm_matches) {
    if (pos < m.begin) splits.push_back(Split{at + pos, at + m.begin, -1});
    // the token's offsets take the whitespace lstrip / rstrip consumed (HF slices the match with it)
    splits.push_back(Split{at + m.begin, at + m.end, m.id});
    pos = m.end;
  }
  if (pos < piece.size()) splits.push_back(Split{at + pos, static_cast<uint32_t>(at + piece.size()), -1});
}

int32_t Tokenizer::encode_sequence(std::string_view text, bool split_special, TextWorkspace& ws,
                                   std::vector<TextWorkspace::SeqToken>& out, size_t stop_after) const {
  out.clear();
  ws.norm.clear();
  ws.splits[0].clear();
  ws.matches.clear();
  raw_added_.find(text.data(), text.size(), ws.matches, split_special);
  uint32_t pos = 0;
  for (const auto& m : ws.matches) {
    if (pos < m.begin) normalize_piece(text, pos, m.begin, split_special, ws);
    const uint32_t at = static_cast<uint32_t>(ws.norm.size());
    for (uint32_t i = m.begin; i < m.end; ++i) {  // with the whitespace lstrip / rstrip consumed
      ws.norm.bytes.push_back(text[i]);
      ws.norm.align.push_back(Align{m.begin, m.end});
    }
    ws.splits[0].push_back(Split{at, static_cast<uint32_t>(ws.norm.size()), m.id});
    pos = m.end;
  }
  if (pos < text.size()) normalize_piece(text, pos, static_cast<uint32_t>(text.size()), split_special, ws);

  const TextBuffer* buf = &ws.norm;
  const std::vector<Split>* splits = &ws.splits[0];
  int which = 0;
  for (const PreTokenizer& p : pre_tokenizers_) {
    std::vector<Split>& dst_splits = ws.splits[1 - which];
    if (!apply_pre_tokenizer(p, *buf, *splits, ws.pre[which], dst_splits, ws.pre_tokenizer)) {
      ws.error = "the text reaches the search limits of the tokenizer's Split regex (backtracking without end)";
      return 0;
    }
    buf = &ws.pre[which];
    splits = &dst_splits;
    which = 1 - which;
  }
  int32_t word = 0;
  for (const Split& sp : *splits) {
    if (out.size() > stop_after) break;  // words are never merged afterwards: the count only grows
    if (sp.end <= sp.begin) continue;
    const Align* al = buf->align.data();
    if (sp.added_id >= 0) {
      out.push_back(TextWorkspace::SeqToken{sp.added_id, al[sp.begin].begin, al[sp.end - 1].end, word, sp.begin, sp.end});
    } else {
      ws.model_tokens.clear();
      const char* s = buf->bytes.data() + sp.begin;
      const size_t n = sp.end - sp.begin;
      switch (kind_) {
        case Kind::kWordPiece: wordpiece_->tokenize(s, n, ws.model_tokens); break;
        case Kind::kBpe: bpe_->tokenize(s, n, ws.model_tokens, ws.model); break;
        case Kind::kUnigram: unigram_->tokenize(s, n, ws.model_tokens, ws.model); break;
        default: break;
      }
      for (const ModelToken& t : ws.model_tokens) {
        if (t.end <= t.begin) continue;
        out.push_back(TextWorkspace::SeqToken{t.id, al[sp.begin + t.begin].begin, al[sp.begin + t.end - 1].end, word});
      }
    }
    ++word;
  }
  if (trim_offsets_) {
    // ByteLevel's process_offsets: leading / trailing 'Ġ' (a space) leave the offsets
    for (size_t i = 0; i < out.size(); ++i) {
      TextWorkspace::SeqToken& t = out[i];
      // the token's text: an added token's value (with the whitespace it took), else the vocabulary's
      const std::string_view s = t.value_end > t.value_begin
                                     ? std::string_view(buf->bytes.data() + t.value_begin, t.value_end - t.value_begin)
                                     : token_text(t.id);
      // characters 'Ġ' or whitespace (char::is_whitespace) at either end, counted in characters
      auto spacey = [](uint32_t c) { return c == 0x120 || is_whitespace(c); };
      size_t lead = 0, trail = 0, k = 0;
      while (k < s.size()) {
        size_t len;
        if (!spacey(decode_utf8(s.data() + k, s.size() - k, &len))) break;
        k += len;
        ++lead;
      }
      for (size_t e = s.size(); e > k;) {
        size_t q = e - 1;
        while (q > k && (static_cast<unsigned char>(s[q]) & 0xC0) == 0x80) --q;
        size_t len;
        if (!spacey(decode_utf8(s.data() + q, e - q, &len))) break;
        e = q;
        ++trail;
      }
      if (k == s.size()) trail = lead;  // all spaces: both ends count every character
      // HF moves character offsets by these counts: step over as many characters of the text
      // (one byte each for the 'Ġ' of a space, more for an added token's U+3000 ...)
      if (lead > 0) {
        if ((i == 0 || t.begin == 0) && trim_add_prefix_space_ && lead == 1) lead = 0;
        for (; lead > 0 && t.begin < t.end; --lead) {
          ++t.begin;
          while (t.begin < t.end && (static_cast<unsigned char>(text[t.begin]) & 0xC0) == 0x80) ++t.begin;
        }
      }
      if (trail > 0) {
        uint32_t e = t.end;
        for (; trail > 0 && e > 0; --trail) {
          --e;
          while (e > 0 && (static_cast<unsigned char>(text[e]) & 0xC0) == 0x80) --e;
        }
        if (trail == 0) t.end = std::max(e, t.begin);  // (HF: only when the end is at least that many characters in)
      }
    }
  }
  return word;
}

size_t Tokenizer::encode(std::string_view a, const std::string_view* b, size_t max_length, TextWorkspace& ws,
                         TextToken* out, size_t capacity) const {
  ws.error = nullptr;
  if (kind_ == Kind::kNone || a.size() > std::numeric_limits<uint32_t>::max() / 8 ||
      (b != nullptr && b->size() > std::numeric_limits<uint32_t>::max() / 8))
    return 0;
  const std::string_view texts[2] = {a, b ? *b : std::string_view()};
  const int count = b ? 2 : 1;
  for (int s = 0; s < count; ++s) {
    encode_sequence(texts[s], false, ws, ws.seq[s]);
    if (ws.error) return 0;
  }
  size_t n1 = ws.seq[0].size(), n2 = b ? ws.seq[1].size() : 0;
  if (max_length > 0) {
    const size_t added = has_template_ ? num_special_tokens(b != nullptr) : 0;
    const size_t budget = max_length > added ? max_length - added : 0;
    if (n1 + n2 > budget) {
      if (b == nullptr) {
        n1 = budget;
      } else {
        // longest_first, as the reference computes it
        size_t x = n1, y = n2;
        const bool swap = x > y;
        if (swap) std::swap(x, y);
        y = x > budget ? x : std::max(x, budget - x);
        if (x + y > budget) {
          x = budget / 2;
          y = x + budget % 2;
        }
        if (swap) std::swap(x, y);
        n1 = std::min(n1, x);
        n2 = std::min(n2, y);
      }
    }
  }
  size_t k = 0;
  auto put = [&](const TextToken& t) {
    if (k < capacity) out[k] = t;
    ++k;
  };
  auto put_sequence = [&](int s, int32_t type_id) {
    const size_t n = s == 0 ? n1 : n2;
    for (size_t i = 0; i < n; ++i) {
      const auto& t = ws.seq[s][i];
      put(TextToken{t.id, type_id, static_cast<int32_t>(t.begin), static_cast<int32_t>(t.end), t.word, s});
    }
  };
  if (!has_template_) {
    put_sequence(0, 0);
    if (b) put_sequence(1, 1);
    return k;
  }
  for (const Piece& p : b ? pair_ : single_) {
    if (p.sequence >= 0) {
      put_sequence(p.sequence, p.type_id);
    } else {
      for (int32_t id : specials_[static_cast<size_t>(p.special)]) put(TextToken{id, p.type_id, 0, 0, -1, -1});
    }
  }
  return k;
}

}  // namespace text
}  // namespace edgebert
