#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes the conformance inputs as JSON lines ({"text": ..., "pair": ...}) into OUT_DIR:
#   conformance.jsonl  the 83 multilingual inputs of ../shared/tokenizers/conformance/inputs.json
#   sst2.jsonl         the SST-2 validation sentences (../shared/models/bert-tiny-sst2-encoder)
#   pairs.jsonl        consecutive conformance inputs as text pairs
#   adversarial.jsonl  strings made to break tokenizers (scripts, combining marks, emoji ZWJ
#                      sequences, control and odd whitespace, literal special tokens, long words)
#   regex.jsonl        strings for the Split regexes of byte-level LLM tokenizers: contractions in
#                      every case, code, whitespace runs before letters / punctuation / line
#                      ends, CRLF, digit runs, Unicode spaces (U+180E, U+0085, U+3000), 'ſ
#   random.jsonl       3000 random strings (fixed seed) drawn from the same kinds of characters:
#                      ASCII words and punctuation, accents precomposed and combining, CJK, Hangul,
#                      controls, format and odd whitespace characters, unassigned and private-use
#                      code points, literal special tokens, words around 100 characters
# Usage: make_inputs.py SHARED_DIR OUT_DIR
import json, os, sys

ADVERSARIAL = [
    "", " ", "   ", "\t\n\r", "a", ".", "Hello, world!", "Don't you're we'll I'd they've it's",
    "e\u0301 e\u0301\u0301\u0301 a\u0300\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308 Z\u0351\u0352\u0353\u0354a\u0355\u0356lgo",
    "\u1100\u1161\u11a8 \uac00\ub098\ub2e4 \u3131\u314f",  # Hangul jamo and syllables
    "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 family \U0001F3F3\uFE0F\u200D\U0001F308 flag",
    "\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA flags \U0001F44D\U0001F3FD thumbs \u2764\uFE0F heart",
    "\U0001F600" * 20, "x\U0001F600y\U0001F972z",
    "ctrl\x00nul\x01\x02\x7f del\u0085nel\u200b zwsp\u200c\u200d zwj\ufeff bom\u00ad shy",
    "nbsp\u00a0em\u2003ideo\u3000tab\tvt\x0bff\x0cls\u2028ps\u2029end",
    "  leading and trailing  ", "multiple     spaces\n\n\nnew lines",
    "<s>hello</s>", "</s></s><pad><unk>", "[CLS] [SEP] [MASK] [PAD] [UNK]", "[CLS]text[SEP]",
    "a <mask> b", "x<mask>y", "  <mask>  ", "<extra_id_0> <extra_id_99>", "<<s>>", "<mask",
    "a" * 300, "supercalifragilistic" * 30, "Ab1" * 120, "\u0905" * 150,
    "0123456789 3.14159 1,000,000 ½ ⅔ Ⅻ ① x² H₂O",
    "ＡＢＣ　１２３ ｶﾞｷﾞ ﬁﬂ ㍿ ℌ ℡ ™ ﬀ",
    "İstanbul ΣΑΣ σας ς ß ẞ Ǆ ǅ ǆ Ω K Å",
    "مَرْحَبًا بِالْعَالَمِ שָׁלוֹם עוֹלָם",
    "नमस्ते क्षत्रिय ज्ञान ஸ்ரீ ශ්‍රී",
    "ภาษาไทย ທາງລາວ ភាសាខ្មែរ မြန်မာ",
    "日本語のテキスト、中文文本，한국어 텍스트。",
    "བོད་ཡིག ᠮᠣᠩᠭᠣᠯ ქართული Հայերեն አማርኛ",
    "\U00020000\U0002A6D6\U0002B820 \u4e00\u9fff \uf900 \U0002F800",
    "http://example.com/path?q=1&r=2#frag user@example.com",
    "tab\tseparated\tvalues", "quote\"s and back\\slash", "....!!!???---___",
    "mixed日本English한국어Русский",
    "\u00e9\u0065\u0301 NFC vs NFD", "A\u030A \u212B \u00C5",
    "\ud7a3\ud7a4\ud7ff", "\ue000\uf8ff private", "\U000F0000 \U0010FFFD plane 15",
]

REGEX = [
    "I'm sure you're right, we'll see: it's John's, they've said, I'd go.",
    "I'M SURE YOU'RE RIGHT, WE'LL SEE: IT'S JOHN'S, THEY'VE SAID, I'D GO. 'S 'T 'Re 'vE 'lL",
    "'s'S's 'x ' s 'ſ 'K don’t",
    "def f(x):\n    return x ** 2  # square\n\n\nclass A:\n\tpass\r\n",
    "if (a&&b||!c) { y += 0x1F; z = a[i]->next; } // done;;",
    "    four leading\n  two\n\n\n   \n\t\t tabs and \r\n\r\n crlf \r lone cr",
    "trailing spaces    ", "   ", "\n", "\r\n", " \n ", "a  \n  b", "x\n\n\ny", "a \t\n b",
    "1234567890 12 345 6789 3.14159 -42 1e10 ١٢٣ १२ ①② ½ Ⅷ",
    "price: $1,234.56!!! ...??? --- ===> <<< (((nested))) [[x]] {{y}}",
    "mongolian᠎vowel sep nelhere ideo　space nbsp x en em  zw​sp fsgsrsus",
    "été naïve coöperate été Ångström",
    "日本語とEnglish混在 한국어123 العربية राम",
    "emoji 😀😀 👨‍👩‍👧 ok👍🏽!",
    " " * 40 + "x", "\n" * 30 + "x", " \n" * 20, "a" + " " * 25 + "!" + "\t" * 10 + "\r\n" * 5,
    "<|endoftext|> <|im_start|>user\nhi<|im_end|> <bos><eos> <start_of_turn>",
]

