// SPDX-License-Identifier: Apache-2.0
// Arena memory planner: gives every intermediate tensor an offset in one arena from its
// lifetime over the fixed op schedule (greedy by size, or a no-reuse linear layout), checks
// plans, and prints them. Runs once at session creation (may allocate; never throws).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "status.h"

namespace edgebert {

struct BufferRequest {
  std::string name;       // e.g. "layer3.qkv", "layer3.scores"
  size_t bytes = 0;       // size at the session's maximum sequence length
  int first_op = 0;       // inclusive op-index interval over which the buffer is live
  int last_op = 0;        // (first_op <= last_op)
};

enum class PlanStrategy {
  kGreedyBySize,  // largest first; each buffer takes the lowest offset that does not overlap, in
                  // address, any placed buffer whose live interval intersects its own
  kLinear,        // back to back in request order, no reuse (arena == naive)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request, multiples of `alignment`
  size_t arena_bytes = 0;       // planned peak (end of the highest buffer, sizes rounded up to
                                // `alignment`, so a multiple of it)
  size_t naive_bytes = 0;       // sum of all (aligned) buffer sizes, i.e. no reuse
};

// Plans `requests` into one arena. Each buffer occupies its size rounded up to `alignment`
// (so every offset, and the arena size, is a multiple of `alignment`). Zero-size buffers are
// allowed and get offset 0. Fails (EB_ERROR_INVALID_ARGUMENT, naming the buffer), leaving *plan
// untouched, when: plan is null, alignment is 0, a request has first_op > last_op, or a size
// (or the sum of sizes) overflows size_t. Greedy is O(n^2) in the number of requests.
Status plan_memory(const std::vector<BufferRequest>& requests, PlanStrategy strategy, size_t alignment,
                   MemoryPlan* plan);

// True iff the plan has one offset per request, every request has first_op <= last_op, no
// offset + bytes overflows or exceeds plan.arena_bytes, and no two requests whose live intervals
// intersect overlap in [offset, offset + bytes). Otherwise the status says why, naming the buffers
// involved.
Status plan_is_valid(const std::vector<BufferRequest>& requests, const MemoryPlan& plan);

// Human-readable table: one line per buffer (name, offset, bytes, ops first..last), then totals
// (arena vs naive, saving %). With `timeline` and at most 200 buffers, also an ASCII timeline
// (ops on x, one row per buffer; wide schedules are bucketed to at most 100 columns).
std::string format_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan,
                        bool timeline);

}  // namespace edgebert
