// SPDX-License-Identifier: Apache-2.0
// rope_table.cpp: a rotary base's cos/sin rows, filled on demand (rope_table.h).
#include "program/rope_table.h"

#include <algorithm>

#include "kernels/rope.h"

namespace edgebert {

// blocks start at seed positions, so that a table filled block by block has a whole build's bytes
static_assert(RopeTable::kBlock % kernels::kRopeSeed == 0, "rotary blocks must start at seed positions");

RopeTable::RopeTable(double base, int rotary_dim, int max_positions)
    : base_(base),
      dims_(rotary_dim),
      max_positions_(std::max(max_positions, 0)),
      rows_(new float[kernels::rope_table_floats(static_cast<size_t>(max_positions_), static_cast<size_t>(rotary_dim))]) {}

void RopeTable::fill_to(int positions) {
  if (positions <= filled()) return;
  std::lock_guard<std::mutex> lock(fill_);
  const int have = filled_.load(std::memory_order_relaxed);
  const int want = std::min(max_positions_, (positions + kBlock - 1) / kBlock * kBlock);
  if (want <= have) return;
  kernels::build_rope_table(base_, dims_, want, rows_.get(), have);
  filled_.store(want, std::memory_order_release);
}

}  // namespace edgebert