POOLS = [
    list('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
    list('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'), [' ', ' ', '  ', '\t', '\n', '\r\n'],
    list('\u00e9\u00e8\u00ea\u00eb\u00ef\u00f1\u00e7\u00c9\u00c0\u00d6\u00dc\u00df\u0130\u0131\u03a3\u03c2\u1e9e\u01c5\u212b\u00c5'),
    list('\u0300\u0301\u0302\u0308\u0327\u0351\u05b8\u064e\u093c\u0e31\u20d7\u302a'),
    list('\u4e00\u4e2d\u6587\u65e5\u672c\u8a9e\u9fff\u3400\uf900\U00020000\U0002a6d6\U0002b820\U0002f800\u3002\uff0c\u3001'),
    list('\uac00\ud55c\uae00\u1100\u1161\u11a8\u3131\u3042\u30ab\u30fc\uff76\uff9e'),
    list('\x00\x01\x07\x0b\x0c\x1b\x7f\u0085\u00ad\u200b\u200c\u200d\u200e\u2060\ufeff\ufffd\u061c\U000e0001'),
    list('\u00a0\u1680\u2000\u2003\u2009\u202f\u205f\u3000\u2028\u2029'),
    list('\u0378\u0870\ud7a4\ud7ff\ufdd0\ufffe\U0001fffe\ue000\uf8ff\U000f0000\U0010fffd\U000e0100'),
    ['[CLS]', '[SEP]', '[MASK]', '[PAD]', '[UNK]', '[cls]', '[Sep]', '[SEP', 'MASK]', '##', '##ing'],
    list('\U0001f600\U0001f44d\U0001f3fd\u2764\ufe0f\U0001f1eb\U0001f1f7\u00bd\u2162\u2460\u00b2\u2082\ufb01\u2122\u20ac'),
    list('\u0645\u0631\u062d\u05e9\u05dc\u0928\u092e\u094d\u0e20\u0e32\u0e29\u1780\u17d2\u0f56\u10e5\u0561'),
]

def random_strings(count, seed=20240611):
    import random
    rng = random.Random(seed)
    out = []
    for i in range(count):
        parts = []
        for _ in range(rng.randint(0, 24)):
            pool = POOLS[rng.randrange(len(POOLS))]
            if rng.random() < 0.35:  # a word of one pool
                parts.append(''.join(rng.choice(pool) for _ in range(rng.randint(1, 8))))
            else:
                parts.append(rng.choice(pool))
            if rng.random() < 0.5:
                parts.append(' ')
        if i % 25 == 0:  # words around max_input_chars_per_word (100)
            parts.append(' ' + 'x\u00e9'[rng.randrange(2)] * rng.randint(95, 105) + ' ')
        out.append(''.join(parts))
    return out

def main():
    shared, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    conf = [x['text'] for x in json.load(open(os.path.join(shared, 'tokenizers/conformance/inputs.json'), encoding='utf-8'))]
    def dump(name, items):
        with open(os.path.join(out, name), 'w', encoding='utf-8') as f:
            for it in items:
                f.write(json.dumps(it, ensure_ascii=False) + '\n')
    dump('conformance.jsonl', [{'text': t} for t in conf])
    sst = os.path.join(shared, 'models/bert-tiny-sst2-encoder/sst2_validation.tsv')
    if os.path.exists(sst):
        rows = [l.rstrip('\n').split('\t')[0] for l in open(sst, encoding='utf-8')][1:]
        dump('sst2.jsonl', [{'text': t} for t in rows if t])
    dump('pairs.jsonl', [{'text': conf[i], 'pair': conf[(i + 1) % len(conf)]} for i in range(len(conf))] +
         [{'text': ADVERSARIAL[i], 'pair': ADVERSARIAL[-1 - i]} for i in range(len(ADVERSARIAL))])
    dump('adversarial.jsonl', [{'text': t} for t in ADVERSARIAL])
    dump('regex.jsonl', [{'text': t} for t in REGEX] + [{'text': REGEX[i], 'pair': REGEX[-1 - i]} for i in range(6)])
    rnd = random_strings(3000)
    dump('random.jsonl', [{'text': t} for t in rnd[:2500]] +
         [{'text': rnd[i], 'pair': rnd[i + 1]} for i in range(2500, 3000, 2)])

if __name__ == '__main__':
    main()
