# SPDX-License-Identifier: Apache-2.0
"""Task outputs against the numpy float64 goldens of the task models (tests/reference,
DIR/tasks_manifest.txt): every output file of every case (fp32 models within 1e-3; int8 models:
cosine >= 0.99 for last_hidden_state rows and sentence embeddings), label names against the
checkpoint's id2label, token offsets against offsets.txt, QA spans and answers against
best_span.txt / answer.txt. Skipped while the test data has no task models."""

import json
import os

import numpy as np
import pytest

import edgebert
from conftest import cosine, data_dir, ebm_path

def manifest():
    path = os.path.join(data_dir(), "tasks_manifest.txt")
    if not os.path.exists(path):
        return []
    rows = [line.split() for line in open(path) if line.strip()]
    return [(model, task, case) for model, task, case, _seq in rows]


CASES = manifest()
MODELS = sorted({m for m, _t, _c in CASES})

def test_the_test_data_has_task_models(testdata):
    assert CASES and MODELS, "no tasks_manifest.txt in " + data_dir()


def case_dir(model, case):
    return os.path.join(data_dir(), model, "cases", case)


def read_text(model, case, name):
    with open(os.path.join(case_dir(model, case), name), "rb") as f:
        return f.read().decode("utf-8")


def run_case(session, model, case):
    d = case_dir(model, case)
    if case == "text":
        return session.run(text=read_text(model, case, "text.txt"))
    if case == "text_pair":
        return session.run(text=read_text(model, case, "text_a.txt"), text_pair=read_text(model, case, "text_b.txt"))
    ids = np.loadtxt(os.path.join(d, "ids.txt"), dtype=np.int32, ndmin=1)
    mask = np.loadtxt(os.path.join(d, "mask.txt"), dtype=np.int32, ndmin=1)
    types = np.loadtxt(os.path.join(d, "types.txt"), dtype=np.int32, ndmin=1)
    return session.run(ids=ids, types=types, mask=mask)


@pytest.mark.parametrize("kind", ["fp32", "int8"])
@pytest.mark.parametrize("model_name", MODELS or ["none"])
def test_task_outputs_match_goldens(testdata, model_name, kind):
    with edgebert.Model(ebm_path(model_name, kind)) as model, model.session() as s:
        for m, _task, case in CASES:
            if m != model_name:
                continue
            out = run_case(s, model_name, case)
            d = case_dir(model_name, case)
            mask = np.loadtxt(os.path.join(d, "mask.txt"), dtype=np.int32, ndmin=1) \
                if os.path.exists(os.path.join(d, "mask.txt")) else np.ones(len(s.input_ids), np.int32)
            real = mask.astype(bool)
            # (fill_mask_probs is no run output: test_tasks.py compares it with session.fill_mask)
            goldens = {f[:-4]: np.fromfile(os.path.join(d, f), dtype="<f4") for f in os.listdir(d)
                       if f.endswith(".f32") and f != "fill_mask_probs.f32"}
            assert set(goldens) <= set(out), (case, sorted(goldens), sorted(out))
            for name, want in goldens.items():
                got = out[name]
                assert got.size == want.size, (case, name)
                want = want.reshape(got.shape)
                if kind == "fp32":
                    keep = real if got.ndim == 2 or name in ("start_logits", "end_logits") else slice(None)
                    assert np.max(np.abs(got[keep] - want[keep])) <= 1e-3, (case, name)
                elif name == "last_hidden_state":
                    assert min(cosine(a, b) for a, b in zip(got[real], want[real])) >= 0.99, (case, name)
                elif name == "sentence_embedding":
                    assert cosine(got, want) >= 0.99, (case, name)


@pytest.mark.parametrize("model_name", MODELS or ["none"])
def test_labels_are_the_checkpoints_id2label(testdata, model_name):
    paths = [os.path.join(data_dir(), model_name, sub, "config.json") for sub in ("", "0_Transformer")]
    cfg = json.load(open(next(p for p in paths if os.path.exists(p))))  # sentence-transformers: a subfolder
    with edgebert.Model(ebm_path(model_name, "int8")) as model:
        labels = model.labels
        assert len(labels) == model.info.num_labels
        id2label = cfg.get("id2label")
        if labels and id2label and not all(v.startswith("LABEL_") for v in id2label.values()):
            assert labels == [id2label[str(i)] for i in range(len(labels))]


