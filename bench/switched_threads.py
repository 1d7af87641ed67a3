# SPDX-License-Identifier: Apache-2.0
"""switched_threads.py: a 2-thread session switched to 1 thread (eb_session_set_num_threads,
through the Python binding) against a 1-thread and a 2-thread session, idle and with busy loops
competing for the cores (docs/batches.md, "Threads on loaded cores"). Median and p90 ms of 30 runs
of 128 ids per cell.

  EDGEBERT_LIBRARY=build/release/libedgebert.so /usr/bin/python3 bench/switched_threads.py \\
      build/release/testdata/ebm/base2_h12.int8.ebm [--loads 0,2] [--rounds 2]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
import numpy as np  # noqa: E402

import edgebert  # noqa: E402


def timed(session, ids, runs=30):
    for _ in range(3):
        session.run(ids=ids)
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        session.run(ids=ids)
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t), sorted(t)[int(0.9 * runs)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--loads", default="0,2")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    model = edgebert.Model(a.model)
    vocab = model.info.vocab_size
    ids = np.array([min(101, vocab - 1)] + [5 + (i * 7) % (vocab - 5) for i in range(126)] + [min(102, vocab - 1)],
                   dtype=np.int32)
    for load in (int(x) for x in a.loads.split(",")):
        loaders = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(load)]
        time.sleep(1)
        try:
            for r in range(a.rounds):
                one, two, switched = model.session(threads=1), model.session(threads=2), model.session(threads=2)
                switched.set_num_threads(1)
                cells = timed(one, ids) + timed(two, ids) + timed(switched, ids)
                print("load %d round %d: 1-thread session %.1f (p90 %.1f) | 2 threads %.1f (p90 %.1f) | "
                      "2-thread session switched to 1 %.1f (p90 %.1f)" % ((load, r) + cells), flush=True)
                for s in (one, two, switched):
                    s.close()
        finally:
            for p in loaders:
                p.kill()


if __name__ == "__main__":
    main()
