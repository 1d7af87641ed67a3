# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python binding tests: the test data folder made by
tests/reference/make_testdata.py (EDGEBERT_TESTDATA, converted models in ebm/) and its cases."""

import os
import sys

import numpy as np
import pytest

sys.dont_write_bytecode = True
# The package under test: this checkout's (bindings/python), or with EDGEBERT_TEST_INSTALLED=1
# the one installed in this Python (the wheel test, test_wheel.sh).
if not os.environ.get("EDGEBERT_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def data_dir():
    return os.environ.get("EDGEBERT_TESTDATA", os.path.join("build", "testdata"))


def ebm_path(model, kind):
    return os.path.join(data_dir(), "ebm", "%s.%s.ebm" % (model, kind))


class Case:
    """One reference case: inputs and the numpy float64 golden outputs (stored as float32)."""

    def __init__(self, model, name):
        d = os.path.join(data_dir(), model, "cases", name)
        ints = lambda f: np.array(open(os.path.join(d, f)).read().split(), dtype=np.int32)  # noqa: E731
        floats = lambda f: np.fromfile(os.path.join(d, f), dtype="<f4")  # noqa: E731
        self.model, self.name = model, name
        self.ids, self.mask, self.types = ints("ids.txt"), ints("mask.txt"), ints("types.txt")
        self.hidden = floats("last_hidden_state.f32").reshape(len(self.ids), -1)
        self.pooled = floats("pooler_output.f32")
        lp = os.path.join(d, "logits.f32")
        self.logits = np.fromfile(lp, dtype="<f4") if os.path.exists(lp) else None


def cosine(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def vocab(model):
    with open(os.path.join(data_dir(), model, "vocab.txt"), encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


@pytest.fixture(scope="session")
def testdata():
    d = data_dir()
    assert os.path.exists(os.path.join(d, "COMPLETE")), "test data missing: run the make_testdata CTest fixture (%s)" % d
    return d



def requires_c_function(name):
    """Marks a test of a C API function: the library under test must export it (a missing one
    fails the test: these bindings and this libedgebert come from one tree)."""
    import edgebert._library as lib
    assert lib.api().has(name), "libedgebert lacks %s" % name
    return pytest.mark.usefixtures()
