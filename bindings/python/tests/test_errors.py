# SPDX-License-Identifier: Apache-2.0
"""Every error path of the Python binding: each raises edgebert.Error with the C status and a
readable message, and nothing crashes (bad files, bad arguments, wrong state, use after close)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import edgebert
from conftest import ebm_path

S = edgebert.Status


def raises(status, fn, *args, **kwargs):
    with pytest.raises(edgebert.Error) as e:
        fn(*args, **kwargs)
    assert e.value.status == status, repr(e.value)
    assert isinstance(e.value, RuntimeError) and str(e.value)
    return e.value


@pytest.fixture()
def model(testdata):
    with edgebert.Model(ebm_path("h192_3x64", "int8")) as m:  # encoder: no labels, no logits
        yield m


def test_missing_file_is_io(tmp_path):
    e = raises(S.IO, edgebert.Model, str(tmp_path / "nope.ebm"))
    assert "nope.ebm" in str(e)


def test_garbage_is_invalid_model(tmp_path):
    p = tmp_path / "garbage.ebm"
    p.write_bytes(b"not a model" * 100)
    raises(S.INVALID_MODEL, edgebert.Model, str(p))
    raises(S.INVALID_MODEL, edgebert.Model.from_bytes, b"not a model" * 100)


def test_truncated_model_is_invalid(testdata):
    data = open(ebm_path("tiny_f16", "int8"), "rb").read()
    raises(S.INVALID_MODEL, edgebert.Model.from_bytes, data[: len(data) // 2])


def test_bad_paths_are_invalid_arguments():
    raises(S.INVALID_ARGUMENT, edgebert.Model, "a\0b")
    raises(S.INVALID_ARGUMENT, edgebert.Model, "\udcff")


@pytest.mark.parametrize("kwargs", [dict(threads=-1), dict(threads="2"), dict(threads=2**31),
                                    dict(max_sequence_length=-5), dict(max_sequence_length=1.5),
                                    dict(max_memory_bytes=-1)])
def test_bad_session_options(model, kwargs):
    raises(S.INVALID_ARGUMENT, model.session, **kwargs)


def test_sequence_longer_than_the_model_is_rejected_at_creation(model):
    raises(S.INVALID_ARGUMENT, model.session, max_sequence_length=model.info.max_position_embeddings + 1)


def test_memory_ceiling(model):
    e = raises(S.OUT_OF_MEMORY, model.session, max_memory_bytes=1)
    assert str(e)
    model.session(max_memory_bytes=2**40).close()


def test_run_argument_errors(model):
    s = model.session(max_sequence_length=16)
    raises(S.INVALID_ARGUMENT, s.run)
    raises(S.INVALID_ARGUMENT, s.run, text="a", ids=[101, 102])
    raises(S.INVALID_ARGUMENT, s.run, text_pair="b")
    raises(S.INVALID_ARGUMENT, s.run, text="a", mask=[1])
    raises(S.INVALID_ARGUMENT, s.run, text=b"bytes")
    raises(S.INVALID_ARGUMENT, s.run, text="a\0b")
    raises(S.INVALID_ARGUMENT, s.run, ids=[101, 102], types=[0])
    raises(S.INVALID_ARGUMENT, s.run, ids=[101, 102], mask=[1, 1, 1])
    raises(S.INVALID_ARGUMENT, s.run, ids=[[101, 102]])
    raises(S.INVALID_ARGUMENT, s.run, ids=[101.0, 102.0])
    raises(S.INVALID_ARGUMENT, s.run, ids=[101, 2**40])
    raises(S.INVALID_ARGUMENT, s.run, ids=["a"])
    raises(S.INVALID_ARGUMENT, s.run, ids=[101, model.info.vocab_size, 102])  # checked by C
    raises(S.INVALID_ARGUMENT, s.run, ids=[101, -1, 102])
    raises(S.INVALID_ARGUMENT, s.run, ids=[101, 102], types=[0, 7])
    raises(S.INVALID_ARGUMENT, s.run, ids=[])
    raises(S.SEQUENCE_TOO_LONG, s.run, ids=[101] * 17)
    raises(S.INVALID_ARGUMENT, s.run, embeddings=np.zeros((3, model.info.hidden_size + 1), np.float32))
    raises(S.INVALID_ARGUMENT, s.run, embeddings=np.zeros(model.info.hidden_size, np.float32))
    raises(S.INVALID_ARGUMENT, s.run, embeddings=np.zeros((2, 2)), types=[0, 0])
    # After all that the session still runs.
    assert s.run(ids=[101, 200, 102])["last_hidden_state"].shape == (3, model.info.hidden_size)


def test_output_errors(model):
    s = model.session()
    raises(S.BAD_STATE, s.output, "last_hidden_state")
    raises(S.BAD_STATE, lambda: s.input_ids)
    s.run(ids=[101, 200, 102])
    raises(S.UNSUPPORTED, s.output, edgebert.Output.LOGITS)
    raises(S.INVALID_ARGUMENT, s.output, "no_such_output")
    raises(S.INVALID_ARGUMENT, s.output, 2)


def test_labels_errors(model, testdata):
    assert model.labels == []
    raises(S.INVALID_ARGUMENT, model.label, 0)
    raises(S.INVALID_ARGUMENT, model.label, "0")
    raises(S.INVALID_ARGUMENT, model.label, 2**40)


def test_label_names_of_a_classifier(testdata):
    with edgebert.Model(ebm_path("h128_4x32", "int8")) as m:
        names = m.labels
        assert len(names) == 3 and all(isinstance(n, str) and n for n in names)
        raises(S.INVALID_ARGUMENT, m.label, 3)
        raises(S.INVALID_ARGUMENT, m.label, -1)


def test_best_span_needs_a_qa_model(model):
    s = model.session()
    s.run(text="a", text_pair="b")
    raises(S.UNSUPPORTED, s.best_span)
    raises(S.INVALID_ARGUMENT, s.best_span, "30")


def test_use_after_close(testdata):
    m = edgebert.Model(ebm_path("tiny_f16", "int8"))
    s1 = m.session()
    s1.run(ids=[101, 102])
    s1.close()
    s1.close()  # idempotent
    for call in (lambda: s1.run(ids=[101, 102]), lambda: s1.output("last_hidden_state"), lambda: s1.outputs,
                 lambda: s1.input_ids, s1.token_offsets, s1.best_span, s1.memory):
        raises(S.BAD_STATE, call)
    s2 = m.session()
    m.close()  # closes s2 first
    assert s2.closed and m.closed
    raises(S.BAD_STATE, s2.run, ids=[101, 102])
    raises(S.BAD_STATE, lambda: m.info)
    raises(S.BAD_STATE, m.session)
    raises(S.BAD_STATE, m.label, 0)
    m.close()


def test_missing_library_is_an_error():
    """EDGEBERT_LIBRARY naming no library: edgebert.Error(IO) on first use, not an OSError."""
    code = ("import edgebert\ntry:\n    edgebert.version()\nexcept edgebert.Error as e:\n"
            "    print(int(e.status), 'EDGEBERT_LIBRARY' in str(e))\n")
    env = dict(os.environ, EDGEBERT_LIBRARY="/nonexistent/libedgebert.so")
    pkg = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out = subprocess.run([sys.executable, "-B", "-c", code], env=env, cwd=pkg, capture_output=True, text=True)
    assert out.stdout.split() == [str(int(S.IO)), "True"], out.stderr


def test_a_missing_system_library_is_named_with_its_package():
    from edgebert import _library
    msg = "libxnnpack.so.0: cannot open shared object file: No such file or directory"
    assert _library.missing_library_hint(msg) == " (missing: libxnnpack.so.0, Debian package libxnnpack0)"
    assert "libutf8proc2" in _library.missing_library_hint("libutf8proc.so.2: cannot open shared object file: x")
    assert _library.missing_library_hint("libfoo.so.1: cannot open shared object file: x") == " (missing: libfoo.so.1)"
    assert _library.missing_library_hint("some other error") == ""
