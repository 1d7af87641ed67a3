# SPDX-License-Identifier: Apache-2.0
"""Sanity checks of the numpy reference itself (not of the C++ code).

  selfcheck.py [--testdata DIR]

Builds a few throwaway checkpoints in a temp dir and checks: erf/GELU values, softmax rows sum
to 1, padded keys get exactly zero weight, the pooler reads token 0 only, the vectorized attention
matches a naive per-head/per-query loop, padding is invisible to real tokens, the safetensors
bytes follow the format, BF16/F16 rounding, sharded/unprefixed loading. Task reference
(tasks_numpy.py): the DistilBERT forward equals bert_numpy's BERT forward on the same weights
renamed (zero token-type table), the heads are the documented linear maps, pooling over the mask,
Normalize, and best_span against the HF pipeline's outer-sum/triangle formulation. With --testdata,
also checks the generated directory against a fresh recomputation.
"""

import argparse
import json
import math
import os
import struct
import sys
import tempfile

try:
    import numpy as np  # noqa: F401
except ImportError:  # e.g. a pyenv interpreter picked up by CMake; Debian's python3 has numpy
    _SYS_PY = "/usr/bin/python3"
    if os.path.exists(_SYS_PY) and os.path.realpath(sys.executable) != os.path.realpath(_SYS_PY):
        os.execv(_SYS_PY, [_SYS_PY] + sys.argv)
    raise

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bert_numpy as bn  # noqa: E402
import make_checkpoint as mc  # noqa: E402
import make_task_checkpoints as mtc  # noqa: E402
import tasks_numpy as tn  # noqa: E402


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)
    print("ok   " + msg)


def naive_attention(weights, config, i, x, mask):
    """Per-head, per-query python loops; x [S, H], mask [S]."""
    p = "encoder.layer.%d.attention.self." % i
    a = config["num_attention_heads"]
    s, h = x.shape
    d = h // a
    q = x @ weights[p + "query.weight"].T + weights[p + "query.bias"]
    k = x @ weights[p + "key.weight"].T + weights[p + "key.bias"]
    v = x @ weights[p + "value.weight"].T + weights[p + "value.bias"]
    ctx = np.zeros((s, h))
    probs = np.zeros((a, s, s))
    for head in range(a):
        sl = slice(head * d, (head + 1) * d)
        for r in range(s):
            valid = [c for c in range(s) if mask[c]]
            sc = [float(np.dot(q[r, sl], k[c, sl])) / math.sqrt(d) for c in valid]
            m = max(sc)
            e = [math.exp(z - m) for z in sc]
            tot = sum(e)
            for c, ev in zip(valid, e):
                probs[head, r, c] = ev / tot
                ctx[r, sl] += ev / tot * v[c, sl]
    return ctx, probs


