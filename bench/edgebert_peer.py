#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""edgebert as one more peer of ../shared/peers (bench_peers.py --extra edgebert='...').

Protocol (see the peers' README): called with --model-dir D --threads N --inputs DIR
--seqs 8,32 --warmup W --runs R --budget S --outdir O; prints one JSON line
{"seqs": {"8": {"median_ms": ..., "times_ms": [...]}}} and writes last_hidden_state as raw
float32 to O/seq{S}.f32. The checkpoint is converted once (int8, or --fp32) next to the
outdir; latency comes from edgebert-bench, the output from edgebert-run on the given ids,
token types and mask.

usage: edgebert_peer.py --bin BUILD_DIR [--fp32] <protocol args>
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--fp32", action="store_true")
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--seqs", default="8,32,128,384")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--budget", type=float, default=15.0)
    ap.add_argument("--outdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    kind = "fp32" if a.fp32 else "int8"
    model = os.path.join(a.model_dir, "edgebert.%s.ebm" % kind)
    if not os.path.exists(model):
        cmd = [os.path.join(a.bin, "edgebert-convert"), "--input", a.model_dir, "--output", model, "--quiet"]
        if a.fp32:
            cmd.append("--fp32")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    result = {"runtime": "edgebert " + kind, "threads": a.threads, "seqs": {}}
    for S in [int(s) for s in a.seqs.split(",")]:
        with open(os.path.join(a.inputs, "seq%d.json" % S)) as f:
            inp = json.load(f)
        ids = inp["input_ids"][0] if isinstance(inp["input_ids"][0], list) else inp["input_ids"]
        mask = inp["attention_mask"][0] if isinstance(inp["attention_mask"][0], list) else inp["attention_mask"]
        types = inp["token_type_ids"][0] if isinstance(inp["token_type_ids"][0], list) else inp["token_type_ids"]
        out = os.path.join(a.outdir, "seq%d.f32" % S)
        subprocess.run([os.path.join(a.bin, "edgebert-run"), "--model", model, "--threads", str(a.threads),
                        "--ids", " ".join(map(str, ids)), "--mask", " ".join(map(str, mask)),
                        "--types", " ".join(map(str, types)), "--dump", "last_hidden_state=" + out],
                       check=True, stdout=subprocess.DEVNULL)
        js = os.path.join(a.outdir, "bench%d.json" % S)
        subprocess.run([os.path.join(a.bin, "edgebert-bench"), "--model", model, "--seq-len", str(S),
                        "--threads", str(a.threads), "--warmup", str(a.warmup), "--runs", str(a.runs),
                        "--json", js], check=True, stdout=subprocess.DEVNULL)
        with open(js) as f:
            b = json.load(f)
        result["seqs"][str(S)] = {"median_ms": b["latency_ms"]["median"], "min_ms": b["latency_ms"]["min"],
                                  "times_ms": b["times_ms"]}
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
