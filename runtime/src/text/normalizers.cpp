// SPDX-License-Identifier: Apache-2.0
// normalizers.cpp: each normalizer produces the (character, change) list that the reference's
// NormalizedString operations (filter, map, transform, nfd, lowercase, replace, prepend) produce,
// and apply_changes() rewrites the buffer with the reference's alignment rule.
#include "text/normalizers.h"

#include <cstring>

namespace edgebert {
namespace text {
namespace {

// Iterates the code points of buf.
template <class F>
void for_each_char(const TextBuffer& buf, F&& f) {
  const char* s = buf.bytes.data();
  const size_t n = buf.size();
  for (size_t i = 0; i < n;) {
    size_t len;
    const uint32_t c = decode_utf8(s + i, n - i, &len);
    f(c, i, len);
    i += len;
  }
}

void rewrite(TextBuffer& buf, Align base, NormalizerScratch& sc, size_t initial_skip = 0) {
  sc.tmp.clear();
  apply_changes(buf, 0, buf.size(), sc.changes, initial_skip, base, sc.tmp);
  std::swap(buf.bytes, sc.tmp.bytes);
  std::swap(buf.align, sc.tmp.align);
}

// NormalizedString::filter: kept characters carry the removal of the ones after them.
template <class Keep>
void filter(TextBuffer& buf, Align base, NormalizerScratch& sc, Keep keep) {
  sc.changes.clear();
  size_t leading = 0;
  bool any = false;
  for_each_char(buf, [&](uint32_t c, size_t, size_t) {
    if (keep(c)) {
      sc.changes.push_back(Change{c, 0});
      any = true;
    } else if (!any) {
      ++leading;
    } else {
      sc.changes.back().change -= 1;
    }
  });
  rewrite(buf, base, sc, leading);
}

void lowercase(TextBuffer& buf, Align base, NormalizerScratch& sc) {
  sc.changes.clear();
  bool changed = false;
  for_each_char(buf, [&](uint32_t c, size_t, size_t) {
    if (c == 0x130) {  // the one unconditional two-character lower-case mapping
      sc.changes.push_back(Change{'i', 0});
      sc.changes.push_back(Change{0x307, 1});
      changed = true;
      return;
    }
    const uint32_t l = to_lower(c);
    changed |= l != c;
    sc.changes.push_back(Change{l, 0});
  });
  if (changed) rewrite(buf, base, sc);
}

// Unicode normalization segment by segment (a starter and the characters that combine with it).
// Every output character is attributed to an input character, as the reference's alignment-aware
// normalization does: a decomposition's characters to the character they came from (through
// canonical reordering), a composition to its starter, the marks left over after composition to
// their own characters (matched from the end of the segment); the rest of the inputs are removed.
void unicode_normalize(TextBuffer& buf, Align base, NormalizerScratch& sc, NormalForm form) {
  sc.changes.clear();
  sc.segment.clear();
  const bool compat = form == NormalForm::kNFKC || form == NormalForm::kNFKD;
  const bool composing = form == NormalForm::kNFC || form == NormalForm::kNFKC;
  bool changed = false;
  auto& dec = sc.normalized;
  auto& src = sc.sources;
  auto flush = [&] {
    const size_t n = sc.segment.size();
    if (n == 0) return;
    dec.clear();
    src.clear();
    for (size_t i = 0; i < n; ++i) {
      uint32_t tmp[32];
      const long k = decompose_char(sc.segment[i], compat, tmp, 32);
      if (k < 0) {
        dec.push_back(sc.segment[i]);
        src.push_back(static_cast<uint32_t>(i));
        continue;
      }
      for (long q = 0; q < k; ++q) {
        dec.push_back(tmp[q]);
        src.push_back(static_cast<uint32_t>(i));
      }
    }
    // canonical ordering (stable by combining class within runs of non-starters)
    for (size_t i = 1; i < dec.size(); ++i) {
      for (size_t j = i; j > 0; --j) {
        const int a = combining_class(dec[j - 1]), b = combining_class(dec[j]);
        if (b == 0 || a <= b) break;
        std::swap(dec[j - 1], dec[j]);
        std::swap(src[j - 1], src[j]);
      }
    }
    size_t m = dec.size();
    auto& out = sc.composed;
    out.assign(dec.begin(), dec.end());
    std::vector<uint32_t>& out_src = sc.out_sources;
    if (composing) {
      const long r = compose(out.data(), out.size());
      m = r < 0 ? out.size() : static_cast<size_t>(r);
      // attribute from the right: kept marks to their own characters, compositions to a starter
      out_src.assign(m, 0);
      size_t j = dec.size();
      for (size_t i = m; i-- > 1;) {
        while (j > 1 && dec[j - 1] != out[i] && combining_class(dec[j - 1]) != 0 && combining_class(out[i]) == 0) --j;
        if (j > 1 && dec[j - 1] == out[i]) {
          out_src[i] = src[j - 1];
          --j;
        } else {
          while (j > 1 && combining_class(dec[j - 1]) != 0) --j;
          out_src[i] = src[j > 1 ? j - 1 : 0];
          if (j > 1) --j;
        }
      }
      if (m > 0) out_src[0] = src[0];
    } else {
      out_src.assign(src.begin(), src.end());
    }
    bool same = m == n;
    for (size_t i = 0; same && i < m; ++i) same = out[i] == sc.segment[i];
    changed |= !same;
    uint32_t consumed = 0;
    int64_t prev = -1;
    for (size_t i = 0; i < m; ++i) {
      int64_t s = out_src[i];
      if (s < prev) s = prev;  // reordering across sources: keep the alignment monotonic
      if (s == prev) {
        sc.changes.push_back(Change{out[i], 1});
        continue;
      }
      if (s > consumed) sc.changes.push_back(Change{kSkip, static_cast<int32_t>(s - consumed)});
      sc.changes.push_back(Change{out[i], 0});
      consumed = static_cast<uint32_t>(s + 1);
      prev = s;
    }
    if (consumed < n) sc.changes.push_back(Change{kSkip, static_cast<int32_t>(n - consumed)});
    sc.segment.clear();
  };
  for_each_char(buf, [&](uint32_t c, size_t, size_t) {
    if (is_normalization_boundary(c)) {
      // under NFKC / NFKD a starter whose compatibility decomposition begins with a non-starter
      // (U+FF9E -> U+3099, U+FF9F -> U+309A) combines with what is before it: "\uFF76\uFF9E" is "\u30AC"
      uint32_t tmp[32];
      if (!(compat && c >= 0x300 && decompose_char(c, true, tmp, 32) > 0 && !is_normalization_boundary(tmp[0]))) flush();
    }
    sc.segment.push_back(c);
  });
  flush();
  if (changed) rewrite(buf, base, sc);
}

void bert(const Normalizer& n, TextBuffer& buf, Align base, NormalizerScratch& sc) {
  if (n.clean_text) {
    filter(buf, base, sc, [](uint32_t c) {
      if (c == '\t' || c == '\n' || c == '\r') return true;
      return !(c == 0 || c == kReplacementChar || is_other(c));
    });
    sc.changes.clear();
    bool changed = false;
    for_each_char(buf, [&](uint32_t c, size_t, size_t) {
      const bool ws = c == '\t' || c == '\n' || c == '\r' || is_whitespace(c);
      changed |= ws && c != ' ';
      sc.changes.push_back(Change{ws ? ' ' : c, 0});
    });
    if (changed) rewrite(buf, base, sc);
  }
  if (n.handle_chinese_chars) {
    sc.changes.clear();
    bool changed = false;
    for_each_char(buf, [&](uint32_t c, size_t, size_t) {
      if (is_cjk_ideograph(c)) {
        // as HF writes it: [(' ', 0), (c, 1), (' ', 1)], so both spaces take the ideograph's
        // offsets (visible when no pre-tokenizer removes them)
        sc.changes.push_back(Change{' ', 0});
        sc.changes.push_back(Change{c, 1});
        sc.changes.push_back(Change{' ', 1});
        changed = true;
      } else {
        sc.changes.push_back(Change{c, 0});
      }
    });
    if (changed) rewrite(buf, base, sc);
  }
  if (n.strip_accents) {
    unicode_normalize(buf, base, sc, NormalForm::kNFD);
    filter(buf, base, sc, [](uint32_t c) { return !is_mark_nonspacing(c); });
  }
  if (n.lowercase) lowercase(buf, base, sc);
}

void strip(const Normalizer& n, TextBuffer& buf, Align base, NormalizerScratch& sc) {
  size_t total = 0, leading = 0, trailing = 0;
  bool in_lead = true;
  for_each_char(buf, [&](uint32_t c, size_t, size_t) {
    ++total;
    if (in_lead && is_whitespace(c)) {
      ++leading;
    } else {
      in_lead = false;
    }
    trailing = is_whitespace(c) ? trailing + 1 : 0;
  });
  if (!n.strip_left) leading = 0;
  if (!n.strip_right || leading == total) trailing = 0;
  if (leading == 0 && trailing == 0) return;
  sc.changes.clear();
  size_t i = 0;
  for_each_char(buf, [&](uint32_t c, size_t, size_t) {
    if (i >= leading && i < total - trailing) sc.changes.push_back(Change{c, 0});
    ++i;
  });
  rewrite(buf, base, sc, leading);
}

void replace(const Normalizer& n, TextBuffer& buf, Align base, NormalizerScratch& sc) {
  const std::string_view pat = n.pattern;
  if (pat.empty()) return;
  const char* s = buf.bytes.data();
  const size_t size = buf.size();
  sc.changes.clear();
  bool changed = false;
  auto at = [&](size_t i) { return size - i >= pat.size() && std::memcmp(s + i, pat.data(), pat.size()) == 0; };
  for (size_t i = 0; i < size;) {
    size_t match = 0, copies = 0;
    while (at(i + match) && (n.min_repeat > 0 || copies == 0)) {
      match += pat.size();
      ++copies;
    }
    if (copies > 0 && copies < static_cast<size_t>(n.min_repeat)) copies = match = 0;
    if (copies > 0) {
      size_t chars = 0;
      for (size_t k = 0; k < match;) {
        size_t len;
        decode_utf8(s + i + k, match - k, &len);
        k += len;
        ++chars;
      }
      sc.changes.push_back(Change{kSkip, static_cast<int32_t>(chars)});
      for (size_t k = 0; k < n.content.size();) {
        size_t len;
        const uint32_t c = decode_utf8(n.content.data() + k, n.content.size() - k, &len);
        sc.changes.push_back(Change{c, 1});
        k += len;
      }
      i += match;
      changed = true;
      continue;
    }
    size_t len;
    const uint32_t c = decode_utf8(s + i, size - i, &len);
    sc.changes.push_back(Change{c, 0});
    i += len;
  }
  if (changed) rewrite(buf, base, sc);
}

void prepend(const Normalizer& n, TextBuffer& buf, Align base, NormalizerScratch& sc) {
  if (buf.size() == 0 || n.content.empty()) return;
  sc.changes.clear();
  bool first = true;
  for (size_t k = 0; k < n.content.size();) {
    size_t len;
    const uint32_t c = decode_utf8(n.content.data() + k, n.content.size() - k, &len);
    sc.changes.push_back(Change{c, first ? 0 : 1});
    first = false;
    k += len;
  }
  bool first_char = true;
  for_each_char(buf, [&](uint32_t c, size_t, size_t) {
    sc.changes.push_back(Change{c, first_char ? 1 : 0});
    first_char = false;
  });
  rewrite(buf, base, sc);
}

// Appends the characters of a replacement of `old_count` characters: the i-th of the first
// min(old, new) replaces the i-th old character, extra ones are insertions, and when the
// replacement is shorter its last character removes the rest (what HuggingFace tokenizers 0.22
// reports as offsets; its source comment says the changes are (new - old, i), which would shift
// every alignment by one -- the measured behaviour is this one).
void push_replacement(std::string_view norm, size_t old_count, std::vector<Change>& out) {
  size_t new_count = 0;
  for (size_t k = 0; k < norm.size();) {
    size_t len;
    decode_utf8(norm.data() + k, norm.size() - k, &len);
    k += len;
    ++new_count;
  }
  size_t i = 0;
  for (size_t k = 0; k < norm.size();) {
    size_t len;
    const uint32_t c = decode_utf8(norm.data() + k, norm.size() - k, &len);
    int32_t change = i < old_count ? 0 : 1;
    if (new_count < old_count && i + 1 == new_count) change = -static_cast<int32_t>(old_count - new_count);
    out.push_back(Change{c, change});
    k += len;
    ++i;
  }
  // HF's replace() with nothing to write adds the removal to the last change written so far (an
  // earlier character's); with none (a removed character at the start, U+007F), nothing is
  // removed, and the characters after it take the alignments one character early
  if (new_count == 0 && !out.empty()) out.back().change -= static_cast<int32_t>(old_count);
}

void precompiled(const Normalizer& n, TextBuffer& buf, Align base, NormalizerScratch& sc) {
  const char* s = buf.bytes.data();
  const size_t size = buf.size();
  sc.changes.clear();
  bool modified = false;
  auto grapheme = [&](size_t b, size_t e) {
    std::string_view norm;
    if (e - b < 6 && n.charsmap.transform(std::string_view(s + b, e - b), &norm)) {
      size_t old_count = 0;
      for (size_t k = b; k < e;) {
        size_t len;
        decode_utf8(s + k, e - k, &len);
        k += len;
        ++old_count;
      }
      modified = true;
      push_replacement(norm, old_count, sc.changes);
      return;
    }
    for (size_t k = b; k < e;) {
      size_t len;
      const uint32_t c = decode_utf8(s + k, e - k, &len);
      if (n.charsmap.transform(std::string_view(s + k, len), &norm)) {
        modified = true;
        push_replacement(norm, 1, sc.changes);
      } else {
        sc.changes.push_back(Change{c, 0});
      }
      k += len;
    }
  };
  int32_t state = 0;
  uint32_t prev = 0;
  size_t start = 0;
  for (size_t i = 0; i < size;) {
    size_t len;
    const uint32_t c = decode_utf8(s + i, size - i, &len);
    if (i > 0 && is_grapheme_break(prev, c, &state)) {
      grapheme(start, i);
      start = i;
    }
    prev = c;
    i += len;
  }
  if (size > 0) grapheme(start, size);
  if (modified) rewrite(buf, base, sc);
}

}  // namespace

void apply_normalizer(const Normalizer& n, TextBuffer& buf, Align base, NormalizerScratch& sc) {
  switch (n.kind) {
    case NormalizerKind::kBert: bert(n, buf, base, sc); break;
    case NormalizerKind::kLowercase: lowercase(buf, base, sc); break;
    case NormalizerKind::kNFC: unicode_normalize(buf, base, sc, NormalForm::kNFC); break;
    case NormalizerKind::kNFD: unicode_normalize(buf, base, sc, NormalForm::kNFD); break;
    case NormalizerKind::kNFKC: unicode_normalize(buf, base, sc, NormalForm::kNFKC); break;
    case NormalizerKind::kNFKD: unicode_normalize(buf, base, sc, NormalForm::kNFKD); break;
    case NormalizerKind::kStripAccents: filter(buf, base, sc, [](uint32_t c) { return !is_mark(c); }); break;
    case NormalizerKind::kStrip: strip(n, buf, base, sc); break;
    case NormalizerKind::kReplace: replace(n, buf, base, sc); break;
    case NormalizerKind::kPrepend: prepend(n, buf, base, sc); break;
    case NormalizerKind::kPrecompiled: precompiled(n, buf, base, sc); break;
  }
}

}  // namespace text
}  // namespace edgebert
