// SPDX-License-Identifier: Apache-2.0
// python_unicode.h: character classes exactly as Python 3.11 (Unicode 14.0) and BERT's reference
// BasicTokenizer define them, for the vocab.txt WordPiece tokenizer, which must keep tokenizing
// BERT files exactly as before. (The tokenizer.json pipeline uses text/unicode.h, over utf8proc,
// which is what HuggingFace's Rust library matches; docs/tokenizers.md measures the difference.)
#pragma once

#include <cstdint>

namespace edgebert {
namespace text {
namespace py {

bool is_whitespace(uint32_t c);       // \t \n \r, Zs, U+2028/2029
bool is_control(uint32_t c);          // dropped by BERT's clean_text (see python_unicode.cpp)
bool is_cjk(uint32_t c);              // the CJK ideograph blocks of tokenize_chinese_chars
bool is_punctuation(uint32_t c);      // ASCII punctuation and P*
bool is_nonspacing_mark(uint32_t c);  // Mn
uint32_t to_lower(uint32_t c);        // simple lower-case mapping
bool is_cased(uint32_t c);            // Unicode Cased (final-sigma rule)
bool is_case_ignorable(uint32_t c);   // Unicode Case_Ignorable (final-sigma rule)
// The base characters of c's canonical decomposition without its nonspacing marks (Hangul
// syllables: their jamo); 0 when c has none (it is kept as it is).
int strip_decompose(uint32_t c, uint32_t out[3]);

}  // namespace py
}  // namespace text
}  // namespace edgebert
