// SPDX-License-Identifier: Apache-2.0
// Arena memory planner: greedy-by-size and linear placement of intermediate buffers by lifetime,
// plan validation, and a printable table/timeline of a plan (see memory_planner.h).
#include "program/memory_planner.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <utility>

namespace edgebert {
namespace {

void set_error(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
}

// a + b into *out; false on overflow.
bool checked_add(size_t a, size_t b, size_t* out) {
  if (a > std::numeric_limits<size_t>::max() - b) return false;
  *out = a + b;
  return true;
}

// `bytes` rounded up to a multiple of `alignment` (> 0) into *out; false on overflow.
bool align_up(size_t bytes, size_t alignment, size_t* out) {
  const size_t rem = bytes % alignment;
  if (rem == 0) {
    *out = bytes;
    return true;
  }
  return checked_add(bytes, alignment - rem, out);
}

bool lifetimes_intersect(const BufferRequest& a, const BufferRequest& b) {
  return a.first_op <= b.last_op && b.first_op <= a.last_op;
}

std::string quoted(const std::string& name) { return "'" + name + "'"; }

std::string human_bytes(size_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= (size_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
  } else if (bytes >= (size_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024.0));
  } else if (bytes >= (size_t{1} << 10)) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", b / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  }
  return buf;
}

// Max over ops of the sum of live (raw) sizes: a lower bound for any valid plan's arena.
// False if the sizes' total overflows size_t (the peak is then not computed).
bool peak_live_bytes(const std::vector<BufferRequest>& requests, size_t* peak) {
  // Sweep over events: a start at first_op, an end at last_op + 1 (intervals are inclusive).
  // At equal op, ends come first, so [a,b] and [b+1,c] are never counted together.
  struct Event {
    int64_t op;
    bool start;
    size_t bytes;
  };
  std::vector<Event> events;
  events.reserve(requests.size() * 2);
  size_t total = 0;
  for (const BufferRequest& r : requests) {
    if (r.first_op > r.last_op || r.bytes == 0) continue;
    if (!checked_add(total, r.bytes, &total)) return false;
    events.push_back({r.first_op, true, r.bytes});
    events.push_back({static_cast<int64_t>(r.last_op) + 1, false, r.bytes});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.op != b.op) return a.op < b.op;
    return !a.start && b.start;
  });
  size_t live = 0;  // never exceeds `total`, so no overflow
  *peak = 0;
  for (const Event& e : events) {
    if (e.start) {
      live += e.bytes;
      *peak = std::max(*peak, live);
    } else {
      live -= e.bytes;
    }
  }
  return true;
}

}  // namespace

static bool plan_into(const std::vector<BufferRequest>& requests, PlanStrategy strategy,
                 size_t alignment, MemoryPlan* plan, std::string* error) {
  if (plan == nullptr) {
    set_error(error, "plan_memory: null plan");
    return false;
  }
  if (alignment == 0) {
    set_error(error, "plan_memory: alignment must be at least 1");
    return false;
  }
  const size_t n = requests.size();
  std::vector<size_t> sizes(n);  // aligned sizes: what each buffer occupies in the arena
  size_t naive = 0;
  for (size_t i = 0; i < n; ++i) {
    const BufferRequest& r = requests[i];
    if (r.first_op > r.last_op) {
      set_error(error, "plan_memory: buffer " + quoted(r.name) + " has first_op " +
                           std::to_string(r.first_op) + " > last_op " +
                           std::to_string(r.last_op));
      return false;
    }
    if (!align_up(r.bytes, alignment, &sizes[i])) {
      set_error(error, "plan_memory: size of buffer " + quoted(r.name) + " (" +
                           std::to_string(r.bytes) + " bytes) overflows when aligned to " +
                           std::to_string(alignment));
      return false;
    }
    if (!checked_add(naive, sizes[i], &naive)) {
      set_error(error, "plan_memory: total size of buffers overflows size_t (at buffer " +
                           quoted(r.name) + ")");
      return false;
    }
  }

  MemoryPlan result;
  result.offsets.assign(n, 0);
  result.naive_bytes = naive;

  if (strategy == PlanStrategy::kLinear) {
    size_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      result.offsets[i] = offset;
      offset += sizes[i];  // cannot overflow: bounded by `naive`
    }
    result.arena_bytes = offset;
    *plan = std::move(result);
    return true;
  }

  if (strategy != PlanStrategy::kGreedyBySize) {
    set_error(error, "plan_memory: unknown strategy");
    return false;
  }

  // Greedy by size: place the largest buffers first (ties: earlier first use, then request
  // order, so plans are deterministic). `placed` holds the placed buffers sorted by offset; a new
  // buffer walks it once, skipping those whose lifetime does not intersect its own, and takes the
  // first gap that fits. Each placement is O(n) (walk + sorted insert), so the whole is O(n^2).
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (sizes[i] > 0) order.push_back(i);  // zero-size buffers keep offset 0 and occupy nothing
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
    if (requests[a].first_op != requests[b].first_op) {
      return requests[a].first_op < requests[b].first_op;
    }
    return a < b;
  });

  std::vector<size_t> placed;  // request indices, ascending by offset
  placed.reserve(order.size());
  size_t arena = 0;
  for (size_t i : order) {
    const BufferRequest& r = requests[i];
    const size_t size = sizes[i];
    size_t candidate = 0;
    for (size_t p : placed) {
      if (!lifetimes_intersect(r, requests[p])) continue;
      const size_t p_offset = result.offsets[p];
      // The walk is in offset order, so once a conflicting buffer starts at or past the end of
      // the candidate range, nothing later can overlap it either.
      if (p_offset >= candidate && p_offset - candidate >= size) break;
      candidate = std::max(candidate, p_offset + sizes[p]);  // checked when p was placed
    }
    size_t end = 0;
    if (!checked_add(candidate, size, &end)) {  // cannot happen (end <= naive); kept as a guard
      set_error(error, "plan_memory: arena size overflows size_t (at buffer " + quoted(r.name) +
                           ")");
      return false;
    }
    result.offsets[i] = candidate;
    arena = std::max(arena, end);
    const auto pos = std::upper_bound(
        placed.begin(), placed.end(), candidate,
        [&](size_t offset, size_t q) { return offset < result.offsets[q]; });
    placed.insert(pos, i);
  }
  result.arena_bytes = arena;
  *plan = std::move(result);
  return true;
}

