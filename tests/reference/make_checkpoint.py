# SPDX-License-Identifier: Apache-2.0
"""Write a synthetic HF BERT checkpoint directory (config.json, safetensors weights, vocab.txt).

Library (make_checkpoint(...), vocab_tokens(...), special_ids(...)) and CLI:
  make_checkpoint.py --out DIR --hidden H --heads A --layers L --intermediate I --vocab V
                     --max-pos P [--type-vocab 2] [--labels N] [--dtype F32|F16|BF16]
                     [--shards K] [--no-prefix] [--init std002|fullscale] [--seed S]

labels 0 -> BertModel (embeddings/encoder/pooler); labels > 0 -> BertForSequenceClassification
(adds classifier.weight [N, H] / classifier.bias [N], never prefixed). Tensor names carry the
'bert.' prefix unless --no-prefix. Linear weights use the torch layout [out, in].

Weights are drawn in float64 from numpy's PCG64 (default_rng(seed)) in a fixed tensor order,
rounded to float32, then to the requested dtype (F16: IEEE round-to-nearest-even; BF16: the top
16 bits of the f32 with round-to-nearest-even). Consumers must read the stored values back.

safetensors is written by hand: u64 LE header length, JSON header ({"__metadata__":
{"format":"pt"}, name: {dtype, shape, data_offsets}}) padded with spaces to a multiple of 8,
then the tensor bytes back to back (one dtype per file, so every offset is itemsize-aligned).
"""

import argparse
import json
import os
import struct
import sys

try:
    import numpy as np  # noqa: F401
except ImportError:  # e.g. a pyenv interpreter picked up by CMake; Debian's python3 has numpy
    _SYS_PY = "/usr/bin/python3"
    if (__name__ == "__main__" and os.path.exists(_SYS_PY)
            and os.path.realpath(sys.executable) != os.path.realpath(_SYS_PY)):
        os.execv(_SYS_PY, [_SYS_PY] + sys.argv)
    raise

import numpy as np

DTYPES = ("F32", "F16", "BF16")
INITS = ("std002", "fullscale")

# ---------------------------------------------------------------------------------------------
# vocabulary
# ---------------------------------------------------------------------------------------------

_PUNCT = [".", ",", "!", "?", "'", '"', "-", "(", ")", ":", ";", "/", "&", "$", "%", "*",
          "+", "=", "@", "#"]
_LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)]
_DIGITS = [str(d) for d in range(10)]
_WORDS = """
the a an and or but of to in on at for with from by about as into over after before is was are
were be been has have had do does did not no yes it this that i you he she we they me him her us
them my your his its our their what which who when where why how all some any very so too just
only also more most much many really still even never always there here then than now one two
three first last new old good great best better bad worst nice fine awful terrible boring funny
sad happy beautiful wonderful amazing excellent poor long short slow fast big small little well
movie movies film story plot actor actors acting cast scene scenes music ending character
characters director script time year years day night people man woman world life way thing
things end part love like liked hate enjoy enjoyed watch watched see saw seen make made think
thought feel felt know get got go went come came take took give gave say said look looked want
tell find work worked play played read write book show series episode family friend friends
house home city car dog cat food water money job school recommend waste hour whole fun
interesting perfect simple hard easy real true special different same other another every each
both few lot quite enough again because if while though until since would could should will can
may might must weather today morning week price product service quality customer delivery phone
battery restaurant hotel room staff meal coffee dinner buy bought returned worth wait help
friendly rude clean cheap cold hot fresh delicious tasty definitely maybe
""".split()
_SUFFIXES = ["##s", "##es", "##ed", "##ing", "##ly", "##er", "##ers", "##est", "##ness",
             "##ment", "##able", "##ful", "##less", "##y", "##ion", "##tion", "##al", "##ity",
             "##ize", "##ish", "##ist", "##ous", "##ive", "##en"]
_SUB_LETTERS = ["##" + c for c in _LETTERS]
_SUB_DIGITS = ["##" + d for d in _DIGITS]