@pytest.mark.parametrize("kind", ["fp32", "int8"])
def test_offsets_spans_and_answers(testdata, kind):
    for model_name, task, case in CASES:
        if case not in ("text", "text_pair"):
            continue
        d = case_dir(model_name, case)
        with edgebert.Model(ebm_path(model_name, kind)) as model, model.session() as s:
            run_case(s, model_name, case)
            begin, end, segment = s.token_offsets()
            want = np.loadtxt(os.path.join(d, "offsets.txt"), dtype=np.int32, ndmin=2)
            np.testing.assert_array_equal(np.stack([begin, end, segment], axis=1), want)
            if task != "question_answering" or case != "text_pair":
                continue
            start, stop, b0, b1, score, margin, max_tokens = open(os.path.join(d, "best_span.txt")).read().split()
            span = s.best_span(int(max_tokens))
            if kind == "fp32" or float(margin) > 1.0:
                assert (span.start_token, span.end_token, span.begin_byte, span.end_byte) == \
                    (int(start), int(stop), int(b0), int(b1))
                assert span.text == read_text(model_name, case, "answer.txt")
            if kind == "fp32":
                assert span.score == pytest.approx(float(score), abs=1e-3)


def golden(model, case, name):
    return np.fromfile(os.path.join(case_dir(model, case), name), dtype="<f4")


def test_one_call_task_helpers_match_goldens(testdata):
    text = read_text("task_bert_token", "text", "text.txt")
    with edgebert.Model(ebm_path("task_bert_token", "fp32")) as m, m.session() as s:
        got = s.token_labels(text)
        offsets = np.loadtxt(os.path.join(case_dir("task_bert_token", "text"), "offsets.txt"), dtype=np.int32, ndmin=2)
        logits = golden("task_bert_token", "text", "token_logits.f32").reshape(len(offsets), -1)
        names = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]  # the checkpoint's id2label
        want = [(b, e, text.encode()[b:e].decode(), names[int(np.argmax(row))])
                for (b, e, seg), row in zip(offsets, logits) if seg >= 0]
        assert [tuple(t) for t in got] == want
    with edgebert.Model(ebm_path("task_bert_seqcls_tanh", "fp32")) as m, m.session() as s:
        text = read_text("task_bert_seqcls_tanh", "text", "text.txt")
        want = ["negative", "neutral", "positive"][int(np.argmax(golden("task_bert_seqcls_tanh", "text", "logits.f32")))]
        assert s.classify(text) == want
        with pytest.raises(edgebert.Error) as e:
            s.answer("q", "c")
        assert e.value.status == edgebert.Status.UNSUPPORTED
    with edgebert.Model(ebm_path("task_bert_qa", "fp32")) as m, m.session() as s:
        q, c = read_text("task_bert_qa", "text_pair", "text_a.txt"), read_text("task_bert_qa", "text_pair", "text_b.txt")
        max_tokens = int(open(os.path.join(case_dir("task_bert_qa", "text_pair"), "best_span.txt")).read().split()[6])
        assert s.answer(q, c, max_tokens).text == read_text("task_bert_qa", "text_pair", "answer.txt")
        with pytest.raises(edgebert.Error) as e:
            s.embed("x")
        assert e.value.status == edgebert.Status.UNSUPPORTED
    with edgebert.Model(ebm_path("task_st_mean_norm", "fp32")) as m, m.session() as s:
        emb = s.embed(read_text("task_st_mean_norm", "text", "text.txt"))
        assert np.max(np.abs(emb - golden("task_st_mean_norm", "text", "sentence_embedding.f32"))) <= 1e-3
        assert abs(np.linalg.norm(emb) - 1) <= 1e-4
