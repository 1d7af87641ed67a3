#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes a tokenizer.json of the real size and shape of an LLM-block encoder's tokenizer into a
# model folder, so that the full-size benchmark models (make_llm_onnx.py: random weights) carry a
# tokenizer whose load costs what the real one's does. The real files (EmbeddingGemma 33 MB,
# Qwen3 11 MB) are not available here; the tokens are synthetic, the sizes and structure are not:
#   gemma3_text  262,144 ids: <pad> <eos> <bos> <unk> <mask>, the 256 byte-fallback tokens
#                <0x00>..<0xFF>, single characters (with "▁", the space HF's Replace normalizer
#                writes) and tokens grown by merging two earlier ones; SentencePiece BPE with
#                byte_fallback and fuse_unk, normalizer Replace(" " -> "▁"), no pre-tokenizer,
#                <bos> $A <eos>. HF's converter lists, for a SentencePiece BPE, every split of a
#                token into two tokens of the vocabulary, so it has more merges than tokens: here
#                every grown token has its own merge and about half of them one more split.
#   qwen3        151,643 byte-level BPE tokens (the 256 byte characters and tokens grown by merges,
#                one merge each: 151,387 merges) and the three special tokens, with Qwen3's Split
#                regex and ByteLevel pre-tokenizer, NFC, and the template appending <|endoftext|>.
# Deterministic (a seeded generator). Usage: make_llm_tokenizer.py --family F --out MODEL_DIR
import argparse, json, os, random, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'conformance'))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'reference'))
from family_tokenizers import _bytes_to_unicode as bytes_to_unicode  # noqa: E402  GPT-2's byte alphabet
from make_llm_variants import QWEN_PATTERN, added, seq, special  # noqa: E402  the shapes of the small files


def grow(rng, alphabet, vocab, merges, target, max_len):
    """Adds tokens made of two existing ones (short ones more often) until the vocabulary has
    `target` entries; each new token's merge is its (left, right) pair."""
    tokens = list(alphabet)
    while len(vocab) < target:
        a = tokens[min(int(rng.expovariate(1 / 3000)), len(tokens) - 1)] if rng.random() < 0.7 else rng.choice(tokens)
        b = rng.choice(alphabet) if rng.random() < 0.5 else tokens[min(int(rng.expovariate(1 / 3000)), len(tokens) - 1)]
        s = a + b
        if len(s) > max_len or s in vocab:
            continue
        vocab[s] = len(vocab)
        merges.append((a, b))
        tokens.append(s)
    return tokens


def gemma(rng):
    vocab = {}
    for t in ['<pad>', '<eos>', '<bos>', '<unk>', '<mask>']:
        vocab[t] = len(vocab)
    for b in range(256):
        vocab['<0x%02X>' % b] = len(vocab)
    # single characters: ASCII, Latin, Greek, Cyrillic, CJK, and the SentencePiece space
    chars = ['\u2581'] + [chr(c) for c in range(0x21, 0x7F)] + [chr(c) for c in range(0xC0, 0x250)] + \
            [chr(c) for c in range(0x391, 0x3CA)] + [chr(c) for c in range(0x410, 0x450)] + \
            [chr(c) for c in range(0x4E00, 0x4E00 + 6000)]
    for c in chars:
        vocab.setdefault(c, len(vocab))
    merges = []
    grown = grow(rng, chars, vocab, merges, 262144, 16)[len(chars):]
    own = dict(zip(grown, merges))
    # more splits of the grown tokens, as HF's converter lists them
    extra = []
    for s in grown:
        if rng.random() < 0.5:
            for k in range(1, len(s)):
                if s[:k] in vocab and s[k:] in vocab and (s[:k], s[k:]) != own[s]:
                    extra.append((s[:k], s[k:]))
                    break
    merges += extra
    inv = {v: k for k, v in vocab.items()}
    assert len(inv) == 262144
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [added(0, '<pad>'), added(1, '<eos>'), added(2, '<bos>'), added(3, '<unk>'), added(4, '<mask>')],
        'normalizer': {'type': 'Replace', 'pattern': {'String': ' '}, 'content': '\u2581'},
        'pre_tokenizer': None,
        'post_processor': {'type': 'TemplateProcessing',
                           'single': [special('<bos>'), seq('A', 0), special('<eos>')],
                           'pair': [special('<bos>'), seq('A', 0), special('<eos>'), seq('B', 1), special('<eos>', 1)],
                           'special_tokens': {'<bos>': {'id': '<bos>', 'ids': [2], 'tokens': ['<bos>']},
                                              '<eos>': {'id': '<eos>', 'ids': [1], 'tokens': ['<eos>']}}},
        'decoder': {'type': 'Sequence', 'decoders': [
            {'type': 'Replace', 'pattern': {'String': '\u2581'}, 'content': ' '}, {'type': 'ByteFallback'}, {'type': 'Fuse'}]},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': '<unk>', 'continuing_subword_prefix': None,
                  'end_of_word_suffix': None, 'fuse_unk': True, 'byte_fallback': True, 'ignore_merges': False,
                  'vocab': vocab, 'merges': [a + ' ' + b for a, b in merges]},
    }, {'bos_token': '<bos>', 'eos_token': '<eos>', 'pad_token': '<pad>', 'unk_token': '<unk>',
        'add_bos_token': True, 'add_eos_token': True, 'model_max_length': 2048}


def qwen3(rng):
    alphabet = list(bytes_to_unicode().values())
    vocab = {c: i for i, c in enumerate(alphabet)}
    merges = []
    grow(rng, alphabet, vocab, merges, 151643, 16)
    n = len(vocab)
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [added(n, '<|endoftext|>'), added(n + 1, '<|im_start|>'), added(n + 2, '<|im_end|>')],
        'normalizer': {'type': 'NFC'},
        'pre_tokenizer': {'type': 'Sequence', 'pretokenizers': [
            {'type': 'Split', 'pattern': {'Regex': QWEN_PATTERN}, 'behavior': 'Isolated', 'invert': False},
            {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False}]},
        'post_processor': {'type': 'TemplateProcessing',
                           'single': [seq('A', 0), special('<|endoftext|>')],
                           'pair': [seq('A', 0), special('<|endoftext|>'), seq('B', 1), special('<|endoftext|>', 1)],
                           'special_tokens': {'<|endoftext|>': {'id': '<|endoftext|>', 'ids': [n], 'tokens': ['<|endoftext|>']}}},
        'decoder': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '',
                  'end_of_word_suffix': '', 'fuse_unk': False, 'byte_fallback': False, 'ignore_merges': False,
                  'vocab': vocab, 'merges': [a + ' ' + b for a, b in merges]},
    }, {'eos_token': '<|endoftext|>', 'pad_token': '<|endoftext|>', 'model_max_length': 32768}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--family', required=True, choices=['gemma3_text', 'qwen3'])
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    rng = random.Random(24)
    tok, config = (gemma if a.family == 'gemma3_text' else qwen3)(rng)
    with open(os.path.join(a.out, 'tokenizer.json'), 'w', encoding='utf-8') as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(a.out, 'tokenizer_config.json'), 'w', encoding='utf-8') as f:
        json.dump(config, f)
    print(f"{a.family}: {len(tok['model']['vocab'])} tokens, {len(tok['model']['merges'])} merges")


if __name__ == '__main__':
    main()
