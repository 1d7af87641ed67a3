// SPDX-License-Identifier: Apache-2.0
// conversion_error: the message a checkpoint folder's fp32 conversion fails with ("" when it
// converts), for the tests of the converter's one-line refusals.
#pragma once

#include <exception>
#include <string>

#include "converter/converter.h"

inline std::string conversion_error(const std::string& input_dir) {
  edgebert::convert::ConvertOptions o;
  o.input_dir = input_dir;
  o.fp32 = true;
  o.quiet = true;
  try {
    edgebert::convert::convert_checkpoint(o);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
