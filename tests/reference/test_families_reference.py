# SPDX-License-Identifier: Apache-2.0
"""Cross-checks of the numpy family reference (families_numpy.py) against separately written torch
modules (bench/peers/make_modernbert_onnx.py for ModernBERT, nomic_torch.py for nomic-bert) on
the synthetic checkpoints of make_family_checkpoints.py, plus reductions to the BERT reference
(RoBERTa = BERT with shifted positions, ELECTRA without projection = BERT) and checks that the
test cases exercise what they claim (sliding windows, rotary, NTK, shared layers, padding).

Run: /usr/bin/python3 -m pytest -q tests/reference/test_families_reference.py (CTest:
families_reference). torch (Debian's python3-torch) is needed for the torch comparisons; they skip
without it. EDGEBERT_TESTDATA, when set, also checks the generated goldens there (families/).
"""

import json
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "peers"))
sys.dont_write_bytecode = True

import bert_numpy  # noqa: E402
import families_numpy as fnp  # noqa: E402
import make_family_checkpoints as mfc  # noqa: E402

try:
    import torch  # noqa: F811
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch (python3-torch) is not installed")

MODERNBERT = [n for n, m in mfc.FAMILY_MODELS.items() if m[0] == "modernbert"]
NOMIC = [n for n, m in mfc.FAMILY_MODELS.items() if m[0] == "nomic_bert"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("families"))
    mfc.build_all(root)
    return root


def _cases(fam):
    return [(c,) + mfc.case_inputs(c, fam, mfc.SEQ_MAX) for c in mfc.CASES]


def _model_dir(root, name):
    d = os.path.join(root, name)
    return os.path.join(d, "0_Transformer") if "subdir" in mfc.FAMILY_MODELS[name][6] else d


def _config(ckpt):
    with open(os.path.join(ckpt, "config.json")) as f:
        return json.load(f)


# ---------------------------------------------------------------------------------------------
# torch cross-checks
# ---------------------------------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("name", MODERNBERT)
def test_modernbert_numpy_matches_torch(built, name):
    import make_modernbert_onnx as mb
    ckpt = _model_dir(built, name)
    cfg = _config(ckpt)
    arch = cfg["architectures"][0]
    task = mfc.task_of(name)
    if arch == "ModernBertModel":
        tm, prefix = mb.ModernBertModel(cfg), ""
    elif arch == "ModernBertForMaskedLM":  # the LM head is training-only: compare the encoder
        tm = mb.ModernBertWithHead(cfg, "token_classification", 1)
        prefix = None
    else:
        nl = 2 if task == "question_answering" else len(cfg["id2label"])
        tm, prefix = mb.ModernBertWithHead(cfg, task, nl), ""
    if prefix is None:  # MLM: load model.* into the base model only
        base = mb.ModernBertModel(cfg)
        tensors = mb.read_safetensors(os.path.join(ckpt, "model.safetensors"))
        sd = {k[len("model."):]: torch.from_numpy(np.array(v, np.float64)) for k, v in tensors.items()
              if k.startswith("model.")}
        assert set(tensors) - {"model." + k for k in sd} == {"head.dense.weight", "head.norm.weight",
                                                              "decoder.bias"}
        base.double().load_state_dict(sd, strict=True)
        tm = base.eval()
    else:
        mb.load_hf(tm, ckpt)
    model = fnp.load_model(os.path.join(built, name))
    for case, ids, mask, types in _cases("modernbert"):
        ref = fnp.run(model, ids, types, mask)
        with torch.no_grad():
            got = tm(torch.tensor(ids[None]), torch.tensor(mask[None]))
        if not isinstance(got, dict):
            got = {"last_hidden_state": got}
        for key, val in got.items():
            val = val[0].numpy()
            err = np.abs(val - ref[key]).max()
            assert err < 1e-9, (name, case, key, err)


