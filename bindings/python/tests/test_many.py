# SPDX-License-Identifier: Apache-2.0
"""Session.embed_many / classify_many (packed runs, eb_session_run_texts / run_text_pairs): every
row equals a single run of that input (eb_session_run_text + get_output) within 1e-5, over texts
that need several packed runs, including an empty text, one of exactly the session maximum and one
too long (which fails alone: an Error naming its index, or with statuses=True a status and a zero
row); rows of the golden cases' texts match the numpy goldens; bad inputs and closed sessions
raise edgebert.Error."""

import os

import numpy as np
import pytest

import edgebert
from conftest import cosine, data_dir, ebm_path, requires_c_function

MAX_LEN, BATCH_TOKENS = 32, 64
# 2 ("") to 32 tokens (30 one-token words + [CLS] + [SEP]) and one of 42 (too long), in mixed order.
TEXTS = ["the movie was good , not bad !", "", "who", "the staff was rude and slow .", "the " * 30,
         "good " * 40, "a b"] + ["the hotel was clean , but the staff was rude %d" % i for i in range(6)]
PAIRS = [("yes", "no , it was not", "maybe so", "")[i % 4] for i in range(len(TEXTS))]
# inputs over the session maximum: the 42-token text; paired, also the 32-token one
TOO_LONG = {False: [5], True: [4, 5]}

MODELS = {"task_st_mean_norm": "sentence_embedding", "task_bert_seqcls_tanh": "logits",
          "task_distil_seqcls_relu": "logits", "task_bert_model_relu": "pooler_output"}


def sessions(model):
    return model.session(max_sequence_length=MAX_LEN, max_batch_tokens=BATCH_TOKENS), \
        model.session(max_sequence_length=MAX_LEN)


def single(session, key, text, pair=None):
    """(status, output) of a single run: eb_session_run_text / run_text_pair, then get_output."""
    try:
        out = session.run(text=text, text_pair=pair)
    except edgebert.Error as e:
        return e.status, None
    return edgebert.Status.OK, out[key]


def many(session, key, texts, pairs=None, **kw):
    f = session.classify_many if key == "logits" else session.embed_many
    return f(texts, pairs, **kw)


@pytest.mark.parametrize("kind", ["int8", "fp32"])
@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("paired", [False, True], ids=["texts", "pairs"])
def test_many_equals_single_runs(testdata, requires_packed, name, kind, paired):
    key = MODELS[name]
    pairs = PAIRS if paired else None
    with edgebert.Model(ebm_path(name, kind)) as model:
        packed, alone = sessions(model)
        got, statuses = many(packed, key, TEXTS, pairs, statuses=True)
        width = model.info.num_labels if key == "logits" else model.info.hidden_size
        assert got.shape == (len(TEXTS), width) and got.dtype == np.float32
        assert len(statuses) == len(TEXTS)
        tokens = 0
        for i, text in enumerate(TEXTS):
            status, want = single(alone, key, text, pairs[i] if pairs else None)
            assert statuses[i] == status, i
            if status != edgebert.Status.OK:
                assert status == edgebert.Status.SEQUENCE_TOO_LONG and i in TOO_LONG[paired], i
                assert not got[i].any()  # a failed input's row is 0
                continue
            tokens += len(alone.input_ids)
            np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-5, err_msg="input %d" % i)
        assert tokens > 2 * BATCH_TOKENS  # several packed runs, not one
        assert [i for i, st in enumerate(statuses) if st != edgebert.Status.OK] == TOO_LONG[paired]
        # by default the first too-long input is an Error naming it
        with pytest.raises(edgebert.Error) as e:
            many(packed, key, TEXTS, pairs)
        assert e.value.status == edgebert.Status.SEQUENCE_TOO_LONG
        assert ("texts[%d]" % TOO_LONG[paired][0]) in str(e.value)
        # without them, a plain array equal to the rows above
        keep = [i for i in range(len(TEXTS)) if i not in TOO_LONG[paired]]
        rest = many(packed, key, [TEXTS[i] for i in keep], [pairs[i] for i in keep] if pairs else None)
        np.testing.assert_array_equal(rest, got[keep])
        packed.close()
        alone.close()


def case_text(model, case, name):
    with open(os.path.join(data_dir(), model, "cases", case, name), "rb") as f:
        return f.read().decode("utf-8")


def golden(model, case, key):
    path = os.path.join(data_dir(), model, "cases", case, key + ".f32")
    return np.fromfile(path, dtype="<f4") if os.path.exists(path) else None