static bool check_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan,
                   std::string* error) {
  const size_t n = requests.size();
  if (plan.offsets.size() != n) {
    set_error(error, "plan has " + std::to_string(plan.offsets.size()) + " offsets for " +
                         std::to_string(n) + " buffers");
    return false;
  }
  std::vector<size_t> ends(n);
  std::vector<size_t> live;  // indices of non-empty buffers
  live.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const BufferRequest& r = requests[i];
    if (r.first_op > r.last_op) {
      set_error(error, "buffer " + quoted(r.name) + " has first_op " +
                           std::to_string(r.first_op) + " > last_op " +
                           std::to_string(r.last_op));
      return false;
    }
    if (r.bytes == 0) continue;  // occupies nothing, valid at any offset
    if (!checked_add(plan.offsets[i], r.bytes, &ends[i])) {
      set_error(error, "buffer " + quoted(r.name) + ": offset + bytes overflows size_t");
      return false;
    }
    if (ends[i] > plan.arena_bytes) {
      set_error(error, "buffer " + quoted(r.name) + " ends at " + std::to_string(ends[i]) +
                           ", past the arena's " + std::to_string(plan.arena_bytes) + " bytes");
      return false;
    }
    live.push_back(i);
  }
  // Sort by offset; then buffer a can only overlap the following ones that start before a ends.
  std::sort(live.begin(), live.end(), [&](size_t a, size_t b) {
    if (plan.offsets[a] != plan.offsets[b]) return plan.offsets[a] < plan.offsets[b];
    return a < b;
  });
  for (size_t x = 0; x < live.size(); ++x) {
    const size_t a = live[x];
    for (size_t y = x + 1; y < live.size() && plan.offsets[live[y]] < ends[a]; ++y) {
      const size_t b = live[y];
      if (!lifetimes_intersect(requests[a], requests[b])) continue;
      set_error(error, "buffers " + quoted(requests[a].name) + " [" +
                           std::to_string(plan.offsets[a]) + ", " + std::to_string(ends[a]) +
                           ") ops " + std::to_string(requests[a].first_op) + ".." +
                           std::to_string(requests[a].last_op) + " and " +
                           quoted(requests[b].name) + " [" + std::to_string(plan.offsets[b]) +
                           ", " + std::to_string(ends[b]) + ") ops " +
                           std::to_string(requests[b].first_op) + ".." +
                           std::to_string(requests[b].last_op) +
                           " overlap in address and lifetime");
      return false;
    }
  }
  return true;
}

Status plan_memory(const std::vector<BufferRequest>& requests, PlanStrategy strategy, size_t alignment,
                   MemoryPlan* plan) {
  std::string error;
  if (!plan_into(requests, strategy, alignment, plan, &error)) return Status(EB_ERROR_INVALID_ARGUMENT, error);
  return Status::ok();
}

Status plan_is_valid(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
  std::string error;
  if (!check_plan(requests, plan, &error)) return Status(EB_ERROR_INVALID_ARGUMENT, error);
  return Status::ok();
}

