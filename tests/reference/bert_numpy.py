# SPDX-License-Identifier: Apache-2.0
"""Independent numpy reference of the HF BertModel forward pass (+ pooler, + optional classifier).

This is the gold reference the C++ tests compare against. It is written for clarity, not speed.

Precision: every computation is done in float64. Weights are read from the checkpoint exactly as
stored (F16/BF16 tensors are widened bit-exactly), then promoted to float64. Callers that need
float32 outputs cast at the very end.

Semantics (HF transformers, BertModel, absolute position embeddings, post-LN):
  embeddings  = LayerNorm(word[ids] + position[0..S-1] + token_type[types])
  per layer   : a = LayerNorm(x + Wo . MHA(x) + bo);  x = LayerNorm(a + W2 . gelu(W1 . a + b1) + b2)
  attention   : softmax(Q K^T / sqrt(head_dim) + ext_mask) V, per head; head_dim = hidden / heads
  ext_mask    : (1 - attention_mask) * finfo(float32).min, added over the KEY axis only, so padded
                keys get exactly zero weight; query rows of padding tokens are still computed.
  gelu        : exact erf GELU 0.5 * x * (1 + erf(x / sqrt(2)))   (config hidden_act "gelu")
  pooler      : tanh(Wp . last_hidden_state[:, 0] + bp)   (token 0, i.e. [CLS])
  classifier  : Wc . pooler_output + bc                    (BertForSequenceClassification)
Linear weights use the torch layout [out_features, in_features]: y = x @ W.T + b.
"""

import json
import math
import os
import struct

import numpy as np

# ---------------------------------------------------------------------------------------------
# safetensors reading
# ---------------------------------------------------------------------------------------------

_ST_DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # widened to float32 by bit shifting, see _bf16_to_f32
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}


def _bf16_to_f32(u16):
    """Exact widening of bfloat16 bit patterns to float32 (bf16 = top 16 bits of an f32)."""
    return (u16.astype(np.uint32) << np.uint32(16)).view(np.float32)


