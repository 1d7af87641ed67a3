# SPDX-License-Identifier: Apache-2.0
"""What a careless or hostile caller does to the binding: the memory of a from_bytes model freed
while a session still reads it (a garbage cycle's finalizers run in any order), Model.close racing
a setter on another thread, a per-call prompt racing a plain call on a shared session, integers
past the C parameter's range (ctypes keeps the low bits), text with NUL, paths as bytes, values
of the wrong type. Every one: the documented result or edgebert.Error, never a crash, a hang,
another call's output or a wrong answer."""

import gc
import pathlib
import threading

import numpy as np
import pytest

import edgebert
from conftest import ebm_path, requires_c_function

S = edgebert.Status
TEXT = "Which planet is known as the Red Planet?"


def raises(status, fn, *args, **kwargs):
    with pytest.raises(edgebert.Error) as e:
        fn(*args, **kwargs)
    assert e.value.status == status, str(e.value)
    return e.value


def test_a_session_keeps_the_memory_of_a_from_bytes_model(testdata):
    data = open(ebm_path("h192_3x64", "int8"), "rb").read()
    ids = [1, 23, 203, 2]
    m = edgebert.Model.from_bytes(data)
    s = m.session()
    want = s.run(ids=ids)["last_hidden_state"]
    # what a garbage cycle can do: the model's set of sessions cleared before its finalizer closes it
    m._sessions.discard(s)
    m.close()
    garbage = [bytearray(b"\xa5" * len(data)) for _ in range(4)]  # reuse what was freed, if it was
    assert np.array_equal(s.run(ids=ids)["last_hidden_state"], want)
    s.close()
    del garbage


def test_a_garbage_cycle_of_model_session_and_user(testdata):
    data = open(ebm_path("h192_3x64", "int8"), "rb").read()
    got = []

    class User:
        def __del__(self):
            try:
                got.append(self.session.run(ids=[1, 23, 2])["last_hidden_state"])
            except edgebert.Error as e:  # the session's own finalizer ran first
                got.append(e.status)

    for _ in range(3):
        m = edgebert.Model.from_bytes(data)
        u = User()
        u.session, u.model, m.user = m.session(), m, u  # one cycle
        del m, u
        gc.collect()
    assert len(got) == 3
    for g in got:
        assert (isinstance(g, np.ndarray) and np.isfinite(g).all()) or g == S.BAD_STATE


def test_model_close_and_a_setter_on_another_thread_do_not_deadlock(testdata):
    for _ in range(30):
        m = edgebert.Model(ebm_path("gemma3_st_dense", "int8"))
        s = m.session(max_sequence_length=32)
        stop = threading.Event()

        def set_dims():
            while not stop.is_set():
                try:
                    s.set_embedding_dims(16)
                except edgebert.Error:  # closed
                    return

        t = threading.Thread(target=set_dims)
        t.start()
        m.close()
        stop.set()
        t.join(timeout=20)
        assert not t.is_alive(), "Model.close and Session.set_embedding_dims deadlocked"


@requires_c_function("eb_session_set_prompt")
def test_a_per_call_prompt_is_that_call_only_across_threads(testdata):
    with edgebert.Model(ebm_path("gemma3_st_dense", "int8")) as m:
        s = m.session(max_sequence_length=96)
        plain, prompted = s.embed(TEXT), s.embed(TEXT, prompt="query")
        assert not np.array_equal(plain, prompted)
        wrong = []

        def loop(prompt, want):
            for _ in range(60):
                if not np.array_equal(s.embed(TEXT, prompt=prompt), want):
                    wrong.append(prompt)

        threads = [threading.Thread(target=loop, args=(None, plain)), threading.Thread(target=loop, args=("query", prompted))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert wrong == []


def test_integers_past_the_c_range_are_refused(testdata):
    with edgebert.Model(ebm_path("gemma3_st_dense", "int8")) as m:
        s = m.session(max_sequence_length=96)
        s.run(text=TEXT)
        raises(S.INVALID_ARGUMENT, s.set_embedding_dims, 2**32 + 16)
        raises(S.INVALID_ARGUMENT, s.set_embedding_dims, -2**31 - 1)
        raises(S.INVALID_ARGUMENT, s.truncated_tokens, 2**64)
        raises(S.INVALID_ARGUMENT, s.fill_mask, 2**64 + 1)
        raises(S.INVALID_ARGUMENT, s.fill_mask, 0, 2**64)
        raises(S.INVALID_ARGUMENT, s.sparse_top_k, index=2**64)
        raises(S.INVALID_ARGUMENT, s.sparse_top_k, top_k=2**70)
        raises(S.INVALID_ARGUMENT, s.sparse_top_k, threshold=None)
        assert s.embed(TEXT).shape == (64,)  # nothing was set


def test_text_and_paths(testdata, tmp_path):
    with edgebert.Model(ebm_path("gemma3_st_dense", "int8")) as m:
        s = m.session(max_sequence_length=96)
        plain = s.embed(TEXT)
        raises(S.INVALID_ARGUMENT, s.set_prompt, "query\0junk")
        raises(S.INVALID_ARGUMENT, s.embed, TEXT, prompt="query\0x")
        raises(S.INVALID_ARGUMENT, s.set_prompt, "\ud800")
        raises(S.INVALID_ARGUMENT, s.set_prompt, 7)
        assert np.array_equal(s.embed(TEXT), plain)  # no prompt was left set
    path = ebm_path("tiny_f16", "int8")
    for p in (path.encode(), pathlib.Path(path)):
        with edgebert.Model(p) as m:
            assert m.info.hidden_size > 0
    e = raises(S.IO, edgebert.Model, str(tmp_path / "nope.ebm").encode())
    assert "b'" not in str(e) and "nope.ebm" in str(e)
    raises(S.INVALID_ARGUMENT, edgebert.Model, 3.5)
    raises(S.INVALID_ARGUMENT, edgebert.Model.from_bytes, None)
    raises(S.INVALID_ARGUMENT, edgebert.Model.from_bytes, "not bytes")


def test_values_of_the_wrong_type_are_edgebert_errors(testdata):
    v = np.ones((3, 4), dtype=np.float32)
    raises(S.INVALID_ARGUMENT, edgebert.maxsim, "ab", v)
    raises(S.INVALID_ARGUMENT, edgebert.maxsim, v.astype(np.complex64), v)
    raises(S.INVALID_ARGUMENT, edgebert.pool_token_vectors, v, "x")
    raises(S.INVALID_ARGUMENT, edgebert.pool_token_vectors, v, 2.5)
    assert edgebert.pool_token_vectors(v, 1).shape == (3, 4)
    with edgebert.Model(ebm_path("h192_3x64", "int8")) as m:
        s = m.session()
        raises(S.INVALID_ARGUMENT, s.set_truncation, [])
        raises(S.INVALID_ARGUMENT, s.embed_chunked, "a b c", 4, 1, pooling=[])
        raises(S.INVALID_ARGUMENT, s.run, embeddings=np.ones((2, 192), dtype=np.complex64))
        raises(S.INVALID_ARGUMENT, s.run, embeddings="x")


def test_an_empty_context_has_no_span(testdata):
    with edgebert.Model(ebm_path("task_bert_qa", "fp32")) as m:
        s = m.session()
        for context in ("", "   "):
            e = raises(S.INVALID_ARGUMENT, s.answer, "who?", context)
            assert "no tokens" in str(e)
