#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns a BertModel checkpoint folder (../shared/peers/make_model.py's OUT: config.json,
model.safetensors with bert.* names and the pooler, vocab.txt) into a one-label cross-encoder
(BertForSequenceClassification, num_labels 1: the shape of ms-marco-MiniLM / bge-reranker) in
OUT: the same tensors plus classifier.weight [1, hidden] and classifier.bias [1], normal(0, 0.02)
from a fixed seed. The peer's ONNX model of the same folder computes last_hidden_state; the
cross-encoder's head (pooler + one-row classifier) adds under 0.1 % of the operations, so the
two are timed on the same weights (bench/peers/run_rerank_peer.sh).
usage: make_cross_encoder.py IN_DIR OUT_DIR"""
import json
import os
import shutil
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    return header, data


def write_safetensors(path, tensors):
    """tensors: name -> float32 numpy array, written in name order (atomically)."""
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        b = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    config = json.load(open(os.path.join(src, "config.json")))
    header, data = read_safetensors(os.path.join(src, "model.safetensors"))
    tensors = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            sys.exit(f"{name}: dtype {t['dtype']}, expected F32")
        a, b = t["data_offsets"]
        tensors[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(t["shape"])
    if "bert.pooler.dense.weight" not in tensors:
        sys.exit("the checkpoint has no bert.pooler.dense: a cross-encoder classifies the pooler output")
    hidden = config["hidden_size"]
    rng = np.random.default_rng(20251)
    tensors["classifier.weight"] = rng.normal(0, 0.02, (1, hidden)).astype(np.float32)
    tensors["classifier.bias"] = rng.normal(0, 0.02, (1,)).astype(np.float32)
    os.makedirs(out, exist_ok=True)
    config["architectures"] = ["BertForSequenceClassification"]
    config["num_labels"] = 1
    config["id2label"] = {"0": "LABEL_0"}
    config["label2id"] = {"LABEL_0": 0}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    shutil.copyfile(os.path.join(src, "vocab.txt"), os.path.join(out, "vocab.txt"))
    print(f"{out}: BertForSequenceClassification, 1 label, {len(tensors)} tensors")


if __name__ == "__main__":
    main()
