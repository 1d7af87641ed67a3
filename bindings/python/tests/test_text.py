# SPDX-License-Identifier: Apache-2.0
"""Text input: run(text=...) and run(text=..., text_pair=...) tokenize with the model's WordPiece
vocabulary and give the same outputs as run(ids=...) on those tokens; token offsets point at the
text each token came from (checked against vocab.txt)."""

import numpy as np
import pytest

import edgebert
from conftest import ebm_path, vocab

CLS, SEP = 101, 102
A = "The movie was really good, and the acting was great!"
B = "She said the food at the restaurant was fresh."


@pytest.fixture(scope="module")
def session(testdata):
    model = edgebert.Model(ebm_path("h128_4x32", "int8"))
    s = model.session(threads=2)
    yield s
    model.close()
    assert s.closed


def assert_same_outputs(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_text_equals_its_ids(session):
    out = session.run(text=A)
    ids = session.input_ids
    assert ids[0] == CLS and ids[-1] == SEP and len(ids) > 12
    assert out["last_hidden_state"].shape[0] == len(ids)
    assert_same_outputs(out, session.run(ids=ids))


def test_tokens_spell_the_text(session, testdata):
    words = vocab("h128_4x32")
    session.run(text="really good")
    pieces = [words[i] for i in session.input_ids]
    assert pieces[0] == "[CLS]" and pieces[-1] == "[SEP]"
    assert "".join(p[2:] if p.startswith("##") else " " + p for p in pieces[1:-1]).strip() == "really good"


def test_non_ascii_text_runs(session):
    out = session.run(text="café naïve — ok")
    assert np.all(np.isfinite(out["last_hidden_state"]))


def test_text_pair_equals_its_ids_and_types(session):
    session.run(text=A)
    ids_a = session.input_ids
    session.run(text=B)
    ids_b = session.input_ids
    out = session.run(text=A, text_pair=B)
    ids = session.input_ids
    np.testing.assert_array_equal(ids, np.concatenate([ids_a, ids_b[1:]]))
    types = np.concatenate([np.zeros(len(ids_a), np.int32), np.ones(len(ids_b) - 1, np.int32)])
    assert_same_outputs(out, session.run(ids=ids, types=types))


@pytest.mark.parametrize("text, pair", [(A, None), (A, B), ("Ünïcode café, twice: café", "naïve")])
def test_token_offsets_point_into_the_text(session, text, pair):
    words = vocab("h128_4x32")
    session.run(text=text, text_pair=pair)
    begin, end, segment = session.token_offsets()
    ids = session.input_ids
    assert len(begin) == len(end) == len(segment) == len(ids)
    sources = {0: text.encode(), 1: (pair or "").encode()}
    for i, tok in enumerate(ids):
        if tok in (CLS, SEP):
            assert segment[i] == -1 and begin[i] == end[i] == 0
            continue
        assert segment[i] in ((0, 1) if pair else (0,))
        src = sources[int(segment[i])]
        assert 0 <= begin[i] < end[i] <= len(src)
        piece = words[tok]
        written = src[begin[i]:end[i]].decode().lower()
        if piece != "[UNK]" and written.isascii():  # [UNK] spans a whole word; accents are stripped
            assert written == (piece[2:] if piece.startswith("##") else piece)
    assert list(segment).count(-1) == (3 if pair else 2)


def test_token_offsets_after_ids_is_bad_state(session):
    session.run(ids=[CLS, 200, SEP])
    with pytest.raises(edgebert.Error) as e:
        session.token_offsets()
    assert e.value.status == edgebert.Status.BAD_STATE


def test_text_longer_than_the_session_is_an_error(testdata):
    with edgebert.Model(ebm_path("tiny_f16", "int8")) as model, model.session(max_sequence_length=8) as s:
        with pytest.raises(edgebert.Error) as e:
            s.run(text=A)
        assert e.value.status == edgebert.Status.SEQUENCE_TOO_LONG
        assert str(e.value)
        s.run(text="good")  # still usable afterwards
        assert len(s.input_ids) == 3
