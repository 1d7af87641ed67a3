# SPDX-License-Identifier: Apache-2.0
"""Session.embed_chunked (eb_session_embed_chunked) against chunk_numpy.py's float64 goldens:
the windows (HuggingFace's overflowing tokens with a stride) and each window's vector, one row per
window or their token-weighted mean, on fp32 (within 2e-3) and int8 (cosine >= 0.99) models; str
and bytes texts; bad arguments raise edgebert.Error with the C status."""

import os

import numpy as np
import pytest

import edgebert
from conftest import cosine, data_dir, ebm_path, requires_c_function

MAX_LEN, BATCH_TOKENS = 32, 64


def golden_cases():
    path = os.path.join(data_dir(), "chunk", "cases.txt")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [(m, d, int(w), int(s), int(n)) for m, d, w, s, n in (line.split() for line in f)]


CASES = [c for c in golden_cases() if c[1] != "long" or c[2] == 24]


@requires_c_function("eb_session_embed_chunked")
@pytest.mark.parametrize("kind", ["fp32", "int8"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "%s-%s-%d-%d" % c[:4])
def test_matches_reference(testdata, kind, case):
    model_name, doc, window, stride, windows = case
    stem = os.path.join(testdata, "chunk", "%s.%s.%d.%d" % (model_name, doc, window, stride))
    text = open(os.path.join(testdata, "chunk", doc + ".txt"), "rb").read()
    model = edgebert.Model(ebm_path(model_name, kind))
    session = model.session(max_sequence_length=MAX_LEN, max_batch_tokens=BATCH_TOKENS)
    rows, chunks = session.embed_chunked(text.decode("utf-8"), window, stride)
    want = [tuple(map(int, line.split())) for line in open(stem + ".windows.txt")]
    assert len(chunks) == windows == len(want)
    assert [(c.first_token, c.tokens, c.begin_byte, c.end_byte) for c in chunks] == want
    golden = np.fromfile(stem + ".none.f32", dtype="<f4").reshape(windows, -1)
    assert rows.shape == golden.shape
    mean, mean_chunks = session.embed_chunked(text, window, stride, pooling="mean")  # bytes in
    assert mean_chunks == chunks
    golden_mean = np.fromfile(stem + ".mean.f32", dtype="<f4")
    if kind == "fp32":
        assert np.abs(rows - golden).max() <= 2e-3
        assert np.abs(mean - golden_mean).max() <= 2e-3
    else:
        assert min(cosine(a, b) for a, b in zip(rows, golden)) >= 0.99
        assert cosine(mean, golden_mean) >= 0.99


@requires_c_function("eb_session_embed_chunked")
def test_bad_arguments(testdata):
    session = edgebert.Model(ebm_path("task_st_mean_norm", "int8")).session(max_sequence_length=MAX_LEN)
    text = "the movie was good , not bad ! " * 20
    for window, stride, status in ((8, 8, edgebert.Status.INVALID_ARGUMENT), (0, 0, edgebert.Status.INVALID_ARGUMENT),
                                   (31, 2, edgebert.Status.SEQUENCE_TOO_LONG)):
        with pytest.raises(edgebert.Error) as e:
            session.embed_chunked(text, window, stride)
        assert e.value.status == status
    with pytest.raises(edgebert.Error) as e:
        session.embed_chunked(text, 8, 2, pooling="max")
    assert e.value.status == edgebert.Status.INVALID_ARGUMENT
    with pytest.raises(edgebert.Error) as e:
        session.embed_chunked(None, 8, 2)
    assert e.value.status == edgebert.Status.INVALID_ARGUMENT
    with pytest.raises(edgebert.Error) as e:
        session.embed_chunked(b"\xff the movie", 8, 2)
    assert e.value.status == edgebert.Status.INVALID_ARGUMENT
    qa = edgebert.Model(ebm_path("task_bert_qa", "int8")).session(max_sequence_length=MAX_LEN)
    with pytest.raises(edgebert.Error) as e:
        qa.embed_chunked(text, 8, 2)
    assert e.value.status == edgebert.Status.UNSUPPORTED
