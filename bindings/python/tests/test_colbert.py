# SPDX-License-Identifier: Apache-2.0
"""ColBERT in the Python package: edgebert.maxsim over eb_maxsim against numpy's float64 MaxSim of
the reference token vectors (tests/reference/colbert_numpy.py), its argument checks, and the
TOKEN_VECTORS enum values (the C API's)."""

import os

import numpy as np
import pytest

import edgebert
from conftest import data_dir

CASES = ("query", "doc_a", "doc_b", "doc_long")


def _vectors(name):
    path = os.path.join(data_dir(), "colbert_ref", "colbert_cases", name + ".f32")
    if not os.path.exists(path):
        pytest.skip("no ColBERT reference data (the make_colbert_data fixture)")
    return np.fromfile(path, dtype="<f4").reshape(-1, 24)


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
