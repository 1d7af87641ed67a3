// SPDX-License-Identifier: Apache-2.0
// tokenizer.h: the tokenizer facade: the HuggingFace pipeline (added tokens -> normalizers ->
// pre-tokenizers -> WordPiece / BPE / Unigram -> truncation -> post-processor template) built
// from the model file's TokenizerSpec tables, or from a BERT vocabulary alone (vocab.txt, the model
// file's Vocabulary table: the pipeline HuggingFace's BertTokenizerFast builds from it).
// init() checks every table (a bad one is a message, never a crash);
// encode() is const, safe to call concurrently, and allocation-free once the caller's
// TextWorkspace has seen a text of that size (reserve() it at init).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "status.h"
#include "text/added_tokens.h"
#include "text/bpe_model.h"
#include "text/model_token.h"
#include "text/normalizers.h"
#include "text/pre_tokenizers.h"
#include "text/unigram_model.h"
#include "text/wordpiece_model.h"

namespace edgebert {
namespace fb {
struct TokenizerSpec;
struct Vocabulary;
}

namespace text {

// One token of an encoding: byte offsets [begin, end) into its own input text ({0, 0} for the
// special tokens of the template); word (HF word_ids()) and sequence (0: text, 1: pair) are -1
// for special tokens.
struct TextToken {
  int32_t id, type_id, begin, end, word, sequence;
};

// Per-caller buffers (one per session / thread).
struct TextWorkspace {
  struct SeqToken {
    int32_t id;
    uint32_t begin, end;
    int32_t word;
    // an added token's text as HF's Token::value has it (with the whitespace its lstrip / rstrip
    // took), as [value_begin, value_end) of the pre-tokenized buffer; value_end == 0: a model token
    // (its vocabulary text)
    uint32_t value_begin = 0, value_end = 0;
  };
  TextBuffer piece, norm, pre[2];
  std::vector<Split> splits[2];
  std::vector<AddedTokenMatcher::Match> matches, norm_matches;
  NormalizerScratch normalizer;
  PreTokenizerScratch pre_tokenizer;
  ModelScratch model;
  std::vector<ModelToken> model_tokens;
  std::vector<SeqToken> seq[2];
  size_t reserved_bytes = 0;  // reserve()'s text_bytes: word-local tokenizers stream longer texts
  // Set by the last encode when it could not tokenize the text (a Split regex reached its search
  // limits: text/regex.h); its tokens are then none. Null after a successful encode.
  const char* error = nullptr;
  // Sizes every buffer for texts of up to `text_bytes` bytes.
  void reserve(size_t text_bytes);
};

// What HuggingFace's BertTokenizerFast builds from a vocab.txt (transformers' BertConverter):
// BertNormalizer(clean_text, handle_chinese_chars, strip_accents = lowercase, lowercase),
// BertPreTokenizer, WordPiece("##", [UNK], max_input_chars_per_word), the special tokens
// [PAD] [UNK] [CLS] [SEP] [MASK] that the vocabulary has as special added tokens (matched in the
// raw text), and the template [CLS] $A [SEP] / [CLS] $A [SEP] $B:1 [SEP]:1.
struct BertVocabOptions {
  bool lowercase = true;             // lower-case and strip accents
  bool handle_chinese_chars = true;  // CJK ideographs become single-character words
  int32_t unk_id = -1, cls_id = -1, sep_id = -1, pad_id = -1;  // -1: "[UNK]", "[CLS]", "[SEP]", "[PAD]"
  int max_input_chars_per_word = 100;  // 0..kMaxInputCharsPerWord
};
// The largest max_input_chars_per_word of a vocabulary-only model (its QA context buffers keep
// room for one word's pieces before a window).
constexpr int kMaxInputCharsPerWord = 1024;

class Tokenizer {
 public:
  Tokenizer();
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // From the model file's tables (kept by reference: the buffer must outlive the tokenizer).
  // `id_limit` > 0: every id the tokenizer can produce must be below it (the embedding rows).
  Status init(const fb::TokenizerSpec* spec, int64_t id_limit);
  // From a FlatBuffer whose root is a TokenizerSpec (copied; the converter and edgebert-tokenize).
  Status init_from_buffer(std::vector<uint8_t> buffer);
  // The BERT tokenizer of a vocabulary alone (BertVocabOptions). `vocab[i]` is the token with id
  // i (a later duplicate wins, as in HF's vocabulary map); its bytes are copied into one text
  // (vocab_view.h), so the strings need not outlive the call.
  // Refused: an empty vocabulary, ids out of range, no [UNK] / [CLS] / [SEP] (by id or name).
  // A vocabulary without [PAD] pads with id 0.
  Status init_bert_vocab(std::vector<std::string_view> vocab, const BertVocabOptions& options);
  // The same from a model file's Vocabulary table (kept by reference, as init()): its tokens as
  // strings, or (schema_version 8) as one text with the WordPiece tables used in place.
  Status init_vocabulary(const fb::Vocabulary* vocab);

  // Encodes `a` (and `b` when non-null), truncated with longest_first to max_length tokens in all
  // (0: no limit) and with the template's special tokens. Writes the first min(count, capacity)
  // tokens to out (may be null when capacity is 0) and returns count. Both encode calls set
  // ws.error (and return 0) when the text cannot be tokenized.
  size_t encode(std::string_view a, const std::string_view* b, size_t max_length, TextWorkspace& ws,
                TextToken* out, size_t capacity) const;