@pytest.mark.parametrize("kind", ["fp32", "int8"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_many_matches_the_numpy_goldens(testdata, requires_packed, name, kind):
    key = MODELS[name]
    with edgebert.Model(ebm_path(name, kind)) as model, model.session(max_batch_tokens=256) as s:
        checked = 0
        for case in ("text", "text_pair"):
            want = golden(name, case, key)
            if want is None:
                continue
            if case == "text":
                texts, pairs = [case_text(name, case, "text.txt")], None
            else:
                texts, pairs = [case_text(name, case, "text_a.txt")], [case_text(name, case, "text_b.txt")]
            # the golden input between two others, in one packed run
            got = many(s, key, ["who", texts[0], "a b"], None if pairs is None else ["c", pairs[0], "d"])
            assert got.shape[0] == 3
            row = got[1]
            if kind == "fp32":
                assert np.max(np.abs(row - want)) <= 1e-3, (case, key)
            else:
                assert cosine(row, want) >= 0.99, (case, key)
            checked += 1
        assert checked >= 1, "no golden %s for %s" % (key, name)


def test_bad_inputs_are_errors(testdata, requires_packed):
    with edgebert.Model(ebm_path("task_bert_seqcls_tanh", "int8")) as model:
        s = model.session(max_batch_tokens=256)
        labels = model.info.num_labels
        for bad in ([None], ["ok", 5], [b"bytes"], ["nul\0inside"], "a str", None, 3, {"a": 1}):
            with pytest.raises(edgebert.Error) as e:
                s.classify_many(bad)
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT, bad
        with pytest.raises(edgebert.Error) as e:
            s.classify_many(["a", "b"], ["c"])
        assert e.value.status == edgebert.Status.INVALID_ARGUMENT
        with pytest.raises(edgebert.Error) as e:
            s.classify_many(["a"], [None])
        assert e.value.status == edgebert.Status.INVALID_ARGUMENT and "text_pairs[0]" in str(e.value)
        empty = s.classify_many([])
        assert empty.shape == (0, labels) and empty.dtype == np.float32
        empty, statuses = s.classify_many((), statuses=True)
        assert empty.shape == (0, labels) and statuses == []
        assert s.embed_many([]).shape == (0, model.info.hidden_size)  # BERT classifiers have a pooler
        s.close()
        for call in (lambda: s.classify_many(["a"]), lambda: s.classify_many([]), lambda: s.embed_many(["a"])):
            with pytest.raises(edgebert.Error) as e:
                call()
            assert e.value.status == edgebert.Status.BAD_STATE
    with edgebert.Model(ebm_path("task_st_mean_norm", "int8")) as model, model.session() as s:
        with pytest.raises(edgebert.Error) as e:
            s.classify_many(["a"])
        assert e.value.status == edgebert.Status.UNSUPPORTED
    with edgebert.Model(ebm_path("task_distil_seqcls_relu", "int8")) as model, model.session() as s:
        assert not model.info.has_pooler
        with pytest.raises(edgebert.Error) as e:
            s.embed_many(["a"])
        assert e.value.status == edgebert.Status.UNSUPPORTED
    with edgebert.Model(ebm_path("base2_h12", "int8")) as model:
        with pytest.raises(edgebert.Error) as e:
            model.session(max_sequence_length=MAX_LEN, max_batch_tokens=MAX_LEN - 1)  # below the maximum
        assert e.value.status == edgebert.Status.INVALID_ARGUMENT
        with pytest.raises(edgebert.Error):
            model.session(max_batch_tokens=-1)


@pytest.fixture
def requires_packed():
    requires_c_function("eb_session_run_texts")


@pytest.mark.parametrize("kind", ["int8", "fp32"])
def test_classify_and_token_labels_come_from_the_library(testdata, requires_many, kind):
    """classify() is eb_session_classify_many of one input (its label index, the argmax of the
    logits), token_labels() eb_session_get_token_labels (each token's argmax): both equal the
    argmax of a single run's logits."""
    with edgebert.Model(ebm_path("task_bert_seqcls_tanh", kind)) as model, \
            model.session(max_sequence_length=MAX_LEN, max_batch_tokens=BATCH_TOKENS) as s:
        logits = s.classify_many(TEXTS, statuses=True)[0]
        for i, text in enumerate(TEXTS):
            if i in TOO_LONG[False]:
                with pytest.raises(edgebert.Error) as e:
                    s.classify(text)
                assert e.value.status == edgebert.Status.SEQUENCE_TOO_LONG
                assert "the session maximum is %d" % MAX_LEN in str(e.value)
                continue
            assert s.classify(text) == model.label(int(np.argmax(logits[i]))), i
            if i not in TOO_LONG[True]:
                want = model.label(int(np.argmax(s.run(text=text, text_pair=PAIRS[i])["logits"])))
                assert s.classify(text, PAIRS[i]) == want, i
        with pytest.raises(edgebert.Error) as e:
            s.classify_many(TEXTS, PAIRS)
        assert str(e.value).startswith("texts[4], pairs[4]: ")  # the first pair over the maximum
    with edgebert.Model(ebm_path("task_bert_token", kind)) as model, model.session() as s:
        text = "the staff was rude and slow ."
        got = s.token_labels(text)
        logits = s.run(text=text)["token_logits"]
        _, _, segment = s.token_offsets()
        want = [model.label(int(np.argmax(row))) for row, seg in zip(logits, segment) if seg >= 0]
        assert [t.label for t in got] == want and len(want) > 3
        with edgebert.Model(ebm_path("task_bert_seqcls_tanh", kind)) as other, other.session() as t:
            with pytest.raises(edgebert.Error) as e:
                t.token_labels(text)
            assert e.value.status == edgebert.Status.UNSUPPORTED


@pytest.fixture
def requires_many():
    requires_c_function("eb_session_classify_many")
