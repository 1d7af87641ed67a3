# SPDX-License-Identifier: Apache-2.0
"""A small PyLate / ColBERT folder and its float64 reference token vectors.

  colbert_numpy.py --out DIR      (make_testdata.py calls make(DIR) for the test data folder)

writes DIR/colbert/ (modules.json: sentence_transformers Transformer, then pylate.models.Dense.Dense
in 1_Dense/ with config.json and model.safetensors "linear.weight" [DIM, HIDDEN], no bias; the
Transformer is make_task_checkpoints' BertModel "task_bert_model_relu") and DIR/colbert_cases/:
CASE.ids.txt (the ids, space-separated), CASE.f32 (float32 [tokens, DIM]: PyLate's ColBERT forward, i.e. the BertModel's
last_hidden_state (bert_numpy, float64) @ linear.weight.T, each row divided by max(||row||, 1e-12)
as torch.nn.functional.normalize), and maxsim.txt: the float64 MaxSim of every (query, document)
case pair, sum_i max_j <q_i, d_j>, one "Q D SCORE" line each.

The folder's config_sentence_transformers.json has PyLate's input conventions (PYLATE: markers
[unused0] / [unused1], query_length 12, document_length 16, query expansion with [MASK] unattended,
the default skiplist string.punctuation). Text cases (TEXT_CASES, in colbert_cases/text_cases.txt:
"NAME KIND TEXT" lines, KIND query or document) are laid out here as PyLate.preprocess does (the
texts are vocabulary words separated by spaces, so WordPiece gives each word's id): [CLS] TEXT [SEP]
cut to LENGTH - 1 tokens (sentence-transformers' truncation), the marker inserted after [CLS];
queries padded with [MASK] (attention mask 0) to query_length; NAME.ids.txt / NAME.mask.txt hold
the run, NAME.f32 the rows PyLate returns: every query row, for documents the rows whose id is not
a skiplist id (each punctuation character's vocabulary id, or [UNK]'s when it has none).
"""

import argparse
import json
import os
import shutil
import string
import sys

try:
    import numpy as np
except ImportError:  # a non-Debian interpreter picked up by CMake: Debian's python3 has numpy
    if __name__ == "__main__" and os.path.exists("/usr/bin/python3") and sys.executable != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from scipy.cluster import hierarchy  # python3-scipy: PyLate pools with scipy's own linkage
except ImportError:
    sys.exit("colbert_numpy.py: needs Debian's python3-scipy (scripts/install_deps.sh installs it)")
import bert_numpy  # noqa: E402
import make_task_checkpoints as mt  # noqa: E402
import tasks_numpy  # noqa: E402

DIM = 24
# PyLate inputs as ids: [CLS] [Q]-marker ... [SEP] [MASK]... (query expansion) and [CLS] [D]-marker
# ... [SEP]; the ids are in the synthetic vocabulary (vocab_tokens: 0 [PAD], 1 [UNK], 2 [CLS], 3 [SEP], 4 [MASK]).
CASES = {
    "query": [2, 7, 100, 230, 17, 3, 4, 4, 4, 4],
    "doc_a": [2, 8, 100, 230, 17, 54, 301, 99, 3],
    "doc_b": [2, 8, 410, 22, 199, 3],
    "doc_long": [2, 8] + [int(x) for x in np.random.default_rng(5).integers(5, 500, 40)] + [3],
}
# PyLate's default query (attend_to_expansion_tokens false): the [MASK] expansion tokens have
# attention mask 0 (no token attends to them) and keep their rows (every query row is scored):
# CASE.mask.txt beside CASE.ids.txt; not in maxsim.txt.
UNATTENDED_CASES = {
    "query_unattended": ([2, 7, 100, 230, 17, 3, 4, 4, 4, 4, 4, 4], [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]),
}


PYLATE = {"query_prefix": "[unused0]", "document_prefix": "[unused1]", "query_length": 12, "document_length": 16,
          "do_query_expansion": True, "attend_to_expansion_tokens": False,
          "skiplist_words": list(string.punctuation)}
TEXT_CASES = [
    ("text_query", "query", "the movie was good"),
    ("text_query_long", "query", "the movie was not good and the plot was not great at all"),
    ("text_doc", "document", "the movie , was not good !"),
    ("text_doc_long", "document", "the film is not great , but the plot was good ! and the movie was good at all ?"),
    ("text_doc_unk", "document", "the movie ~ was good"),  # "~" is no token: [UNK], which the skiplist has
]


