// SPDX-License-Identifier: Apache-2.0
// run_context.h: what one run of the program hands every op kernel: the run's rows, its sequences
// (first row and length of each; a single run is one sequence, a packed run several laid end to
// end), the per-row inputs (ids, token types, key mask) and the session's execution resources
// (thread pool, workers, attention geometry). Kernels derive positions, rotary angles, dynamic-NTK
// lengths, windows and pooling from a row's place in its sequence, never from the run mode.
#pragma once

#include <cstddef>
#include <cstdint>

#include <pthreadpool.h>

namespace edgebert::exec {

// One sequence of a run: rows [first_row, first_row + rows); its per-sequence outputs (pooled
// vectors, logits) go to row `output_index` of the per-sequence buffers.
struct SequenceRows {
  size_t first_row = 0;
  size_t rows = 0;
  size_t output_index = 0;
};

// The session's resources, fixed at its creation.
struct ExecResources {
  pthreadpool_t pool = nullptr;  // null: everything on the calling thread
  size_t workers = 1;            // threads of the pool (1 without one)
  size_t max_seq_len = 1;        // longest sequence the attention scratch is sized for
  size_t max_tile = 1;           // query rows per attention scratch tile
  size_t max_rows = 1;           // rows a per-token buffer holds (a packed run's capacity)
};

struct RunContext {
  size_t rows = 0;  // rows of the run (the sequences' rows, end to end)
  const SequenceRows* sequences = nullptr;
  size_t sequence_count = 0;
  const int32_t* ids = nullptr;      // [rows]
  const int32_t* types = nullptr;    // [rows]
  const uint8_t* key_mask = nullptr; // [rows] 1: attend, 0: padding
  bool any_padding = false;          // some key_mask entry is 0
  size_t row_tile = 1;               // rows per task of the row-parallel elementwise kernels
  ExecResources res;
};

}  // namespace edgebert::exec
