// SPDX-License-Identifier: Apache-2.0
// tokenizer_json.cpp: tokenizer.json -> TokenizerSpec. The tables are built in one pass that
// validates as it goes (parse_tokenizer_json runs it into a scratch builder, so errors surface
// before the model is written).
#include "converter/tokenizer/tokenizer_json.h"

#include <fstream>
#include <algorithm>
#include <map>
#include <unordered_map>
#include <sstream>

#include "converter/checkpoint/checkpoint_error.h"
#include "edgebert_generated.h"
#include "text/tokenizer.h"

namespace edgebert {
namespace convert {
namespace {

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw CheckpointError(source + ": " + what);
}

std::vector<uint8_t> base64_decode(const std::string& s, const std::string& source) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::vector<uint8_t> out;
  out.reserve(s.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] != '='; ++i) {
    const int v = val(s[i]);
    if (v < 0) fail(source, "normalizer Precompiled: precompiled_charsmap is not base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
    }
  }
  for (; i < s.size(); ++i)
    if (s[i] != '=') fail(source, "normalizer Precompiled: precompiled_charsmap is not base64");
  return out;
}

class Writer {
 public:
  Writer(flatbuffers::FlatBufferBuilder& b, const TokenizerJson& t, std::vector<std::string>* warnings = nullptr,
         const TokenizerTableBytes* tables = nullptr)
      : b_(b), t_(t), src_(t.source), warnings_(warnings), tables_(tables) {}

  // Whether a Split regex was written (the model file is then schema_version 5).
  bool uses_regex() const { return uses_regex_; }

  flatbuffers::Offset<fb::TokenizerSpec> write(size_t* vocab_size) {
    const JsonValue& root = t_.root;
    if (!root.is_object()) fail(src_, "not a JSON object");
    for (const char* k : {"truncation", "padding"}) {
      const JsonValue* v = root.find(k);
      if (v && !v->is_null())
        fail(src_, std::string("\"") + k + "\" is set; edgebert takes the maximum length from the caller (set it to null)");
    }
    const JsonValue* model = root.find("model");
    if (!model || !model->is_object()) fail(src_, "no \"model\" object");
    read_added(root);
    auto model_off = write_model(*model);
    *vocab_size = vocab_.size();
    std::vector<flatbuffers::Offset<fb::NormalizerSpec>> norms;
    if (const JsonValue* n = root.find("normalizer")) write_normalizer(*n, norms);
    std::vector<flatbuffers::Offset<fb::PreTokenizerSpec>> pres;
    if (const JsonValue* p = root.find("pre_tokenizer")) write_pre_tokenizer(*p, pres);
    std::vector<flatbuffers::Offset<fb::AddedTokenSpec>> added;
    for (const Added& a : added_) {
      auto c = b_.CreateString(a.content);
      fb::AddedTokenSpecBuilder ab(b_);
      ab.add_id(a.id);
      ab.add_content(c);
      ab.add_special(a.special);
      ab.add_lstrip(a.lstrip);
      ab.add_rstrip(a.rstrip);
      ab.add_single_word(a.single_word);
      ab.add_normalized(a.normalized);
      added.push_back(ab.Finish());
    }
    flatbuffers::Offset<fb::PostProcessorSpec> post;
    if (const JsonValue* p = root.find("post_processor"); p && !p->is_null()) post = write_post_processor(*p);
    auto norms_off = b_.CreateVector(norms);
    auto pres_off = b_.CreateVector(pres);
    auto added_off = b_.CreateVector(added);
    fb::TokenizerSpecBuilder tb(b_);
    tb.add_normalizers(norms_off);
    tb.add_pre_tokenizers(pres_off);
    tb.add_model(model_off);
    tb.add_added_tokens(added_off);
    if (!post.IsNull()) tb.add_post_processor(post);
    return tb.Finish();
  }

 private:
  struct Added {
    int32_t id;
    std::string content;
    bool special, lstrip, rstrip, single_word, normalized;
  };

  static bool get_bool(const JsonValue& o, const char* key, bool def) {
    const JsonValue* v = o.find(key);
    return v && v->is_bool() ? v->as_bool() : def;
  }
  std::string get_string(const JsonValue& o, const char* key, const std::string& what, bool required = true) const {
    const JsonValue* v = o.find(key);
    if (!v || v->is_null()) {
      if (required) fail(src_, what + ": missing \"" + key + "\"");
      return std::string();
    }
    if (!v->is_string()) fail(src_, what + ": \"" + key + "\" is not a string");
    return v->as_string();
  }
  int64_t get_int(const JsonValue& o, const char* key, const std::string& what, int64_t lo, int64_t hi) const {
    const JsonValue* v = o.find(key);
    if (!v || !v->is_integer()) fail(src_, what + ": \"" + key + "\" is not an integer");
    const int64_t x = v->as_int64();
    if (x < lo || x > hi) fail(src_, what + ": \"" + key + "\" = " + std::to_string(x) + " is out of range");
    return x;
  }
  static std::string type_of(const JsonValue& o) {
    const JsonValue* t = o.find("type");
    return t && t->is_string() ? t->as_string() : std::string();
  }
  int32_t token_id(const std::string& token, const std::string& what) const {
    auto it = ids_.find(token);
    if (it == ids_.end()) fail(src_, what + ": token \"" + token + "\" is not in the vocabulary");
    return it->second;
  }

