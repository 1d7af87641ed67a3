# SPDX-License-Identifier: Apache-2.0
"""ColBERT queries and documents as PyLate encodes them: Session.set_colbert_input
(eb_session_set_colbert_input) and Session.token_vectors (eb_session_get_token_vectors) on the
PyLate test model (tests/reference/colbert_numpy.py: query marker [unused0] = 1, document marker
[unused1] = 2, query_length 12 with [MASK] expansion attended by no token, document_length 16,
the ASCII punctuation as skiplist). A query's ids and its rows (all of them, bitwise the
token_vectors output's, equal to a run of its ids with the expansion masked); a document's ids and
its rows without the skiplist's; packed queries and documents (Session.run_texts) equal to single
runs; PyLate's truncation; and the errors."""

import string

import numpy as np
import pytest

import edgebert
from conftest import ebm_path, requires_c_function

CLS, SEP, MASK = 101, 102, 103
QUERY_MARKER, DOCUMENT_MARKER = 1, 2  # [unused0], [unused1]
QUERY_LENGTH, DOCUMENT_LENGTH = 12, 16
QUERY = "the movie was good"
DOCUMENT = "the movie , was good !"
DOCUMENTS = [DOCUMENT, "a long film ( and boring ) ?", "the staff was rude ~ and slow"]  # "~": [UNK]
QUERIES = [QUERY, "is it a fun story ?"]
LONG = ("the movie was good and the story was great but the ending was bad so i think it is fine "
        "and funny")  # 22 words, one token each


@pytest.fixture
def requires_colbert_inputs():
    requires_c_function("eb_session_set_colbert_input")
    requires_c_function("eb_session_get_token_vectors")


def _plain_ids(s, text):
    s.set_colbert_input("plain")
    s.run(text=text)
    return [int(i) for i in s.input_ids]


def _skip_ids(s):
    """The ids of PyLate's default skiplist (string.punctuation), each character as the model's
    tokenizer gives it alone (one outside the vocabulary: [UNK])."""
    ids = set()
    for p in string.punctuation:
        got = _plain_ids(s, p)
        assert len(got) == 3 and got[0] == CLS and got[2] == SEP, (p, got)
        ids.add(got[1])
    return ids


@pytest.mark.parametrize("kind", ["int8", "fp32"])
def test_query_is_marked_and_expanded(testdata, requires_colbert_inputs, kind):
    with edgebert.Model(ebm_path("colbert", kind)) as m, m.session() as s:
        dim = m.info.num_labels
        assert dim == 24
        plain = _plain_ids(s, QUERY)
        words = plain[1:-1]
        assert plain[0] == CLS and plain[-1] == SEP and len(words) == 4
        s.set_colbert_input("query")
        out = s.run(text=QUERY)
        ids = [int(i) for i in s.input_ids]
        expansion = QUERY_LENGTH - len(words) - 3
        assert ids == [CLS, QUERY_MARKER] + words + [SEP] + [MASK] * expansion
        got = s.token_vectors(0)
        assert got.dtype == np.float32 and got.shape == (QUERY_LENGTH, dim)
        assert out["token_vectors"].shape == (QUERY_LENGTH, dim)
        assert got.tobytes() == out["token_vectors"].tobytes()
        assert s.token_vectors().tobytes() == got.tobytes()
        s.set_colbert_input("plain")  # keeps the last run's outputs
        assert s.token_vectors(0).tobytes() == got.tobytes()
        # the expansion is attended by no token (attend_to_expansion_tokens false): a run of the
        # same ids with mask 0 there
        mask = [1] * (QUERY_LENGTH - expansion) + [0] * expansion
        by_ids = s.run(ids=ids, mask=mask)["token_vectors"]
        if kind == "int8":
            assert by_ids.tobytes() == got.tobytes()
        else:
            np.testing.assert_allclose(by_ids, got, rtol=1e-5, atol=1e-5)
        s.run(text=QUERY)
        assert [int(i) for i in s.input_ids] == plain
        assert s.token_vectors(0).shape == (len(plain), dim)


