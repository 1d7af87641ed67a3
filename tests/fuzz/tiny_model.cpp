// SPDX-License-Identifier: Apache-2.0
// tiny_model.cpp: builds the tiny fuzzing/fault-injection model with the converter's synthetic
// model generator (see tiny_model.h).
#include "tiny_model.h"

#include <cstdlib>
#include <cstring>

#include "converter/converter.h"
#include "converter/synthetic_model.h"

namespace edgebert::fuzz {

const std::vector<const char*>& tiny_vocabulary() {
  static const std::vector<const char*> v = {
      "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a",    "b",    "c",    "d",     "e",     "f",
      "g",     "h",     "i",     "j",     "k",      "l",    "m",    "n",    "o",     "p",     "q",
      "r",     "s",     "t",     "u",     "v",      "w",    "x",    "y",    "z",     "the",   "movie",
      "good",  "bad",   "not",   "was",   "##s",    "##ed", "##ing", "##a", "##e",   "##o",   ",",
      ".",     "!",     "?",     "'",     "-",      "0",    "1",    "2",    "\xc3\xa9", "\xe4\xb8\xad",
      "\xe6\x96\x87", "##\xc3\xa9", "caf", "##\xc3\xa9s", "\xce\xb1", "\xce\xb2", "\xd0\xb4", "##1",
      "un",    "##able"};
  return v;
}

std::vector<uint8_t> make_tiny_model(bool int8, const TinyShape& shape, uint64_t inline_payload_limit) {
  convert::SyntheticSpec spec;
  spec.hidden = shape.hidden;
  spec.heads = shape.heads;
  spec.layers = shape.layers;
  spec.intermediate = shape.intermediate;
  spec.vocab = static_cast<int>(tiny_vocabulary().size());
  spec.max_position = shape.max_position;
  spec.labels = 2;
  spec.seed = 7;
  const convert::FloatBert model = convert::make_synthetic_bert(spec);
  convert::Vocab vocab;
  for (const char* t : tiny_vocabulary()) vocab.tokens.emplace_back(t);
  vocab.do_lower_case = true;
  convert::ConvertOptions options;
  options.fp32 = !int8;
  options.quiet = true;
  options.error_report = false;
  options.quick_calibration = true;
  options.inline_payload_limit = inline_payload_limit;
  const convert::ConvertResult r = convert::convert_model(model, &vocab, options);
  return std::vector<uint8_t>(r.buffer.data(), r.buffer.data() + r.buffer.size());
}

AlignedCopy::AlignedCopy(const uint8_t* data, size_t size) : size_(size) {
  data_ = static_cast<uint8_t*>(std::aligned_alloc(64, (size + 63) / 64 * 64 + 64));
  if (data_ && size) std::memcpy(data_, data, size);
}

AlignedCopy::~AlignedCopy() { std::free(data_); }

}  // namespace edgebert::fuzz