  void read_added(const JsonValue& root) {
    const JsonValue* list = root.find("added_tokens");
    if (!list || list->is_null()) return;
    if (!list->is_array()) fail(src_, "\"added_tokens\" is not an array");
    for (const JsonValue& a : list->elements()) {
      if (!a.is_object()) fail(src_, "added_tokens: an entry is not an object");
      Added x;
      x.id = static_cast<int32_t>(get_int(a, "id", "added_tokens", 0, (1 << 30)));
      x.content = get_string(a, "content", "added_tokens");
      if (x.content.empty()) fail(src_, "added_tokens: empty content");
      x.special = get_bool(a, "special", false);
      x.lstrip = get_bool(a, "lstrip", false);
      x.rstrip = get_bool(a, "rstrip", false);
      x.single_word = get_bool(a, "single_word", false);
      x.normalized = get_bool(a, "normalized", !x.special);
      added_.push_back(std::move(x));
    }
  }

  // id -> token for the model's vocabulary (ids 0..n-1), extended with the added tokens. Their ids
  // are resolved as HuggingFace tokenizers resolves them when it loads a tokenizer.json
  // (AddedVocabulary::add_tokens, in file order): a content added before keeps that id, one in
  // the model's vocabulary gets the vocabulary's id, a new one the next id past the vocabulary
  // and the added tokens so far. The id written in added_tokens is not used; when it differs, a
  // warning names the token (HF warns too, "Token '...' was expected to have ID '...' but was
  // given ID '...'").
  void finish_vocab(const std::string& what) {
    for (size_t i = 0; i < present_.size(); ++i)
      if (!present_[i]) fail(src_, what + ": no token has id " + std::to_string(i) + " (the model's vocabulary must use ids 0..n-1)");
    const size_t model_size = vocab_.size();
    std::unordered_map<std::string, int32_t> added_ids;
    for (Added& a : added_) {
      int32_t id;
      std::string why;
      if (auto it = added_ids.find(a.content); it != added_ids.end()) {
        id = it->second;
        why = "the id of its first entry in added_tokens";
      } else if (auto iv = ids_.find(a.content); iv != ids_.end()) {
        id = iv->second;
        why = "the model vocabulary's id";
      } else {
        id = static_cast<int32_t>(vocab_.size());  // new ids are handed out in order past the model's
        vocab_.push_back(a.content);
        present_.push_back(true);
        ids_.emplace(a.content, id);
        why = "the next id past the model's " + std::to_string(model_size) + " tokens and the added tokens before it";
      }
      if (id != a.id && warnings_)
        warnings_->push_back(src_ + ": added token \"" + a.content + "\" has id " + std::to_string(a.id) +
                             " in added_tokens; it gets id " + std::to_string(id) + " (" + why +
                             "), as HuggingFace tokenizers resolves it");
      a.id = id;
      added_ids.emplace(a.content, id);
    }
  }

  void vocab_from_object(const JsonValue& v, const std::string& what) {
    if (!v.is_object()) fail(src_, what + ": \"vocab\" is not an object");
    // Ids are dense (0..n-1) over the vocab and the added tokens, so none can reach this bound; checking
    // it first keeps a corrupt id from sizing the tables (memory stays proportional to the file).
    const size_t id_limit = v.size() + added_.size();
    for (size_t i = 0; i < v.size(); ++i) {
      const JsonValue& idv = v.value(i);
      if (!idv.is_integer() || idv.as_int64() < 0 || static_cast<uint64_t>(idv.as_int64()) >= id_limit)
        fail(src_, what + ": vocab id of \"" + v.key(i) + "\" is not a valid id (" + std::to_string(v.size()) +
                       " entries and " + std::to_string(added_.size()) + " added tokens; ids must be 0..n-1)");
      const size_t id = static_cast<size_t>(idv.as_int64());
      if (id >= vocab_.size()) {
        vocab_.resize(id + 1);
        present_.resize(id + 1, false);
      }
      if (present_[id]) fail(src_, what + ": two tokens have id " + std::to_string(id));
      vocab_[id] = v.key(i);
      present_[id] = true;
      ids_.emplace(v.key(i), static_cast<int32_t>(id));
    }
  }

