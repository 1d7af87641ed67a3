#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""On-device search end to end with the Python binding: index sentences with a sentence-embedding
model (Session.embed_many: packed runs), embed a query, take the top N by cosine (the vectors are
normalized: a dot product), rerank those N with a cross-encoder (Session.rerank), and print the
results with the time of each step.
usage: search.py --embedder E.ebm --reranker R.ebm --texts FILE [--count 300] [--top 20]
                 [--query TEXT] [--threads 1]
FILE: one sentence per line, or a TSV whose first column is the sentence (a header line
"sentence..." is skipped)."""
import argparse
import time

import numpy as np

import edgebert


def read_sentences(path, count):
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            s = line.rstrip("\n").split("\t")[0]
            if i == 0 and s == "sentence":
                continue
            if s:
                out.append(s)
            if len(out) == count:
                break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", required=True)
    ap.add_argument("--reranker", required=True)
    ap.add_argument("--texts", required=True)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--query", default="a funny and moving film about friendship")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    sentences = read_sentences(a.texts, a.count)
    t = {}
    with edgebert.Model(a.embedder) as em, edgebert.Model(a.reranker) as rm, \
            em.session(threads=a.threads) as es, rm.session(threads=a.threads) as rs:
        t0 = time.perf_counter()
        index = es.embed_many(sentences)  # [n, dim], normalized by the model's Normalize module
        t["index"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        q = es.embed(a.query)
        t["query"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        scores = index @ q
        top = np.argsort(-scores, kind="stable")[:a.top]
        t["search"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ranking = rs.rerank(a.query, [sentences[i] for i in top])
        t["rerank"] = time.perf_counter() - t0
    print(f"query: {a.query}")
    print(f"{'rank':>4} {'rerank':>8} {'cosine':>7}  sentence")
    for r, (k, score) in enumerate(ranking):
        i = int(top[k])
        print(f"{r + 1:>4} {score:8.4f} {scores[i]:7.4f}  {sentences[i][:90]}")
    print(f"index {len(sentences)} sentences: {t['index'] * 1e3:.1f} ms ({len(sentences) / t['index']:.0f} sentences/s); "
          f"query {t['query'] * 1e3:.2f} ms; top {a.top} of {len(sentences)} {t['search'] * 1e3:.2f} ms; "
          f"rerank {a.top}: {t['rerank'] * 1e3:.1f} ms; threads {a.threads}")


if __name__ == "__main__":
    main()