def read_safetensors(path):
    """Return (tensors, metadata). tensors: name -> numpy array in its stored precision
    (BF16 is returned widened to float32; the widening is exact)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError("%s: too short for a safetensors file" % path)
    (hlen,) = struct.unpack("<Q", blob[:8])
    if 8 + hlen > len(blob):
        raise ValueError("%s: header length %d exceeds file size" % (path, hlen))
    header = json.loads(blob[8:8 + hlen].decode("utf-8"))
    data = memoryview(blob)[8 + hlen:]
    meta = header.pop("__metadata__", {}) or {}
    out = {}
    for name, info in header.items():
        dt = info["dtype"]
        if dt not in _ST_DTYPES:
            raise ValueError("%s: tensor %s has unsupported dtype %s" % (path, name, dt))
        npdt = _ST_DTYPES[dt]
        shape = tuple(int(s) for s in info["shape"])
        begin, end = (int(v) for v in info["data_offsets"])
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if end - begin != count * npdt.itemsize or end > len(data) or begin > end:
            raise ValueError("%s: tensor %s has inconsistent data_offsets" % (path, name))
        arr = np.frombuffer(data[begin:end], dtype=npdt).reshape(shape).copy()
        if dt == "BF16":
            arr = _bf16_to_f32(arr)
        out[name] = arr
    return out, meta


def _normalize_name(name):
    """Strip the optional 'bert.' prefix and map legacy LayerNorm gamma/beta names."""
    if name.startswith("bert."):
        name = name[len("bert."):]
    if name.endswith(".gamma"):
        name = name[:-len(".gamma")] + ".weight"
    elif name.endswith(".beta"):
        name = name[:-len(".beta")] + ".bias"
    return name


def load_checkpoint(ckpt_dir):
    """Load a HF BERT checkpoint directory.

    Reads config.json and either model.safetensors or model.safetensors.index.json (+ shards).
    Returns (weights, config): weights maps normalized names (no 'bert.' prefix; 'classifier.*'
    stays as is) to float64 arrays holding exactly the stored values; config is the parsed dict.
    """
    with open(os.path.join(ckpt_dir, "config.json"), "r", encoding="utf-8") as f:
        config = json.load(f)
    single = os.path.join(ckpt_dir, "model.safetensors")
    index = os.path.join(ckpt_dir, "model.safetensors.index.json")
    raw = {}
    if os.path.exists(single):
        raw, _ = read_safetensors(single)
    elif os.path.exists(index):
        with open(index, "r", encoding="utf-8") as f:
            weight_map = json.load(f)["weight_map"]
        for shard in sorted(set(weight_map.values())):
            tensors, _ = read_safetensors(os.path.join(ckpt_dir, shard))
            for name, arr in tensors.items():
                if weight_map.get(name) != shard:
                    raise ValueError("%s: tensor %s not mapped to this shard" % (shard, name))
                raw[name] = arr
        missing = set(weight_map) - set(raw)
        if missing:
            raise ValueError("index lists tensors missing from shards: %s" % sorted(missing)[:5])
    else:
        raise FileNotFoundError("%s: no model.safetensors or model.safetensors.index.json" % ckpt_dir)
    weights = {}
    for name, arr in raw.items():
        key = _normalize_name(name)
        if key in weights:
            raise ValueError("duplicate tensor after name normalization: %s" % name)
        weights[key] = arr.astype(np.float64) if arr.dtype.kind == "f" else arr
    return weights, config


# ---------------------------------------------------------------------------------------------
# building blocks (float64)
# ---------------------------------------------------------------------------------------------

_erf_ufunc = np.frompyfunc(math.erf, 1, 1)


def erf(x):
    """Elementwise erf via math.erf (numpy has none); correctly rounded to ~1 ulp in float64."""
    x = np.asarray(x, dtype=np.float64)
    return _erf_ufunc(x).astype(np.float64)


def gelu_erf(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def activation(name):
    if name == "gelu":
        return gelu_erf
    if name in ("gelu_new", "gelu_pytorch_tanh"):
        return gelu_tanh
    if name == "relu":
        return lambda x: np.maximum(x, 0.0)
    raise ValueError("unsupported hidden_act %r" % name)


def linear(x, w, b):
    """torch nn.Linear: w is [out, in]."""
    return x @ w.T + b


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # biased variance, as torch
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


MASK_NEG = float(np.finfo(np.float32).min)  # HF: (1 - mask) * torch.finfo(dtype).min


def extended_mask(attention_mask):
    """[B, S] 0/1 -> additive [B, 1, 1, S] mask over the key axis."""
    m = np.asarray(attention_mask, dtype=np.float64)
    return ((1.0 - m) * MASK_NEG)[:, None, None, :]


# ---------------------------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------------------------

def _as_batch(a, dtype):
    a = np.asarray(a, dtype=dtype)
    return a[None, :] if a.ndim == 1 else a


def embeddings_forward(weights, config, input_ids, token_type_ids=None):
    """input_ids [S] or [B, S] -> [B, S, H] (always batched)."""
    ids = _as_batch(input_ids, np.int64)
    types = np.zeros_like(ids) if token_type_ids is None else _as_batch(token_type_ids, np.int64)
    seq = ids.shape[1]
    if seq > config["max_position_embeddings"]:
        raise ValueError("sequence length %d > max_position_embeddings" % seq)
    x = (weights["embeddings.word_embeddings.weight"][ids]
         + weights["embeddings.position_embeddings.weight"][np.arange(seq)][None, :, :]
         + weights["embeddings.token_type_embeddings.weight"][types])
    return layer_norm(x, weights["embeddings.LayerNorm.weight"],
                      weights["embeddings.LayerNorm.bias"], config.get("layer_norm_eps", 1e-12))


def self_attention(weights, config, i, x, ext_mask):
    """Multi-head self-attention of layer i. x [B, S, H] -> (context [B, S, H], probs [B, A, S, S])."""
    p = "encoder.layer.%d.attention.self." % i
    n_heads = config["num_attention_heads"]
    b, s, h = x.shape
    if h % n_heads:
        raise ValueError("hidden_size %d not divisible by num_attention_heads %d" % (h, n_heads))
    d = h // n_heads

    def split(t):  # [B, S, H] -> [B, A, S, d]; head a owns features a*d .. a*d+d-1
        return t.reshape(b, s, n_heads, d).transpose(0, 2, 1, 3)

    q = split(linear(x, weights[p + "query.weight"], weights[p + "query.bias"]))
    k = split(linear(x, weights[p + "key.weight"], weights[p + "key.bias"]))
    v = split(linear(x, weights[p + "value.weight"], weights[p + "value.bias"]))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + ext_mask
    probs = softmax(scores, axis=-1)
    ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, h)
    return ctx, probs


def layer_forward(weights, config, i, x, ext_mask, return_probs=False):
    """One post-LN encoder layer. x [B, S, H] -> [B, S, H]."""
    eps = config.get("layer_norm_eps", 1e-12)
    p = "encoder.layer.%d." % i
    ctx, probs = self_attention(weights, config, i, x, ext_mask)
    attn = linear(ctx, weights[p + "attention.output.dense.weight"],
                  weights[p + "attention.output.dense.bias"])
    a = layer_norm(attn + x, weights[p + "attention.output.LayerNorm.weight"],
                   weights[p + "attention.output.LayerNorm.bias"], eps)
    act = activation(config.get("hidden_act", "gelu"))
    inter = act(linear(a, weights[p + "intermediate.dense.weight"], weights[p + "intermediate.dense.bias"]))
    out = linear(inter, weights[p + "output.dense.weight"], weights[p + "output.dense.bias"])
    y = layer_norm(out + a, weights[p + "output.LayerNorm.weight"], weights[p + "output.LayerNorm.bias"], eps)
    return (y, probs) if return_probs else y


def encoder_forward(weights, config, embeddings, attention_mask=None, return_probs=False):
    """Encoder stack starting from embedding outputs [S, H] or [B, S, H].

    Returns last_hidden_state with the same rank as `embeddings` (and, if return_probs, the list of
    per-layer attention probabilities [B, A, S, S])."""
    emb = np.asarray(embeddings, dtype=np.float64)
    squeeze = emb.ndim == 2
    x = emb[None] if squeeze else emb
    if attention_mask is None:
        attention_mask = np.ones(x.shape[:2])
    ext = extended_mask(_as_batch(attention_mask, np.float64))
    all_probs = []
    for i in range(config["num_hidden_layers"]):
        x, probs = layer_forward(weights, config, i, x, ext, return_probs=True)
        all_probs.append(probs)
    if squeeze:
        x = x[0]
    return (x, all_probs) if return_probs else x


def pooler_forward(weights, last_hidden_state):
    """HF BertPooler: tanh(dense(hidden[:, 0])). Returns None if the checkpoint has no pooler."""
    if "pooler.dense.weight" not in weights:
        return None
    first = last_hidden_state[..., 0, :]
    return np.tanh(linear(first, weights["pooler.dense.weight"], weights["pooler.dense.bias"]))


def classifier_forward(weights, pooled):
    if pooled is None or "classifier.weight" not in weights:
        return None
    return linear(pooled, weights["classifier.weight"], weights["classifier.bias"])


def forward(weights, config, input_ids, token_type_ids=None, attention_mask=None, return_probs=False):
    """Full forward. input_ids [S] (outputs unbatched) or [B, S] (outputs batched).

    Returns dict(last_hidden_state [.., S, H], pooler_output [.., H] or None,
                 logits [.., labels] or None) in float64 (+ 'attentions' if return_probs)."""
    ids = np.asarray(input_ids)
    unbatched = ids.ndim == 1
    emb = embeddings_forward(weights, config, ids, token_type_ids)
    if attention_mask is None:
        attention_mask = np.ones(emb.shape[:2])
    hidden, probs = encoder_forward(weights, config, emb, _as_batch(attention_mask, np.float64),
                                    return_probs=True)
    pooled = pooler_forward(weights, hidden)
    logits = classifier_forward(weights, pooled)
    if unbatched:
        hidden = hidden[0]
        pooled = None if pooled is None else pooled[0]
        logits = None if logits is None else logits[0]
    out = {"last_hidden_state": hidden, "pooler_output": pooled, "logits": logits}
    if return_probs:
        out["attentions"] = probs
    return out