  flatbuffers::Offset<fb::TokenModelSpec> write_model(const JsonValue& m) {
    std::string type = type_of(m);
    const JsonValue* vocab = m.find("vocab");
    if (!vocab) fail(src_, "model: no \"vocab\"");
    if (type.empty()) {  // older files: inferred from the fields
      if (m.contains("merges")) type = "BPE";
      else if (vocab->is_array()) type = "Unigram";
      else if (m.contains("continuing_subword_prefix") || m.contains("max_input_chars_per_word")) type = "WordPiece";
      else fail(src_, "model: no \"type\" and not recognisable as WordPiece, BPE or Unigram");
    }
    const std::string what = "model " + type;
    std::vector<double> scores;
    std::vector<fb::BpeMerge> merges;
    int32_t unk = -1;
    fb::TokenModelKind kind;
    std::string prefix, suffix;
    int max_chars = 100;
    bool byte_fallback = false, fuse_unk = false, ignore_merges = false;
    size_t model_vocab = 0;  // the model's own tokens (ids 0..n-1); the added tokens appended follow
    if (type == "WordPiece") {
      kind = fb::TokenModelKind::WORDPIECE;
      vocab_from_object(*vocab, what);
      model_vocab = vocab_.size();
      finish_vocab(what);
      unk = token_id(get_string(m, "unk_token", what), what + " unk_token");
      prefix = get_string(m, "continuing_subword_prefix", what, false);
      if (m.contains("max_input_chars_per_word"))
        max_chars = static_cast<int>(get_int(m, "max_input_chars_per_word", what, 0, 1 << 30));
    } else if (type == "BPE") {
      kind = fb::TokenModelKind::BPE;
      if (const JsonValue* d = m.find("dropout"); d && !d->is_null() && !(d->is_number() && d->as_double() == 0.0))
        fail(src_, what + ": dropout is set (non-deterministic tokenization is not supported)");
      vocab_from_object(*vocab, what);
      model_vocab = vocab_.size();
      const std::string unk_token = get_string(m, "unk_token", what, false);
      prefix = get_string(m, "continuing_subword_prefix", what, false);
      suffix = get_string(m, "end_of_word_suffix", what, false);
      byte_fallback = get_bool(m, "byte_fallback", false);
      fuse_unk = get_bool(m, "fuse_unk", false);
      ignore_merges = get_bool(m, "ignore_merges", false);
      const JsonValue* ml = m.find("merges");
      if (!ml || !ml->is_array()) fail(src_, what + ": \"merges\" is not an array");
      merges.reserve(ml->size());
      for (size_t r = 0; r < ml->size(); ++r) {
        const JsonValue& e = (*ml)[r];
        std::string a, c;
        if (e.is_string()) {
          const std::string& s = e.as_string();
          const size_t sp = s.find(' ');
          if (sp == std::string::npos || sp == 0 || sp + 1 >= s.size() || s.find(' ', sp + 1) != std::string::npos)
            fail(src_, what + ": merge " + std::to_string(r) + " is not \"left right\"");
          a = s.substr(0, sp);
          c = s.substr(sp + 1);
        } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
          a = e[0].as_string();
          c = e[1].as_string();
        } else {
          fail(src_, what + ": merge " + std::to_string(r) + " is neither \"a b\" nor [\"a\", \"b\"]");
        }
        const std::string right = (!prefix.empty() && c.compare(0, prefix.size(), prefix) == 0) ? c.substr(prefix.size()) : c;
        const auto ia = ids_.find(a), ic = ids_.find(c), im = ids_.find(a + right);
        if (ia == ids_.end() || ic == ids_.end()) fail(src_, what + ": merge " + std::to_string(r) + " uses a token missing from the vocabulary");
        if (im == ids_.end()) fail(src_, what + ": merge " + std::to_string(r) + " produces \"" + a + right + "\", missing from the vocabulary");
        merges.emplace_back(ia->second, ic->second, im->second);
      }
      finish_vocab(what);
      if (!unk_token.empty()) unk = token_id(unk_token, what + " unk_token");
    } else if (type == "Unigram") {
      kind = fb::TokenModelKind::UNIGRAM;
      if (!vocab->is_array()) fail(src_, what + ": \"vocab\" is not an array of [piece, score]");
      for (size_t i = 0; i < vocab->size(); ++i) {
        const JsonValue& e = (*vocab)[i];
        if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
          fail(src_, what + ": vocab entry " + std::to_string(i) + " is not [piece, score]");
        vocab_.push_back(e[0].as_string());
        present_.push_back(true);
        ids_.emplace(e[0].as_string(), static_cast<int32_t>(i));
        scores.push_back(e[1].as_double());
      }
      if (vocab_.empty()) fail(src_, what + ": empty vocabulary");
      const size_t pieces = vocab_.size();
      finish_vocab(what);
      // added tokens past the pieces get the lowest score (they are matched before the model runs)
      double low = 0;
      for (double s : scores) low = std::min(low, s);
      scores.resize(vocab_.size(), low);
      if (vocab_.size() != pieces) fail(src_, what + ": added token ids past the Unigram pieces are not supported");
      const JsonValue* u = m.find("unk_id");
      if (!u || u->is_null()) fail(src_, what + ": no unk_id (the runtime needs one for characters no piece covers)");
      unk = static_cast<int32_t>(get_int(m, "unk_id", what, 0, static_cast<int64_t>(pieces) - 1));
      byte_fallback = get_bool(m, "byte_fallback", false);
      fuse_unk = true;
    } else {
      fail(src_, "model type \"" + type + "\" is not supported (WordPiece, BPE and Unigram are)");
    }
    // schema_version 8: the vocabulary as one text and each token's end
    const VocabTextBytes one = vocab_text_bytes(vocab_, src_ + ": " + what);
    auto vocab_off = b_.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::String>>{});
    auto text_off = b_.CreateVector(one.text);
    auto ends_off = b_.CreateVector(one.ends);
    flatbuffers::Offset<fb::TokenizerTables> tables_off;
    if (tables_ && !tables_->indexes.empty()) tables_off = write_tokenizer_tables(b_, *tables_);
    auto scores_off = scores.empty() ? 0 : b_.CreateVector(scores);
    auto merges_off = merges.empty() ? 0 : b_.CreateVectorOfStructs(merges);
    auto prefix_off = b_.CreateString(prefix);
    auto suffix_off = b_.CreateString(suffix);
    fb::TokenModelSpecBuilder mb(b_);
    mb.add_kind(kind);
    mb.add_vocab(vocab_off);
    if (!scores.empty()) mb.add_scores(scores_off);
    if (!merges.empty()) mb.add_merges(merges_off);
    mb.add_unk_id(unk);
    mb.add_continuing_subword_prefix(prefix_off);
    mb.add_end_of_word_suffix(suffix_off);
    mb.add_max_input_chars_per_word(max_chars);
    mb.add_byte_fallback(byte_fallback);
    mb.add_fuse_unk(fuse_unk);
    mb.add_ignore_merges(ignore_merges);
    mb.add_vocab_text(text_off);
    mb.add_vocab_ends(ends_off);
    if (!tables_off.IsNull()) mb.add_tables(tables_off);
    // Added tokens appended past the model's vocabulary stay out of the model (HF's WordPiece and
    // BPE look up only their own vocab): written only when some were appended, and only when the
    // unknown token is the model's own (HF's model could not produce an appended one either; such
    // a file keeps the whole vocabulary in the model, as before).
    if (model_vocab > 0 && vocab_.size() > model_vocab && unk < static_cast<int64_t>(model_vocab))
      mb.add_model_vocab_size(static_cast<uint32_t>(model_vocab));
    return mb.Finish();
  }


  // A literal string pattern ({"String": s}) or a regex we can run; else a one-line error.
  struct Pattern {
    std::string literal;
    int min_repeat = 0;
  };
  Pattern pattern_of(const JsonValue& o, const std::string& what) const {
    const JsonValue* p = o.find("pattern");
    if (!p || !p->is_object()) fail(src_, what + ": missing \"pattern\"");
    if (const JsonValue* s = p->find("String")) {
      if (!s->is_string() || s->as_string().empty()) fail(src_, what + ": empty String pattern");
      return Pattern{s->as_string(), 0};
    }
    if (const JsonValue* r = p->find("Regex")) {
      if (!r->is_string()) fail(src_, what + ": Regex pattern is not a string");
      const std::string& re = r->as_string();
      // "c{n,}" and "c+" with one plain character c (of 1-4 UTF-8 bytes: SentencePiece conversions
      // write "\u2581{2,}" too), and regexes without metacharacters
      const unsigned char lead = re.empty() ? 0 : static_cast<unsigned char>(re[0]);
      const size_t c = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
      const bool plain = c > 0 && re.size() > c && std::string("\\^$.|?*+()[]{}").find(re[0]) == std::string::npos;
      if (plain && re.size() >= c + 3 && re[c] == '{' && re.back() == '}' && re[re.size() - 2] == ',') {
        const std::string digits = re.substr(c + 1, re.size() - c - 3);
        if (!digits.empty() && digits.size() < 4 && digits.find_first_not_of("0123456789") == std::string::npos)
          return Pattern{re.substr(0, c), std::max(1, std::stoi(digits))};
      }
      if (plain && re.size() == c + 1 && re[c] == '+') return Pattern{re.substr(0, c), 1};
      if (!re.empty() && re.find_first_of("\\^$.|?*+()[]{}") == std::string::npos) return Pattern{re, 0};
      fail(src_, what + ": regex pattern \"" + re + "\" cannot be run by the edgebert runtime");
    }
    fail(src_, what + ": pattern is neither String nor Regex");
  }

  void write_normalizer(const JsonValue& n, std::vector<flatbuffers::Offset<fb::NormalizerSpec>>& out) {
    if (n.is_null()) return;
    if (!n.is_object()) fail(src_, "normalizer is not an object");
    const std::string type = type_of(n);
    const std::string what = "normalizer " + (type.empty() ? std::string("(no type)") : type);
    if (type == "Sequence") {
      const JsonValue* list = n.find("normalizers");
      if (!list || !list->is_array()) fail(src_, what + ": no \"normalizers\" array");
      for (const JsonValue& e : list->elements()) write_normalizer(e, out);
      return;
    }
    fb::NormalizerKind kind;
    bool clean = true, chinese = true, strip_accents = true, lower = true, left = true, right = true;
    std::string pattern, content;
    int min_repeat = 0;
    std::vector<uint8_t> charsmap;
    if (type == "BertNormalizer") {
      kind = fb::NormalizerKind::BERT;
      clean = get_bool(n, "clean_text", true);
      chinese = get_bool(n, "handle_chinese_chars", true);
      lower = get_bool(n, "lowercase", true);
      const JsonValue* sa = n.find("strip_accents");
      strip_accents = (sa && sa->is_bool()) ? sa->as_bool() : lower;
    } else if (type == "Lowercase") {
      kind = fb::NormalizerKind::LOWERCASE;
    } else if (type == "NFC") {
      kind = fb::NormalizerKind::NFC;
    } else if (type == "NFD") {
      kind = fb::NormalizerKind::NFD;
    } else if (type == "NFKC") {
      kind = fb::NormalizerKind::NFKC;
    } else if (type == "NFKD") {
      kind = fb::NormalizerKind::NFKD;
    } else if (type == "StripAccents") {
      kind = fb::NormalizerKind::STRIP_ACCENTS;
    } else if (type == "Strip") {
      kind = fb::NormalizerKind::STRIP;
      left = get_bool(n, "strip_left", true);
      right = get_bool(n, "strip_right", true);
    } else if (type == "Replace") {
      kind = fb::NormalizerKind::REPLACE;
      Pattern p = pattern_of(n, what);
      pattern = p.literal;
      min_repeat = p.min_repeat;
      content = get_string(n, "content", what);
    } else if (type == "Prepend") {
      kind = fb::NormalizerKind::PREPEND;
      content = get_string(n, "prepend", what);
    } else if (type == "Precompiled") {
      kind = fb::NormalizerKind::PRECOMPILED;
      const JsonValue* cm = n.find("precompiled_charsmap");
      if (!cm || cm->is_null()) return;  // the reference skips an empty charsmap
      if (!cm->is_string()) fail(src_, what + ": precompiled_charsmap is not a string");
      charsmap = base64_decode(cm->as_string(), src_);
      if (charsmap.empty()) return;
    } else {
      fail(src_, what + " is not supported by the edgebert runtime");
    }
    auto pat = b_.CreateString(pattern);
    auto con = b_.CreateString(content);
    auto cmap = charsmap.empty() ? 0 : b_.CreateVector(charsmap);
    fb::NormalizerSpecBuilder nb(b_);
    nb.add_kind(kind);
    nb.add_clean_text(clean);
    nb.add_handle_chinese_chars(chinese);
    nb.add_strip_accents(strip_accents);
    nb.add_lowercase(lower);
    nb.add_strip_left(left);
    nb.add_strip_right(right);
    nb.add_pattern(pat);
    nb.add_min_repeat(min_repeat);
    nb.add_content(con);
    if (!charsmap.empty()) nb.add_charsmap(cmap);
    out.push_back(nb.Finish());
  }

  fb::SplitBehavior behavior_of(const JsonValue& o, const std::string& what, fb::SplitBehavior def) const {
    const JsonValue* v = o.find("behavior");
    if (!v || v->is_null()) return def;
    if (!v->is_string()) fail(src_, what + ": behavior is not a string");
    const std::string& s = v->as_string();
    if (s == "Removed") return fb::SplitBehavior::REMOVED;
    if (s == "Isolated") return fb::SplitBehavior::ISOLATED;
    if (s == "MergedWithPrevious") return fb::SplitBehavior::MERGED_WITH_PREVIOUS;
    if (s == "MergedWithNext") return fb::SplitBehavior::MERGED_WITH_NEXT;
    if (s == "Contiguous") return fb::SplitBehavior::CONTIGUOUS;
    fail(src_, what + ": unknown behavior \"" + s + "\"");
  }

  void write_pre_tokenizer(const JsonValue& p, std::vector<flatbuffers::Offset<fb::PreTokenizerSpec>>& out) {
    if (p.is_null()) return;
    if (!p.is_object()) fail(src_, "pre_tokenizer is not an object");
    const std::string type = type_of(p);
    const std::string what = "pre_tokenizer " + (type.empty() ? std::string("(no type)") : type);
    if (type == "Sequence") {
      const JsonValue* list = p.find("pretokenizers");
      if (!list || !list->is_array()) fail(src_, what + ": no \"pretokenizers\" array");
      for (const JsonValue& e : list->elements()) write_pre_tokenizer(e, out);
      return;
    }
    fb::PreTokenizerKind kind;
    bool add_prefix_space = false, use_regex = true, split = true, individual = false, invert = false, regex = false;
    std::string replacement, pattern;
    fb::PrependScheme scheme = fb::PrependScheme::ALWAYS;
    fb::SplitBehavior behavior = fb::SplitBehavior::ISOLATED;
    if (type == "BertPreTokenizer") {
      kind = fb::PreTokenizerKind::BERT;
    } else if (type == "Whitespace") {
      kind = fb::PreTokenizerKind::WHITESPACE;
    } else if (type == "WhitespaceSplit") {
      kind = fb::PreTokenizerKind::WHITESPACE_SPLIT;
    } else if (type == "ByteLevel") {
      kind = fb::PreTokenizerKind::BYTE_LEVEL;
      add_prefix_space = get_bool(p, "add_prefix_space", true);
      use_regex = get_bool(p, "use_regex", true);
    } else if (type == "Metaspace") {
      kind = fb::PreTokenizerKind::METASPACE;
      replacement = get_string(p, "replacement", what);
      split = get_bool(p, "split", true);
      const JsonValue* ps = p.find("prepend_scheme");
      if (ps && ps->is_string()) {
        const std::string& s = ps->as_string();
        if (s == "always") scheme = fb::PrependScheme::ALWAYS;
        else if (s == "first") scheme = fb::PrependScheme::FIRST;
        else if (s == "never") scheme = fb::PrependScheme::NEVER;
        else fail(src_, what + ": unknown prepend_scheme \"" + s + "\"");
      } else {
        scheme = get_bool(p, "add_prefix_space", true) ? fb::PrependScheme::ALWAYS : fb::PrependScheme::NEVER;
      }
    } else if (type == "Punctuation") {
      kind = fb::PreTokenizerKind::PUNCTUATION;
      behavior = behavior_of(p, what, fb::SplitBehavior::ISOLATED);
    } else if (type == "Digits") {
      kind = fb::PreTokenizerKind::DIGITS;
      individual = get_bool(p, "individual_digits", false);
    } else if (type == "Split") {
      kind = fb::PreTokenizerKind::SPLIT;
      // a String, or a Regex without metacharacters, is a literal; any other Regex is run by the
      // runtime's regex engine (its translation and compilation are checked with the tables)
      const JsonValue* pv = p.find("pattern");
      const JsonValue* rv = pv && pv->is_object() ? pv->find("Regex") : nullptr;
      if (rv && rv->is_string() && !rv->as_string().empty() &&
          rv->as_string().find_first_of("\\^$.|?*+()[]{}") != std::string::npos) {
        pattern = rv->as_string();
        regex = true;
        uses_regex_ = true;
      } else {
        pattern = pattern_of(p, what).literal;
      }
      behavior = behavior_of(p, what, fb::SplitBehavior::REMOVED);
      invert = get_bool(p, "invert", false);
    } else {
      fail(src_, what + " is not supported by the edgebert runtime");
    }
    auto rep = b_.CreateString(replacement);
    auto pat = b_.CreateString(pattern);
    fb::PreTokenizerSpecBuilder pb(b_);
    pb.add_kind(kind);
    pb.add_add_prefix_space(add_prefix_space);
    pb.add_use_regex(use_regex);
    pb.add_replacement(rep);
    pb.add_prepend_scheme(scheme);
    pb.add_split(split);
    pb.add_individual_digits(individual);
    pb.add_behavior(behavior);
    pb.add_pattern(pat);
    pb.add_invert(invert);
    if (regex) pb.add_regex(true);
    out.push_back(pb.Finish());
  }

  struct Template {
    std::vector<fb::TemplatePiece> single, pair;
    std::vector<std::vector<int32_t>> specials;
    bool set = false, trim = false, prefix = false;
  };

  int special_index(Template& t, const std::vector<int32_t>& ids) {
    for (size_t i = 0; i < t.specials.size(); ++i)
      if (t.specials[i] == ids) return static_cast<int>(i);
    t.specials.push_back(ids);
    return static_cast<int>(t.specials.size() - 1);
  }

  int32_t pair_token(const JsonValue& o, const char* key, const std::string& what) const {
    const JsonValue* v = o.find(key);
    if (!v || !v->is_array() || v->size() != 2 || !(*v)[0].is_string() || !(*v)[1].is_integer())
      fail(src_, what + ": \"" + key + "\" is not [token, id]");
    const int64_t id = (*v)[1].as_int64();
    if (id < 0 || static_cast<size_t>(id) >= vocab_.size()) fail(src_, what + ": \"" + key + "\" id out of range");
    return static_cast<int32_t>(id);
  }

  void read_post(const JsonValue& p, Template& t) {
    if (!p.is_object()) fail(src_, "post_processor is not an object");
    const std::string type = type_of(p);
    const std::string what = "post_processor " + type;
    using TP = fb::TemplatePiece;
    if (type == "Sequence") {
      const JsonValue* list = p.find("processors");
      if (!list || !list->is_array()) fail(src_, what + ": no \"processors\" array");
      for (const JsonValue& e : list->elements()) read_post(e, t);
      return;
    }
    if (type == "ByteLevel") {
      t.trim = get_bool(p, "trim_offsets", true);
      t.prefix = get_bool(p, "add_prefix_space", true);
      return;
    }
    if (t.set) fail(src_, what + ": more than one template in a Sequence");
    t.set = true;
    if (type == "BertProcessing" || type == "RobertaProcessing") {
      const int cls = special_index(t, {pair_token(p, "cls", what)});
      const int sep = special_index(t, {pair_token(p, "sep", what)});
      if (type == "BertProcessing") {
        t.single = {TP(-1, cls, 0), TP(0, -1, 0), TP(-1, sep, 0)};
        t.pair = {TP(-1, cls, 0), TP(0, -1, 0), TP(-1, sep, 0), TP(1, -1, 1), TP(-1, sep, 1)};
      } else {
        t.single = {TP(-1, cls, 0), TP(0, -1, 0), TP(-1, sep, 0)};
        t.pair = {TP(-1, cls, 0), TP(0, -1, 0), TP(-1, sep, 0), TP(-1, sep, 0), TP(1, -1, 0), TP(-1, sep, 0)};
        t.trim = get_bool(p, "trim_offsets", true);
        t.prefix = get_bool(p, "add_prefix_space", true);
      }
      return;
    }
    if (type == "TemplateProcessing") {
      const JsonValue* sp = p.find("special_tokens");
      if (!sp || !sp->is_object()) fail(src_, what + ": no \"special_tokens\" object");
      std::map<std::string, std::vector<int32_t>> named;
      for (size_t i = 0; i < sp->size(); ++i) {
        const JsonValue& e = sp->value(i);
        const JsonValue* ids = e.find("ids");
        if (!ids || !ids->is_array() || ids->size() == 0) fail(src_, what + ": special token \"" + sp->key(i) + "\" has no ids");
        std::vector<int32_t> v;
        for (const JsonValue& id : ids->elements()) {
          if (!id.is_integer() || id.as_int64() < 0 || static_cast<size_t>(id.as_int64()) >= vocab_.size())
            fail(src_, what + ": special token \"" + sp->key(i) + "\" has an id outside the vocabulary");
          v.push_back(static_cast<int32_t>(id.as_int64()));
        }
        named[sp->key(i)] = v;
      }
      auto read = [&](const char* key, std::vector<TP>& out) {
        const JsonValue* list = p.find(key);
        if (!list || !list->is_array()) fail(src_, what + ": no \"" + key + "\" template");
        for (const JsonValue& e : list->elements()) {
          if (const JsonValue* s = e.find("SpecialToken")) {
            const std::string id = get_string(*s, "id", what);
            auto it = named.find(id);
            if (it == named.end()) fail(src_, what + ": template uses \"" + id + "\", not in special_tokens");
            out.push_back(TP(-1, special_index(t, it->second), static_cast<int32_t>(get_int(*s, "type_id", what, 0, 1023))));
          } else if (const JsonValue* q = e.find("Sequence")) {
            const std::string id = get_string(*q, "id", what);
            if (id != "A" && id != "B") fail(src_, what + ": sequence \"" + id + "\" is neither A nor B");
            out.push_back(TP(id == "A" ? 0 : 1, -1, static_cast<int32_t>(get_int(*q, "type_id", what, 0, 1023))));
          } else {
            fail(src_, what + ": a template piece is neither SpecialToken nor Sequence");
          }
        }
      };
      read("single", t.single);
      read("pair", t.pair);
      return;
    }
    fail(src_, what + " is not supported by the edgebert runtime");
  }

  flatbuffers::Offset<fb::PostProcessorSpec> write_post_processor(const JsonValue& p) {
    Template t;
    read_post(p, t);
    if (!t.set) {  // ByteLevel alone: no special tokens, one sequence after the other
      t.single = {fb::TemplatePiece(0, -1, 0)};
      t.pair = {fb::TemplatePiece(0, -1, 0), fb::TemplatePiece(1, -1, 1)};
    }
    std::vector<flatbuffers::Offset<fb::SpecialTokenSpec>> specials;
    for (const auto& ids : t.specials) {
      auto v = b_.CreateVector(ids);
      specials.push_back(fb::CreateSpecialTokenSpec(b_, v));
    }
    auto single = b_.CreateVectorOfStructs(t.single);
    auto pair = b_.CreateVectorOfStructs(t.pair);
    auto sp = b_.CreateVector(specials);
    fb::PostProcessorSpecBuilder pb(b_);
    pb.add_single(single);
    pb.add_pair(pair);
    pb.add_specials(sp);
    pb.add_trim_offsets(t.trim);
    pb.add_add_prefix_space(t.prefix);
    return pb.Finish();
  }

  flatbuffers::FlatBufferBuilder& b_;
  const TokenizerJson& t_;
  const std::string& src_;
  std::vector<std::string>* warnings_;
  const TokenizerTableBytes* tables_;
  bool uses_regex_ = false;
  std::vector<Added> added_;
  std::vector<std::string> vocab_;
  std::vector<bool> present_;
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace

