// SPDX-License-Identifier: Apache-2.0
// colbert_inputs.h: PyLate's query / document conventions of a ColBERT folder (read as strings by
// the sentence-transformers reader) resolved to token ids with the model's own tokenizer, as
// PyLate's tokenizer.convert_tokens_to_ids does.
#pragma once

#include <string>

#include "converter/checkpoint/hf_checkpoint.h"
#include "converter/float_bert.h"
#include "converter/tokenizer/tokenizer_json.h"

namespace edgebert::convert {

// Fills c's ids from its strings with the tokenizer (tokenizer.json when given, else the vocab.txt
// vocabulary): each prefix must be one token of the vocabulary or its added tokens (PyLate adds a
// missing one with a new, untrained embedding row: refused, naming it); a skiplist word that is no
// token stands for the unknown token, as convert_tokens_to_ids gives it; the expansion token is
// the mask token (refused when query expansion is on and the tokenizer has none). Throws
// std::runtime_error naming `source` on any refusal.
void resolve_colbert_inputs(FloatBert::ColbertInputs& c, const Vocab* vocab, const TokenizerJson* tokenizer,
                            const std::string& source);

}  // namespace edgebert::convert
