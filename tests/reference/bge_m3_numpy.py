# SPDX-License-Identifier: Apache-2.0
"""A small bge-m3 folder and its float64 reference outputs (FlagEmbedding's BGEM3 semantics).

  bge_m3_numpy.py --out DIR      (make_testdata.py calls make(DIR) for the test data folder)

writes DIR/bge_m3/: an XLMRobertaModel checkpoint as transformers saves it (make_family_checkpoints:
config.json, model.safetensors, the Unigram tokenizer.json; hidden 64, 4 heads, 2 layers) in a
sentence-transformers folder (CLS pooling + Normalize, as BAAI/bge-m3 ships), tokenizer_config.json
and special_tokens_map.json naming <s> </s> <pad> <unk>, and the two heads as .safetensors (the
state dicts of torch.nn.Linear: "weight", "bias"): sparse_linear [1, 64] and colbert_linear
[DIM, 64]. DIR/bge_m3_cases/: CASE.ids.txt, CASE.mask.txt and, in float32,
  CASE.dense.f32    [64]         normalize(h[0])
  CASE.sparse.f32   [vocab]      per id: max over the unmasked tokens with that id of
                                 relu(sparse_linear(h)), 0 for the unused ids {cls, eos, pad, unk}
                                 (BGEM3FlagModel._process_token_weights)
  CASE.colbert.f32  [n - 1, DIM] normalize(colbert_linear(h[1:]) * mask[1:]) (padding: zero rows)
where h is families_numpy's float64 XLM-R last_hidden_state; and maxsim.txt: "Q D SCORE" (the
sum over Q's colbert rows of the best dot product with D's) for every pair of unpadded cases.
"""

import argparse
import json
import os
import shutil
import sys

try:
    import numpy as np
except ImportError:  # a non-Debian interpreter picked up by CMake: Debian's python3 has numpy
    if __name__ == "__main__" and os.path.exists("/usr/bin/python3") and sys.executable != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import families_numpy as fnp  # noqa: E402
import make_family_checkpoints as mfc  # noqa: E402
import make_task_checkpoints as mtc  # noqa: E402

HIDDEN, DIM = 64, 40
ENCODER = ("xlm-roberta", "XLMRobertaModel", dict(hidden=HIDDEN, heads=4, layers=2, inter=128), None,
           ("cls", True), 71, ("noprefix",))
SPECIAL_TOKENS = {"cls_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>",
                  "bos_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>"}
UNUSED = (0, 2, 1, 3)  # the xlmr_unigram ids of <s> </s> <pad> <unk> (family_tokenizers.SPECIALS)
_rng = np.random.default_rng(9)
# XLM-R ids (<s> 0, <pad> 1, </s> 2, <unk> 3): repeated ids (the per-id max), <unk> inside a text,
# padding (mask 0), a lone <s> (no ColBERT rows)
CASES = {
    "query": ([0, 17, 230, 17, 45, 2], None),
    "doc_a": ([0, 100, 230, 17, 54, 301, 99, 3, 2], None),
    "doc_b": ([0, 410, 22, 199, 22, 2], None),
    "doc_long": ([0] + [int(x) for x in _rng.integers(5, 500, 60)] + [2], None),
    "padded": ([0, 17, 45, 88, 2, 1, 1, 1], [1, 1, 1, 1, 1, 0, 0, 0]),
    "cls_only": ([0], None),
}


def _normalize_rows(v):
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def outputs(model, sparse_w, sparse_b, colbert_w, colbert_b, ids, mask):
    """(dense [H], sparse [vocab], colbert [n - 1, DIM]) in float64."""
    n = len(ids)
    m = np.ones(n) if mask is None else np.asarray(mask, np.float64)
    h = np.asarray(fnp.run(model, ids, None, m)["last_hidden_state"], np.float64).reshape(n, HIDDEN)
    dense = _normalize_rows(h[0])
    weights = np.maximum(h @ sparse_w.T + sparse_b, 0.0)[:, 0]
    sparse = np.zeros(model.config["vocab_size"])
    for t in range(n):
        if m[t] and ids[t] not in UNUSED:
            sparse[ids[t]] = max(sparse[ids[t]], weights[t])
    colbert = _normalize_rows((h[1:] @ colbert_w.T + colbert_b) * m[1:, None])
    return dense, sparse, colbert


def make(out):
    root = os.path.join(out, "bge_m3")
    cdir = os.path.join(out, "bge_m3_cases")
    for d in (root, cdir):
        shutil.rmtree(d, ignore_errors=True)
    mfc.FAMILY_MODELS.setdefault("bge_m3_encoder", ENCODER)
    try:
        mfc.make_family_model(root, "bge_m3_encoder")
    finally:
        del mfc.FAMILY_MODELS["bge_m3_encoder"]  # not one of the family tests' models
    with open(os.path.join(root, "tokenizer_config.json"), encoding="utf-8") as f:
        tc = json.load(f)
    tc.update(SPECIAL_TOKENS)
    mtc._dump_json(os.path.join(root, "tokenizer_config.json"), tc)
    mtc._dump_json(os.path.join(root, "special_tokens_map.json"), SPECIAL_TOKENS)
    model = fnp.load_model(root)
    rng = np.random.default_rng(72)
    sparse_w = rng.normal(0.0, 1.0 / np.sqrt(HIDDEN), (1, HIDDEN)).astype(np.float32)
    sparse_b = np.asarray([0.05], np.float32)
    colbert_w = rng.normal(0.0, 1.0 / np.sqrt(HIDDEN), (DIM, HIDDEN)).astype(np.float32)
    colbert_b = rng.normal(0.0, 0.1, (DIM,)).astype(np.float32)
    for head, w, b in (("sparse_linear", sparse_w, sparse_b), ("colbert_linear", colbert_w, colbert_b)):
        mtc._write_safetensors(os.path.join(root, head + ".safetensors"),
                               [("weight", "F32", w.shape, w.tobytes()), ("bias", "F32", b.shape, b.tobytes())])
    os.makedirs(cdir)
    f64 = [np.asarray(x, np.float64) for x in (sparse_w, sparse_b, colbert_w, colbert_b)]
    colbert = {}
    for name, (ids, mask) in CASES.items():
        dense, sparse, vecs = outputs(model, *f64, ids, mask)
        with open(os.path.join(cdir, name + ".ids.txt"), "w", encoding="utf-8") as f:
            f.write(" ".join(str(i) for i in ids) + "\n")
        with open(os.path.join(cdir, name + ".mask.txt"), "w", encoding="utf-8") as f:
            f.write(" ".join(str(i) for i in (mask or [1] * len(ids))) + "\n")
        for what, v in (("dense", dense), ("sparse", sparse), ("colbert", vecs)):
            np.asarray(v, "<f4").tofile(os.path.join(cdir, "%s.%s.f32" % (name, what)))
        if mask is None and len(ids) > 1:
            colbert[name] = vecs
    with open(os.path.join(cdir, "maxsim.txt"), "w", encoding="utf-8") as f:
        for q in colbert:
            for d in colbert:
                f.write("%s %s %.9f\n" % (q, d, (colbert[q] @ colbert[d].T).max(axis=1).sum()))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    make(ap.parse_args().out)
