# SPDX-License-Identifier: Apache-2.0
"""Word ids and words of a text run (eb_session_get_word_ids, eb_session_get_words), against the
documented behaviour: BERT's basic tokenization makes a word of every whitespace-separated run of
letters/digits and of every punctuation character; word ids count words within each segment as
HuggingFace's word_ids() does (-1 for special tokens); each word covers the tokens whose byte
ranges lie inside it; token classifiers label a word with its first token's argmax."""

import re

import numpy as np
import pytest

import edgebert
from conftest import ebm_path, requires_c_function

pytestmark = [requires_c_function("eb_session_get_word_ids"), requires_c_function("eb_session_get_words")]

TEXT = "the quick brown fox, jumped over 12 lazy dogs!"
PAIR = "what jumped?"


def reference_words(text):
    """(begin, end) bytes of BERT basic-tokenizer words of an ASCII text."""
    return [(m.start(), m.end()) for m in re.finditer(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]", text)]


def check_run(session, texts):
    begin, end, segment = session.token_offsets()
    word_ids = session.word_ids()
    words = session.words()
    assert len(word_ids) == len(begin)
    expected = []
    for seg, text in enumerate(texts):
        for index, (b, e) in enumerate(reference_words(text)):
            expected.append((seg, index, b, e))
    assert [(w.segment, w.begin_byte, w.end_byte) for w in words] == [(s, b, e) for s, _, b, e in expected]
    for w, (seg, index, b, e) in zip(words, expected):
        assert w.text == texts[seg][b:e]
        tokens = [t for t in range(len(begin)) if segment[t] == seg and b <= begin[t] and end[t] <= e]
        assert tokens == list(range(w.first_token, w.last_token + 1)), (w, tokens)
        assert all(word_ids[t] == index for t in tokens)
    for t in range(len(begin)):
        assert (word_ids[t] == -1) == (segment[t] == -1)


@pytest.mark.parametrize("kind", ["int8", "fp32"])
def test_words_of_a_text_and_a_pair(testdata, kind):
    with edgebert.Model(ebm_path("task_bert_token", kind)) as m, m.session() as s:
        s.run(text=TEXT)
        check_run(s, [TEXT])
        s.run(text=PAIR, text_pair=TEXT)
        check_run(s, [PAIR, TEXT])


def test_token_classifier_labels_words_by_first_token(testdata):
    with edgebert.Model(ebm_path("task_bert_token", "int8")) as m, m.session() as s:
        logits = s.run(text=TEXT)["token_logits"]
        for w in s.words():
            assert w.label == m.label(int(np.argmax(logits[w.first_token])))


def test_words_of_other_models_have_no_label(testdata):
    with edgebert.Model(ebm_path("h128_4x32", "int8")) as m, m.session() as s:
        s.run(text=TEXT)
        assert s.words() and all(w.label is None for w in s.words())


def test_words_need_a_text_run(testdata):
    with edgebert.Model(ebm_path("h128_4x32", "int8")) as m, m.session() as s:
        for call in (s.word_ids, s.words):
            with pytest.raises(edgebert.Error) as e:
                call()
            assert e.value.status == edgebert.Status.BAD_STATE
        s.run(text=TEXT)
        s.run(ids=[101, 102])  # ids: the text run's words are gone
        for call in (s.word_ids, s.words):
            with pytest.raises(edgebert.Error) as e:
                call()
            assert e.value.status == edgebert.Status.BAD_STATE
