// SPDX-License-Identifier: Apache-2.0
// vocab_view.h: a vocabulary as one text and each token's end in it (token i is the bytes from
// ends[i - 1], 0 for the first, to ends[i]). Files of schema_version 8 carry it that way, so a
// load maps it as it is: no per-token structure is built or verified (EmbeddingGemma's 262,144
// tokens took 1-2 ms to walk as FlatBuffers strings, and their tables 15 ms to build).
// VocabText holds the same form for a vocabulary given as separate strings (older files,
// vocab.txt, the converter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace edgebert {
namespace text {

class VocabView {
 public:
  VocabView() = default;
  // Over n ends and a text of text_size bytes; both must outlive every copy of the view. Nothing
  // of the ends is read here: a load does not touch the 1 MB of EmbeddingGemma's 262,144 ends.
  // Each token is checked where it is read instead: an end that decreases or runs past the text
  // gives an empty token (never a read outside the text; its data() is the text's, never null,
  // so callers may pass it to memcmp).
  VocabView(const char* text, size_t text_size, const uint32_t* ends, size_t n)
      : text_(text ? text : ""), ends_(ends), n_(ends ? n : 0), text_size_(text ? text_size : 0) {}

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  std::string_view operator[](size_t i) const {
    const uint32_t b = i == 0 ? 0 : ends_[i - 1], e = ends_[i];
    return b <= e && e <= text_size_ ? std::string_view(text_ + b, e - b) : std::string_view(text_, 0);  // (data never null)
  }
  const uint32_t* ends() const { return ends_; }
  const char* text() const { return text_; }
  size_t text_size() const { return text_size_; }

 private:
  const char* text_ = "";
  const uint32_t* ends_ = nullptr;
  size_t n_ = 0, text_size_ = 0;
};

// The one-text form of separate strings, owned (the view stays valid while this lives and is
// not changed; moving it keeps the bytes where they are).
class VocabText {
 public:
  // False when the tokens' bytes do not fit 32-bit ends (4 GiB). May throw std::bad_alloc.
  bool assign(const std::vector<std::string_view>& tokens);
  void reserve(size_t tokens) { ends_.reserve(tokens); }
  bool append(std::string_view token);  // the next id's token
  VocabView view() const;

 private:
  std::vector<char> text_;  // (not std::string: a moved short string would move its bytes)
  std::vector<uint32_t> ends_;
};

}  // namespace text
}  // namespace edgebert
