# SPDX-License-Identifier: Apache-2.0
"""Independent numpy reference (float64) of the task heads, sentence-transformers pooling and
DistilBERT, in HuggingFace semantics. Shares no code with the converter or the runtime; the BERT
encoder itself is bert_numpy.py's.

  load_model(dir)          -> Model: a BERT/DistilBERT checkpoint dir or a sentence-transformers
                              folder (modules.json; transformer in the root or the module path)
  run(model, ids, types, mask) -> dict of float64 outputs (unbatched, [S] inputs):
      last_hidden_state [S, H]          always
      pooler_output [H]                 BERT with a pooler
      logits [labels]                   *ForSequenceClassification
      start_logits [S], end_logits [S]  *ForQuestionAnswering (qa_outputs column 0 / 1)
      token_logits [S, labels]          *ForTokenClassification
      sparse_embedding [vocab], fill_mask_probs [S, vocab]  *ForMaskedLM (SPLADE; softmax of the logits)
      sentence_embedding [H]            sentence-transformers folder
  best_span(start, end, first, last, max_len) -> (i, j, score, margin)

Semantics:
  DistilBERT (modeling_distilbert.py): embeddings = LayerNorm(word[ids] + position[0..S-1]) (no
    token types, eps 1e-12); per layer sa = sa_layer_norm(x + out_lin(MHA(x))),
    x = output_layer_norm(sa + lin2(act(lin1(sa)))); MHA: q = q_lin(x) / sqrt(d), scores = q k^T
    with masked_fill(mask == 0, finfo(float32).min) over the key axis; act "gelu" (erf) or "relu".
  DistilBertForSequenceClassification: classifier(relu(pre_classifier(h[:, 0]))).
  BertForSequenceClassification: classifier(pooler_output).
  *ForQuestionAnswering: qa_outputs(h) [S, 2] -> start_logits = [:, 0], end_logits = [:, 1].
  *ForTokenClassification: classifier(h) per token.
  sentence-transformers Pooling over tokens with mask 1: cls = h[0]; mean = sum(h * m) /
    max(sum(m), 1e-9); max = max over h with masked tokens set to -1e9; mean_sqrt_len =
    sum(h * m) / sqrt(sum(m)); Normalize: x / max(||x||_2, 1e-12).
  Extractive QA span: the (i, j) with first <= i <= j <= last, j - i + 1 <= max_len, maximising
    start[i] + end[j] (the HF pipeline's argmax of softmax(start)[i] * softmax(end)[j]).
"""

import json
import math
import os

import numpy as np

import bert_numpy

MASK_NEG = float(np.finfo(np.float32).min)


class Model:
    def __init__(self, weights, config, pooling=None, normalize=False):
        self.weights = weights      # name without model prefix -> float64 array (heads unprefixed)
        self.config = config        # config.json dict
        self.pooling = pooling      # None or "cls" / "mean" / "max" / "mean_sqrt_len"
        self.normalize = normalize

    @property
    def distilbert(self):
        return self.config.get("model_type") == "distilbert"

    @property
    def architecture(self):
        return (self.config.get("architectures") or [""])[0]


def _load_tensors(ckpt_dir, prefix):
    """Stored tensors of the directory (single file), float64, model prefix stripped."""
    raw, _ = bert_numpy.read_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    out = {}
    for name, arr in raw.items():
        key = name[len(prefix):] if name.startswith(prefix) else name
        out[key] = arr.astype(np.float64) if arr.dtype.kind == "f" else arr
    return out


def read_sentence_transformers(path):
    """(checkpoint dir, pooling or None, normalize) of a sentence-transformers folder (modules.json:
    Transformer in the root or its module path, Pooling, Normalize); (path, None, False) otherwise."""
    modules_path = os.path.join(path, "modules.json")
    pooling, normalize, ckpt_dir = None, False, path
    if os.path.exists(modules_path):
        with open(modules_path, encoding="utf-8") as f:
            modules = json.load(f)
        for m in modules:
            kind = m["type"].rsplit(".", 1)[-1]
            if kind == "Transformer":
                ckpt_dir = os.path.join(path, m["path"]) if m["path"] else path
            elif kind == "Pooling":
                with open(os.path.join(path, m["path"], "config.json"), encoding="utf-8") as f:
                    pc = json.load(f)
                modes = [k for k in ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "lasttoken")
                         if pc.get("pooling_mode_" + k)]
                assert len(modes) == 1, modes
                pooling = {"cls_token": "cls", "mean_tokens": "mean", "max_tokens": "max",
                           "mean_sqrt_len_tokens": "mean_sqrt_len", "lasttoken": "lasttoken"}[modes[0]]
            elif kind == "Normalize":
                normalize = True
            elif kind == "Dense":
                pass  # read_dense_modules
            else:
                raise ValueError("unsupported module %s" % m["type"])
    return ckpt_dir, pooling, normalize


