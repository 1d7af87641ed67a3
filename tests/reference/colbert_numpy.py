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
            for suffix, values in ((".ids.txt", ids), (".mask.txt", mask)):
                with open(os.path.join(cdir, name + suffix), "w", encoding="utf-8") as f:
                    f.write(" ".join(str(i) for i in values) + "\n")
            manifest.write(f"{name} {kind} {text}\n")
    with open(os.path.join(cdir, "maxsim.txt"), "w", encoding="utf-8") as f:
        for q in CASES:
            for d in CASES:
                score = (vectors[q] @ vectors[d].T).max(axis=1).sum()
                f.write(f"{q} {d} {score:.9f}\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    make(ap.parse_args().out)