@needs_torch
@pytest.mark.parametrize("name", NOMIC)
def test_nomic_numpy_matches_torch(built, name):
    import nomic_torch as nt
    ckpt = _model_dir(built, name)
    cfg = _config(ckpt)
    seqcls = cfg["architectures"][0] == "NomicBertForSequenceClassification"
    tm = nt.NomicBertForSequenceClassification(cfg, len(cfg["id2label"])) if seqcls else nt.NomicBertModel(cfg)
    nt.load_hf(tm, ckpt)
    model = fnp.load_model(os.path.join(built, name))
    for case, ids, mask, types in _cases("nomic_bert"):
        ref = fnp.run(model, ids, types, mask)
        with torch.no_grad():
            out = tm(torch.tensor(ids[None]), torch.tensor(types[None]), torch.tensor(mask[None]))
        out = out if seqcls else (out,)
        got = {"last_hidden_state": out[0][0]}
        if seqcls:
            got.update(pooler_output=out[1][0], logits=out[2][0])
        for key, val in got.items():
            err = np.abs(val.numpy() - ref[key]).max()
            assert err < 1e-9, (name, case, key, err)


# ---------------------------------------------------------------------------------------------
# reductions to the BERT reference
# ---------------------------------------------------------------------------------------------

def _as_bert(w, config_updates, cfg):
    c = {"num_attention_heads": cfg["num_attention_heads"], "num_hidden_layers": cfg["num_hidden_layers"],
         "hidden_act": cfg.get("hidden_act", "gelu"), "layer_norm_eps": cfg["layer_norm_eps"],
         "max_position_embeddings": cfg["max_position_embeddings"]}
    c.update(config_updates)
    return c


def test_roberta_position_ids():
    got = fnp.roberta_position_ids(np.array([0, 7, 9, 2, 1, 1]), 1)
    assert got.tolist() == [2, 3, 4, 5, 1, 1]


@pytest.mark.parametrize("name", ["roberta_model", "roberta_seqcls", "xlmr_token", "camembert_qa"])
def test_roberta_is_bert_with_shifted_positions(built, name):
    """Unpadded, RoBERTa's encoder = BERT's with position rows padding_idx + 1 ... (type 0 only)."""
    model = fnp.load_model(os.path.join(built, name))
    w = dict(model.weights)
    pad = model.n["pad_id"]
    w["embeddings.position_embeddings.weight"] = w["embeddings.position_embeddings.weight"][pad + 1:]
    cfg = _as_bert(w, {"max_position_embeddings": 128}, model.config)
    for case, ids, mask, types in _cases("roberta"):
        if mask.min() == 0:
            continue
        ref = bert_numpy.forward(w, cfg, ids, types, mask)["last_hidden_state"]
        got = fnp.run(model, ids, types, mask)["last_hidden_state"]
        assert np.abs(ref - got).max() < 1e-10, case


def test_electra_without_projection_is_bert(built):
    model = fnp.load_model(os.path.join(built, "electra_seqcls"))
    assert model.n["embedding_size"] == model.n["hidden"] and "embeddings_project.weight" not in model.weights
    for case, ids, mask, types in _cases("electra"):
        ref = bert_numpy.forward(model.weights, _as_bert(model.weights, {}, model.config), ids, types, mask)
        got = fnp.run(model, ids, types, mask)
        assert np.abs(ref["last_hidden_state"] - got["last_hidden_state"]).max() < 1e-10, case
        head = fnp.linear(model.weights, "classifier.out_proj",
                          bert_numpy.gelu_erf(fnp.linear(model.weights, "classifier.dense", got["last_hidden_state"][0])))
        assert np.abs(head - got["logits"]).max() < 1e-12


# ---------------------------------------------------------------------------------------------
# the cases exercise what they claim
# ---------------------------------------------------------------------------------------------

def _run_with(model, **n_updates):
    m = fnp.Model(model.weights, model.config, model.pooling, model.normalize)
    m.n.update(n_updates)
    return m


def test_modernbert_window_matters(built):
    """The sliding window changes the long cases and not the short ones (window 8: |i-j| <= 4)."""
    model = fnp.load_model(os.path.join(built, "modernbert_model"))
    wide = _run_with(model, window=10 ** 6)
    for case, ids, mask, types in _cases("modernbert"):
        a = fnp.run(model, ids, types, mask)["last_hidden_state"]
        b = fnp.run(wide, ids, types, mask)["last_hidden_state"]
        diff = np.abs(a - b)[mask == 1].max()
        if int(mask.sum()) <= 5:
            assert diff < 1e-12, case
        else:
            assert diff > 1e-3, case


