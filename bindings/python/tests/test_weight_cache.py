# SPDX-License-Identifier: Apache-2.0
"""The packed-weight cache file and the model's shared memory, as edgebert.h documents them
(eb_load_options, eb_model_get_weight_cache, eb_model_get_memory): the first load writes the
file, the next maps it; a corrupt or truncated file is rebuilt; a file that is not a cache is
never replaced; an unwritable path leaves the model working without one; outputs are bit-identical with and without the cache. On XNNPACK 2022
(no cache API: the model holds no packed weights) every cache request is UNAVAILABLE, with a
reason."""

import os

import numpy as np
import pytest

import edgebert
from conftest import ebm_path, requires_c_function

W = edgebert.WeightCacheState
MODEL = ("h128_4x32", "int8")
IDS = [101, 160, 140, 487, 476, 470, 102]

pytestmark = [requires_c_function("eb_model_load_file_with_options"),
              requires_c_function("eb_model_get_weight_cache"), requires_c_function("eb_model_get_memory")]


def hidden(model):
    with model.session() as s:
        return s.run(ids=IDS)["last_hidden_state"]


def has_cache_api():
    """XNNPACK 2024+ packs once per model (packed bytes > 0 once a session has packed them into the
    model's shared copy); 2022 packs per session (the model holds 0)."""
    with edgebert.Model(ebm_path(*MODEL)) as m:
        hidden(m)  # a session packs into the model's shared copy (without a cache path)
        return m.memory()["packed_weight_bytes"] > 0


@pytest.mark.parametrize("cache", [None, ""])
def test_no_cache_asked(testdata, cache):
    with edgebert.Model(ebm_path(*MODEL), weight_cache=cache) as m:
        assert m.weight_cache.state == W.NONE


def test_model_memory_reports_the_file_size(testdata):
    path = ebm_path(*MODEL)
    with edgebert.Model(path) as m:
        mem = m.memory()
    assert set(mem) == {"packed_weight_bytes", "model_file_bytes"}
    assert mem["model_file_bytes"] == os.path.getsize(path)
    with open(path, "rb") as f:
        data = f.read()
    with edgebert.Model.from_bytes(data) as m:
        assert m.memory()["model_file_bytes"] == len(data)


def test_first_load_creates_then_loads_with_identical_outputs(testdata, tmp_path):
    cache = tmp_path / "h128.ebwc"
    with edgebert.Model(ebm_path(*MODEL)) as plain:
        want = hidden(plain)
    with edgebert.Model(ebm_path(*MODEL), weight_cache=cache) as m:
        state, message = m.weight_cache
        if not has_cache_api():
            assert state == W.UNAVAILABLE and message, (state, message)
            np.testing.assert_array_equal(hidden(m), want)
            return
        assert state == W.CREATED, message
        assert cache.is_file() and cache.stat().st_size > 0
        np.testing.assert_array_equal(hidden(m), want)
    assert not [p for p in tmp_path.iterdir() if p != cache], "temporary files left next to the cache"
    with edgebert.Model(ebm_path(*MODEL), weight_cache=str(cache)) as m:
        assert m.weight_cache.state == W.LOADED, m.weight_cache.message
        assert m.memory()["packed_weight_bytes"] > 0
        np.testing.assert_array_equal(hidden(m), want)
    with open(ebm_path(*MODEL), "rb") as f:
        data = f.read()
    with edgebert.Model.from_bytes(data, weight_cache=cache) as m:
        assert m.weight_cache.state == W.LOADED, m.weight_cache.message
        np.testing.assert_array_equal(hidden(m), want)


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "payload"])
def test_damaged_cache_is_rebuilt(testdata, tmp_path, damage):
    if not has_cache_api():
        pytest.skip("XNNPACK without a weight cache API (2022): nothing to damage")
    cache = tmp_path / "c.ebwc"
    with edgebert.Model(ebm_path(*MODEL)) as plain:
        want = hidden(plain)
    edgebert.Model(ebm_path(*MODEL), weight_cache=cache).close()
    data = bytearray(cache.read_bytes())
    if damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "flip":  # a header byte (the format version)
        data[8] ^= 0xFF
    elif damage == "empty":
        data = bytearray()
    else:  # a payload byte: every entry's CRC32C is checked at load (docs/weight-cache.md)
        data[-100] ^= 0x01
    cache.write_bytes(bytes(data))
    with edgebert.Model(ebm_path(*MODEL), weight_cache=cache) as m:
        state, message = m.weight_cache
        assert state == W.CREATED and message, (state, message)  # rebuilt, saying why
        np.testing.assert_array_equal(hidden(m), want)
    with edgebert.Model(ebm_path(*MODEL), weight_cache=cache) as m:
        assert m.weight_cache.state == W.LOADED


def test_a_file_that_is_not_a_cache_is_never_replaced(testdata, tmp_path):
    if not has_cache_api():
        pytest.skip("XNNPACK without a weight cache API (2022)")
    cache = tmp_path / "c.ebwc"
    garbage = os.urandom(4096)
    if garbage.startswith(b"EBWCACHE"):
        garbage = b"x" + garbage[1:]
    cache.write_bytes(garbage)
    with edgebert.Model(ebm_path(*MODEL)) as plain:
        want = hidden(plain)
    with edgebert.Model(ebm_path(*MODEL), weight_cache=cache) as m:
        state, message = m.weight_cache
        assert state == W.UNAVAILABLE and "not overwriting" in message, (state, message)
        np.testing.assert_array_equal(hidden(m), want)
    assert cache.read_bytes() == garbage


def test_cache_of_another_model_is_rebuilt(testdata, tmp_path):
    if not has_cache_api():
        pytest.skip("XNNPACK without a weight cache API (2022)")
    cache = tmp_path / "shared.ebwc"
    edgebert.Model(ebm_path("h192_3x64", "int8"), weight_cache=cache).close()
    with edgebert.Model(ebm_path(*MODEL)) as plain:
        want = hidden(plain)
    with edgebert.Model(ebm_path(*MODEL), weight_cache=cache) as m:
        assert m.weight_cache.state == W.CREATED and m.weight_cache.message
        np.testing.assert_array_equal(hidden(m), want)


def test_unwritable_cache_path_leaves_the_model_working(testdata, tmp_path):
    with edgebert.Model(ebm_path(*MODEL)) as plain:
        want = hidden(plain)
    blocker = tmp_path / "a_file"
    blocker.write_bytes(b"x")
    cache = blocker / "c.ebwc"  # a folder that is a file: not writable, not even by root
    with edgebert.Model(ebm_path(*MODEL), weight_cache=cache) as m:
        state, message = m.weight_cache
        assert state == W.UNAVAILABLE and message, (state, message)
        np.testing.assert_array_equal(hidden(m), want)
    assert not cache.exists()


def test_bad_cache_path_arguments(testdata):
    with pytest.raises(edgebert.Error) as e:
        edgebert.Model(ebm_path(*MODEL), weight_cache="a\0b")
    assert e.value.status == edgebert.Status.INVALID_ARGUMENT