# PyLate's hierarchical pooling (ColBERT.encode(pool_factor=F) on documents): "NAME ROWS DIM F
# PROTECTED" lines in colbert_cases/pool_cases.txt, NAME.pool_in.f32 the rows, NAME.pool_out.f32
# what pylate_pool gives. Random unit rows, rows drawn around a few centres, exact duplicates (ties).
POOL_SHAPES = [(4, 2), (6, 2), (5, 3), (8, 2), (17, 2), (17, 3), (42, 4), (131, 2)]


def pylate_pool(rows, pool_factor, protected=1):
    """pylate.utils hierarchical_pooling of one document (float32 tensors there, numpy here)."""
    import warnings
    e = np.asarray(rows, np.float32)
    kept, rest = e[:protected], e[protected:]
    distance = 1 - rest @ rest.T
    with warnings.catch_warnings():  # scipy reads the square matrix as observations (as in PyLate)
        warnings.simplefilter("ignore")
        z = hierarchy.linkage(distance, method="ward")
    t = max(len(rest) // pool_factor, 1)
    labels = hierarchy.fcluster(z, t=t, criterion="maxclust")
    pooled = [rest[labels == c].astype(np.float64).mean(axis=0) for c in range(1, t + 1) if (labels == c).any()]
    return np.vstack(pooled + [r.astype(np.float64) for r in kept]).astype(np.float32)


def unit_rows(a):
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)


