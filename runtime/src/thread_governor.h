// SPDX-License-Identifier: Apache-2.0
// thread_governor.h: decides, run by run, whether a multi-threaded session runs on its pool or on
// the caller alone. pthreadpool's fork-joins wait for every worker to check in; on cores that other
// work keeps busy a worker is often descheduled at the fork, and each of a run's dozens of parallel
// loops then waits up to a time slice for it (2 threads 5-7x slower than 1, p99 30-50x: docs/
// batches.md, "Threads on loaded cores"). The governor watches how often the process's threads are
// preempted (involuntary context switches, getrusage) during runs on the pool; when that rate
// says the cores are contended it sends the next runs to the caller alone, and tries the pool
// again after a hold that doubles while the load lasts. Outputs are the same either way (the
// kernels give the same bytes on 1 and N threads). Allocation-free; not thread-safe (one session).
#pragma once

#include <cstdint>

namespace edgebert {

class ThreadGovernor {
 public:
  // The policy's constants (tests/unit/test_thread_governor.cpp feeds it synthetic samples).
  static constexpr int64_t kWindowNs = 100'000'000;          // run time a quiet verdict needs
  static constexpr int64_t kMinPreemptions = 10;             // a contended verdict needs this many ...
  static constexpr int64_t kPreemptionsPerSecond = 120;      // ... at this rate or more over the window
  static constexpr int64_t kFirstHoldNs = 1'000'000'000;     // on the caller alone before a retry
  static constexpr int64_t kMaxHoldNs = 16'000'000'000;      // the hold doubles up to this

  // enabled: false leaves every run on the pool (EDGEBERT_ADAPTIVE_THREADS=0: enabled_by_env()).
  explicit ThreadGovernor(bool enabled = true) : enabled_(enabled) {}
  // Whether runs are governed in this process: EDGEBERT_ADAPTIVE_THREADS unset or not "0" (read once).
  static bool enabled_by_env();

  // Whether the run starting at now_ns (monotonic_clock.h) goes to the pool.
  bool use_pool(int64_t now_ns);
  // After a run on the pool that ended at end_ns: its wall time and the process's preemptions
  // during it.
  void after_pool_run(int64_t end_ns, int64_t run_ns, int64_t preemptions);
  // Forget the load seen so far (eb_session_set_num_threads: the app chose).
  void reset();

  // What it did (edgebert-bench reports it): runs sent to the caller alone, and contended verdicts.
  int64_t serial_runs() const { return serial_runs_; }
  int64_t contended_verdicts() const { return verdicts_; }

  // The process's involuntary context switches so far (all its threads; 0 where unknown).
  static int64_t process_preemptions();

 private:
  bool enabled_;
  bool serial_ = false;          // runs go to the caller alone until hold_until_ns_
  int64_t hold_until_ns_ = 0;
  int64_t hold_ns_ = kFirstHoldNs;
  int64_t window_ns_ = 0;        // run time and preemptions of the current pool window
  int64_t window_preemptions_ = 0;
  int64_t serial_runs_ = 0;
  int64_t verdicts_ = 0;
};

}  // namespace edgebert
