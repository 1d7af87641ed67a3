#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes variants of the shared tokenizer files into OUT_DIR (never into the repository), with
# the components the shared files do not use: Whitespace, Punctuation and Digits pre-tokenizers,
# split behaviours, NFC / NFKD / StripAccents / Lowercase / Strip / Prepend / literal Replace
# normalizers, Metaspace prepend_scheme "first" and split false, ByteLevel with add_prefix_space
# and without its regex, a literal Split, TemplateProcessing with type ids, ByteLevel + template.
# Usage: make_variants.py SHARED_DIR BERT_TOKENIZER_JSON OUT_DIR
import copy, json, os, sys

def main():
    shared, bert_path, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    load = lambda p: json.load(open(p, encoding='utf-8'))
    def save(name, d):
        with open(os.path.join(out, name + '.json'), 'w', encoding='utf-8') as f:
            json.dump(d, f, ensure_ascii=False)
    bert = load(bert_path)
    cls, sep = bert['post_processor']['cls'], bert['post_processor']['sep']
    template = {'type': 'TemplateProcessing',
                'single': [{'SpecialToken': {'id': cls[0], 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}},
                           {'SpecialToken': {'id': sep[0], 'type_id': 0}}],
                'pair': [{'SpecialToken': {'id': cls[0], 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}},
                         {'SpecialToken': {'id': sep[0], 'type_id': 0}}, {'Sequence': {'id': 'B', 'type_id': 1}},
                         {'SpecialToken': {'id': sep[0], 'type_id': 1}}],
                'special_tokens': {cls[0]: {'id': cls[0], 'ids': [cls[1]], 'tokens': [cls[0]]},
                                   sep[0]: {'id': sep[0], 'ids': [sep[1]], 'tokens': [sep[0]]}}}
    v = copy.deepcopy(bert)
    v['normalizer'] = {'type': 'Sequence', 'normalizers': [{'type': 'NFC'}, {'type': 'Lowercase'}, {'type': 'Strip', 'strip_left': True, 'strip_right': True}]}
    v['pre_tokenizer'] = {'type': 'Sequence', 'pretokenizers': [{'type': 'Whitespace'}, {'type': 'Punctuation', 'behavior': 'Isolated'},
                                                                 {'type': 'Digits', 'individual_digits': True}]}
    v['post_processor'] = template
    save('bert-whitespace', v)
    v = copy.deepcopy(bert)
    v['normalizer'] = {'type': 'Sequence', 'normalizers': [{'type': 'NFKD'}, {'type': 'StripAccents'}, {'type': 'Lowercase'}]}
    v['pre_tokenizer'] = {'type': 'Sequence', 'pretokenizers': [{'type': 'WhitespaceSplit'}, {'type': 'Punctuation', 'behavior': 'MergedWithPrevious'},
                                                                 {'type': 'Digits', 'individual_digits': False}]}
    save('bert-nfkd', v)
    v = copy.deepcopy(bert)
    v['normalizer'] = {'type': 'Sequence', 'normalizers': [{'type': 'NFD'}, {'type': 'Lowercase'}]}
    v['pre_tokenizer'] = {'type': 'Sequence', 'pretokenizers': [{'type': 'Split', 'pattern': {'String': ' '}, 'behavior': 'Removed', 'invert': False},
                                                                 {'type': 'Punctuation', 'behavior': 'Contiguous'}]}
    save('bert-split', v)

    t5 = load(os.path.join(shared, 'tokenizers/t5-small/tokenizer.json'))
    v = copy.deepcopy(t5)
    v['normalizer'] = {'type': 'Sequence', 'normalizers': [t5['normalizer'], {'type': 'Replace', 'pattern': {'Regex': ' {2,}'}, 'content': ' '}]}
    v['pre_tokenizer'] = {'type': 'Metaspace', 'replacement': '\u2581', 'prepend_scheme': 'first', 'split': True}
    save('t5-first', v)
    v = copy.deepcopy(t5)
    v['pre_tokenizer'] = {'type': 'Sequence', 'pretokenizers': [{'type': 'WhitespaceSplit'},
                          {'type': 'Metaspace', 'replacement': '\u2581', 'prepend_scheme': 'always', 'split': False}]}
    save('t5-nosplit', v)

    rb = load(os.path.join(shared, 'tokenizers/roberta-base/tokenizer.json'))
    v = copy.deepcopy(rb)
    v['pre_tokenizer'] = {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True}
    v['post_processor'] = dict(rb['post_processor'], add_prefix_space=True)
    save('roberta-prefix', v)
    v = copy.deepcopy(rb)
    v['pre_tokenizer'] = {'type': 'Sequence', 'pretokenizers': [{'type': 'Split', 'pattern': {'String': ' '}, 'behavior': 'MergedWithNext', 'invert': False},
                                                                 {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': False}]}
    v['post_processor'] = {'type': 'Sequence', 'processors': [{'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': False},
        {'type': 'TemplateProcessing', 'single': [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}],
         'pair': [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'Sequence': {'id': 'B', 'type_id': 1}}],
         'special_tokens': {'<s>': {'id': '<s>', 'ids': [0], 'tokens': ['<s>']}}}]}
    save('roberta-split', v)

    fr = load(os.path.join(shared, 'tokenizers/fr-sentencepiece-bpe/tokenizer.json'))
    v = copy.deepcopy(fr)
    v['normalizer'] = {'type': 'Sequence', 'normalizers': [{'type': 'Prepend', 'prepend': '\u2581'}, {'type': 'Replace', 'pattern': {'String': ' '}, 'content': '\u2581'}]}
    v['pre_tokenizer'] = None
    save('fr-prepend', v)

if __name__ == '__main__':
    main()
