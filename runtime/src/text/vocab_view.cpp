// SPDX-License-Identifier: Apache-2.0
// vocab_view.cpp
#include "text/vocab_view.h"

namespace edgebert {
namespace text {

bool VocabText::append(std::string_view token) {
  if (token.size() > UINT32_MAX - text_.size()) return false;
  text_.insert(text_.end(), token.begin(), token.end());
  ends_.push_back(static_cast<uint32_t>(text_.size()));
  return true;
}

bool VocabText::assign(const std::vector<std::string_view>& tokens) {
  text_.clear();
  ends_.clear();
  ends_.reserve(tokens.size());
  for (std::string_view t : tokens)
    if (!append(t)) return false;
  return true;
}

VocabView VocabText::view() const {
  return VocabView(text_.data(), text_.size(), ends_.data(), ends_.size());
}

}  // namespace text
}  // namespace edgebert
