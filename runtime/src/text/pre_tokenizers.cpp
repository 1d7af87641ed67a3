// SPDX-License-Identifier: Apache-2.0
// pre_tokenizers.cpp: match finding per pre-tokenizer, then the reference's split behaviours
// (NormalizedString::split) over the list of (range, is_match) segments.
#include "text/pre_tokenizers.h"

#include <cstring>

namespace edgebert {
namespace text {
namespace {

using Segment = PreTokenizerScratch::Segment;

bool is_bert_punctuation(uint32_t c) {
  if (c < 0x80) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  return is_punctuation(c);
}
// regex \w: is_word_char (unicode.h)

// Segments of [b, e): every character for which pred holds is a match of its own.
template <class Pred>
void char_matches(const TextBuffer& buf, uint32_t b, uint32_t e, std::vector<Segment>& segs, Pred pred) {
  segs.clear();
  const char* s = buf.bytes.data();
  uint32_t run = b;
  for (uint32_t i = b; i < e;) {
    size_t len;
    const uint32_t c = decode_utf8(s + i, e - i, &len);
    if (pred(c)) {
      if (run < i) segs.push_back(Segment{run, i, false});
      segs.push_back(Segment{i, static_cast<uint32_t>(i + len), true});
      run = static_cast<uint32_t>(i + len);
    }
    i += static_cast<uint32_t>(len);
  }
  if (run < e || segs.empty()) segs.push_back(Segment{run, e, false});
}

// The GPT-2 pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+,
// leftmost-first as the regex engine runs it; it matches every character, so all are matches.
void gpt2_matches(const TextBuffer& buf, uint32_t b, uint32_t e, std::vector<Segment>& segs) {
  segs.clear();
  const char* s = buf.bytes.data();
  auto at = [&](uint32_t i, size_t* len) { return decode_utf8(s + i, e - i, len); };
  enum Class { kL, kN, kSpace, kOther };
  auto cls = [](uint32_t c) { return is_letter(c) ? kL : is_number(c) ? kN : is_whitespace(c) ? kSpace : kOther; };
  uint32_t i = b;
  while (i < e) {
    size_t len;
    const uint32_t c = at(i, &len);
    uint32_t j = i + static_cast<uint32_t>(len);
    if (c == '\'' && j < e) {
      const char n1 = s[j];
      const char n2 = j + 1 < e ? s[j + 1] : 0;
      uint32_t m = 0;
      if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') m = 1;
      else if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) m = 2;
      if (m > 0) {
        segs.push_back(Segment{i, j + m, true});
        i = j + m;
        continue;
      }
    }
    Class k = cls(c);
    uint32_t start = i;
    if (c == ' ' && j < e) {  // optional leading space of a letter / number / other run
      size_t len2;
      const Class k2 = cls(at(j, &len2));
      if (k2 != kSpace) {
        k = k2;
        i = j;
        j = i + static_cast<uint32_t>(len2);
      }
    }
    if (k != kSpace) {
      while (j < e) {
        size_t len2;
        if (cls(at(j, &len2)) != k) break;
        j += static_cast<uint32_t>(len2);
      }
      segs.push_back(Segment{start, j, true});
      i = j;
      continue;
    }
    // whitespace run [i, r); \s+(?!\S) leaves its last character when a non-space follows
    uint32_t r = j, last = i;
    while (r < e) {
      size_t len2;
      if (cls(at(r, &len2)) != kSpace) break;
      last = r;
      r += static_cast<uint32_t>(len2);
    }
    uint32_t stop = r;
    if (r < e && last > i) stop = last;
    segs.push_back(Segment{i, stop, true});
    i = stop;
  }
  if (segs.empty()) segs.push_back(Segment{b, e, false});
}

void literal_matches(const TextBuffer& buf, uint32_t b, uint32_t e, std::string_view pat, std::vector<Segment>& segs) {
  segs.clear();
  const char* s = buf.bytes.data();
  uint32_t run = b;
  if (!pat.empty()) {
    for (uint32_t i = b; i + pat.size() <= e;) {
      if (std::memcmp(s + i, pat.data(), pat.size()) == 0) {
        if (run < i) segs.push_back(Segment{run, i, false});
        segs.push_back(Segment{i, static_cast<uint32_t>(i + pat.size()), true});
        i += static_cast<uint32_t>(pat.size());
        run = i;
      } else {
        ++i;
      }
    }
  }
  if (run < e || segs.empty()) segs.push_back(Segment{run, e, false});
}

// The matches of a regex in [b, e) as the reference finds them (its Pattern for a regex over
// Oniguruma's find_iter): leftmost-first, searched from the end of the previous match; an empty
// match right where the previous match ended is skipped by searching again one character on.
// Matches and the text between them become segments (empty matches too: behaviours see them).
bool regex_matches(const Regex& re, RegexScratch& rs, const TextBuffer& buf, uint32_t b, uint32_t e,
                   std::vector<Segment>& segs) {
  segs.clear();
  const char* s = buf.bytes.data() + b;
  const size_t n = e - b;
  size_t prev = 0, from = 0, last_match_end = 0;
  bool matched = false;
  while (n > 0 && from <= n) {
    size_t mb, me;
    const Regex::Result r = re.find(s, n, from, rs, &mb, &me);
    if (r == Regex::kLimit) return false;
    if (r == Regex::kNoMatch) break;
    if (mb == me && matched && last_match_end == me) {
      if (from >= n) break;
      size_t len;
      decode_utf8(s + from, n - from, &len);
      from += len;
      continue;
    }
    from = me;
    matched = true;
    last_match_end = me;
    if (prev != mb) segs.push_back(Segment{static_cast<uint32_t>(b + prev), static_cast<uint32_t>(b + mb), false});
    segs.push_back(Segment{static_cast<uint32_t>(b + mb), static_cast<uint32_t>(b + me), true});
    prev = me;
  }
  if (prev != n || n == 0) segs.push_back(Segment{static_cast<uint32_t>(b + prev), e, false});
  return true;
}

// NormalizedString::split's behaviours; emits the kept ranges (empty ones dropped).
template <class Emit>
void split_segments(std::vector<Segment>& segs, SplitBehavior behavior, bool invert, std::vector<Segment>& tmp, Emit emit) {
  if (invert)
    for (Segment& g : segs) g.match = !g.match;
  tmp.clear();
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (const Segment& g : segs) tmp.push_back(Segment{g.begin, g.end, false});
      break;
    case SplitBehavior::kRemoved:
      for (const Segment& g : segs) tmp.push_back(g);
      break;
    case SplitBehavior::kContiguous: {
      // runs of segments with the same flag become one (adjacent non-matches occur once inverted)
      bool previous = false;
      for (const Segment& g : segs) {
        if (g.match == previous && !tmp.empty()) tmp.back().end = g.end;
        else tmp.push_back(Segment{g.begin, g.end, false});
        previous = g.match;
      }
      break;
    }
    case SplitBehavior::kMergedWithPrevious: {
      bool previous = false;
      for (const Segment& g : segs) {
        if (g.match && !previous && !tmp.empty()) tmp.back().end = g.end;
        else tmp.push_back(Segment{g.begin, g.end, false});
        previous = g.match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool previous = false;
      for (size_t k = segs.size(); k-- > 0;) {
        const Segment& g = segs[k];
        if (g.match && !previous && !tmp.empty()) tmp.back().begin = g.begin;
        else tmp.push_back(Segment{g.begin, g.end, false});
        previous = g.match;
      }
      for (size_t a = 0, z = tmp.size(); a + 1 < z; ++a, --z) std::swap(tmp[a], tmp[z - 1]);
      break;
    }
  }
  for (const Segment& g : tmp)
    if (!g.match && g.end > g.begin) emit(g.begin, g.end);
}

}  // namespace

uint32_t byte_level_char(uint8_t b) {
  if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) return b;
  // the n-th byte outside those ranges maps to 256 + n
  uint32_t n = 0;
  if (b <= 32) n = b;
  else if (b <= 160) n = 33 + (b - 127);  // 127..160
  else n = 33 + 34;                       // 173
  return 256 + n;
}

