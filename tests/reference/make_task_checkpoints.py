# SPDX-License-Identifier: Apache-2.0
"""Write small synthetic checkpoints of every task head, laid out exactly as transformers /
sentence-transformers save them (tensor names, config.json keys incl. id2label, folder layout).

Library: make_task_model(out, name) for the names in TASK_MODELS, and CLI:
  make_task_checkpoints.py --out DIR --model NAME [--extra-tensor NAME]...
(--extra-tensor adds an F32 [4] tensor of that name, for tests of unused-tensor reporting.)

Every model: vocab 512 (make_checkpoint.vocab_tokens), max_position 128, 2 layers, hidden 64,
4 heads, intermediate 128, "fullscale" init (linear weights N(0, 1/fan_in), embeddings N(0, 1)),
weights drawn by make_checkpoint._draw from default_rng(seed) in tensor order, stored as F32
(training-only tensors such as embeddings.position_ids as I64).
"""

import argparse
import json
import os
import shutil
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

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_checkpoint as mc  # noqa: E402

HIDDEN, HEADS, LAYERS, INTER, VOCAB, MAX_POS = 64, 4, 2, 128, 512, 128
ST_MAX_SEQ = 96  # sentence_bert_config.json max_seq_length of the sentence-transformers models

# name: (kind, architecture, activation, labels (names), pooling, normalize, seed, options)
#   kind "bert" / "distilbert" / "st" (sentence-transformers folder around a BertModel or
#   DistilBertModel)
#   options: "noprefix" (tensor names without the model prefix), "position_ids" (adds the
#   training-only I64 buffer), "subdir" (ST transformer in 0_Transformer/), "mlm" (adds
#   cls.predictions.* / vocab_* training-only tensors)
TASK_MODELS = {
    "task_bert_model_relu": ("bert", "BertModel", "relu", None, None, False, 11, ()),
    "task_bert_seqcls_tanh": ("bert", "BertForSequenceClassification", "gelu_new",
                              ["negative", "neutral", "positive"], None, False, 12, ("position_ids",)),
    "task_bert_qa": ("bert", "BertForQuestionAnswering", "gelu", None, None, False, 13, ()),
    "task_bert_token": ("bert", "BertForTokenClassification", "relu",
                        ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"], None, False, 14, ()),
    "task_bert_mlm": ("bert", "BertForMaskedLM", "gelu", None, None, False, 15, ("mlm", "position_ids")),
    "task_st_mean_norm": ("st", "BertModel", "gelu", None, "mean", True, 16, ("noprefix",)),
    "task_st_cls": ("st", "BertModel", "gelu", None, "cls", False, 16, ("noprefix",)),
    "task_st_max": ("st", "BertModel", "gelu", None, "max", False, 16, ("noprefix", "subdir")),
    "task_st_mean_sqrt_len": ("st", "BertModel", "gelu", None, "mean_sqrt_len", True, 16, ("noprefix",)),
    "task_st_distil_mean": ("st", "DistilBertModel", "gelu", None, "mean", False, 26, ("noprefix",)),
    "task_distil_model": ("distilbert", "DistilBertModel", "gelu", None, None, False, 21, ("noprefix",)),
    "task_distil_seqcls_relu": ("distilbert", "DistilBertForSequenceClassification", "relu",
                                ["NEGATIVE", "POSITIVE"], None, False, 22, ()),
    "task_distil_qa": ("distilbert", "DistilBertForQuestionAnswering", "gelu", None, None, False, 23, ()),
    "task_distil_token": ("distilbert", "DistilBertForTokenClassification", "gelu",
                          ["O", "B-MISC", "I-MISC"], None, False, 24, ()),
    "task_distil_mlm": ("distilbert", "DistilBertForMaskedLM", "gelu", None, None, False, 25, ("mlm",)),
    # cross-encoders (rerankers): one label; "ce_identity" writes sentence-transformers v4's
    # "sentence_transformers": {"activation_fn": Identity} (scores are raw logits, as
    # cross-encoder/ms-marco-MiniLM-L6-v2 ships now), without it CrossEncoder's one-label default
    # applies (Sigmoid), "ce_sigmoid_legacy" names Sigmoid by the older key
    "task_bert_rerank": ("bert", "BertForSequenceClassification", "gelu", ["LABEL_0"], None, False, 27, ()),
    "task_bert_rerank_logit": ("bert", "BertForSequenceClassification", "gelu", ["LABEL_0"], None, False, 28,
                               ("ce_identity",)),
    "task_distil_rerank": ("distilbert", "DistilBertForSequenceClassification", "gelu", ["LABEL_0"], None, False,
                           29, ("ce_sigmoid_legacy",)),
}

# The model's "sentence_transformers" config keys of the cross-encoder options.
CROSS_ENCODER_KEYS = {
    "ce_identity": {"sentence_transformers": {"activation_fn": "torch.nn.modules.linear.Identity",
                                              "version": "4.1.0"}},
    "ce_sigmoid_legacy": {"sbert_ce_default_activation_function": "torch.nn.modules.activation.Sigmoid"},
}


class _Specs(list):
    """(name without prefix, shape, kind, is_head) entries in state-dict order."""

    def add(self, name, shape, kind, head=False):
        self.append((name, shape, kind, head))

    def lin(self, name, out_f, in_f, head=False):
        self.add(name + ".weight", (out_f, in_f), "linear_w", head)
        self.add(name + ".bias", (out_f,), "bias", head)

    def ln(self, name, head=False):
        self.add(name + ".weight", (HIDDEN,), "ln_w", head)
        self.add(name + ".bias", (HIDDEN,), "ln_b", head)

    def embeddings(self, token_types):
        self.add("embeddings.word_embeddings.weight", (VOCAB, HIDDEN), "emb")
        self.add("embeddings.position_embeddings.weight", (MAX_POS, HIDDEN), "emb")
        if token_types:
            self.add("embeddings.token_type_embeddings.weight", (2, HIDDEN), "emb")
        self.ln("embeddings.LayerNorm")


def _bert_specs(arch, labels, options):
    """The tensors BertFor* state dicts hold, in their order."""
    H, s = HIDDEN, _Specs()
    s.embeddings(token_types=True)
    for i in range(LAYERS):
        p = "encoder.layer.%d." % i
        for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"):
            s.lin(p + part, H, H)
        s.ln(p + "attention.output.LayerNorm")
        s.lin(p + "intermediate.dense", INTER, H)
        s.lin(p + "output.dense", H, INTER)
        s.ln(p + "output.LayerNorm")
    # QA, token classification and masked-LM models are built with add_pooling_layer=False
    if arch in ("BertModel", "BertForSequenceClassification"):
        s.lin("pooler.dense", H, H)
    if arch in ("BertForSequenceClassification", "BertForTokenClassification"):
        s.lin("classifier", len(labels), H, head=True)
    if arch == "BertForQuestionAnswering":
        s.lin("qa_outputs", 2, H, head=True)
    if "mlm" in options:  # BertForMaskedLM's head (training-only)
        s.add("cls.predictions.bias", (VOCAB,), "bias", True)
        s.lin("cls.predictions.transform.dense", H, H, head=True)
        s.ln("cls.predictions.transform.LayerNorm", head=True)
    return s


def _distilbert_specs(arch, labels, options):
    """The tensors DistilBertFor* state dicts hold, in their order."""
    H, s = HIDDEN, _Specs()
    s.embeddings(token_types=False)
    for i in range(LAYERS):
        p = "transformer.layer.%d." % i
        for part in ("attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin"):
            s.lin(p + part, H, H)
        s.ln(p + "sa_layer_norm")
        s.lin(p + "ffn.lin1", INTER, H)
        s.lin(p + "ffn.lin2", H, INTER)
        s.ln(p + "output_layer_norm")
    if arch == "DistilBertForSequenceClassification":
        s.lin("pre_classifier", H, H, head=True)
    if arch in ("DistilBertForSequenceClassification", "DistilBertForTokenClassification"):
        s.lin("classifier", len(labels), H, head=True)
    if arch == "DistilBertForQuestionAnswering":
        s.lin("qa_outputs", 2, H, head=True)
    if "mlm" in options:  # DistilBertForMaskedLM's head (training-only, unprefixed)
        s.lin("vocab_transform", H, H, head=True)
        s.ln("vocab_layer_norm", head=True)
        s.add("vocab_projector.bias", (VOCAB,), "bias", True)
    return s


def _write_safetensors(path, tensors):
    """tensors: list of (name, dtype, shape, raw bytes); per-tensor dtype."""
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for t in tensors:
            f.write(t[3])


def _dump_json(path, obj):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def write_text_case(cdir, offsets, pair, text, text_a, text_b):
    """A text case's offsets.txt ("BEGIN END SEGMENT" per token) and its text file(s)."""
    with open(os.path.join(cdir, "offsets.txt"), "w", encoding="ascii", newline="\n") as f:
        f.writelines("%d %d %d\n" % o for o in offsets)
    texts = {"text_a.txt": text_a, "text_b.txt": text_b} if pair else {"text.txt": text}
    for fname, t in texts.items():
        with open(os.path.join(cdir, fname), "wb") as f:
            f.write(t.encode())


def _config(distil, arch, act, labels, options=()):
    if distil:
        c = {"activation": act, "architectures": [arch], "attention_dropout": 0.1, "dim": HIDDEN,
             "dropout": 0.1, "hidden_dim": INTER, "initializer_range": 0.02,
             "max_position_embeddings": MAX_POS, "model_type": "distilbert", "n_heads": HEADS,
             "n_layers": LAYERS, "pad_token_id": 0, "qa_dropout": 0.1, "seq_classif_dropout": 0.2,
             "sinusoidal_pos_embds": False, "tie_weights_": True, "torch_dtype": "float32",
             "transformers_version": "4.40.0", "vocab_size": VOCAB}
    else:
        c = {"architectures": [arch], "attention_probs_dropout_prob": 0.1, "classifier_dropout": None,
             "hidden_act": act, "hidden_dropout_prob": 0.1, "hidden_size": HIDDEN,
             "initializer_range": 0.02, "intermediate_size": INTER, "layer_norm_eps": 1e-12,
             "max_position_embeddings": MAX_POS, "model_type": "bert", "num_attention_heads": HEADS,
             "num_hidden_layers": LAYERS, "pad_token_id": 0, "position_embedding_type": "absolute",
             "torch_dtype": "float32", "transformers_version": "4.40.0", "type_vocab_size": 2,
             "use_cache": True, "vocab_size": VOCAB}
    if labels:
        c["id2label"] = {str(i): n for i, n in enumerate(labels)}
        c["label2id"] = {n: i for i, n in enumerate(labels)}
    for opt in options:
        c.update(CROSS_ENCODER_KEYS.get(opt, {}))
    return dict(sorted(c.items()))


def make_task_model(out, name, extra_tensors=()):
    """Write model `name` of TASK_MODELS into directory `out` (replaced). Returns the folder
    holding config.json (== out except for the ST 0_Transformer layout)."""
    kind, arch, act, labels, pooling, normalize, seed, options = TASK_MODELS[name]
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    ckpt = os.path.join(out, "0_Transformer") if "subdir" in options else out
    os.makedirs(ckpt, exist_ok=True)
    distil = arch.startswith("DistilBert")
    specs = _distilbert_specs(arch, labels, options) if distil else _bert_specs(arch, labels, options)
    prefix = "" if "noprefix" in options else ("distilbert." if distil else "bert.")
    rng = np.random.default_rng(seed)
    tensors = []
    for tname, shape, tkind, head in specs:
        x32 = mc._draw(rng, shape, tkind, "fullscale").astype(np.float32)
        raw, _ = mc.encode(x32, "F32")
        tensors.append(((tname if head else prefix + tname), "F32", shape, raw))
    if "position_ids" in options:
        pos = np.arange(MAX_POS, dtype="<i8").reshape(1, MAX_POS)
        tensors.append((prefix + "embeddings.position_ids", "I64", (1, MAX_POS), pos.tobytes()))
    for extra in extra_tensors:
        tensors.append((extra, "F32", (4,), np.zeros(4, "<f4").tobytes()))
    _write_safetensors(os.path.join(ckpt, "model.safetensors"), tensors)
    _dump_json(os.path.join(ckpt, "config.json"), _config(distil, arch, act, labels, options))
    with open(os.path.join(ckpt, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
        for tok in mc.vocab_tokens(VOCAB):
            f.write(tok + "\n")
    tok_class = "DistilBertTokenizer" if distil else "BertTokenizer"
    _dump_json(os.path.join(ckpt, "tokenizer_config.json"),
               {"do_lower_case": True, "model_max_length": MAX_POS, "tokenizer_class": tok_class})
    if kind == "st":
        modules = [{"idx": 0, "name": "0", "path": "0_Transformer" if "subdir" in options else "",
                    "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
        if normalize:
            modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                            "type": "sentence_transformers.models.Normalize"})
            os.makedirs(os.path.join(out, "2_Normalize"))
        _dump_json(os.path.join(out, "modules.json"), modules)
        os.makedirs(os.path.join(out, "1_Pooling"))
        _dump_json(os.path.join(out, "1_Pooling", "config.json"), {
            "word_embedding_dimension": HIDDEN,
            "pooling_mode_cls_token": pooling == "cls",
            "pooling_mode_mean_tokens": pooling == "mean",
            "pooling_mode_max_tokens": pooling == "max",
            "pooling_mode_mean_sqrt_len_tokens": pooling == "mean_sqrt_len",
            "pooling_mode_weightedmean_tokens": False,
            "pooling_mode_lasttoken": False,
            "include_prompt": True})
        _dump_json(os.path.join(out, "sentence_bert_config.json"), {"max_seq_length": ST_MAX_SEQ, "do_lower_case": False})
    return ckpt


def main(argv=None):
    ap = argparse.ArgumentParser(description="Write one synthetic task checkpoint.")
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", required=True, choices=sorted(TASK_MODELS))
    ap.add_argument("--extra-tensor", action="append", default=[])
    a = ap.parse_args(argv)
    make_task_model(a.out, a.model, a.extra_tensor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
