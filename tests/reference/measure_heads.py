#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Accuracy of each task head on the task test models (tasks_manifest.txt): runs
edgebert-run --ids/--types/--mask on every case with MODEL.fp32.ebm and MODEL.int8.ebm and prints a
Markdown table: fp32 max abs error against the float64 goldens, int8 minimum cosine, max abs
error, and argmax agreement (logits: per case; token logits: per real token; QA: argmax of the
start / end logits per case). Errors cover real tokens only (mask 1).

  /usr/bin/python3 tests/reference/measure_heads.py BUILD/edgebert-run BUILD/testdata
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

RUN, TD = sys.argv[1], sys.argv[2]
OUT = {"encoder": ["last_hidden_state"], "sequence_classification": ["logits"],
       "question_answering": ["start_logits", "end_logits"], "token_classification": ["token_logits"],
       "sentence_embedding": ["sentence_embedding"]}
rows = {}
for line in open(os.path.join(TD, "tasks_manifest.txt")):
    model, task, case, seq = line.split()
    cdir = os.path.join(TD, model, "cases", case)
    ids, types, mask = (open(os.path.join(cdir, f)).read().strip() for f in ("ids.txt", "types.txt", "mask.txt"))
    m = np.array(mask.split(), int) == 1
    for kind in ("fp32", "int8"):
        with tempfile.TemporaryDirectory() as tmp:
            args = [RUN, "--model", os.path.join(TD, "ebm", "%s.%s.ebm" % (model, kind)), "--ids", ids, "--types", types, "--mask", mask]
            for o in OUT[task]:
                args += ["--dump", "%s=%s/%s" % (o, tmp, o)]
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            for o in OUT[task]:
                got = np.fromfile(os.path.join(tmp, o), "<f4").astype(np.float64)
                want = np.fromfile(os.path.join(cdir, o + ".f32"), "<f4").astype(np.float64)
                if o in ("last_hidden_state", "token_logits"):
                    got, want = got.reshape(len(m), -1)[m], want.reshape(len(m), -1)[m]
                elif o in ("start_logits", "end_logits"):
                    got, want = got[m], want[m]
                r = rows.setdefault((model, task, o, kind), {"err": 0, "cos": 1, "agree": 0, "n": 0})
                r["err"] = max(r["err"], np.abs(got - want).max())
                r["cos"] = min(r["cos"], float(got.ravel() @ want.ravel() / np.linalg.norm(got) / np.linalg.norm(want)))
                if o in ("logits",):
                    r["agree"] += int(got.argmax() == want.argmax()); r["n"] += 1
                elif o == "token_logits":
                    g, w = got.argmax(1), want.argmax(1); r["agree"] += int((g == w).sum()); r["n"] += len(g)
                elif o in ("start_logits", "end_logits"):
                    r["agree"] += int(got.argmax() == want.argmax()); r["n"] += 1
print("| model | output | fp32 max abs err | int8 min cosine | int8 max abs err | int8 argmax agreement |")
print("|---|---|---|---|---|---|")
for (model, task, o, kind), r in sorted(rows.items()):
    if kind != "fp32": continue
    q = rows[(model, task, o, "int8")]
    agree = "%d/%d" % (q["agree"], q["n"]) if q["n"] else "-"
    print("| %s | %s | %.2e | %.4f | %.3f | %s |" % (model, o, r["err"], q["cos"], q["err"], agree))
