# SPDX-License-Identifier: Apache-2.0
"""ColBERT in the Python package: edgebert.maxsim over eb_maxsim against numpy's float64 MaxSim of
the reference token vectors (tests/reference/colbert_numpy.py), the fp32 model's token_vectors
against them, maxsim's argument checks, and the TOKEN_VECTORS enum values (the C API's)."""

import os

import numpy as np
import pytest

import edgebert
from conftest import data_dir

CASES = ("query", "doc_a", "doc_b", "doc_long")


def _vectors(name):
    return np.fromfile(os.path.join(data_dir(), "colbert_cases", name + ".f32"), dtype="<f4").reshape(-1, 24)


def _ids(name):
    with open(os.path.join(data_dir(), "colbert_cases", name + ".ids.txt"), encoding="utf-8") as f:
        return [int(x) for x in f.read().split()]


def test_token_vectors_match_the_reference(testdata):
    with edgebert.Model(os.path.join(data_dir(), "ebm", "colbert.fp32.ebm")) as m, m.session() as s:
        assert m.info.task == edgebert.Task.TOKEN_VECTORS
        q = s.run(ids=_ids("query"))["token_vectors"]
        np.testing.assert_allclose(q, _vectors("query"), atol=2e-3)
        d = s.run(ids=_ids("doc_a"))["token_vectors"]
        want = (_vectors("query").astype(np.float64) @ _vectors("doc_a").astype(np.float64).T).max(axis=1).sum()
        assert edgebert.maxsim(q, d) == pytest.approx(want, rel=1e-3)


def test_maxsim_equals_numpy():
    for q in CASES:
        for d in CASES:
            qv, dv = _vectors(q), _vectors(d)
            want = (qv.astype(np.float64) @ dv.astype(np.float64).T).max(axis=1).sum()
            assert edgebert.maxsim(qv, dv) == pytest.approx(want, rel=1e-6)


def test_maxsim_bad_arguments():
    a = np.ones((2, 4), np.float32)
    for q, d in ((a, np.ones((2, 3), np.float32)), (a, np.zeros((0, 4), np.float32)), (a[0], a)):
        with pytest.raises(edgebert.Error) as e:
            edgebert.maxsim(q, d)
        assert e.value.status == edgebert.Status.INVALID_ARGUMENT


def test_enum_values():
    assert edgebert.Output.TOKEN_VECTORS == 8 and edgebert.Output.TOKEN_VECTORS.key == "token_vectors"
    assert edgebert.Task.TOKEN_VECTORS == 6