  // One text with neither special tokens nor truncation (sequence 0, type 0), for callers that
  // frame their inputs themselves (long-context QA windows): the tokens encode() puts between
  // the template's special tokens. Same return convention as encode(), except that it stops as
  // soon as more than `stop_after` tokens are known (a word boundary past them): it then returns
  // some count > stop_after, and the first min(stop_after, capacity) tokens are those of the
  // whole text. Word-local tokenizers (is_word_local()) read a text longer than the workspace's
  // reserved_bytes in pieces of at most that size, cut where no word, normalization or added
  // token crosses, and read no further piece once stop_after is passed (bounded memory however
  // long the text; SIZE_MAX when a stretch of more than reserved_bytes has no such cut); the
  // others normalize and pre-tokenize the whole text and run no model past stop_after.
  // split_special_tokens: special tokens written in the text are tokenized as text.
  size_t encode_segment(std::string_view text, bool split_special_tokens, TextWorkspace& ws, TextToken* out,
                        size_t capacity, size_t stop_after = SIZE_MAX) const;

  // The template as runs of special tokens around the sequences: a single text is
  // prefix A suffix, a pair prefix A middle B suffix (every template has this shape: each
  // sequence occurs once). Types of the special tokens run by run, and of A's and B's tokens.
  struct Frame {
    std::vector<int32_t> prefix, middle, suffix;
    std::vector<int32_t> prefix_types, middle_types, suffix_types;
    int32_t type_a = 0, type_b = 1;
  };
  const Frame& frame(bool pair) const { return pair ? pair_frame_ : single_frame_; }

  bool initialized() const { return kind_ != Kind::kNone; }
  // Whether the tokens of a text cut at one of its word starts (or before ASCII whitespace) are
  // the whole text's from there on: per-character normalizers (BertNormalizer, Lowercase,
  // StripAccents, NF*), pre-tokenizers that split at whitespace and only split (BertPreTokenizer,
  // Whitespace, WhitespaceSplit with Punctuation / Digits), added tokens without lstrip / rstrip
  // or whitespace inside. True for every BERT WordPiece; false for byte-level BPE and Metaspace,
  // whose pieces carry the space before a word.
  bool is_word_local() const { return word_local_; }
  size_t num_special_tokens(bool pair) const;
  size_t vocab_size() const { return vocab_.size(); }
  const VocabView& vocabulary() const { return vocab_; }
  // The model's lookup tables as they are now (built, or adopted from the file), for the
  // converter to write (token_tables.h); valid while the tokenizer lives unchanged.
  TokenTables tables() const;
  // Whether the model's tables were adopted from the file instead of built at load.
  bool tables_adopted() const { return tables_adopted_; }
  std::string_view token_text(int32_t id) const;
  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  // The mask token of masked-LM models (fill-mask): the special added token "[MASK]" (BERT,
  // DistilBERT, ELECTRA, ALBERT, ModernBERT) or "<mask>" (RoBERTa, XLM-R, CamemBERT); -1: none.
  int32_t mask_id() const { return mask_id_; }

 private:
  enum class Kind { kNone, kWordPiece, kBpe, kUnigram };
  struct Piece {
    int8_t sequence;  // -1 special, 0 A, 1 B
    int32_t special;  // index into specials_
    int32_t type_id;
  };
  // Returns the number of words (pre-tokenized splits) it read.
  int32_t encode_sequence(std::string_view text, bool split_special, TextWorkspace& ws,
                          std::vector<TextWorkspace::SeqToken>& out, size_t stop_after = SIZE_MAX) const;
  size_t encode_streamed(std::string_view text, bool split_special, TextWorkspace& ws, TextToken* out,
                         size_t capacity, size_t stop_after) const;
  bool is_cut(std::string_view text, size_t at) const;
  bool find_word_local();  // sets the cut flags below
  void normalize_piece(std::string_view text, uint32_t b, uint32_t e, bool split_special, TextWorkspace& ws) const;
  void reset();
  void build_frames();
  // init_bert_vocab's pipeline over vocab_ (set by the caller), with the file's tables or none
  Status set_up_bert(const BertVocabOptions& options, const TokenTables* tables);

  Kind kind_ = Kind::kNone;
  bool tables_adopted_ = false;
  std::vector<uint8_t> owned_;
  VocabText vocab_text_;  // the vocabulary's one-text form when the file has none (vocab_view.h)
  VocabView vocab_;       // over the model file's vocab_text, or vocab_text_
  std::vector<Normalizer> normalizers_;
  std::vector<PreTokenizer> pre_tokenizers_;
  std::unique_ptr<WordPieceModel> wordpiece_;
  std::unique_ptr<BpeModel> bpe_;
  std::unique_ptr<UnigramModel> unigram_;
  std::vector<AddedToken> added_;
  // the normalized contents of normalized added tokens (their AddedToken::content views), shared by copies
  std::shared_ptr<const std::string> added_text_;
  AddedTokenMatcher raw_added_, normalized_added_;
  std::vector<Piece> single_, pair_;
  std::vector<std::vector<int32_t>> specials_;
  bool has_template_ = false;
  Frame single_frame_, pair_frame_;
  bool trim_offsets_ = false, trim_add_prefix_space_ = false;
  bool word_local_ = false;
  // word-local cut points: before ASCII whitespace (split_whitespace_), before ASCII punctuation
  // (split_punctuation_: BertPreTokenizer), before a CJK ideograph (split_cjk_: BertNormalizer's
  // handle_chinese_chars), unless the character occurs in an added token (in_added_ ASCII map;
  // any_cjk_added_: an added token holds a CJK ideograph)
  bool split_whitespace_ = false, split_punctuation_ = false, split_cjk_ = false, any_cjk_added_ = false;
  bool in_added_[128] = {};
  int32_t pad_id_ = 0, unk_id_ = -1, mask_id_ = -1;
};

}  // namespace text
}  // namespace edgebert