@pytest.mark.parametrize("kind", ["int8", "fp32"])
def test_document_leaves_out_the_skiplist(testdata, requires_colbert_inputs, kind):
    with edgebert.Model(ebm_path("colbert", kind)) as m, m.session() as s:
        dim = m.info.num_labels
        skip = _skip_ids(s)
        assert not skip & {CLS, SEP, DOCUMENT_MARKER}
        plain = _plain_ids(s, DOCUMENT)
        words = plain[1:-1]
        assert len(words) == 6
        s.set_colbert_input("document")
        out = s.run(text=DOCUMENT)
        ids = [int(i) for i in s.input_ids]
        assert ids == [CLS, DOCUMENT_MARKER] + words + [SEP]
        keep = np.array([i not in skip for i in ids])
        assert keep.sum() == len(ids) - 2  # "," and "!"
        got = s.token_vectors(0)
        assert got.dtype == np.float32 and got.shape == (len(ids) - 2, dim)
        assert got.tobytes() == np.ascontiguousarray(out["token_vectors"][keep]).tobytes()
        assert out["token_vectors"].shape == (len(ids), dim)  # the output keeps every row


@pytest.mark.parametrize("kind", ["int8", "fp32"])
def test_packed_runs_equal_single_runs(testdata, requires_colbert_inputs, kind):
    with edgebert.Model(ebm_path("colbert", kind)) as m, m.session() as s:
        skip = _skip_ids(s)
        for mode, texts in (("document", DOCUMENTS), ("query", QUERIES)):
            s.set_colbert_input(mode)
            single = []
            for t in texts:
                s.run(text=t)
                ids = [int(i) for i in s.input_ids]
                single.append(s.token_vectors(0))
                rows = len(ids) - sum(i in skip for i in ids) if mode == "document" else QUERY_LENGTH
                assert single[-1].shape[0] == rows, (mode, t, ids)
            assert s.run_texts(texts) == [edgebert.Status.OK] * len(texts)
            for k, want in enumerate(single):
                got = s.token_vectors(k)
                assert got.shape == want.shape, (mode, k)
                if kind == "int8":
                    assert got.tobytes() == want.tobytes(), (mode, k)
                else:
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg="%s %d" % (mode, k))
            with pytest.raises(edgebert.Error) as e:
                s.token_vectors(len(texts))
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT
            if mode == "document":
                assert len(single[2]) == len(DOCUMENTS[2].split()) + 3 - 1  # "~" is [UNK], in the skiplist


def test_truncation_as_pylate(testdata, requires_colbert_inputs):
    with edgebert.Model(ebm_path("colbert", "int8")) as m, m.session() as s:
        words = _plain_ids(s, LONG)[1:-1]
        assert len(words) == len(LONG.split())
        for mode, marker, limit in (("query", QUERY_MARKER, QUERY_LENGTH), ("document", DOCUMENT_MARKER,
                                                                             DOCUMENT_LENGTH)):
            s.set_colbert_input(mode)
            s.set_truncation("none")
            with pytest.raises(edgebert.Error) as e:
                s.run(text=LONG)
            assert e.value.status == edgebert.Status.SEQUENCE_TOO_LONG, mode
            s.set_truncation("longest_first")
            s.run(text=LONG)
            assert [int(i) for i in s.input_ids] == [CLS, marker] + words[:limit - 3] + [SEP], mode
            assert s.token_vectors(0).shape[0] == limit, mode  # no punctuation, no expansion