VocabTextBytes vocab_text_bytes(const std::vector<std::string>& tokens, const std::string& source) {
  VocabTextBytes out;
  out.ends.reserve(tokens.size());
  for (const std::string& s : tokens) {
    out.text.insert(out.text.end(), s.begin(), s.end());
    if (out.text.size() > UINT32_MAX) throw CheckpointError(source + ": the vocabulary's text is larger than 4 GiB");
    out.ends.push_back(static_cast<uint32_t>(out.text.size()));
  }
  return out;
}

TokenizerTableBytes table_bytes(const text::Tokenizer& tok) {
  TokenizerTableBytes out;
  const text::TokenTables built = tok.tables();
  out.scheme = text::kTokenTableScheme;
  for (const text::IndexTable& x : built.indexes) {
    const auto* p = static_cast<const uint8_t*>(x.slots);
    out.indexes.emplace_back(p, p + x.capacity * text::TokenIndex::kSlotBytes);
    out.counts.push_back(x.count);
  }
  if (built.pairs) {
    const auto* p = static_cast<const uint8_t*>(built.pairs);
    out.pairs.assign(p, p + built.pair_capacity * text::BpeModel::kPairSlotBytes);
  }
  if (built.byte_ids) out.byte_ids.assign(built.byte_ids, built.byte_ids + 256);
  return out;
}