def run(tmp):
    # erf / gelu against known values
    check(abs(bn.erf(np.array([1.0]))[0] - 0.8427007929497149) < 1e-15, "erf(1)")
    check(abs(bn.gelu_erf(np.array([1.0]))[0] - 0.8413447460685429) < 1e-15, "gelu(1) = Phi(1)")
    check(abs(bn.gelu_erf(np.array([-3.0]))[0] - (-3.0 * 0.0013498980316301)) < 1e-12, "gelu(-3)")

    # BF16 / F16 rounding
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -7, -2.5, 1e-3], np.float32)
    _, bf = mc.encode(x, "BF16")
    check(list(bf[:4]) == [1.0, 1.0, 1 + 2 ** -6, 1 + 2 ** -7], "bf16 round-to-nearest-even")
    check(abs(bf[5] - 1e-3) / 1e-3 < 2 ** -8, "bf16 relative error <= 2^-9")
    _, hf = mc.encode(np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11], np.float32), "F16")
    check(list(hf) == [1.0, 1 + 2 ** -9], "f16 round-to-nearest-even")

    # a small classifier checkpoint, 3 heads
    d1 = os.path.join(tmp, "m1")
    names = mc.make_checkpoint(d1, 48, 3, 2, 96, 200, 32, 2, 3, "F32", 1, True, "fullscale", 7)
    with open(os.path.join(d1, "model.safetensors"), "rb") as f:
        blob = f.read()
    (hlen,) = struct.unpack("<Q", blob[:8])
    hdr = json.loads(blob[8:8 + hlen])
    check(hlen % 8 == 0 and hdr["__metadata__"] == {"format": "pt"}, "safetensors header padded, metadata")
    ends = sorted(tuple(v["data_offsets"]) for k, v in hdr.items() if k != "__metadata__")
    check(ends[0][0] == 0 and all(a[1] == b[0] for a, b in zip(ends, ends[1:]))
          and ends[-1][1] == len(blob) - 8 - hlen, "safetensors data has no holes")
    check("bert.embeddings.word_embeddings.weight" in names and "classifier.weight" in names
          and "bert.classifier.weight" not in names, "tensor names: bert. prefix, classifier unprefixed")
    w, cfg = bn.load_checkpoint(d1)
    check(w["encoder.layer.0.intermediate.dense.weight"].shape == (96, 48), "linear layout [out, in]")
    voc = open(os.path.join(d1, "vocab.txt"), encoding="utf-8").read().split("\n")[:-1]
    check(len(voc) == 200 and voc[0] == "[PAD]" and voc[100:104] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"],
          "vocab.txt size and special ids")
    check(cfg["id2label"] == {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}, "config id2label")

    ids = np.array([101, 150, 160, 170, 102, 0, 0])
    mask = np.array([1, 1, 1, 1, 1, 0, 0])
    types = np.array([0, 0, 0, 1, 1, 0, 0])
    res = bn.forward(w, cfg, ids, types, mask, return_probs=True)
    for li, pr in enumerate(res["attentions"]):
        check(np.allclose(pr.sum(-1), 1.0, atol=1e-12, rtol=0), "layer %d softmax rows sum to 1" % li)
        check(np.all(pr[..., 5:] == 0.0), "layer %d padded keys get exactly 0 weight" % li)
        check(np.all(pr[..., 5:, :5].sum(-1) > 0.999), "layer %d padded query rows still computed" % li)

    # vectorized attention == naive loops (layer 0, from the embeddings)
    emb = bn.embeddings_forward(w, cfg, ids, types)
    ctx, probs = bn.self_attention(w, cfg, 0, emb, bn.extended_mask(mask[None]))
    nctx, nprobs = naive_attention(w, cfg, 0, emb[0], mask)
    check(np.abs(ctx[0] - nctx).max() < 1e-12 and np.abs(probs[0] - nprobs).max() < 1e-12,
          "vectorized attention matches naive per-head loops")

    # encoder_forward from embeddings == forward
    enc = bn.encoder_forward(w, cfg, emb[0], mask)
    check(np.array_equal(enc, res["last_hidden_state"]), "encoder_forward(embeddings) == forward")

    # pooler reads token 0 only
    h = res["last_hidden_state"].copy()
    pooled = np.tanh(w["pooler.dense.weight"] @ h[0] + w["pooler.dense.bias"])
    check(np.array_equal(pooled, res["pooler_output"]), "pooler = tanh(dense(hidden[0]))")
    h[1:] += 5.0
    check(np.array_equal(bn.pooler_forward(w, h), res["pooler_output"]), "pooler ignores tokens 1..S-1")
    check(np.allclose(res["logits"], w["classifier.weight"] @ pooled + w["classifier.bias"]),
          "logits = classifier(pooled)")

    # padding invisible to real tokens; batch of 2 == two singles
    ref = bn.forward(w, cfg, ids[:5], types[:5])
    check(np.abs(ref["last_hidden_state"] - res["last_hidden_state"][:5]).max() < 1e-12
          and np.abs(ref["logits"] - res["logits"]).max() < 1e-12, "padding does not change real tokens")
    ids2 = np.array([101, 120, 130, 140, 150, 160, 102])
    batch = bn.forward(w, cfg, np.stack([ids, ids2]), np.stack([types, 0 * types]),
                       np.stack([mask, np.ones(7)]))
    single = bn.forward(w, cfg, ids2)
    check(np.abs(batch["last_hidden_state"][1] - single["last_hidden_state"]).max() < 1e-12,
          "batched forward == single forward")

    # hidden states: LayerNorm output statistics ~ gamma/beta (sanity of the post-LN placement)
    g, b = w["encoder.layer.1.output.LayerNorm.weight"], w["encoder.layer.1.output.LayerNorm.bias"]
    z = (res["last_hidden_state"] - b) / g
    check(np.allclose(z.mean(-1), 0, atol=1e-9) and np.allclose(z.var(-1), 1, atol=1e-6),
          "last_hidden_state is the output of the final LayerNorm")

    # sharded / unprefixed / BF16 loading gives the same values
    d2, d3, d4 = (os.path.join(tmp, n) for n in ("m2", "m3", "m4"))
    mc.make_checkpoint(d2, 48, 3, 2, 96, 200, 32, 2, 3, "F32", 4, True, "fullscale", 7)
    mc.make_checkpoint(d3, 48, 3, 2, 96, 200, 32, 2, 3, "F32", 1, False, "fullscale", 7)
    mc.make_checkpoint(d4, 48, 3, 2, 96, 200, 32, 2, 3, "BF16", 1, True, "fullscale", 7)
    idx = json.load(open(os.path.join(d2, "model.safetensors.index.json")))
    check(sorted(set(idx["weight_map"].values())) == ["model-%05d-of-00004.safetensors" % k for k in range(1, 5)],
          "4 shards named model-0000k-of-00004.safetensors")
    w2, _ = bn.load_checkpoint(d2)
    w3, _ = bn.load_checkpoint(d3)
    w4, _ = bn.load_checkpoint(d4)
    check(all(np.array_equal(w[k], w2[k]) and np.array_equal(w[k], w3[k]) for k in w),
          "sharded and unprefixed checkpoints load identical weights")
    rel = max(np.abs(w[k] - w4[k]).max() / (np.abs(w[k]).max()) for k in w)
    check(0 < rel <= 2 ** -8, "bf16 weights are the rounded f32 weights (max rel %.2g)" % rel)
    u = np.frombuffer(open(os.path.join(d4, "model.safetensors"), "rb").read()[-2:], "<u2")
    check(float((u.astype(np.uint32) << 16).view(np.float32)[0]) == w4["classifier.bias"][-1],
          "reference reads the stored bf16 values")


