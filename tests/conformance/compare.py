#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Compares edgebert-tokenize's JSON lines with HuggingFace's (hf_encode.js) input by input and
# prints the counts: inputs whose ids / type ids match exactly, and tokens whose offsets / word ids
# match (over the inputs with identical ids). Exit 1 when an id or type id differs, or when fewer
# than --min-ratio of the offsets or word ids agree.
import argparse, json, sys

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    ap.add_argument('ours')
    ap.add_argument('reference')
    ap.add_argument('--min-ratio', type=float, default=0.99)
    ap.add_argument('--show', type=int, default=3)
    a = ap.parse_args()
    ours = [json.loads(l) for l in open(a.ours, encoding='utf-8') if l.strip()]
    ref = [json.loads(l) for l in open(a.reference, encoding='utf-8') if l.strip()]
    if len(ours) != len(ref):
        print(f'{a.name}: {len(ours)} encodings, reference has {len(ref)}')
        return 1
    n = len(ref)
    ids = types = 0
    tok = off = words = 0
    shown = 0
    for i, (o, r) in enumerate(zip(ours, ref)):
        same = o['ids'] == r['ids']
        ids += same
        types += o['type_ids'] == r['type_ids']
        if not same:
            if shown < a.show:
                print(f'  {a.name} input {i}: ids differ\n    ours {o["ids"][:40]}\n    hf   {r["ids"][:40]}')
                shown += 1
            continue
        for k in range(len(r['ids'])):
            tok += 1
            off += o['offsets'][k] == r['offsets'][k]
            words += o['word_ids'][k] == r['word_ids'][k] and o['sequence_ids'][k] == r['sequence_ids'][k]
        if (o['offsets'] != r['offsets'] or o['word_ids'] != r['word_ids']) and shown < a.show:
            print(f'  {a.name} input {i}: offsets/word ids differ\n    ours {o["offsets"][:20]} {o["word_ids"][:20]}\n    hf   {r["offsets"][:20]} {r["word_ids"][:20]}')
            shown += 1
    ro = off / tok if tok else 1.0
    rw = words / tok if tok else 1.0
    print(f'{a.name}: ids {ids}/{n}, type_ids {types}/{n}, offsets {off}/{tok} tokens ({100*ro:.2f}%), '
          f'word_ids {words}/{tok} ({100*rw:.2f}%)')
    ok = ids == n and types == n and ro >= a.min_ratio and rw >= a.min_ratio
    return 0 if ok else 1

if __name__ == '__main__':
    sys.exit(main())
