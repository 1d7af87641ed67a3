# SPDX-License-Identifier: Apache-2.0
"""Two sessions on two threads sharing one model: each thread's outputs equal the same inputs run
alone, and match the numpy reference (int8: per-token cosine >= 0.99). Session.set_num_threads
switches a 2-thread session to 1 thread and back with the same outputs."""

import threading

import numpy as np

import edgebert
import pytest

from conftest import Case, cosine, ebm_path, requires_c_function


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


@requires_c_function("eb_session_set_num_threads")
def test_set_num_threads_keeps_the_outputs(testdata):
    c = Case("base2_h12", "len20_types")
    with edgebert.Model(ebm_path("base2_h12", "int8")) as model:
        with model.session(threads=2) as s:
            two = s.run(ids=c.ids, types=c.types, mask=c.mask)["last_hidden_state"]
            s.set_num_threads(1)
            np.testing.assert_array_equal(s.run(ids=c.ids, types=c.types, mask=c.mask)["last_hidden_state"], two)
            s.set_num_threads(2)
            np.testing.assert_array_equal(s.run(ids=c.ids, types=c.types, mask=c.mask)["last_hidden_state"], two)
            for bad in (0, 3, -1):
                with pytest.raises(edgebert.Error) as e:
                    s.set_num_threads(bad)
                assert e.value.status == edgebert.Status.INVALID_ARGUMENT
                assert "runs on 1 or 2" in str(e.value)
            with pytest.raises(edgebert.Error):
                s.set_num_threads("1")
        with pytest.raises(edgebert.Error):
            s.set_num_threads(1)  # a closed session
    texts = ["the movie was good", "a b c", "the staff was rude"]
    with edgebert.Model(ebm_path("task_st_mean_norm", "int8")) as model:  # packed runs
        with model.session(threads=2) as s:
            two = s.embed_many(texts)
            s.set_num_threads(1)
            np.testing.assert_array_equal(s.embed_many(texts), two)