def _filler_tokens():
    seen, out = set(), []
    for t in _PUNCT + _LETTERS + _DIGITS + _WORDS + _SUFFIXES + _SUB_LETTERS + _SUB_DIGITS:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def vocab_tokens(vocab_size):
    """Exactly vocab_size tokens. V > 103: [PAD]=0, [unused0..98]=1..99, [UNK]=100, [CLS]=101,
    [SEP]=102, [MASK]=103, then filler. Otherwise [PAD],[UNK],[CLS],[SEP],[MASK] at 0..4."""
    if vocab_size > 103:
        toks = ["[PAD]"] + ["[unused%d]" % i for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    else:
        if vocab_size < 5:
            raise ValueError("vocab_size must be >= 5")
        toks = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    filler = _filler_tokens()
    need = vocab_size - len(toks)
    toks += filler[:need]
    toks += ["tok%d" % i for i in range(len(toks), vocab_size)]
    assert len(toks) == vocab_size and len(set(toks)) == vocab_size
    return toks


def special_ids(vocab_size):
    """dict pad/unk/cls/sep/mask -> id, plus first_regular: the first non-special id."""
    if vocab_size > 103:
        return {"pad": 0, "unk": 100, "cls": 101, "sep": 102, "mask": 103, "first_regular": 104}
    return {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4, "first_regular": 5}


# ---------------------------------------------------------------------------------------------
# weights
# ---------------------------------------------------------------------------------------------

def tensor_specs(hidden, layers, intermediate, vocab, max_pos, type_vocab, labels):
    """Ordered list of (unprefixed name, shape, kind); kind in emb/linear_w/bias/ln_w/ln_b."""
    s = [("embeddings.word_embeddings.weight", (vocab, hidden), "emb"),
         ("embeddings.position_embeddings.weight", (max_pos, hidden), "emb"),
         ("embeddings.token_type_embeddings.weight", (type_vocab, hidden), "emb"),
         ("embeddings.LayerNorm.weight", (hidden,), "ln_w"),
         ("embeddings.LayerNorm.bias", (hidden,), "ln_b")]

    def lin(name, out_f, in_f):
        s.append((name + ".weight", (out_f, in_f), "linear_w"))
        s.append((name + ".bias", (out_f,), "bias"))

    def ln(name):
        s.append((name + ".weight", (hidden,), "ln_w"))
        s.append((name + ".bias", (hidden,), "ln_b"))

    for i in range(layers):
        p = "encoder.layer.%d." % i
        lin(p + "attention.self.query", hidden, hidden)
        lin(p + "attention.self.key", hidden, hidden)
        lin(p + "attention.self.value", hidden, hidden)
        lin(p + "attention.output.dense", hidden, hidden)
        ln(p + "attention.output.LayerNorm")
        lin(p + "intermediate.dense", intermediate, hidden)
        lin(p + "output.dense", hidden, intermediate)
        ln(p + "output.LayerNorm")
    lin("pooler.dense", hidden, hidden)
    if labels > 0:
        lin("classifier", labels, hidden)
    return s


def _draw(rng, shape, kind, init):
    if kind == "ln_w":
        return 1.0 + rng.normal(0.0, 0.1, shape)
    if kind == "ln_b":
        return rng.normal(0.0, 0.05, shape)
    if init == "std002":
        return rng.normal(0.0, 0.02, shape)
    if kind == "emb":
        return rng.normal(0.0, 1.0, shape)
    if kind == "linear_w":
        return rng.normal(0.0, 1.0 / np.sqrt(shape[1]), shape)  # fan_in = in_features
    if kind == "bias":
        return rng.normal(0.0, 0.1, shape)
    raise ValueError(kind)


def f32_to_bf16_bits(x):
    """float32 array -> uint16 bf16 bit patterns, round-to-nearest-even (finite inputs)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def encode(x32, dtype):
    """float32 array -> (little-endian bytes, numpy view of stored values as float32)."""
    if dtype == "F32":
        a = np.ascontiguousarray(x32, dtype="<f4")
        return a.tobytes(), a
    if dtype == "F16":
        a = np.ascontiguousarray(x32.astype("<f2"))
        if not np.all(np.isfinite(a)):
            raise ValueError("value overflows float16")
        return a.tobytes(), a.astype(np.float32)
    if dtype == "BF16":
        bits = f32_to_bf16_bits(x32).astype("<u2")
        return bits.tobytes(), (bits.astype(np.uint32) << 16).view(np.float32)
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype):
    """tensors: ordered list of (name, shape, raw bytes), all of one dtype."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for _, _, raw in tensors:
            f.write(raw)
    return offset


def _shard_bounds(sizes, shards):
    """Split tensors (in order) into `shards` contiguous non-empty groups of similar byte size."""
    n = len(sizes)
    if shards > n:
        raise ValueError("more shards (%d) than tensors (%d)" % (shards, n))
    total = float(sum(sizes))
    bounds, cum, k = [0], 0, 1
    for i, sz in enumerate(sizes):
        cum += sz
        # close shard k after tensor i once it reaches its byte share, keeping enough tensors left
        if k < shards and (cum >= total * k / shards or n - (i + 1) == shards - k) and i + 1 > bounds[-1]:
            bounds.append(i + 1)
            k += 1
    bounds.append(n)
    assert len(bounds) == shards + 1 and all(a < b for a, b in zip(bounds, bounds[1:]))
    return bounds


def make_checkpoint(out, hidden, heads, layers, intermediate, vocab, max_pos, type_vocab=2,
                    labels=0, dtype="F32", shards=1, prefix=True, init="std002", seed=0):
    """Write the checkpoint directory `out`. Returns the ordered list of stored tensor names."""
    if dtype not in DTYPES:
        raise ValueError("dtype must be one of %s" % (DTYPES,))
    if init not in INITS:
        raise ValueError("init must be one of %s" % (INITS,))
    if hidden % heads:
        raise ValueError("hidden %d not divisible by heads %d" % (hidden, heads))
    if shards < 1:
        raise ValueError("shards must be >= 1")
    os.makedirs(out, exist_ok=True)
    for stale in os.listdir(out):
        if stale.startswith("model") and (stale.endswith(".safetensors") or stale.endswith(".json")):
            os.remove(os.path.join(out, stale))

    rng = np.random.default_rng(seed)
    tensors = []
    for name, shape, kind in tensor_specs(hidden, layers, intermediate, vocab, max_pos, type_vocab, labels):
        x32 = _draw(rng, shape, kind, init).astype(np.float32)
        raw, _ = encode(x32, dtype)
        full = name if (not prefix or name.startswith("classifier.")) else "bert." + name
        tensors.append((full, shape, raw))

    if shards == 1:
        write_safetensors(os.path.join(out, "model.safetensors"), tensors, dtype)
    else:
        bounds = _shard_bounds([len(t[2]) for t in tensors], shards)
        weight_map, total = {}, 0
        for k in range(shards):
            fname = "model-%05d-of-%05d.safetensors" % (k + 1, shards)
            part = tensors[bounds[k]:bounds[k + 1]]
            total += write_safetensors(os.path.join(out, fname), part, dtype)
            for name, _, _ in part:
                weight_map[name] = fname
        with open(os.path.join(out, "model.safetensors.index.json"), "w", encoding="utf-8") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
            f.write("\n")

    config = {
        "architectures": ["BertForSequenceClassification" if labels > 0 else "BertModel"],
        "model_type": "bert",
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "intermediate_size": intermediate,
        "vocab_size": vocab,
        "max_position_embeddings": max_pos,
        "type_vocab_size": type_vocab,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype],
    }
    if labels > 0:
        config["id2label"] = {str(i): "LABEL_%d" % i for i in range(labels)}
        config["label2id"] = {"LABEL_%d" % i: i for i in range(labels)}
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
        for tok in vocab_tokens(vocab):
            f.write(tok + "\n")
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True,
                   "model_max_length": max_pos}, f, indent=2)
        f.write("\n")
    return [t[0] for t in tensors]


def main(argv=None):
    ap = argparse.ArgumentParser(description="Write a synthetic HF BERT checkpoint directory.")
    ap.add_argument("--out", required=True)
    ap.add_argument("--hidden", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--intermediate", type=int, required=True)
    ap.add_argument("--vocab", type=int, required=True)
    ap.add_argument("--max-pos", type=int, required=True)
    ap.add_argument("--type-vocab", type=int, default=2)
    ap.add_argument("--labels", type=int, default=0, help="0 = BertModel, N>0 = sequence classifier")
    ap.add_argument("--dtype", choices=DTYPES, default="F32")
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--no-prefix", action="store_true", help="tensor names without 'bert.'")
    ap.add_argument("--init", choices=INITS, default="std002")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    try:
        make_checkpoint(a.out, a.hidden, a.heads, a.layers, a.intermediate, a.vocab, a.max_pos,
                        a.type_vocab, a.labels, a.dtype, a.shards, not a.no_prefix, a.init, a.seed)
    except ValueError as e:
        print("make_checkpoint: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