def pool_inputs():
    rng = np.random.default_rng(31)
    for rows, factor in POOL_SHAPES:
        yield "random_%d_f%d" % (rows, factor), unit_rows(rng.normal(size=(rows, DIM))), factor
        centres = rng.normal(size=(max(rows // 5, 1), DIM))
        near = centres[rng.integers(0, len(centres), rows)] + 0.15 * rng.normal(size=(rows, DIM))
        yield "centres_%d_f%d" % (rows, factor), unit_rows(near), factor
    dup = unit_rows(rng.normal(size=(9, DIM)))
    yield "duplicates_f2", np.vstack([dup, dup[2], dup[5], dup[2], dup[7]]), 2


def write_pool_cases(cdir, vectors):
    with open(os.path.join(cdir, "pool_cases.txt"), "w", encoding="utf-8") as f:
        cases = list(pool_inputs())
        cases += [("text_doc_long_f2", vectors["text_doc_long"], 2), ("doc_long_f3", vectors["doc_long"], 3)]
        for name, rows, factor in cases:
            rows = np.asarray(rows, np.float32)
            rows.tofile(os.path.join(cdir, name + ".pool_in.f32"))
            pylate_pool(rows, factor).tofile(os.path.join(cdir, name + ".pool_out.f32"))
            f.write("%s %d %d %d 1\n" % (name, len(rows), DIM, factor))


def pylate_ids(kind, text):
    """(ids, attention mask, kept rows) of PyLate's preprocess + encode for one text."""
    vocab = {t: i for i, t in enumerate(mt.mc.vocab_tokens(mt.VOCAB))}
    sp = mt.mc.special_ids(mt.VOCAB)
    words = [vocab.get(w, sp["unk"]) for w in text.split(" ")]
    length = PYLATE["query_length"] if kind == "query" else PYLATE["document_length"]
    body = [sp["cls"]] + words[:length - 3] + [sp["sep"]]  # max_seq_length = length - 1, specials included
    mask = [1] * len(body)
    if kind == "query":  # padding "max_length" with [MASK], attention mask 0
        mask += [0] * (length - 1 - len(body))
        body += [sp["mask"]] * (length - 1 - len(body))
    marker = vocab[PYLATE["query_prefix" if kind == "query" else "document_prefix"]]
    ids = body[:1] + [marker] + body[1:]
    mask = [1] + mask
    skip = {vocab.get(w, sp["unk"]) for w in PYLATE["skiplist_words"]}
    keep = list(range(len(ids))) if kind == "query" else [i for i, t in enumerate(ids) if t not in skip]
    return ids, mask, keep


def make(out):
    root = os.path.join(out, "colbert")
    cdir = os.path.join(out, "colbert_cases")
    for d in (root, cdir):
        shutil.rmtree(d, ignore_errors=True)
    mt.make_task_model(root, "task_bert_model_relu")
    model = tasks_numpy.load_model(root)  # the BertModel, read before modules.json exists
    rng = np.random.default_rng(77)
    weight = rng.normal(0.0, 1.0 / np.sqrt(mt.HIDDEN), (DIM, mt.HIDDEN)).astype(np.float32)
    with open(os.path.join(root, "modules.json"), "w", encoding="utf-8") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Dense", "type": "pylate.models.Dense.Dense"}], f)
    os.makedirs(os.path.join(root, "1_Dense"))
    with open(os.path.join(root, "1_Dense", "config.json"), "w", encoding="utf-8") as f:
        json.dump({"in_features": mt.HIDDEN, "out_features": DIM, "bias": False,
                   "activation_function": "torch.nn.modules.linear.Identity", "use_residual": False}, f)
    mt._write_safetensors(os.path.join(root, "1_Dense", "model.safetensors"),
                          [("linear.weight", "F32", weight.shape, weight.tobytes())])
    os.makedirs(cdir)
    vectors = {}
    cases = [(name, ids, None) for name, ids in CASES.items()]
    cases += [(name, ids, mask) for name, (ids, mask) in UNATTENDED_CASES.items()]
    for name, ids, mask in cases:
        n = len(ids)
        res = bert_numpy.forward(model.weights, model.config, np.asarray([ids]), np.zeros((1, n), np.int64),
                                 np.asarray([mask if mask else [1] * n], np.int64))
        h = np.asarray(res["last_hidden_state"], np.float64).reshape(n, mt.HIDDEN)
        v = h @ weight.astype(np.float64).T
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        vectors[name] = v
        with open(os.path.join(cdir, name + ".ids.txt"), "w", encoding="utf-8") as f:
            f.write(" ".join(str(i) for i in ids) + "\n")
        if mask:
            with open(os.path.join(cdir, name + ".mask.txt"), "w", encoding="utf-8") as f:
                f.write(" ".join(str(i) for i in mask) + "\n")
        v.astype(np.float32).tofile(os.path.join(cdir, name + ".f32"))
    with open(os.path.join(root, "config_sentence_transformers.json"), "w", encoding="utf-8") as f:
        json.dump(PYLATE, f)
    with open(os.path.join(cdir, "text_cases.txt"), "w", encoding="utf-8") as manifest:
        for name, kind, text in TEXT_CASES:
            ids, mask, keep = pylate_ids(kind, text)
            n = len(ids)
            res = bert_numpy.forward(model.weights, model.config, np.asarray([ids]), np.zeros((1, n), np.int64),
                                     np.asarray([mask], np.int64))
            h = np.asarray(res["last_hidden_state"], np.float64).reshape(n, mt.HIDDEN)
            v = h @ weight.astype(np.float64).T
            v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            v[keep].astype(np.float32).tofile(os.path.join(cdir, name + ".f32"))
            vectors[name] = v[keep]
            for suffix, values in ((".ids.txt", ids), (".mask.txt", mask)):
                with open(os.path.join(cdir, name + suffix), "w", encoding="utf-8") as f:
                    f.write(" ".join(str(i) for i in values) + "\n")
            manifest.write(f"{name} {kind} {text}\n")
    write_pool_cases(cdir, vectors)
    with open(os.path.join(cdir, "maxsim.txt"), "w", encoding="utf-8") as f:
        for q in CASES:
            for d in CASES:
                score = (vectors[q] @ vectors[d].T).max(axis=1).sum()
                f.write(f"{q} {d} {score:.9f}\n")


# A ModernBERT ColBERT folder (as lightonai's GTE-ModernColBERT: ModernBertModel + PyLate Dense, no
# bias): families/modernbert_model (make_family_checkpoints; byte-level BPE tokenizer.json, rotary,
# sliding windows) + 1_Dense + PyLate conventions, in DIR/colbert_modernbert/; its cases in
# DIR/colbert_modernbert_cases/ as colbert_cases' text cases (text_cases.txt "NAME KIND TEXT",
# NAME.ids.txt / .mask.txt / .f32) and pool_cases.txt. The texts are the family goldens', whose
# ids HF's tokenizers library decided (family_tokenizer_ids.json, written by
# family_tokenizer_ids.mjs); the markers are two tokens of the vocabulary, the skiplist ids each
# punctuation character's vocabulary id (PyLate's convert_tokens_to_ids; byte-level BPE has every
# ASCII character), the expansion token [MASK].
MODERNBERT_PYLATE = {"query_prefix": "Ġmovie", "document_prefix": "Ġfilm", "query_length": 20,
                     "document_length": 24, "do_query_expansion": True, "attend_to_expansion_tokens": False,
                     "skiplist_words": list(string.punctuation)}


def make_modernbert(out):
    import families_numpy
    import make_family_checkpoints as mfc
    src = os.path.join(out, "families", "modernbert_model")
    root = os.path.join(out, "colbert_modernbert")
    cdir = os.path.join(out, "colbert_modernbert_cases")
    for d in (root, cdir):
        shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(src, root, ignore=shutil.ignore_patterns("cases"))
    model = families_numpy.load_model(root)
    with open(os.path.join(root, "config.json"), encoding="utf-8") as f:
        hidden = json.load(f)["hidden_size"]
    with open(os.path.join(root, "tokenizer.json"), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    rng = np.random.default_rng(78)
    weight = rng.normal(0.0, 1.0 / np.sqrt(hidden), (DIM, hidden)).astype(np.float32)
    with open(os.path.join(root, "modules.json"), "w", encoding="utf-8") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Dense", "type": "pylate.models.Dense.Dense"}], f)
    os.makedirs(os.path.join(root, "1_Dense"))
    with open(os.path.join(root, "1_Dense", "config.json"), "w", encoding="utf-8") as f:
        json.dump({"in_features": hidden, "out_features": DIM, "bias": False,
                   "activation_function": "torch.nn.modules.linear.Identity", "use_residual": False}, f)
    mt._write_safetensors(os.path.join(root, "1_Dense", "model.safetensors"),
                          [("linear.weight", "F32", weight.shape, weight.tobytes())])
    with open(os.path.join(root, "config_sentence_transformers.json"), "w", encoding="utf-8") as f:
        json.dump(MODERNBERT_PYLATE, f)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "family_tokenizer_ids.json"), encoding="utf-8") as f:
        golden = json.load(f)["modernbert_bpe"]
    pair = golden["text_pair"]["ids"]
    first_sep = pair.index(2)
    texts = [  # (name, kind, text, HF's ids of the template [CLS] text [SEP])
        ("query", "query", mfc.TEXT_A, pair[:first_sep + 1]),
        ("doc_a", "document", mfc.TEXT, golden["text"]["ids"]),
        ("doc_b", "document", mfc.TEXT_B, [pair[0]] + pair[first_sep + 1:]),
    ]
    cls, mask_id = 1, 4
    skip = {vocab[w] for w in MODERNBERT_PYLATE["skiplist_words"] if w in vocab}
    os.makedirs(cdir)
    vectors = {}
    with open(os.path.join(cdir, "text_cases.txt"), "w", encoding="utf-8") as manifest:
        for name, kind, text, hf_ids in texts:
            assert hf_ids[0] == cls and hf_ids[-1] == 2
            length = MODERNBERT_PYLATE["query_length" if kind == "query" else "document_length"]
            body = list(hf_ids)
            assert len(body) <= length - 1
            mask = [1] * len(body)
            if kind == "query":  # [MASK] expansion to max_seq_length (length - 1), attention mask 0
                mask += [0] * (length - 1 - len(body))
                body += [mask_id] * (length - 1 - len(body))
            marker = vocab[MODERNBERT_PYLATE["query_prefix" if kind == "query" else "document_prefix"]]
            ids, mask = body[:1] + [marker] + body[1:], [1] + mask
            keep = list(range(len(ids))) if kind == "query" else [i for i, t in enumerate(ids) if t not in skip]
            n = len(ids)
            res = families_numpy.run(model, np.asarray(ids), np.zeros(n, np.int64), np.asarray(mask))
            h = np.asarray(res["last_hidden_state"], np.float64).reshape(n, hidden)
            v = h @ weight.astype(np.float64).T
            v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            vectors[name] = v[keep]
            v[keep].astype(np.float32).tofile(os.path.join(cdir, name + ".f32"))
            for suffix, values in ((".ids.txt", ids), (".mask.txt", mask)):
                with open(os.path.join(cdir, name + suffix), "w", encoding="utf-8") as f:
                    f.write(" ".join(str(i) for i in values) + "\n")
            manifest.write(f"{name} {kind} {text}\n")
    with open(os.path.join(cdir, "pool_cases.txt"), "w", encoding="utf-8") as f:
        for name in ("doc_a", "doc_b"):
            rows = vectors[name].astype(np.float32)
            rows.tofile(os.path.join(cdir, name + "_f2.pool_in.f32"))
            pylate_pool(rows, 2).tofile(os.path.join(cdir, name + "_f2.pool_out.f32"))
            f.write("%s_f2 %d %d 2 1\n" % (name, len(rows), DIM))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    make(ap.parse_args().out)
