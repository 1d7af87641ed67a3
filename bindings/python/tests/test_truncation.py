# SPDX-License-Identifier: Apache-2.0
"""Session.set_truncation / truncated_tokens: every case of the HuggingFace truncation goldens
(tasks_numpy.truncate: longest_first and only_second, single texts and pairs) gives the golden
token ids and cut count, or SEQUENCE_TOO_LONG where the library raises; the default refuses; bad
strategies raise."""

import os

import pytest

import edgebert
from conftest import data_dir, ebm_path, requires_c_function


def cases():
    out = []
    with open(os.path.join(data_dir(), "task_bert_rerank", "rerank", "truncation.txt"), encoding="utf-8") as f:
        for line in f:
            head, a, b, ids = line.rstrip("\n").split("|")
            strategy, max_len, cut = head.split()
            out.append((strategy, int(max_len), int(cut), a, b or None, [int(i) for i in ids.split()]))
    return out


@requires_c_function("eb_session_set_truncation")
def test_truncation_matches_hf(testdata):
    with edgebert.Model(ebm_path("task_bert_rerank", "fp32")) as model:
        sessions = {}
        checked = 0
        for strategy, max_len, cut, a, b, ids in cases():
            s = sessions.setdefault(max_len, model.session(max_sequence_length=max_len))
            s.set_truncation("none")
            if cut != 0:
                with pytest.raises(edgebert.Error):
                    s.run(text=a, text_pair=b)
            s.set_truncation(strategy)
            if cut < 0:
                with pytest.raises(edgebert.Error) as e:
                    s.run(text=a, text_pair=b)
                assert e.value.status == edgebert.Status.SEQUENCE_TOO_LONG
                continue
            s.run(text=a, text_pair=b)
            assert list(s.input_ids) == ids, (strategy, max_len, a, b)
            assert s.truncated_tokens() == cut
            checked += cut > 0
        assert checked >= 50
        with pytest.raises(edgebert.Error):
            sessions[9].set_truncation("only_first")
        with pytest.raises(edgebert.Error):
            sessions[9].truncated_tokens(5)
