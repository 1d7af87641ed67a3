# SPDX-License-Identifier: Apache-2.0
"""Task outputs one call away: for every converted test model with a task head (sentence
embedding, question answering, token classification, sequence classification), run() returns
exactly that task's outputs with the documented shapes, label names are available, and
best_span() equals a brute-force search over the returned start/end logits and token offsets."""

import glob
import os

import numpy as np
import pytest

import edgebert
from conftest import data_dir

T, O = edgebert.Task, edgebert.Output
TASK_OUTPUTS = {T.ENCODER: set(), T.SEQUENCE_CLASSIFICATION: {"logits"},
                T.QUESTION_ANSWERING: {"start_logits", "end_logits"},
                T.TOKEN_CLASSIFICATION: {"token_logits"}, T.SENTENCE_EMBEDDING: {"sentence_embedding"},
                T.MASKED_LM: {"sparse_embedding"}, T.TOKEN_VECTORS: {"token_vectors"},
                T.BGE_M3: {"sentence_embedding", "sparse_embedding", "token_vectors"}}
QUESTION = "What was fresh?"
CONTEXT = "She said the food at the restaurant was fresh and delicious, and the staff was great."


def task_models(task):
    found = []
    for path in sorted(glob.glob(os.path.join(data_dir(), "ebm", "*.ebm"))):
        with edgebert.Model(path) as m:
            if m.info.task == task:
                found.append(path)
    assert found, "no %s model in %s/ebm" % (task.name, data_dir())
    return found


def brute_force_span(start, end, segment, max_tokens):
    best = None
    for i in range(len(start)):
        for j in range(i, min(len(start), i + max_tokens)):
            if segment[i] == 1 and segment[j] == 1 and all(segment[i:j + 1] == 1):
                score = float(start[i]) + float(end[j])
                if best is None or score > best[0]:
                    best = (score, i, j)
    return best


@pytest.mark.parametrize("task", list(T))
def test_outputs_of_each_task(testdata, task):
    for path in task_models(task):
        with edgebert.Model(path) as m, m.session() as s:
            info = m.info
            if info.has_vocab:
                out = s.run(text="the food was fresh", text_pair="and the staff was great")
            else:
                out = s.run(ids=[101, 200, 300, 102])
            n = out["last_hidden_state"].shape[0]
            expected = {"last_hidden_state"} | TASK_OUTPUTS[task] | ({"pooler_output"} if info.has_pooler else set())
            assert set(out) == expected, path
            if "logits" in out:
                assert out["logits"].shape == (info.num_labels,)
            if "start_logits" in out:
                assert out["start_logits"].shape == out["end_logits"].shape == (n,)
            if "token_logits" in out:
                assert out["token_logits"].shape == (n, info.num_labels)
            if "token_vectors" in out:  # ColBERT: num_labels is the vector width; bge-m3: no CLS row
                rows = n - 1 if task == T.BGE_M3 else n
                assert out["token_vectors"].shape == (rows, info.num_labels)
            if "sentence_embedding" in out:
                assert out["sentence_embedding"].shape == (info.hidden_size,)
            for v in out.values():
                assert np.all(np.isfinite(v))
            if info.num_labels:
                assert len(m.labels) == info.num_labels


@pytest.mark.parametrize("max_tokens", [30, 3, 1])
def test_best_span_is_the_brute_force_best(testdata, max_tokens):
    for path in task_models(T.QUESTION_ANSWERING):
        with edgebert.Model(path) as m, m.session() as s:
            out = s.run(text=QUESTION, text_pair=CONTEXT)
            begin, end, segment = s.token_offsets()
            span = s.best_span(max_tokens)
            score, i, j = brute_force_span(out["start_logits"], out["end_logits"], segment, max_tokens)
            assert (span.start_token, span.end_token) == (i, j)
            assert span.score == pytest.approx(score, abs=1e-5)
            assert (span.begin_byte, span.end_byte) == (begin[i], end[j])
            assert span.text == CONTEXT.encode()[begin[i]:end[j]].decode()
            assert span.text and span.text in CONTEXT


def test_sparse_top_k_matches_the_sparse_embedding():
    """Masked-LM models: sparse_top_k is the sparse_embedding output ranked (largest first)."""
    for path in task_models(T.MASKED_LM):
        with edgebert.Model(path) as m, m.session() as s:
            out = s.run(text="the hotel was clean , but the staff was rude")
            v = out["sparse_embedding"]
            top = s.sparse_top_k(top_k=8)
            want = sorted(range(len(v)), key=lambda i: (-v[i], i))[:8]
            assert [i for i, _ in top] == want
            assert all(w == float(v[i]) for i, w in top)
    with edgebert.Model(task_models(T.QUESTION_ANSWERING)[0]) as m, m.session() as s:
        s.run(text="the movie was good")
        with pytest.raises(edgebert.Error) as e:
            s.sparse_top_k(5)
        assert e.value.status == edgebert.Status.UNSUPPORTED


def test_fill_mask_matches_the_float64_reference():
    """Masked-LM models: fill_mask(token, k) is the reference's softmax of the masked-LM logits
    at that token (fill_mask_probs.f32, tasks_numpy.py: HF FillMaskPipeline), top k first."""
    for name in ("task_bert_mlm", "task_distil_mlm"):
        case = os.path.join(data_dir(), name, "cases", "len7")
        ids = np.loadtxt(os.path.join(case, "ids.txt"), dtype=np.int32, ndmin=1)
        with edgebert.Model(os.path.join(data_dir(), "ebm", name + ".fp32.ebm")) as m, m.session() as s:
            vocab = m.info.vocab_size
            want = np.fromfile(os.path.join(case, "fill_mask_probs.f32"), "<f4").reshape(len(ids), vocab)
            s.run(ids=ids)
            for t in range(len(ids)):
                got = s.fill_mask(t, k=5)
                order = sorted(range(vocab), key=lambda i: (-want[t][i], i))[:5]
                assert [i for i, _ in got] == order, (name, t)
                assert all(abs(p - want[t][i]) <= 2e-3 for i, p in got), (name, t)
            everything = s.fill_mask(0, k=vocab + 5)
            assert len(everything) == vocab
            assert sum(p for _, p in everything) == pytest.approx(1.0, abs=1e-4)
            for bad in (dict(token=len(ids)), dict(token=0, k=0)):
                with pytest.raises(edgebert.Error) as e:
                    s.fill_mask(**bad)
                assert e.value.status == edgebert.Status.INVALID_ARGUMENT
    with edgebert.Model(task_models(T.QUESTION_ANSWERING)[0]) as m, m.session() as s:
        s.run(text="the movie was good")
        with pytest.raises(edgebert.Error) as e:
            s.fill_mask(0)
        assert e.value.status == edgebert.Status.UNSUPPORTED
