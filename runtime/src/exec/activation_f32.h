// SPDX-License-Identifier: Apache-2.0
// activation_f32.h: x = act(x) in place for every Activation (GELU / ReLU / tanh-GELU by the
// kernels, SiLU / sigmoid / tanh here): head post ops and the float gated FFN.
#pragma once

#include <cmath>
#include <cstddef>

#include "kernels/kernels.h"
#include "model.h"

namespace edgebert::exec {

inline void activation_in_place(Activation a, float* x, size_t count) {
  switch (a) {
    case Activation::kGelu:
    case Activation::kRelu:
    case Activation::kGeluTanh:
      kernels::activation_f32(static_cast<kernels::ActivationKind>(a), x, count);
      break;
    case Activation::kSilu:
      for (size_t i = 0; i < count; ++i) x[i] = x[i] / (1.f + std::exp(-x[i]));
      break;
    case Activation::kSigmoid:
      for (size_t i = 0; i < count; ++i) x[i] = 1.f / (1.f + std::exp(-x[i]));
      break;
    case Activation::kTanh:
      for (size_t i = 0; i < count; ++i) x[i] = std::tanh(x[i]);
      break;
  }
}

}  // namespace edgebert::exec