def test_modernbert_thetas_and_layer_kinds(built):
    """Old and new config spellings give the intended layer kinds; each theta matters."""
    new = fnp.load_model(os.path.join(built, "modernbert_seqcls_mean"))
    assert "layer_types" in new.config and "rope_parameters" in new.config
    assert new.n["sliding"] == [False, True, False, True]
    old = fnp.load_model(os.path.join(built, "modernbert_model"))
    assert "layer_types" not in old.config and old.n["sliding"] == [False, True, True, False]
    case, ids, mask, types = _cases("modernbert")[-1]
    base = fnp.run(old, ids, types, mask)["last_hidden_state"]
    for key in ("global_theta", "local_theta"):
        other = fnp.run(_run_with(old, **{key: old.n[key] * 2}), ids, types, mask)["last_hidden_state"]
        assert np.abs(base - other).max() > 1e-4, key


def test_modernbert_bias_free_norms(built):
    model = fnp.load_model(os.path.join(built, "modernbert_model"))
    assert not any(k.endswith("norm.bias") for k in model.weights)
    assert "layers.0.attn_norm.weight" not in model.weights and "layers.1.attn_norm.weight" in model.weights
    biased = fnp.load_model(os.path.join(built, "modernbert_seqcls_mean"))
    assert "layers.1.attn_norm.bias" in biased.weights and "layers.0.attn.Wqkv.bias" in biased.weights


def test_nomic_rotary_and_ntk(built):
    """Rotary makes the encoder order-aware; NTK scaling changes only sequences longer than
    max_trained_positions; the SwiGLU width is rounded up to a multiple of 256."""
    model = fnp.load_model(os.path.join(built, "nomic_prenorm_ntk"))
    assert model.n["max_trained_positions"] == 48 and model.n["rotary_scaling_factor"] == 2.0
    plain = _run_with(model, rotary_scaling_factor=None)
    for case, ids, mask, types in _cases("nomic_bert"):
        a = fnp.run(model, ids, types, mask)["last_hidden_state"]
        b = fnp.run(plain, ids, types, mask)["last_hidden_state"]
        assert (np.abs(a - b).max() > 1e-4) == (len(ids) > 48), case
    st = fnp.load_model(os.path.join(built, "nomic_st_mean_norm"))
    assert st.config["n_inner"] == 200 and st.weights["encoder.layers.0.mlp.fc11.weight"].shape[0] == 256
    # rotary: the same tokens in another order give different (not permuted) states
    m = fnp.load_model(os.path.join(built, "nomic_model"))
    case, ids, mask, types = _cases("nomic_bert")[1]
    a = fnp.run(m, ids, types, mask)["last_hidden_state"]
    perm = np.array([0, 2, 1, 3, 4, 5, 6])
    b = fnp.run(m, ids[perm], types[perm], mask[perm])["last_hidden_state"]
    assert np.abs(a[perm] - b).max() > 1e-3


def test_albert_groups_share_layers(built):
    """albert_qa: 6 layers in 3 groups -> groups 0,0,1,1,2,2; swapping two groups' weights
    changes the output (every group is used), and the tensor list has 3 groups only."""
    model = fnp.load_model(os.path.join(built, "albert_qa"))
    n = model.n
    assert [fnp.albert_group_of_layer(i, n) for i in range(n["layers"])] == [0, 0, 1, 1, 2, 2]
    assert not any(k.startswith("encoder.albert_layer_groups.3.") for k in model.weights)
    w = dict(model.weights)
    for k in list(w):
        if k.startswith("encoder.albert_layer_groups.0."):
            k2 = k.replace("groups.0.", "groups.2.")
            w[k], w[k2] = model.weights[k2], model.weights[k]
    swapped = fnp.Model(w, model.config)
    case, ids, mask, types = _cases("albert")[3]
    a = fnp.run(model, ids, types, mask)["last_hidden_state"]
    b = fnp.run(swapped, ids, types, mask)["last_hidden_state"]
    assert np.abs(a - b).max() > 1e-3