def read_dense_modules(path):
    """sentence-transformers Dense modules of the folder, in order: [(W [out, in], b or None, tanh)]
    in float64 (their config.json and model.safetensors linear.weight / linear.bias)."""
    modules_path = os.path.join(path, "modules.json")
    out = []
    if not os.path.exists(modules_path):
        return out
    with open(modules_path, encoding="utf-8") as f:
        modules = json.load(f)
    for m in modules:
        if m["type"].rsplit(".", 1)[-1] != "Dense":
            continue
        d = os.path.join(path, m["path"])
        with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        raw, _ = bert_numpy.read_safetensors(os.path.join(d, "model.safetensors"))
        w = raw["linear.weight"].astype(np.float64)
        b = raw["linear.bias"].astype(np.float64) if cfg.get("bias", True) else None
        act = cfg.get("activation_function", "torch.nn.modules.linear.Identity")
        if act not in ("torch.nn.modules.linear.Identity", "torch.nn.modules.activation.Tanh"):
            raise ValueError("unsupported Dense activation %s" % act)
        out.append((w, b, act.endswith("Tanh")))
    return out


def apply_dense(v, modules):
    """Dense modules on a pooled vector: y = x W^T (+ b), tanh when the module's activation is Tanh."""
    for w, b, tanh in modules:
        v = v @ w.T + (0.0 if b is None else b)
        if tanh:
            v = np.tanh(v)
    return v


def load_model(path):
    ckpt_dir, pooling, normalize = read_sentence_transformers(path)
    with open(os.path.join(ckpt_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    prefix = "distilbert." if config.get("model_type") == "distilbert" else "bert."
    return Model(_load_tensors(ckpt_dir, prefix), config, pooling, normalize)


def task_of_architecture(arch, sentence_embedding=False):
    """The task name of an HF architecture ("encoder" for *Model / pre-training)."""
    if sentence_embedding:
        return "sentence_embedding"
    if arch.endswith("ForMaskedLM"):
        return "masked_lm"
    for suffix, task in (("ForSequenceClassification", "sequence_classification"),
                         ("ForQuestionAnswering", "question_answering"),
                         ("ForTokenClassification", "token_classification")):
        if arch.endswith(suffix):
            return task
    return "encoder"


def _linear(x, w, name):
    return x @ w[name + ".weight"].T + w[name + ".bias"]


def _act(name):
    if name == "relu":
        return lambda x: np.maximum(x, 0.0)
    if name == "gelu":
        return bert_numpy.gelu_erf
    raise ValueError("unsupported DistilBERT activation %r" % name)


def distilbert_forward(w, config, ids, mask):
    """DistilBertModel last_hidden_state [S, H] for one sequence."""
    ids = np.asarray(ids, np.int64)
    s = len(ids)
    eps = 1e-12
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:s]
    x = bert_numpy.layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    n_heads, dim = config["n_heads"], config["dim"]
    d = dim // n_heads
    act = _act(config.get("activation", "gelu"))
    key_masked = np.asarray(mask) == 0
    for i in range(config["n_layers"]):
        p = "transformer.layer.%d." % i

        def heads(t):  # [S, dim] -> [A, S, d]
            return t.reshape(s, n_heads, d).transpose(1, 0, 2)

        q = heads(_linear(x, w, p + "attention.q_lin")) / math.sqrt(d)
        k = heads(_linear(x, w, p + "attention.k_lin"))
        v = heads(_linear(x, w, p + "attention.v_lin"))
        scores = q @ k.transpose(0, 2, 1)
        scores = np.where(key_masked[None, None, :], MASK_NEG, scores)
        probs = bert_numpy.softmax(scores, axis=-1)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(s, dim)
        sa = bert_numpy.layer_norm(_linear(ctx, w, p + "attention.out_lin") + x,
                                   w[p + "sa_layer_norm.weight"], w[p + "sa_layer_norm.bias"], eps)
        ffn = _linear(act(_linear(sa, w, p + "ffn.lin1")), w, p + "ffn.lin2")
        x = bert_numpy.layer_norm(ffn + sa, w[p + "output_layer_norm.weight"],
                                  w[p + "output_layer_norm.bias"], eps)
    return x


def pool(hidden, mask, mode, normalize):
    m = np.asarray(mask, np.float64)[:, None]
    if mode == "cls":
        v = hidden[0]
    elif mode == "mean":
        v = (hidden * m).sum(axis=0) / max(m.sum(), 1e-9)
    elif mode == "max":
        v = np.where(m > 0, hidden, -1e9).max(axis=0)
    elif mode == "mean_sqrt_len":
        v = (hidden * m).sum(axis=0) / math.sqrt(m.sum())
    elif mode == "lasttoken":  # sentence-transformers: the last position whose mask is 1 (0 when none)
        valid = np.nonzero(np.asarray(mask))[0]
        v = hidden[valid[-1] if len(valid) else 0]
    else:
        raise ValueError(mode)
    if normalize:
        v = v / max(np.linalg.norm(v), 1e-12)
    return v


def run(model, ids, types, mask):
    w, cfg = model.weights, model.config
    out = {}
    if model.distilbert:
        h = distilbert_forward(w, cfg, ids, mask)
    else:
        # BertModel semantics from bert_numpy (pooler included when present)
        res = bert_numpy.forward(w, cfg, np.asarray(ids), np.asarray(types), np.asarray(mask))
        h = res["last_hidden_state"]
        if res["pooler_output"] is not None:
            out["pooler_output"] = res["pooler_output"]
    out["last_hidden_state"] = h
    arch = model.architecture
    if model.pooling is not None:
        out["sentence_embedding"] = pool(h, mask, model.pooling, model.normalize)
    elif arch.endswith("ForSequenceClassification"):
        if model.distilbert:
            pre = np.maximum(_linear(h[0], w, "pre_classifier"), 0.0)
            out["logits"] = _linear(pre, w, "classifier")
        else:
            out["logits"] = _linear(out["pooler_output"], w, "classifier")
    elif arch.endswith("ForQuestionAnswering"):
        qa = _linear(h, w, "qa_outputs")
        out["start_logits"], out["end_logits"] = qa[:, 0], qa[:, 1]
    elif arch.endswith("ForTokenClassification"):
        out["token_logits"] = _linear(h, w, "classifier")
    elif arch.endswith("ForMaskedLM"):  # BertOnlyMLMHead / DistilBertForMaskedLM, decoder tied
        if model.distilbert:
            t, ln, bias, act, eps = ("vocab_transform", "vocab_layer_norm", "vocab_projector.bias",
                                     cfg.get("activation", "gelu"), 1e-12)
        else:
            t, ln, bias, act, eps = ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                                     "cls.predictions.bias", cfg.get("hidden_act", "gelu"),
                                     cfg.get("layer_norm_eps", 1e-12))
        x = bert_numpy.layer_norm(_act(act)(_linear(h, w, t)), w[ln + ".weight"], w[ln + ".bias"], eps)
        logits = x @ w["embeddings.word_embeddings.weight"].T + w[bias]
        out["sparse_embedding"] = np.log1p(np.maximum(logits[np.asarray(mask) == 1], 0.0)).max(axis=0)
        out["fill_mask_probs"] = fill_mask_probs(logits)
    return out