int byte_level_byte(uint32_t c) {
  if (c < 256) return byte_level_char(static_cast<uint8_t>(c)) == c ? static_cast<int>(c) : -1;
  if (c < 256 + 33) return static_cast<int>(c - 256);
  if (c < 256 + 67) return static_cast<int>(c - 256 - 33 + 127);
  if (c == 256 + 67) return 173;
  return -1;
}

bool apply_pre_tokenizer(const PreTokenizer& p, const TextBuffer& src, const std::vector<Split>& in,
                         TextBuffer& dst, std::vector<Split>& out, PreTokenizerScratch& sc) {
  dst.clear();
  out.clear();
  auto copy = [&](const TextBuffer& from, uint32_t b, uint32_t e, int32_t added) {
    const uint32_t at = static_cast<uint32_t>(dst.size());
    dst.append(from, b, e);
    out.push_back(Split{at, static_cast<uint32_t>(dst.size()), added});
  };
  for (const Split& sp : in) {
    if (sp.added_id >= 0) {
      copy(src, sp.begin, sp.end, sp.added_id);
      continue;
    }
    const uint32_t b = sp.begin, e = sp.end;
    auto keep = [&](uint32_t x, uint32_t y) { copy(src, x, y, -1); };
    switch (p.kind) {
      case PreTokenizerKind::kWhitespaceSplit:
        char_matches(src, b, e, sc.segments, [](uint32_t c) { return is_whitespace(c); });
        split_segments(sc.segments, SplitBehavior::kRemoved, false, sc.merged, keep);
        break;
      case PreTokenizerKind::kWhitespace: {
        // \w+|[^\w\s]+ kept, the rest removed
        sc.segments.clear();
        const char* s = src.bytes.data();
        for (uint32_t i = b; i < e;) {
          size_t len;
          const uint32_t c = decode_utf8(s + i, e - i, &len);
          if (is_whitespace(c)) {
            i += static_cast<uint32_t>(len);
            continue;
          }
          const bool word = is_word_char(c);
          uint32_t j = i + static_cast<uint32_t>(len);
          while (j < e) {
            const uint32_t d = decode_utf8(s + j, e - j, &len);
            if (is_whitespace(d) || is_word_char(d) != word) break;
            j += static_cast<uint32_t>(len);
          }
          keep(i, j);
          i = j;
        }
        break;
      }
      case PreTokenizerKind::kBert: {
        char_matches(src, b, e, sc.segments, [](uint32_t c) { return is_whitespace(c); });
        // split on whitespace (removed), then punctuation (isolated) inside each piece
        std::vector<Segment>& words = sc.merged;
        words.clear();
        for (const Segment& g : sc.segments)
          if (!g.match && g.end > g.begin) words.push_back(g);
        const size_t count = words.size();
        for (size_t w = 0; w < count; ++w) {
          const Segment word = sc.merged[w];
          const char* s = src.bytes.data();
          uint32_t run = word.begin;
          for (uint32_t i = word.begin; i < word.end;) {
            size_t len;
            const uint32_t c = decode_utf8(s + i, word.end - i, &len);
            if (is_bert_punctuation(c)) {
              if (run < i) keep(run, i);
              keep(i, static_cast<uint32_t>(i + len));
              run = static_cast<uint32_t>(i + len);
            }
            i += static_cast<uint32_t>(len);
          }
          if (run < word.end) keep(run, word.end);
        }
        break;
      }
      case PreTokenizerKind::kPunctuation:
        char_matches(src, b, e, sc.segments, is_bert_punctuation);
        split_segments(sc.segments, p.behavior, false, sc.merged, keep);
        break;
      case PreTokenizerKind::kDigits:
        char_matches(src, b, e, sc.segments, is_number);
        split_segments(sc.segments, p.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous,
                       false, sc.merged, keep);
        break;
      case PreTokenizerKind::kSplit:
        if (p.regex) {
          if (!regex_matches(*p.regex, sc.regex, src, b, e, sc.segments)) return false;
        } else {
          literal_matches(src, b, e, p.pattern, sc.segments);
        }
        split_segments(sc.segments, p.behavior, p.invert, sc.merged, keep);
        break;
      case PreTokenizerKind::kMetaspace: {
        // replace ' ' by the replacement, maybe prepend it, then split MergedWithNext on it
        sc.changes.clear();
        const char* s = src.bytes.data();
        bool starts = false, first = true;
        for (uint32_t i = b; i < e;) {
          size_t len;
          const uint32_t c = decode_utf8(s + i, e - i, &len);
          const uint32_t r = c == ' ' ? p.replacement : c;
          if (first) starts = r == p.replacement;
          first = false;
          sc.changes.push_back(Change{r, 0});
          i += static_cast<uint32_t>(len);
        }
        const bool prepend = !starts && (p.prepend_scheme == PrependScheme::kAlways ||
                                         (p.prepend_scheme == PrependScheme::kFirst && src.align[b].begin == 0));
        if (prepend && !sc.changes.empty()) {
          sc.changes.front().change = 1;
          sc.changes.insert(sc.changes.begin(), Change{p.replacement, 0});
        }
        const uint32_t at = static_cast<uint32_t>(dst.size());
        apply_changes(src, b, e, sc.changes, 0, src.align[b], dst);
        const uint32_t stop = static_cast<uint32_t>(dst.size());
        if (!p.split) {
          out.push_back(Split{at, stop, -1});
          break;
        }
        char_matches(dst, at, stop, sc.segments, [&](uint32_t c) { return c == p.replacement; });
        split_segments(sc.segments, SplitBehavior::kMergedWithNext, false, sc.merged,
                       [&](uint32_t x, uint32_t y) { out.push_back(Split{x, y, -1}); });
        break;
      }
      case PreTokenizerKind::kByteLevel: {
        // optional prefix space, GPT-2 split, then every byte becomes its character
        const uint32_t at0 = static_cast<uint32_t>(dst.size());
        const bool prefix = p.add_prefix_space && src.bytes[b] != ' ';
        if (prefix) {
          dst.push(' ', src.align[b]);
          dst.append(src, b, e);
        } else {
          dst.append(src, b, e);
        }
        const uint32_t stop0 = static_cast<uint32_t>(dst.size());
        if (p.use_regex) {
          gpt2_matches(dst, at0, stop0, sc.segments);
        } else {
          sc.segments.clear();
          sc.segments.push_back(Segment{at0, stop0, true});
        }
        // re-encode each piece byte-wise after the copied text
        for (const Segment& g : sc.segments) {
          const uint32_t at = static_cast<uint32_t>(dst.size());
          for (uint32_t i = g.begin; i < g.end; ++i)
            dst.push(byte_level_char(static_cast<uint8_t>(dst.bytes[i])), dst.align[i]);
          out.push_back(Split{at, static_cast<uint32_t>(dst.size()), -1});
        }
        break;
      }
    }
  }
  return true;
}

}  // namespace text
}  // namespace edgebert