def test_token_types_are_used(built):
    """Families with token types read them (len20_pair has types 0 / 1); ModernBERT ignores them."""
    for name, fam in (("electra_token", "electra"), ("albert_model", "albert"), ("nomic_model", "nomic_bert"),
                      ("modernbert_model", "modernbert")):
        model = fnp.load_model(os.path.join(built, name))
        case, ids, mask, types = _cases(fam)[3]
        a = fnp.run(model, ids, types, mask)["last_hidden_state"]
        b = fnp.run(model, ids, np.ones_like(types), mask)["last_hidden_state"]
        assert (np.abs(a - b).max() > 1e-3) == (fam != "modernbert"), name


def test_goldens_reproduce(built):
    """The written goldens are the float32 cast of a fresh run (and EDGEBERT_TESTDATA's too)."""
    roots = [built]
    td = os.environ.get("EDGEBERT_TESTDATA")
    if td and os.path.exists(os.path.join(td, "families", "families_manifest.txt")):
        roots.append(os.path.join(td, "families"))
    for root in roots:
        with open(os.path.join(root, "families_manifest.txt")) as f:
            lines = [ln.split() for ln in f]
        assert len(lines) == len(mfc.FAMILY_MODELS) * (len(mfc.CASES) + len(mfc.TEXT_CASES))
        models = {}
        for name, fam, task, case, seq in lines:
            model = models.setdefault(name, fnp.load_model(os.path.join(root, name)))
            cdir = os.path.join(root, name, "cases", case)
            ids, mask, types = (np.loadtxt(os.path.join(cdir, f), dtype=np.int64, ndmin=1)
                                for f in ("ids.txt", "mask.txt", "types.txt"))
            assert len(ids) == int(seq)
            for key, val in fnp.run(model, ids, types, mask).items():
                disk = np.fromfile(os.path.join(cdir, key + ".f32"), "<f4")
                assert np.array_equal(disk, val.astype("<f4").ravel()), (root, name, case, key)


def test_tokenizer_ids_are_hf_tokenizers(tmp_path):
    """family_tokenizer_ids.json is what HF's tokenizers library gives for family_tokenizers.py's
    files (needs node and @anush008/tokenizers: EDGEBERT_TOKENIZERS_NODE_PATH = its node_modules)."""
    import shutil
    import subprocess
    import family_tokenizers as ft
    node_path = os.environ.get("EDGEBERT_TOKENIZERS_NODE_PATH")
    if not node_path or not shutil.which("node"):
        pytest.skip("set EDGEBERT_TOKENIZERS_NODE_PATH to a node_modules with @anush008/tokenizers@0.6.0")
    files = []
    for kind in ft.KINDS:
        path = tmp_path / (kind + ".json")
        path.write_text(json.dumps(ft.tokenizer_json(kind), ensure_ascii=False), encoding="utf-8")
        files.append(str(path))
    out = subprocess.run(["node", os.path.join(HERE, "family_tokenizer_ids.mjs")] + files, check=True,
                         capture_output=True, text=True, env=dict(os.environ, NODE_PATH=node_path)).stdout
    with open(os.path.join(HERE, "family_tokenizer_ids.json"), encoding="utf-8") as f:
        assert json.loads(out) == json.load(f)


def test_text_cases_use_whole_words_where_the_vocab_has_them():
    """The Unigram files keep every corpus word whole (their scores make a split cost more), so the
    text case has one token per word there: a sanity check of the embedded ids."""
    with open(os.path.join(HERE, "family_tokenizer_ids.json"), encoding="utf-8") as f:
        ids = json.load(f)
    words = len(mfc.TEXT.split())
    for kind in ("albert_unigram", "xlmr_unigram"):
        assert len(ids[kind]["text"]["ids"]) == words + 2, kind
    for kind in ids:
        assert max(max(ids[kind][c]["ids"]) for c in ("text", "text_pair")) < mfc.VOCAB