def fill_mask_probs(logits):
    """[tokens, vocab] fill-mask probabilities: HF FillMaskPipeline.postprocess's
    logits.softmax(dim=-1) at every token (top_k then ranks a row's entries)."""
    z = np.asarray(logits, np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cross_encoder_score(config, logit):
    """sentence-transformers CrossEncoder.predict's score of a one-label model's logit: the
    activation named by config["sentence_transformers"]["activation_fn"] (v4+) or
    config["sbert_ce_default_activation_function"] (older), else Sigmoid when num_labels == 1."""
    name = (config.get("sentence_transformers") or {}).get("activation_fn")
    if name is None:
        name = config.get("sbert_ce_default_activation_function")
    if name is None:
        labels = len(config.get("id2label") or {}) or config.get("num_labels", 2)
        name = "torch.nn.modules.activation.Sigmoid" if labels == 1 else "torch.nn.modules.linear.Identity"
    if name == "torch.nn.modules.activation.Sigmoid":
        return 1.0 / (1.0 + np.exp(-float(logit)))
    if name == "torch.nn.modules.linear.Identity":
        return float(logit)
    raise ValueError("unknown activation_fn %r" % name)


def truncate(strategy, a, b, budget):
    """HuggingFace tokenizers' truncate_encodings (direction right, stride 0) of token lists a and
    b (None: a single text) to `budget` text tokens (max_length minus the template's special
    tokens). Returns (a kept, b kept or None), or None where the library raises an error
    ("only_second" of a single text or of a second text too short to lose what is needed)."""
    nb = 0 if b is None else len(b)
    total = len(a) + nb
    if total <= budget:
        return a, b
    remove = total - budget
    if strategy == "only_second":
        if b is None or len(b) <= remove:
            return None
        return a, b[:len(b) - remove]
    if strategy != "longest_first":
        raise ValueError(strategy)
    if b is None:
        return a[:budget], None
    n1, n2, swap = len(a), len(b), False
    if n1 > n2:  # n1: the shorter
        n1, n2, swap = n2, n1, True
    n2 = n1 if n1 > budget else max(n1, budget - n1)
    if n1 + n2 > budget:
        n1 = budget // 2
        n2 = n1 + budget % 2
    if swap:
        n1, n2 = n2, n1
    return a[:n1], b[:n2]


def best_span(start, end, first, last, max_len):
    """Best (i, j) inside tokens [first, last], j - i + 1 <= max_len, by start[i] + end[j].
    Returns (i, j, score, margin to the second best span)."""
    scores = []
    for i in range(first, last + 1):
        for j in range(i, min(last, i + max_len - 1) + 1):
            scores.append((float(start[i] + end[j]), i, j))
    scores.sort(key=lambda t: -t[0])
    best = scores[0]
    margin = best[0] - scores[1][0] if len(scores) > 1 else float("inf")
    return best[1], best[2], best[0], margin