def test_errors(testdata, requires_colbert_inputs):
    with edgebert.Model(ebm_path("task_st_mean_norm", "int8")) as m, m.session() as s:  # no PyLate conventions
        for mode in ("query", "document"):
            with pytest.raises(edgebert.Error) as e:
                s.set_colbert_input(mode)
            assert e.value.status == edgebert.Status.UNSUPPORTED, mode
        s.set_colbert_input("plain")
        s.run(text=QUERY)
        with pytest.raises(edgebert.Error) as e:
            s.token_vectors(0)
        assert e.value.status == edgebert.Status.UNSUPPORTED  # no token vectors
    with edgebert.Model(ebm_path("colbert", "int8")) as m:
        with m.session(max_sequence_length=QUERY_LENGTH - 1) as short:
            with pytest.raises(edgebert.Error) as e:
                short.set_colbert_input("query")  # query_length beyond the session maximum
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT
            short.set_colbert_input("document")
        s = m.session()
        with pytest.raises(edgebert.Error) as e:
            s.token_vectors(0)
        assert e.value.status == edgebert.Status.BAD_STATE  # no run yet
        for bad in ("Query", "", "pairs", None, 1, edgebert.Status.OK):
            with pytest.raises(edgebert.Error) as e:
                s.set_colbert_input(bad)
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT, bad
        for mode in ("query", "document"):
            s.set_colbert_input(mode)
            with pytest.raises(edgebert.Error) as e:
                s.run(text=QUERY, text_pair=DOCUMENT)
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT, mode
        s.set_colbert_input("query")
        s.run(text=QUERY)
        for index in (1, 2**40):
            with pytest.raises(edgebert.Error) as e:
                s.token_vectors(index)
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT, index
        for index in (-1, "0", 0.0, True, 2**64):
            with pytest.raises(edgebert.Error) as e:
                s.token_vectors(index)
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT, index
        for texts in ([], None, "abc", ["a\0b"]):
            with pytest.raises(edgebert.Error) as e:
                s.run_texts(texts)
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT, texts
        assert s.token_vectors(0).shape == (QUERY_LENGTH, m.info.num_labels)  # still the last run's
        s.close()
        for call in (lambda: s.set_colbert_input("plain"), lambda: s.set_colbert_input("query"),
                     lambda: s.token_vectors(0), lambda: s.run_texts([QUERY])):
            with pytest.raises(edgebert.Error) as e:
                call()
            assert e.value.status == edgebert.Status.BAD_STATE


POOL_CASES = ("centres_17_f2", "random_42_f4", "duplicates_f2", "text_doc_long_f2")


def test_pool_token_vectors_equals_pylate(testdata, requires_colbert_inputs):
    """edgebert.pool_token_vectors (eb_pool_token_vectors) against PyLate's hierarchical pooling
    run with scipy (colbert_numpy.pylate_pool: the same clusters in the same order), and its
    refusals."""
    import os
    requires_c_function("eb_pool_token_vectors")
    cases = {line.split()[0]: int(line.split()[3]) for line in open(os.path.join(testdata, "colbert_cases", "pool_cases.txt"))}
    for name in POOL_CASES:
        base = os.path.join(testdata, "colbert_cases", name)
        rows = np.fromfile(base + ".pool_in.f32", np.float32).reshape(-1, 24)
        want = np.fromfile(base + ".pool_out.f32", np.float32).reshape(-1, 24)
        got = edgebert.pool_token_vectors(rows, cases[name])
        assert got.shape == want.shape and got.dtype == np.float32, name
        assert np.abs(got - want).max() < 1e-6, name
        assert np.array_equal(got[-1], rows[0])  # the protected [CLS] row comes last
    rows = np.fromfile(os.path.join(testdata, "colbert_cases", "random_17_f2.pool_in.f32"), np.float32).reshape(-1, 24)
    assert np.array_equal(edgebert.pool_token_vectors(rows, 1), rows)
    assert edgebert.pool_token_vectors(rows, 2, protected_tokens=0).shape == (8, 24)
    bad = rows.copy()
    bad[3, 4] = np.nan
    for args in ((bad, 2), (rows, 0), (np.zeros((0, 24), np.float32), 2), (rows[0], 2)):
        with pytest.raises(edgebert.Error) as e:
            edgebert.pool_token_vectors(*args)
        assert e.value.status == edgebert.Status.INVALID_ARGUMENT

