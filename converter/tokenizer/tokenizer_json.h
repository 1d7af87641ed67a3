// SPDX-License-Identifier: Apache-2.0
// tokenizer_json.h: reads a HuggingFace tokenizer.json and writes it as the model file's
// TokenizerSpec tables (schemas/edgebert.fbs). Every component is either translated exactly or
// refused with a one-line error naming it (e.g. a Split regex PCRE2 cannot run as Oniguruma does); nothing is
// dropped silently. The decoder is not needed by the runtime and is ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "converter/checkpoint/json.h"

namespace edgebert {
namespace fb {
struct TokenizerSpec;
struct TokenizerTables;
}
namespace text {
class Tokenizer;
}
namespace convert {

// The runtime's lookup tables of a tokenizer (text/token_tables.h) as the converter writes them
// into the model file (TokenizerTables, schema_version 8): raw slots, built by the runtime itself.
struct TokenizerTableBytes {
  uint32_t scheme = 0;
  std::vector<std::vector<uint8_t>> indexes;  // each: whole TokenIndex slots
  std::vector<uint64_t> counts;               // keys in each index
  std::vector<uint8_t> pairs;                 // BPE: whole merge slots
  std::vector<int32_t> byte_ids;              // BPE, Unigram: the <0xXX> tokens' ids (256)
};

struct TokenizerJson {
  JsonValue root;
  std::string source;  // file name, for messages
  size_t vocab_size = 0;  // ids the tokenizer can produce (model vocabulary and added tokens)
  bool uses_regex = false;  // a Split regex (TokenizerSpec field of schema_version 5)
  // What was translated as HuggingFace tokenizers reads it but differs from the file's own words
  // (an added token whose id disagrees with the vocabulary), one line each, naming the token.
  std::vector<std::string> warnings;
  TokenizerTableBytes tables;  // built by the runtime from the parsed tokenizer
};

// Parses and checks tokenizer.json text (throws CheckpointError "SOURCE: ..." on anything it
// cannot translate).
TokenizerJson parse_tokenizer_json(const std::string& text, const std::string& source);
TokenizerJson read_tokenizer_json(const std::string& path);

// A vocabulary as one text and each token's end (schema_version 8: runtime/src/text/vocab_view.h).
struct VocabTextBytes {
  std::vector<uint8_t> text;
  std::vector<uint32_t> ends;
};
// Throws CheckpointError "SOURCE: the vocabulary's text is larger than 4 GiB".
VocabTextBytes vocab_text_bytes(const std::vector<std::string>& tokens, const std::string& source);

// The lookup tables `tok` built (or adopted), as bytes to write.
TokenizerTableBytes table_bytes(const text::Tokenizer& tok);
// Writes them as the model file's TokenizerTables.
flatbuffers::Offset<fb::TokenizerTables> write_tokenizer_tables(flatbuffers::FlatBufferBuilder& b, const TokenizerTableBytes& t);

// Writes the TokenizerSpec for `t` into `b` (the vocabulary as one text; the lookup tables unless
// with_tables is false, when a loader builds them).
flatbuffers::Offset<fb::TokenizerSpec> write_tokenizer_spec(flatbuffers::FlatBufferBuilder& b, const TokenizerJson& t,
                                                            bool with_tables = true);
// A FlatBuffer whose root is that TokenizerSpec (for text::Tokenizer::init_from_buffer).
std::vector<uint8_t> tokenizer_spec_buffer(const TokenizerJson& t, bool with_tables = true);

}  // namespace convert
}  // namespace edgebert