flatbuffers::Offset<fb::TokenizerTables> write_tokenizer_tables(flatbuffers::FlatBufferBuilder& b, const TokenizerTableBytes& t) {
  std::vector<flatbuffers::Offset<fb::TokenIndexTable>> indexes;
  for (size_t i = 0; i < t.indexes.size(); ++i) {
    const auto& bytes = t.indexes[i];
    auto slots = b.CreateVectorOfStructs(reinterpret_cast<const fb::TokenIndexSlot*>(bytes.data()),
                                         bytes.size() / sizeof(fb::TokenIndexSlot));
    indexes.push_back(fb::CreateTokenIndexTable(b, slots, t.counts[i]));
  }
  auto indexes_off = b.CreateVector(indexes);
  flatbuffers::Offset<flatbuffers::Vector<const fb::BpePairSlot*>> pairs_off;
  if (!t.pairs.empty())
    pairs_off = b.CreateVectorOfStructs(reinterpret_cast<const fb::BpePairSlot*>(t.pairs.data()),
                                        t.pairs.size() / sizeof(fb::BpePairSlot));
  auto bytes_off = t.byte_ids.empty() ? 0 : b.CreateVector(t.byte_ids);
  return fb::CreateTokenizerTables(b, t.scheme, indexes_off, pairs_off, bytes_off);
}

