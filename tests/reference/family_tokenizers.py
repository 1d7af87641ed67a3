# SPDX-License-Identifier: Apache-2.0
"""Small tokenizer.json files for the synthetic family checkpoints (vocab 512), in the formats the
real models ship: byte-level BPE for RoBERTa and ModernBERT, SentencePiece-style Unigram (Metaspace)
for XLM-RoBERTa / CamemBERT (fairseq ids <s> <pad> </s> <unk>) and ALBERT (<pad> <unk> [CLS]
[SEP] [MASK], lower-cased). ELECTRA and nomic-bert use WordPiece vocab.txt (make_checkpoint).

  tokenizer_json(kind) -> dict  (kind in KINDS; deterministic)
  KIND_OF_MODEL_TYPE: model_type -> kind

The ids these files give for the text cases are not computed here: HF's tokenizers library
decides them (family_tokenizer_ids.mjs writes family_tokenizer_ids.json with it; the goldens use
that file, and test_families_reference.py re-checks it when the library is installed).
"""

import collections
import re

KINDS = ("roberta_bpe", "modernbert_bpe", "xlmr_unigram", "albert_unigram")
# qwen3: the test models borrow RoBERTa's small byte-level BPE (Qwen's own Split-regex pre-tokenizer
# is not modelled here; the Qwen3 tests run on ids and on this tokenizer's texts).
KIND_OF_MODEL_TYPE = {"roberta": "roberta_bpe", "modernbert": "modernbert_bpe", "xlm-roberta": "xlmr_unigram",
                      "camembert": "xlmr_unigram", "albert": "albert_unigram", "qwen3": "roberta_bpe",
                      "gemma3_text": "roberta_bpe"}  # Gemma's own SentencePiece BPE: branch tok
VOCAB = 512

# Training text for the merges / pieces (the goldens' texts are among them).
CORPUS = [
    "The movie was REALLY good, and the acting was great!",
    "Who was rude?",
    "The Hotel was clean, but the staff was RUDE.",
    "I did not like the ending of this film.",
    "She said the food at the restaurant was fresh and delicious.",
    "We watched the whole series in one week and liked every episode.",
    "This is the best book I have read this year.",
    "Would you recommend this product to a friend?",
    "The music and the characters made the story feel real.",
    "The delivery was fast and the customer service was friendly.",
]

SPECIALS = {
    "roberta_bpe": ["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    "xlmr_unigram": ["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    "albert_unigram": ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"],
    "modernbert_bpe": ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"],
}


def _bytes_to_unicode():
    """GPT-2's reversible byte -> printable character map (the ByteLevel alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def _added(specials):
    return [{"id": i, "content": t, "single_word": False, "lstrip": t == "<mask>", "rstrip": False,
             "normalized": False, "special": True} for i, t in enumerate(specials)]


def _bpe(kind):
    specials = SPECIALS[kind]
    b2u = _bytes_to_unicode()
    vocab = {t: i for i, t in enumerate(specials)}
    for b in range(256):
        vocab[b2u[b]] = len(vocab)
    # words as ByteLevel pre-tokenizes them (a leading space becomes "Ġ")
    words = collections.Counter()
    for text in CORPUS:
        for w in re.findall(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+", text):
            words[tuple(b2u[b] for b in w.encode())] += 1
    merges = []
    while len(vocab) < VOCAB:
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append(a + " " + b)
        vocab[a + b] = len(vocab)
        new = collections.Counter()
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] += c
        words = new
    for i in range(len(vocab), VOCAB):  # pad to exactly VOCAB tokens
        vocab["<extra_%d>" % i] = i
    if kind == "roberta_bpe":
        post = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": True,
                "add_prefix_space": False}
    else:
        post = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}},
                         {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")}}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": _added(specials),
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            "post_processor": post,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "vocab": vocab, "merges": merges}}


def _unigram(kind):
    specials = SPECIALS[kind]
    lower = kind == "albert_unigram"
    counts = collections.Counter()
    for text in CORPUS:
        t = text.lower() if lower else text
        for w in t.split():
            piece = "\u2581" + w
            counts[piece] += 1
            for ch in piece:
                counts[ch] += 1
            for k in range(2, len(piece)):  # prefixes as sub-pieces
                counts[piece[:k]] += 1
    pieces = [p for p, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    singles = sorted({p for p in pieces if len(p) == 1})
    rest = [p for p in pieces if len(p) > 1][:VOCAB - len(specials) - len(singles)]
    vocab = [[t, 0.0] for t in specials]
    for p in singles + rest:
        vocab.append([p, -10.0 if len(p) == 1 else round(-1.0 - 1.0 / (counts[p] + 1), 6)])
    i = len(vocab)
    while len(vocab) < VOCAB:
        vocab.append(["<extra_%d>" % i, -20.0])
        i += 1
    cls, sep = specials[0], specials[2]
    if kind == "albert_unigram":
        cls, sep = "[CLS]", "[SEP]"
    ids = {t: n for n, (t, _) in enumerate(vocab)}
    b_type = 1 if kind == "albert_unigram" else 0
    pair = [{"SpecialToken": {"id": cls, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": sep, "type_id": 0}}]
    if kind == "xlmr_unigram":
        pair.append({"SpecialToken": {"id": sep, "type_id": 0}})
    pair += [{"Sequence": {"id": "B", "type_id": b_type}}, {"SpecialToken": {"id": sep, "type_id": b_type}}]
    norm = [{"type": "Replace", "pattern": {"String": "``"}, "content": "\""}]
    if lower:
        norm.append({"type": "Lowercase"})
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": _added(specials),
            "normalizer": {"type": "Sequence", "normalizers": norm},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "WhitespaceSplit"},
                {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}]},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": cls, "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}},
                                          {"SpecialToken": {"id": sep, "type_id": 0}}],
                               "pair": pair,
                               "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in (cls, sep)}},
            "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
            "model": {"type": "Unigram", "unk_id": specials.index("<unk>"), "vocab": vocab, "byte_fallback": False}}


def tokenizer_json(kind):
    if kind.endswith("_bpe"):
        return _bpe(kind)
    if kind.endswith("_unigram"):
        return _unigram(kind)
    raise ValueError(kind)
