// SPDX-License-Identifier: Apache-2.0
// colbert_inputs.cpp: PyLate's conventions as token ids (colbert_inputs.h).
#include "converter/colbert_inputs.h"

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "status.h"
#include "text/tokenizer.h"

namespace edgebert::convert {

void resolve_colbert_inputs(FloatBert::ColbertInputs& c, const Vocab* vocab, const TokenizerJson* tokenizer,
                            const std::string& source) {
  if (!c.present) return;
  // token text -> id (the first id of a text listed twice), the unknown and mask tokens
  std::unordered_map<std::string, int32_t> ids;
  int32_t unk = -1, mask = -1;
  if (tokenizer) {
    text::Tokenizer tok;
    const Status st = tok.init_from_buffer(tokenizer_spec_buffer(*tokenizer));
    if (!st.is_ok()) throw std::runtime_error(tokenizer->source + ": " + st.message());
    for (size_t i = 0; i < tokenizer->vocab_size; ++i)
      ids.emplace(std::string(tok.token_text(static_cast<int32_t>(i))), static_cast<int32_t>(i));
    unk = tok.unk_id();
    mask = tok.mask_id();
  } else if (vocab) {
    for (size_t i = 0; i < vocab->tokens.size(); ++i) ids.emplace(vocab->tokens[i], static_cast<int32_t>(i));
    if (auto u = ids.find("[UNK]"); u != ids.end()) unk = u->second;
    if (auto m = ids.find("[MASK]"); m != ids.end()) mask = m->second;
  } else {
    throw std::runtime_error(source + ": PyLate's query / document markers need the model's tokenizer (tokenizer.json or "
                             "vocab.txt)");
  }
  auto prefix_id = [&](const std::string& prefix, const char* key) -> int32_t {
    if (prefix.empty()) return -1;
    const auto it = ids.find(prefix);
    if (it == ids.end())
      throw std::runtime_error(source + ": " + key + " '" + prefix +
                               "' is not a token of the model's tokenizer (PyLate would add it with a new, untrained "
                               "embedding row); add it to the tokenizer and the embeddings, or set the prefix to \"\"");
    return it->second;
  };
  c.query_prefix_id = prefix_id(c.query_prefix, "query_prefix");
  c.document_prefix_id = prefix_id(c.document_prefix, "document_prefix");
  if (c.do_query_expansion) {
    if (mask < 0)
      throw std::runtime_error(source + ": do_query_expansion needs the tokenizer's mask token, and it has none");
    c.expansion_id = mask;
  } else {
    c.expansion_id = -1;
    c.attend_to_expansion = false;
  }
  c.skiplist_ids.clear();
  for (const std::string& w : c.skiplist_words) {
    const auto it = ids.find(w);
    const int32_t id = it != ids.end() ? it->second : unk;
    if (id >= 0) c.skiplist_ids.push_back(id);
  }
  std::sort(c.skiplist_ids.begin(), c.skiplist_ids.end());
  c.skiplist_ids.erase(std::unique(c.skiplist_ids.begin(), c.skiplist_ids.end()), c.skiplist_ids.end());
}

}  // namespace edgebert::convert