TokenizerJson parse_tokenizer_json(const std::string& text, const std::string& source) {
  TokenizerJson t;
  t.root = parse_json(text, source);
  t.source = source;
  flatbuffers::FlatBufferBuilder scratch;
  Writer w(scratch, t, &t.warnings);
  scratch.Finish(w.write(&t.vocab_size));  // validates everything once (and collects the warnings) ...
  t.uses_regex = w.uses_regex();
  // ... and the tables must pass the runtime's own checks (e.g. the Precompiled charsmap's trie),
  // which also builds the lookup tables the model file carries
  text::Tokenizer check;
  const Status st = check.init_from_buffer(
      std::vector<uint8_t>(scratch.GetBufferPointer(), scratch.GetBufferPointer() + scratch.GetSize()));
  if (!st.is_ok()) throw CheckpointError(source + ": " + st.message());
  t.tables = table_bytes(check);
  return t;
}

TokenizerJson read_tokenizer_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw CheckpointError(path + ": read error");
  return parse_tokenizer_json(ss.str(), path);
}

flatbuffers::Offset<fb::TokenizerSpec> write_tokenizer_spec(flatbuffers::FlatBufferBuilder& b, const TokenizerJson& t,
                                                            bool with_tables) {
  size_t n = 0;
  Writer w(b, t, nullptr, with_tables ? &t.tables : nullptr);
  return w.write(&n);
}

std::vector<uint8_t> tokenizer_spec_buffer(const TokenizerJson& t, bool with_tables) {
  flatbuffers::FlatBufferBuilder b;
  b.Finish(write_tokenizer_spec(b, t, with_tables));
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace convert
}  // namespace edgebert
