#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Compares edgebert-tokenize's JSON lines with HuggingFace's (hf_encode.js) input by input and
# prints the counts: inputs whose ids / type ids match exactly, and tokens whose offsets / word ids
# match (over the inputs with identical ids). The reference reports offsets in code points: a
# byte offset inside a character (byte-level tokens) has no exact code-point form, so such an
# offset matches when ours, converted to code points by the reference's own rule
# (BytesToCharOffsetConverter: a byte maps to the character holding it), equals the reference's. Exit 1 when an id or type id differs, or when fewer
# than --min-ratio of the offsets or word ids agree.
import argparse, json, sys

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('name')
    ap.add_argument('ours')
    ap.add_argument('reference')
    ap.add_argument('--min-ratio', type=float, default=0.99)
    ap.add_argument('--show', type=int, default=3)
    ap.add_argument('--inputs', help='the JSON-lines inputs (to convert byte offsets inside characters)')
    a = ap.parse_args()
    ours = [json.loads(l) for l in open(a.ours, encoding='utf-8') if l.strip()]
    ref = [json.loads(l) for l in open(a.reference, encoding='utf-8') if l.strip()]
    if len(ours) != len(ref):
        print(f'{a.name}: {len(ours)} encodings, reference has {len(ref)}')
        return 1
    n = len(ref)
    texts = [json.loads(l) for l in open(a.inputs, encoding='utf-8') if l.strip()] if a.inputs else None

    def char_map(s):  # byte index -> index of the character holding it
        m = []
        for i, ch in enumerate(s):
            m += [i] * len(ch.encode('utf-8'))
        return m

    def same_offset(i, k, o, r):
        if o['offsets'][k] == r['offsets'][k]:
            return True
        if texts is None or 'char_offsets' not in r or r['sequence_ids'][k] is None:
            return False
        s = texts[i]['text'] if r['sequence_ids'][k] == 0 else texts[i].get('pair', '')
        m = char_map(s)
        b, e = o['offsets'][k]
        if b > len(m) or e > len(m):
            return False
        cb = m[b] if b < len(m) else len(s)
        ce = m[e] if e < len(m) else (m[e - 1] + 1 if e > 0 else 0)
        return [cb, ce] == r['char_offsets'][k]
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
            off += same_offset(i, k, o, r)
            words += o['word_ids'][k] == r['word_ids'][k] and o['sequence_ids'][k] == r['sequence_ids'][k]
        if (not all(same_offset(i, k, o, r) for k in range(len(r['ids']))) or o['word_ids'] != r['word_ids']) and shown < a.show:
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