def run_tasks(tmp):
    ids = np.array([101, 300, 211, 158, 499, 102, 0, 0])
    mask = np.array([1, 1, 1, 1, 1, 1, 0, 0])
    types = np.zeros(8, np.int64)
    for name in ("task_distil_model", "task_distil_seqcls_relu"):
        d = os.path.join(tmp, name)
        mtc.make_task_model(d, name)
        m = tn.load_model(d)
        # the same weights under BERT names
        rename = {"attention.q_lin": "attention.self.query", "attention.k_lin": "attention.self.key",
                  "attention.v_lin": "attention.self.value", "attention.out_lin": "attention.output.dense",
                  "sa_layer_norm": "attention.output.LayerNorm", "ffn.lin1": "intermediate.dense",
                  "ffn.lin2": "output.dense", "output_layer_norm": "output.LayerNorm"}
        w = {}
        for k, v in m.weights.items():
            k2 = k.replace("transformer.layer.", "encoder.layer.")
            for a, b in rename.items():
                k2 = k2.replace("." + a + ".", "." + b + ".")
            w[k2] = v
        w["embeddings.token_type_embeddings.weight"] = np.zeros((2, mtc.HIDDEN))
        c = m.config
        cfg = {"num_attention_heads": c["n_heads"], "num_hidden_layers": c["n_layers"], "hidden_act": c["activation"],
               "max_position_embeddings": c["max_position_embeddings"], "layer_norm_eps": 1e-12}
        ref = bn.forward(w, cfg, ids, types, mask)["last_hidden_state"]
        got = tn.run(m, ids, types, mask)
        err = np.abs(ref[:6] - got["last_hidden_state"][:6]).max()
        check(err < 1e-10, "%s: DistilBERT forward == BERT forward on renamed weights (%.1e)" % (name, err))
    h = got["last_hidden_state"]
    pre = np.maximum(m.weights["pre_classifier.weight"] @ h[0] + m.weights["pre_classifier.bias"], 0)
    check(np.allclose(got["logits"], m.weights["classifier.weight"] @ pre + m.weights["classifier.bias"]),
          "DistilBERT logits = classifier(relu(pre_classifier(h[CLS])))")
    real = h[:6]
    check(np.allclose(tn.pool(h, mask, "mean", False), real.mean(0)), "mean pooling over mask = 1 only")
    check(np.allclose(tn.pool(h, mask, "max", False), real.max(0)), "max pooling over mask = 1 only")
    check(np.allclose(tn.pool(h, mask, "mean_sqrt_len", False), real.sum(0) / math.sqrt(6)), "mean_sqrt_len pooling")
    check(np.array_equal(tn.pool(h, mask, "cls", False), h[0]), "cls pooling")
    check(abs(np.linalg.norm(tn.pool(h, mask, "max", True)) - 1) < 1e-12, "Normalize gives unit norm")
    rng = np.random.default_rng(3)
    for trial in range(50):
        n = int(rng.integers(4, 20))
        st, en = rng.normal(size=n), rng.normal(size=n)
        first, last = int(rng.integers(0, n // 2)), int(rng.integers(n // 2, n))
        max_len = int(rng.integers(1, 8))
        i, j, score, _ = tn.best_span(st, en, first, last, max_len)
        outer = st[:, None] + en[None, :]
        allowed = np.triu(np.tril(np.ones((n, n), bool), max_len - 1))  # j >= i, j - i < max_len
        allowed[:first, :] = allowed[:, :first] = allowed[last + 1:, :] = allowed[:, last + 1:] = False
        bi, bj = np.unravel_index(np.where(allowed, outer, -np.inf).argmax(), outer.shape)
        assert (i, j) == (bi, bj) and abs(score - outer[bi, bj]) < 1e-12, (trial, i, j, bi, bj)
    check(True, "best_span == argmax over the HF pipeline's masked outer sum (50 random cases)")


def check_testdata(root):
    import make_testdata as mt
    lines = open(os.path.join(root, "manifest.txt")).read().split("\n")[:-1]
    check(len(lines) == len(mt.MODELS) * len(mt.CASES), "manifest has %d lines" % len(lines))
    cache = {}
    for line in lines:
        model, case, seq = line.split()
        if model not in cache:
            cache[model] = bn.load_checkpoint(os.path.join(root, model))
        w, cfg = cache[model]
        cdir = os.path.join(root, model, "cases", case)
        rd = lambda n: np.array(open(os.path.join(cdir, n)).read().split(), np.int64)  # noqa: E731
        ids, mask, types = rd("ids.txt"), rd("mask.txt"), rd("types.txt")
        assert len(ids) == int(seq) == len(mask) == len(types)
        res = bn.forward(w, cfg, ids, types, mask)
        h = np.fromfile(os.path.join(cdir, "last_hidden_state.f32"), "<f4")
        assert np.array_equal(h, res["last_hidden_state"].astype(np.float32).ravel()), line
        p = np.fromfile(os.path.join(cdir, "pooler_output.f32"), "<f4")
        assert np.array_equal(p, res["pooler_output"].astype(np.float32)), line
        if res["logits"] is not None:
            lg = np.fromfile(os.path.join(cdir, "logits.f32"), "<f4")
            assert np.array_equal(lg, res["logits"].astype(np.float32)), line
        else:
            assert not os.path.exists(os.path.join(cdir, "logits.f32")), line
    check(True, "all golden files reproduce bit-exactly")
    for case in mt.CASES:
        a = np.fromfile(os.path.join(root, "tiny_sharded/cases", case, "last_hidden_state.f32"), "<f4")
        b = np.fromfile(os.path.join(root, "tiny_noprefix/cases", case, "last_hidden_state.f32"), "<f4")
        assert np.array_equal(a, b), case
    check(True, "tiny_sharded == tiny_noprefix outputs")
    models = {}
    for line in open(os.path.join(root, "tasks_manifest.txt")).read().split("\n")[:-1]:
        model, task, case, seq = line.split()
        if model not in models:
            models[model] = tn.load_model(os.path.join(root, model))
        cdir = os.path.join(root, model, "cases", case)
        rd = lambda n: np.array(open(os.path.join(cdir, n)).read().split(), np.int64)  # noqa: E731
        res = tn.run(models[model], rd("ids.txt"), rd("types.txt"), rd("mask.txt"))
        for key, val in res.items():
            got = np.fromfile(os.path.join(cdir, key + ".f32"), "<f4")
            assert np.array_equal(got, val.astype(np.float32).ravel()), (line, key)
    check(len(models) == len(mtc.TASK_MODELS), "task goldens reproduce bit-exactly (%d models)" % len(models))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--testdata")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run(tmp)
        run_tasks(tmp)
    if a.testdata:
        check_testdata(a.testdata)
    print("selfcheck: all passed")


if __name__ == "__main__":
    main()
