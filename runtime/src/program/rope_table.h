// SPDX-License-Identifier: Apache-2.0
// rope_table.h: the cos/sin table of one rotary base, shared by every op of that base and every
// session of the program, filled only as far as the sessions need. The program reserves the
// model's longest sequence (max_position rows; 2 x 2 MB for EmbeddingGemma's two bases) without
// touching it; each session, when it is created, fills the rows up to its max_sequence_length
// (Session::build), in blocks of kBlock positions. Filling all rows at load took about 2 ms of
// every EmbeddingGemma start (page faults included) whatever length the sessions used.
// Thread safety: rows are written under a mutex, only beyond what is filled, and published with a
// release store; a run reads rows below its session's length, which were filled before the
// session existed, so a session created later never writes a row a running session reads. The
// rows are the same bytes as one kernels::build_rope_table over the whole table.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

namespace edgebert {

class RopeTable {
 public:
  static constexpr int kBlock = 64;  // a multiple of build_rope_table's seed interval (32)

  // Reserves (does not fill) max_positions rows; may throw std::bad_alloc.
  RopeTable(double base, int rotary_dim, int max_positions);
  RopeTable(const RopeTable&) = delete;
  RopeTable& operator=(const RopeTable&) = delete;

  double base() const { return base_; }
  int rotary_dim() const { return dims_; }
  int max_positions() const { return max_positions_; }
  // Rows [0, filled()) may be read.
  int filled() const { return filled_.load(std::memory_order_acquire); }
  // Fills the rows up to `positions` (rounded up to a block, at most max_positions).
  void fill_to(int positions);
  const float* data() const { return rows_.get(); }

 private:
  double base_;
  int dims_, max_positions_;
  std::unique_ptr<float[]> rows_;  // default-initialized: pages are touched only when filled
  std::mutex fill_;
  std::atomic<int> filled_{0};
};

}  // namespace edgebert
