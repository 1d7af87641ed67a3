# SPDX-License-Identifier: Apache-2.0
"""Extractive QA on a context of any length (eb_session_answer), against the documented
behaviour: a (question, context) that fits is one run whose span equals best_span() after
run(text=question, text_pair=context); a longer context runs over windows of its tokens that
overlap by doc_stride tokens (< 0: min(128, window / 2)), as HuggingFace's question-answering
pipeline does, so the window count follows from the token counts; the span is a byte range of the
context; a question that leaves no room for context is SEQUENCE_TOO_LONG."""

import math

import pytest

import edgebert
from conftest import ebm_path, requires_c_function

pytestmark = requires_c_function("eb_session_answer")

QUESTION = "What was fresh?"
SENTENCE = "She said the food at the restaurant was fresh and delicious, and the staff was great. "
MODELS = [("task_bert_qa", "int8"), ("task_bert_qa", "fp32"), ("task_distil_qa", "int8")]


def token_count(model, text):
    """Tokens of `text` alone (no specials), from a session long enough for it."""
    with model.session() as s:
        s.run(text=text)
        return len(s.input_ids) - 2


def expected_windows(n_question, n_context, max_len, doc_stride):
    window = max_len - n_question - 3  # [CLS] question [SEP] window [SEP]
    stride = min(128, window // 2) if doc_stride < 0 else doc_stride
    if n_context <= window:
        return 1
    return 1 + math.ceil((n_context - window) / (window - stride))


@pytest.mark.parametrize("name,kind", MODELS)
def test_a_context_that_fits_is_one_pair_run(testdata, name, kind):
    with edgebert.Model(ebm_path(name, kind)) as m, m.session() as s:
        span = s.answer(QUESTION, SENTENCE, max_answer_tokens=15)
        s.run(text=QUESTION, text_pair=SENTENCE)
        want = s.best_span(15)
    assert span.windows == 1
    assert span[:6] == want[:6]
    assert span.text == SENTENCE.encode()[span.begin_byte:span.end_byte].decode()


@pytest.mark.parametrize("name,kind", MODELS)
@pytest.mark.parametrize("doc_stride", [-1, 4, 8])
def test_a_long_context_runs_overlapping_windows(testdata, name, kind, doc_stride):
    context = SENTENCE * 6
    max_len = 48
    with edgebert.Model(ebm_path(name, kind)) as m:
        nq, nc = token_count(m, QUESTION), token_count(m, context)
        with m.session(max_sequence_length=max_len) as s:
            with pytest.raises(edgebert.Error) as e:
                s.run(text=QUESTION, text_pair=context)
            assert e.value.status == edgebert.Status.SEQUENCE_TOO_LONG
            span = s.answer(QUESTION, context, max_answer_tokens=10, doc_stride=doc_stride)
            assert span.windows == expected_windows(nq, nc, max_len, doc_stride) > 1
            data = context.encode()
            assert 0 <= span.begin_byte < span.end_byte <= len(data)
            assert span.text == data[span.begin_byte:span.end_byte].decode()
            assert span.end_token - span.start_token < 10
            # afterwards the outputs and offsets are those of the last window's run
            begin, end, segment = s.token_offsets()
            assert len(s.outputs["start_logits"]) == len(begin) <= max_len
            assert all(0 <= b <= e <= len(data) for b, e, g in zip(begin, end, segment) if g == 1)


def test_a_question_without_room_for_context(testdata):
    with edgebert.Model(ebm_path("task_bert_qa", "int8")) as m, m.session(max_sequence_length=8) as s:
        with pytest.raises(edgebert.Error) as e:
            s.answer("what was fresh and delicious in the restaurant today", SENTENCE)
        assert e.value.status == edgebert.Status.SEQUENCE_TOO_LONG


def test_answer_argument_errors(testdata):
    with edgebert.Model(ebm_path("task_bert_qa", "int8")) as m, m.session() as s:
        for kwargs in ({"max_answer_tokens": "3"}, {"doc_stride": 2**40}, {"doc_stride": True}):
            with pytest.raises(edgebert.Error) as e:
                s.answer(QUESTION, SENTENCE, **kwargs)
            assert e.value.status == edgebert.Status.INVALID_ARGUMENT
    with edgebert.Model(ebm_path("h128_4x32", "int8")) as m, m.session() as s:
        with pytest.raises(edgebert.Error) as e:
            s.answer(QUESTION, SENTENCE)
        assert e.value.status == edgebert.Status.UNSUPPORTED
