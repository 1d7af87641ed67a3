# SPDX-License-Identifier: Apache-2.0
"""Every output of edgebert.Session.run() against the numpy float64 reference goldens (fp32 models
within 1e-3, int8 models per-token cosine >= 0.99), for ids input, from a path and from bytes."""

import numpy as np
import pytest

import edgebert
from conftest import Case, cosine, ebm_path

MODELS = ("h128_4x32", "h192_3x64", "tiny_f16", "base2_h12")
CASES = ("len1", "len7", "lenmax", "len7_pad", "len20_types")


def check_against_golden(out, case, kind, info):
    real = case.mask.astype(bool)
    expected = {"last_hidden_state"} | ({"pooler_output"} if info.has_pooler else set()) | \
        ({"logits"} if case.logits is not None else set())
    assert set(out) == expected
    for v in out.values():
        assert v.dtype == np.float32
    hidden = out["last_hidden_state"]
    assert hidden.shape == (len(case.ids), info.hidden_size)
    if kind == "fp32":
        assert np.max(np.abs(hidden[real] - case.hidden[real])) <= 1e-3
        if info.has_pooler:
            assert np.max(np.abs(out["pooler_output"] - case.pooled)) <= 1e-3
        if case.logits is not None:
            assert out["logits"].shape == (info.num_labels,)
            assert np.max(np.abs(out["logits"] - case.logits)) <= 1e-3
    else:
        assert min(cosine(h, g) for h, g in zip(hidden[real], case.hidden[real])) >= 0.99
        if info.has_pooler:
            assert cosine(out["pooler_output"], case.pooled) >= 0.99


@pytest.mark.parametrize("kind", ["fp32", "int8"])
@pytest.mark.parametrize("model_name", MODELS)
def test_run_ids_matches_reference(testdata, model_name, kind):
    with edgebert.Model(ebm_path(model_name, kind)) as model:
        info = model.info
        assert info.is_int8 == (kind == "int8")
        with model.session() as session:
            for name in CASES:
                case = Case(model_name, name)
                out = session.run(ids=case.ids, types=case.types, mask=case.mask)
                check_against_golden(out, case, kind, info)
                # Output by enum and by name: the same values as run() returned.
                for key, value in out.items():
                    np.testing.assert_array_equal(session.output(edgebert.Output[key.upper()]), value)
                    np.testing.assert_array_equal(session.output(key), value)
                np.testing.assert_array_equal(session.input_ids, case.ids)


def test_info_matches_checkpoint_config(testdata):
    import json
    import os
    cfg = json.load(open(os.path.join(testdata, "h128_4x32", "config.json")))
    info = edgebert.Model(ebm_path("h128_4x32", "int8")).info
    assert info.hidden_size == cfg["hidden_size"] == 128
    assert info.num_attention_heads == cfg["num_attention_heads"]
    assert info.num_hidden_layers == cfg["num_hidden_layers"]
    assert info.intermediate_size == cfg["intermediate_size"]
    assert info.vocab_size == cfg["vocab_size"]
    assert info.max_position_embeddings == cfg["max_position_embeddings"]
    assert info.num_labels == 3 and info.has_pooler and info.has_vocab and info.is_int8


def test_model_from_bytes_equals_model_from_path(testdata):
    path = ebm_path("h128_4x32", "int8")
    case = Case("h128_4x32", "len20_types")
    with edgebert.Model(path) as a, edgebert.Model.from_bytes(open(path, "rb").read()) as b:
        assert a.info == b.info
        out_a = a.session().run(ids=case.ids, types=case.types)
        out_b = b.session().run(ids=case.ids, types=case.types)
    assert out_a.keys() == out_b.keys()
    for k in out_a:
        np.testing.assert_array_equal(out_a[k], out_b[k])


def test_outputs_are_copies(testdata):
    """Arrays from an earlier run keep their values after the next run overwrites the arena."""
    c1, c2 = Case("tiny_f16", "len7"), Case("tiny_f16", "len20_types")
    with edgebert.Model(ebm_path("tiny_f16", "fp32")) as model, model.session() as s:
        first = s.run(ids=c1.ids)["last_hidden_state"]
        kept = first.copy()
        s.run(ids=c2.ids, types=c2.types)
        np.testing.assert_array_equal(first, kept)


def test_default_types_and_mask(testdata):
    """types=None means all 0 and mask=None all 1 (as the C API says)."""
    case = Case("h128_4x32", "len7")
    with edgebert.Model(ebm_path("h128_4x32", "fp32")) as model, model.session() as s:
        a = s.run(ids=case.ids)
        b = s.run(ids=case.ids, types=np.zeros_like(case.ids), mask=np.ones_like(case.ids))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    assert np.max(np.abs(a["last_hidden_state"] - case.hidden)) <= 1e-3


def test_ids_accept_lists_tuples_and_int64(testdata):
    """Python lists, tuples and numpy arrays of any integer type are accepted as ids."""
    case = Case("h192_3x64", "len7")
    with edgebert.Model(ebm_path("h192_3x64", "fp32")) as model, model.session(threads=2) as s:
        a = s.run(ids=list(case.ids))
        b = s.run(ids=tuple(int(i) for i in case.ids))
        c = s.run(ids=case.ids.astype(np.int64))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
        np.testing.assert_array_equal(a[k], c[k])


def test_memory_facts(testdata):
    with edgebert.Model(ebm_path("base2_h12", "int8")) as model, model.session(max_sequence_length=32) as s:
        mem = s.memory()
    assert set(mem) == {"arena_bytes", "naive_bytes", "packed_weight_bytes"}
    assert 0 < mem["arena_bytes"] <= mem["naive_bytes"]
    assert mem["packed_weight_bytes"] > 0


def test_version_is_the_header_version():
    import re
    assert re.fullmatch(r"\d+\.\d+\.\d+", edgebert.version())
