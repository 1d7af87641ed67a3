#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes tokenizer.json files in the shapes of the LLM-block encoders' tokenizers into OUT_DIR
# (never into the repository; their real files, 11 MB and 33 MB, are not available here), built
# from the shared vocabularies:
#   qwen3-shape          Qwen3-Embedding's: NFC, Split on Qwen2/3's regex (Isolated) + ByteLevel
#                        without its regex, byte-level BPE (roberta-base's vocab and merges, no
#                        unk), <|endoftext|> <|im_start|> <|im_end|> special added tokens, and the
#                        TemplateProcessing that appends <|endoftext|> ($A <|endoftext|>, pair
#                        $A <|endoftext|> $B:1 <|endoftext|>:1)
#   qwen3-seq-post       the same with the template after a ByteLevel post-processor (Sequence)
#   llama3-shape         Llama-3's regex (\p{N}{1,3}), ignore_merges, <|begin_of_text|> prepended
#   split-regex-<b>      Split on \s+ / a punctuation class with every behaviour, and inverted
#   gemma-shape          EmbeddingGemma's: normalizer Replace(" " -> "▁"), no pre-tokenizer,
#                        SentencePiece BPE (the French BPE's vocab and merges) with byte_fallback
#                        (<0x00>..<0xFF> added to the vocabulary) and fuse_unk, <bos> $A <eos>
# Usage: make_llm_variants.py SHARED_DIR OUT_DIR
import copy, json, os, sys

QWEN_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                  r"\s*[\r\n]+|\s+(?!\S)|\s+")

def special(t, type_id=0):
    return {'SpecialToken': {'id': t, 'type_id': type_id}}

def seq(s, type_id):
    return {'Sequence': {'id': s, 'type_id': type_id}}

def added(i, content):
    return {'id': i, 'content': content, 'single_word': False, 'lstrip': False, 'rstrip': False,
            'normalized': False, 'special': True}

def byte_level(**kw):
    d = {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': False}
    d.update(kw)
    return d

def main():
    shared, out = sys.argv[1:3]
    os.makedirs(out, exist_ok=True)
    load = lambda p: json.load(open(os.path.join(shared, 'tokenizers', p, 'tokenizer.json'), encoding='utf-8'))
    def save(name, d):
        with open(os.path.join(out, name + '.json'), 'w', encoding='utf-8') as f:
            json.dump(d, f, ensure_ascii=False)

    rb = load('roberta-base')
    n = len(rb['model']['vocab'])
    qwen = {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [added(n, '<|endoftext|>'), added(n + 1, '<|im_start|>'), added(n + 2, '<|im_end|>')],
        'normalizer': {'type': 'NFC'},
        'pre_tokenizer': {'type': 'Sequence', 'pretokenizers': [
            {'type': 'Split', 'pattern': {'Regex': QWEN_PATTERN}, 'behavior': 'Isolated', 'invert': False},
            byte_level()]},
        'post_processor': {'type': 'TemplateProcessing',
                           'single': [seq('A', 0), special('<|endoftext|>')],
                           'pair': [seq('A', 0), special('<|endoftext|>'), seq('B', 1), special('<|endoftext|>', 1)],
                           'special_tokens': {'<|endoftext|>': {'id': '<|endoftext|>', 'ids': [n], 'tokens': ['<|endoftext|>']}}},
        'decoder': byte_level(),
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '',
                  'end_of_word_suffix': '', 'fuse_unk': False, 'byte_fallback': False, 'ignore_merges': False,
                  'vocab': rb['model']['vocab'], 'merges': rb['model']['merges']},
    }
    save('qwen3-shape', qwen)
    v = copy.deepcopy(qwen)
    v['post_processor'] = {'type': 'Sequence', 'processors': [byte_level(), qwen['post_processor']]}
    save('qwen3-seq-post', v)
    v = copy.deepcopy(qwen)
    v['added_tokens'] = [added(n, '<|begin_of_text|>'), added(n + 1, '<|end_of_text|>')]
    v['pre_tokenizer']['pretokenizers'][0]['pattern'] = {'Regex': LLAMA3_PATTERN}
    v['model']['ignore_merges'] = True
    v['post_processor'] = {'type': 'Sequence', 'processors': [
        byte_level(trim_offsets=True),
        {'type': 'TemplateProcessing', 'single': [special('<|begin_of_text|>'), seq('A', 0)],
         'pair': [special('<|begin_of_text|>'), seq('A', 0), special('<|begin_of_text|>', 1), seq('B', 1)],
         'special_tokens': {'<|begin_of_text|>': {'id': '<|begin_of_text|>', 'ids': [n], 'tokens': ['<|begin_of_text|>']}}}]}
    save('llama3-shape', v)
    # every split behaviour, on a delimiter regex and (inverted) on a word regex
    for behavior in ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous']:
        for name, pattern, invert in [('space', r'\s+', False), ('punct', r'[\p{P}\p{S}]', False),
                                      ('words', r'\p{L}+|\p{N}+', True),
                                      ('empty', r' ?\p{L}+(?=\s)|x*', False)]:  # x*: empty matches in between
            v = copy.deepcopy(qwen)
            v['pre_tokenizer']['pretokenizers'][0] = {'type': 'Split', 'pattern': {'Regex': pattern},
                                                      'behavior': behavior, 'invert': invert}
            save(f'split-{name}-{behavior}', v)

    fr = load('fr-sentencepiece-bpe')
    vocab = dict(fr['model']['vocab'])
    for b in range(256):
        vocab.setdefault('<0x%02X>' % b, len(vocab))
    m = len(vocab)
    gemma = {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [added(1, '<pad>'), added(3, '<unk>'), added(m, '<bos>'), added(m + 1, '<eos>'),
                         added(m + 2, '<start_of_turn>'), added(m + 3, '<end_of_turn>')],
        'normalizer': {'type': 'Replace', 'pattern': {'String': ' '}, 'content': '\u2581'},
        'pre_tokenizer': None,
        'post_processor': {'type': 'TemplateProcessing',
                           'single': [special('<bos>'), seq('A', 0), special('<eos>')],
                           'pair': [special('<bos>'), seq('A', 0), special('<eos>'), seq('B', 1), special('<eos>', 1)],
                           'special_tokens': {'<bos>': {'id': '<bos>', 'ids': [m], 'tokens': ['<bos>']},
                                              '<eos>': {'id': '<eos>', 'ids': [m + 1], 'tokens': ['<eos>']}}},
        'decoder': {'type': 'Sequence', 'decoders': [
            {'type': 'Replace', 'pattern': {'String': '\u2581'}, 'content': ' '}, {'type': 'ByteFallback'}, {'type': 'Fuse'}]},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': '<unk>', 'continuing_subword_prefix': None,
                  'end_of_word_suffix': None, 'fuse_unk': True, 'byte_fallback': True, 'ignore_merges': False,
                  'vocab': vocab, 'merges': fr['model']['merges']},
    }
    save('gemma-shape', gemma)

if __name__ == '__main__':
    main()
