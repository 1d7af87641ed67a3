# SPDX-License-Identifier: Apache-2.0
"""Goldens of chunked embedding (eb_session_embed_chunked, test_chunked), float64 numpy.

A document's tokens (no special tokens) are cut into windows as HuggingFace tokenizers does for
return_overflowing_tokens=True with a stride (tokenizers' Encoding::truncate, direction right:
windows [start, min(start + window, n)) for start = 0, step, 2 step, ... with step = window -
stride, stopping after the first window that reaches n; one window when n <= window, an empty
text's window included); each window runs as [CLS] window [SEP] through tasks_numpy (the
sentence-transformers pooling and Normalize of the model's folder), and the pooled vector is the
windows' vectors averaged with weights their token counts (1 for an empty window), then
L2-normalized when the model has a Normalize module.

  chunk_numpy.py --testdata DIR   (after make_testdata.py --out DIR) writes DIR/chunk/:
    DOC.txt                              the documents' bytes (DOC: long, short, empty)
    MODEL.DOC.W.S.windows.txt            "FIRST_TOKEN TOKENS BEGIN_BYTE END_BYTE" per window
    MODEL.DOC.W.S.none.f32               float32 [windows, hidden]
    MODEL.DOC.W.S.mean.f32               float32 [hidden]
    cases.txt                            "MODEL DOC W S WINDOWS" per case
    COMPLETE                             this script's and DIR/COMPLETE's hash (regenerated when they change)

The long document (about 12 KB) is longer than one piece the runtime reads at a time from a
session of 32 positions and 64 batch tokens, and mixes single spaces with runs of spaces, tabs
and newlines (where the runtime must not cut).
"""

import os
import sys

try:
    import numpy as np  # noqa: F401
except ImportError:
    _SYS_PY = "/usr/bin/python3"
    if os.path.exists(_SYS_PY) and os.path.realpath(sys.executable) != os.path.realpath(_SYS_PY):
        os.execv(_SYS_PY, [_SYS_PY] + sys.argv)
    raise

import argparse
import hashlib

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_checkpoint as mc  # noqa: E402
import make_task_checkpoints as mt  # noqa: E402
import make_testdata  # noqa: E402
import tasks_numpy  # noqa: E402

MODELS = ("task_st_mean_norm", "task_st_cls")
SEPARATORS = (" ", "  ", "\n", " \n\t", " ", "\n\n", " ")
# (document, window, stride)
CASES = (("long", 24, 8), ("long", 30, 0), ("long", 12, 9), ("short", 24, 8), ("short", 5, 2), ("empty", 8, 2))


def documents():
    parts = []
    i = 0
    while sum(len(p) for p in parts) < 12000:
        parts.append(make_testdata.CALIB[i % len(make_testdata.CALIB)])
        parts.append(SEPARATORS[i % len(SEPARATORS)])
        i += 1
    return {"long": "".join(parts).rstrip(), "short": make_testdata.TEXT, "empty": ""}


def overflow_windows(n, window, stride):
    """[(start, stop)] of tokenizers' Encoding::truncate(window, stride) over n tokens."""
    if n <= window:
        return [(0, n)]
    out = []
    for start in range(0, n, window - stride):
        stop = min(start + window, n)
        out.append((start, stop))
        if stop == n:
            break
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--testdata", required=True)
    args = ap.parse_args(argv)
    out = os.path.join(args.testdata, "chunk")
    h = hashlib.sha256()
    for path in (os.path.abspath(__file__), os.path.join(args.testdata, "COMPLETE")):
        with open(path, "rb") as f:
            h.update(f.read())
    stamp = h.hexdigest()[:16] + "\n"
    done = os.path.join(out, "COMPLETE")
    if os.path.exists(done) and open(done).read() == stamp:
        return
    os.makedirs(out, exist_ok=True)
    sp = mc.special_ids(mt.VOCAB)
    docs = documents()
    for name, text in docs.items():
        with open(os.path.join(out, name + ".txt"), "wb") as f:
            f.write(text.encode())
    lines = []
    for model_name in MODELS:
        model = tasks_numpy.load_model(os.path.join(args.testdata, model_name))
        for doc, window, stride in CASES:
            ids, spans = make_testdata._tokenize(docs[doc])
            rows, weights, places = [], [], []
            for start, stop in overflow_windows(len(ids), window, stride):
                seq = np.array([sp["cls"]] + ids[start:stop] + [sp["sep"]], np.int64)
                res = tasks_numpy.run(model, seq, np.zeros(len(seq), np.int64), np.ones(len(seq), np.int64))
                rows.append(res["sentence_embedding"])
                weights.append(max(stop - start, 1))
                b, e = (spans[start][0], spans[stop - 1][1]) if stop > start else (0, 0)
                places.append("%d %d %d %d\n" % (start, stop - start, b, e))
            rows = np.array(rows, np.float64)
            mean = (rows * np.array(weights, np.float64)[:, None]).sum(0) / float(sum(weights))
            if model.normalize:
                mean = mean / max(np.linalg.norm(mean), 1e-12)
            stem = os.path.join(out, "%s.%s.%d.%d" % (model_name, doc, window, stride))
            with open(stem + ".windows.txt", "w", encoding="ascii", newline="\n") as f:
                f.writelines(places)
            rows.astype("<f4").tofile(stem + ".none.f32")
            mean.astype("<f4").tofile(stem + ".mean.f32")
            lines.append("%s %s %d %d %d\n" % (model_name, doc, window, stride, len(places)))
    with open(os.path.join(out, "cases.txt"), "w", encoding="ascii", newline="\n") as f:
        f.writelines(lines)
    with open(done, "w", encoding="ascii", newline="\n") as f:
        f.write(stamp)


if __name__ == "__main__":
    main()