std::string format_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan,
                        bool timeline) {
  const size_t n = requests.size();
  std::string out;
  size_t name_width = 6;  // "buffer"
  for (const BufferRequest& r : requests) name_width = std::max(name_width, r.name.size());
  const int nw = static_cast<int>(name_width);

  char line[256];
  std::snprintf(line, sizeof line, "%-*s  %12s  %12s  %s\n", nw, "buffer", "offset", "bytes",
                "ops");
  out += line;
  for (size_t i = 0; i < n; ++i) {
    const BufferRequest& r = requests[i];
    std::string offset = i < plan.offsets.size() ? std::to_string(plan.offsets[i]) : "?";
    out += r.name;
    out.append(name_width - r.name.size(), ' ');
    std::snprintf(line, sizeof line, "  %12s  %12zu  %d..%d\n", offset.c_str(), r.bytes,
                  r.first_op, r.last_op);
    out += line;
  }

  const double saving =
      plan.naive_bytes == 0
          ? 0.0
          : 100.0 * (static_cast<double>(plan.naive_bytes) - static_cast<double>(plan.arena_bytes)) /
                static_cast<double>(plan.naive_bytes);
  size_t lower = 0;
  const bool have_lower = peak_live_bytes(requests, &lower);
  out += std::to_string(n) + " buffers\n";
  out += "arena: " + std::to_string(plan.arena_bytes) + " bytes (" +
         human_bytes(plan.arena_bytes) + ")\n";
  out += "naive: " + std::to_string(plan.naive_bytes) + " bytes (" +
         human_bytes(plan.naive_bytes) + ")\n";
  std::snprintf(line, sizeof line, "saving: %.1f%% (arena vs naive)\n", saving);
  out += line;
  out += "lower bound (peak live bytes at one op): " +
         (have_lower ? std::to_string(lower) + " bytes (" + human_bytes(lower) + ")"
                     : std::string("n/a (sizes overflow)")) +
         "\n";

  if (!timeline || n == 0 || n > 200) return out;

  // Timeline: columns are ops (bucketed when the schedule is wide), '#' where a buffer is live.
  int64_t min_op = std::numeric_limits<int64_t>::max();
  int64_t max_op = std::numeric_limits<int64_t>::min();
  for (const BufferRequest& r : requests) {
    if (r.first_op > r.last_op) continue;
    min_op = std::min<int64_t>(min_op, r.first_op);
    max_op = std::max<int64_t>(max_op, r.last_op);
  }
  if (min_op > max_op) return out;
  const int64_t span = max_op - min_op + 1;
  const int64_t max_cols = 100;
  const int64_t ops_per_col = (span + max_cols - 1) / max_cols;
  const int64_t cols = (span + ops_per_col - 1) / ops_per_col;

  out += "\ntimeline: ops " + std::to_string(min_op) + ".." + std::to_string(max_op);
  if (ops_per_col > 1) out += ", one column = " + std::to_string(ops_per_col) + " ops";
  out += "\n";

  // Ruler: the first op of every 10th column, labels placed where they fit.
  std::string ruler(static_cast<size_t>(cols), ' ');
  size_t next_free = 0;
  for (int64_t c = 0; c < cols; c += 10) {
    const std::string label = std::to_string(min_op + c * ops_per_col);
    const size_t pos = static_cast<size_t>(c);
    if (pos < next_free) continue;
    if (pos + label.size() > ruler.size()) ruler.resize(pos + label.size(), ' ');
    ruler.replace(pos, label.size(), label);
    next_free = pos + label.size() + 1;
  }
  out.append(name_width + 2, ' ');
  out += ruler + "\n";
  // Tick row: '|' at every 10th column, '+' at every 5th, '-' elsewhere.
  std::string ticks(static_cast<size_t>(cols), '-');
  for (int64_t c = 0; c < cols; c += 5) ticks[static_cast<size_t>(c)] = c % 10 == 0 ? '|' : '+';
  out.append(name_width + 2, ' ');
  out += ticks + "\n";

  for (const BufferRequest& r : requests) {
    out += r.name;
    out.append(name_width - r.name.size() + 2, ' ');
    std::string row(static_cast<size_t>(cols), '.');
    if (r.first_op <= r.last_op) {
      const int64_t c0 = (r.first_op - min_op) / ops_per_col;
      const int64_t c1 = (r.last_op - min_op) / ops_per_col;
      for (int64_t c = c0; c <= c1; ++c) row[static_cast<size_t>(c)] = '#';
    } else {
      row = "(invalid interval)";
    }
    out += row + "\n";
  }
  return out;
}

}  // namespace edgebert
