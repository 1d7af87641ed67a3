# SPDX-License-Identifier: Apache-2.0
"""Two sessions on two threads sharing one model: each thread's outputs equal the same inputs run
alone, and match the numpy reference (int8: per-token cosine >= 0.99)."""

import threading

import numpy as np

import edgebert
from conftest import Case, cosine, ebm_path


def test_two_sessions_on_two_threads_share_a_model(testdata):
    cases = [Case("base2_h12", "len20_types"), Case("base2_h12", "len7_pad")]
    with edgebert.Model(ebm_path("base2_h12", "int8")) as model:
        with model.session() as alone:
            expected = [alone.run(ids=c.ids, types=c.types, mask=c.mask) for c in cases]
        results = [[], []]
        errors = []
        start = threading.Barrier(2)

        def worker(k):
            try:
                with model.session(threads=1) as s:
                    start.wait()
                    for _ in range(6):
                        c = cases[k]
                        results[k].append(s.run(ids=c.ids, types=c.types, mask=c.mask))
            except Exception as e:  # reported below; an exception in a thread must fail the test
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        for k, c in enumerate(cases):
            assert len(results[k]) == 6
            for out in results[k]:
                assert out.keys() == expected[k].keys()
                for key in out:
                    np.testing.assert_array_equal(out[key], expected[k][key])
            real = c.mask.astype(bool)
            hidden = results[k][0]["last_hidden_state"]
            assert min(cosine(h, g) for h, g in zip(hidden[real], c.hidden[real])) >= 0.99
