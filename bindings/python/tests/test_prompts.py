# SPDX-License-Identifier: Apache-2.0
"""Session.set_prompt / embed(prompt=) / set_embedding_dims on the EmbeddingGemma-shaped test model
(tests/reference/make_family_checkpoints.py gemma3_st_dense: mean pooling, two Dense modules,
Normalize, prompts "query" and "document"): a prompt run tokenizes prompt + text as one string
(the ids of the run on the concatenated text) and its sentence embedding matches the float64 numpy
reference (families_numpy, from modeling_gemma3 and sentence-transformers' Dense / Normalize) on
those ids; dims truncate and re-normalize that reference; unknown prompts raise."""

import os
import sys

import numpy as np
import pytest

import edgebert
from conftest import data_dir, ebm_path, requires_c_function

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "reference"))
import families_numpy  # noqa: E402

QUERY = "task: search result | query: "
TEXT = "Which planet is known as the Red Planet?"


def reference(ids):
    model = families_numpy.load_model(os.path.join(data_dir(), "families", "gemma3_st_dense"))
    return families_numpy.run(model, ids, None, np.ones(len(ids)))["sentence_embedding"]


@requires_c_function("eb_session_set_prompt")
def test_prompt_and_dims(testdata):
    with edgebert.Model(ebm_path("gemma3_st_dense", "fp32")) as model:
        s = model.session(max_sequence_length=96)
        plain = s.run(text=TEXT)
        plain_ids = list(s.input_ids)
        s.set_prompt("query")
        prompted = s.run(text=TEXT)["sentence_embedding"]
        ids = list(s.input_ids)
        assert len(ids) > len(plain_ids)
        s.set_prompt(None)
        s.run(text=QUERY + TEXT)
        assert list(s.input_ids) == ids  # one string, as sentence-transformers tokenizes it
        want = reference(np.array(ids))
        assert np.abs(prompted - want).max() < 2e-3
        assert np.abs(plain["sentence_embedding"] - want).max() > 1e-2  # the prompt changes the vector
        assert np.array_equal(s.embed(TEXT, prompt="query"), prompted)
        assert np.array_equal(s.embed(TEXT), plain["sentence_embedding"])  # embed(prompt=) is per call
        s.set_prompt("query")
        many = s.embed_many([TEXT, "Mars is red.", TEXT])
        assert np.abs(many[0] - prompted).max() < 1e-5 and np.abs(many[2] - prompted).max() < 1e-5
        s.set_embedding_dims(16)
        short = s.embed(TEXT)
        assert short.shape == (16,)
        w = want[:16] / np.linalg.norm(want[:16])
        assert np.abs(short - w).max() < 2e-3
        assert s.embed_many([TEXT]).shape == (1, 16)
        s.set_embedding_dims(0)
        assert s.embed(TEXT).shape == (64,)
        with pytest.raises(edgebert.Error) as e:
            s.set_prompt("passage")
        assert e.value.status == edgebert.Status.INVALID_ARGUMENT
        assert "query" in str(e.value) and "document" in str(e.value)
        with pytest.raises(edgebert.Error):
            s.set_embedding_dims(65)


@requires_c_function("eb_session_set_prompt")
def test_int8_prompt_run(testdata):
    with edgebert.Model(ebm_path("gemma3_st_dense", "int8")) as model:
        s = model.session(max_sequence_length=96)
        s.set_prompt("document")
        v = s.embed(TEXT)
        want = reference(np.array(s.input_ids))
        assert float(v @ want / np.linalg.norm(v) / np.linalg.norm(want)) > 0.99
