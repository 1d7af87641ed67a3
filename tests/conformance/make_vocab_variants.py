#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes BERT checkpoint folders (vocab.txt + tokenizer_config.json, nothing else) into OUT_DIR,
# never into the repository, for the vocab.txt path of the conformance test:
#   vocab-cased         the uncased vocabulary plus a capitalised copy of its first 6000 word
#                       tokens, do_lower_case false (cased: no lower-casing, accents kept)
#   vocab-nocjk         the uncased vocabulary, tokenize_chinese_chars false
#   vocab-cased-nocjk   both
# Usage: make_vocab_variants.py BERT_VOCAB_DIR OUT_DIR
import json, os, sys

def main():
    src, out = sys.argv[1:3]
    tokens = open(os.path.join(src, 'vocab.txt'), encoding='utf-8').read().split('\n')
    if tokens and tokens[-1] == '':
        tokens.pop()
    have = set(tokens)
    cased = list(tokens)
    for t in tokens:
        if len(cased) - len(tokens) >= 6000:
            break
        c = t[:1].upper() + t[1:]
        if t.isalpha() and c != t and c not in have:
            cased.append(c)
            have.add(c)
    for name, vocab, config in [
            ('vocab-cased', cased, {'do_lower_case': False}),
            ('vocab-nocjk', tokens, {'do_lower_case': True, 'tokenize_chinese_chars': False}),
            ('vocab-cased-nocjk', cased, {'do_lower_case': False, 'tokenize_chinese_chars': False})]:
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'vocab.txt'), 'w', encoding='utf-8') as f:
            f.write(''.join(t + '\n' for t in vocab))
        with open(os.path.join(d, 'tokenizer_config.json'), 'w', encoding='utf-8') as f:
            json.dump(config, f)

if __name__ == '__main__':
    main()
