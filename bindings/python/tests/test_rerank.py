# SPDX-License-Identifier: Apache-2.0
"""Session.rerank (eb_session_rerank_top_k): the ranking of the reference passages matches the
float64 cross-encoder goldens (scores within 2e-3 in fp32, sorted best first, ties by index),
equals the scores of single text-pair runs through the model's score function, top_k keeps the
best k, a too-long passage fails alone (an Error naming it, or with statuses=True a status and no
place in the ranking), and other models and bad arguments raise edgebert.Error."""

import math
import os

import pytest

import edgebert
from conftest import data_dir, ebm_path, requires_c_function

MODELS = {"task_bert_rerank": True, "task_bert_rerank_logit": False, "task_distil_rerank": True}  # sigmoid?


def golden(name):
    d = os.path.join(data_dir(), name, "rerank")
    query = open(os.path.join(d, "query.txt"), encoding="utf-8").read()
    passages = open(os.path.join(d, "passages.txt"), encoding="utf-8").read().splitlines()
    scores = [float(line.split()[1]) for line in open(os.path.join(d, "scores.txt"))]
    return query, passages, scores


@requires_c_function("eb_session_rerank_top_k")
@pytest.mark.parametrize("kind", ["fp32", "int8"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_rerank_matches_reference(testdata, name, kind):
    query, passages, want = golden(name)
    with edgebert.Model(ebm_path(name, kind)) as model:
        s = model.session(max_sequence_length=48, max_batch_tokens=96)
        ranking = s.rerank(query, passages)
        assert sorted(i for i, _ in ranking) == list(range(len(passages)))
        assert all(a[1] > b[1] or (a[1] == b[1] and a[0] < b[0]) for a, b in zip(ranking, ranking[1:]))
        got = dict(ranking)
        for i, p in enumerate(passages):  # each score: a single pair run through the score function
            logit = float(s.run(text=query, text_pair=p)["logits"][0])
            single = 1 / (1 + math.exp(-logit)) if MODELS[name] else logit
            assert abs(got[i] - single) <= 1e-5 * max(1.0, abs(single))
            if kind == "fp32":
                assert abs(got[i] - want[i]) <= 2e-3
        if kind == "fp32":
            best = max(range(len(want)), key=lambda i: (want[i], -i))
            assert ranking[0][0] == best
        assert s.rerank(query, passages, top_k=3) == ranking[:3]
        assert s.rerank(query, passages, top_k=0) == []
        assert s.rerank(query, []) == []


@requires_c_function("eb_session_rerank_top_k")
def test_rerank_failures(testdata):
    query, passages, _ = golden("task_bert_rerank")
    bad = passages[:3] + ["good " * 60] + passages[3:6]
    with edgebert.Model(ebm_path("task_bert_rerank", "int8")) as model:
        s = model.session(max_sequence_length=48)
        with pytest.raises(edgebert.Error) as e:
            s.rerank(query, bad)
        assert e.value.status == edgebert.Status.SEQUENCE_TOO_LONG and "passages[3]" in str(e.value)
        ranking, statuses = s.rerank(query, bad, statuses=True)
        assert statuses[3] == edgebert.Status.SEQUENCE_TOO_LONG
        assert [st for i, st in enumerate(statuses) if i != 3] == [edgebert.Status.OK] * 6
        assert sorted(i for i, _ in ranking) == [0, 1, 2, 4, 5, 6]
        for args in ((None, passages), (query, None), (query, [None]), (query, passages, -1)):
            with pytest.raises(edgebert.Error) as e:
                s.rerank(*args)
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT
    with edgebert.Model(ebm_path("task_bert_seqcls_tanh", "fp32")) as model:
        with pytest.raises(edgebert.Error) as e:
            model.session().rerank("q", ["p"])
        assert e.value.status == edgebert.Status.UNSUPPORTED and "cross-encoder" in str(e.value)
