#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ModernBERT as a torch 1.13 module (HF transformers semantics and tensor names), and the ONNX
Runtime peer of the ModernBERT speed comparison (issue 18).

Copy this file (and bench_ort_modernbert.mjs) into a writable copy of ../shared/peers, then
  python3 make_modernbert_onnx.py --out models/modernbert_base
writes
  OUT/config.json + OUT/model.safetensors   ModernBertModel checkpoint (unprefixed HF names:
                                            embeddings.tok_embeddings.weight, layers.N.attn.Wqkv.weight, ...)
  OUT/model.onnx                            fp32 torch.onnx.export of ModernBertModel below (opset 14,
                                            dynamic sequence length); inputs input_ids, attention_mask
  OUT/model_int8.onnx                       make_model.quantize_onnx of it: every weight MatMul as
                                            DynamicQuantizeLinear + MatMulInteger (ORT's quantize_dynamic pattern)
  OUT/inputs/seq{S}.json                    input_ids / attention_mask / token_type_ids (last S/8 padded)
  OUT/reference/seq{S}.f32                  torch fp32 last_hidden_state of those inputs
Default shape: ModernBERT-base (22 layers, hidden 768, 12 heads, intermediate 1152, local window
128, global attention every 3rd layer, vocab 50368); random weights N(0, 0.02), LayerNorm weight 1
without bias (norm_bias false), no linear biases -- as the real model.

The module (ModernBertModel, ModernBertHead, load_hf) is also the independent torch cross-check of
tests/reference/families_numpy.py (tests/reference/test_families_reference.py). Semantics: HF
modeling_modernbert (sdpa/eager path): pre-norm, layer 0 without attn_norm, rotate-half rotary with
global/local theta, sliding layers (l % global_attn_every_n_layers != 0, or layer_types) see keys
|i - j| <= local_attention // 2, GeGLU MLP Wo(act(input) * gate), final_norm.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = dict(hidden_size=768, num_hidden_layers=22, num_attention_heads=12, intermediate_size=1152,
            local_attention=128, global_attn_every_n_layers=3, vocab_size=50368, max_position_embeddings=8192)

ACTS = {"gelu": F.gelu, "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
        "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"), "relu": F.relu, "silu": F.silu}


class BiasOptionalLayerNorm(nn.Module):
    """nn.LayerNorm(bias=...) of newer torch: torch 1.13's LayerNorm always has a bias."""

    def __init__(self, dim, eps, bias):
        super().__init__()
        self.eps, self.dim = eps, dim
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, (self.dim,), self.weight, self.bias, self.eps)


def layer_kinds(c):
    """(sliding per layer, full-attention theta, sliding theta), from either config spelling."""
    n = c["num_hidden_layers"]
    if c.get("layer_types"):
        sliding = [t == "sliding_attention" for t in c["layer_types"]]
    else:
        every = c.get("global_attn_every_n_layers", 3)
        sliding = [bool(i % every) for i in range(n)]
    rp = c.get("rope_parameters") or {}
    g = (rp.get("full_attention") or {}).get("rope_theta", c.get("global_rope_theta", 160000.0))
    lo = (rp.get("sliding_attention") or {}).get("rope_theta", c.get("local_rope_theta", 10000.0))
    return sliding, float(g), float(lo)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def rope_cos_sin(theta, head_dim, seq, dtype):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=dtype) / head_dim))
    freqs = torch.outer(torch.arange(seq, dtype=dtype), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


class ModernBertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        H = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.head_dim = H // self.heads
        self.Wqkv = nn.Linear(H, 3 * H, bias=c.get("attention_bias", False))
        self.Wo = nn.Linear(H, H, bias=c.get("attention_bias", False))

    def forward(self, x, cos, sin, additive_mask):
        B, S, H = x.shape
        qkv = self.Wqkv(x).view(B, S, 3, self.heads, self.head_dim)
        q, k, v = (t.transpose(1, 2) for t in qkv.unbind(dim=2))  # [B, A, S, d]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.head_dim ** -0.5 + additive_mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.Wo(ctx.transpose(1, 2).reshape(B, S, H))


class ModernBertMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        H, I = c["hidden_size"], c["intermediate_size"]
        self.Wi = nn.Linear(H, 2 * I, bias=c.get("mlp_bias", False))
        self.Wo = nn.Linear(I, H, bias=c.get("mlp_bias", False))
        self.act = ACTS[c.get("hidden_activation", "gelu")]

    def forward(self, x):
        inp, gate = self.Wi(x).chunk(2, dim=-1)
        return self.Wo(self.act(inp) * gate)


class ModernBertEncoderLayer(nn.Module):
    def __init__(self, c, index):
        super().__init__()
        H, eps, nb = c["hidden_size"], c.get("norm_eps", 1e-5), c.get("norm_bias", False)
        self.attn_norm = nn.Identity() if index == 0 else BiasOptionalLayerNorm(H, eps, nb)
        self.attn = ModernBertAttention(c)
        self.mlp_norm = BiasOptionalLayerNorm(H, eps, nb)
        self.mlp = ModernBertMLP(c)

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.attn_norm(x), cos, sin, mask)
        return x + self.mlp(self.mlp_norm(x))


class ModernBertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.norm = BiasOptionalLayerNorm(c["hidden_size"], c.get("norm_eps", 1e-5), c.get("norm_bias", False))

    def forward(self, ids):
        return self.norm(self.tok_embeddings(ids))


class ModernBertModel(nn.Module):
    """last_hidden_state of HF ModernBertModel (input_ids, attention_mask [B, S])."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.sliding, self.global_theta, self.local_theta = layer_kinds(c)
        self.window = c.get("local_attention", 128)
        self.embeddings = ModernBertEmbeddings(c)
        self.layers = nn.ModuleList([ModernBertEncoderLayer(c, i) for i in range(c["num_hidden_layers"])])
        self.final_norm = BiasOptionalLayerNorm(c["hidden_size"], c.get("norm_eps", 1e-5), c.get("norm_bias", False))

    def forward(self, input_ids, attention_mask):
        x = self.embeddings(input_ids)
        S, dt = input_ids.shape[1], x.dtype
        d = self.config["hidden_size"] // self.config["num_attention_heads"]
        neg = torch.finfo(dt).min
        keep = attention_mask[:, None, None, :].bool()  # [B, 1, 1, S] over keys
        pos = torch.arange(S)
        near = (pos[:, None] - pos[None, :]).abs() <= self.window // 2  # [S, S]
        full_mask = (~keep).to(dt) * neg  # additive: 0 or finfo.min
        local_mask = (~(keep & near)).to(dt) * neg
        g = rope_cos_sin(self.global_theta, d, S, dt)
        lo = rope_cos_sin(self.local_theta, d, S, dt)
        for i, layer in enumerate(self.layers):
            cos, sin = lo if self.sliding[i] else g
            x = layer(x, cos, sin, local_mask if self.sliding[i] else full_mask)
        return self.final_norm(x)


class ModernBertHead(nn.Module):
    """ModernBertPredictionHead: norm(act(dense(x)))."""

    def __init__(self, c):
        super().__init__()
        H = c["hidden_size"]
        self.dense = nn.Linear(H, H, bias=c.get("classifier_bias", False))
        self.act = ACTS[c.get("classifier_activation", "gelu")]
        self.norm = BiasOptionalLayerNorm(H, c.get("norm_eps", 1e-5), c.get("norm_bias", False))

    def forward(self, x):
        return self.norm(self.act(self.dense(x)))


class ModernBertWithHead(nn.Module):
    """ModernBertFor{SequenceClassification,TokenClassification,QuestionAnswering}: tensor names
    model.*, head.*, classifier.*. forward -> dict of outputs (batch 1 squeezed by the caller)."""

    def __init__(self, c, task, num_labels):
        super().__init__()
        self.task = task
        self.model = ModernBertModel(c)
        self.head = ModernBertHead(c)
        self.classifier = nn.Linear(c["hidden_size"], num_labels)
        self.pooling = c.get("classifier_pooling", "cls")

    def forward(self, input_ids, attention_mask):
        h = self.model(input_ids, attention_mask)
        out = {"last_hidden_state": h}
        if self.task == "sequence_classification":
            if self.pooling == "cls":
                pooled = h[:, 0]
            else:
                m = attention_mask.unsqueeze(-1).to(h.dtype)
                pooled = (h * m).sum(dim=1) / m.sum(dim=1)
            out["logits"] = self.classifier(self.head(pooled))
        else:
            logits = self.classifier(self.head(h))
            if self.task == "question_answering":
                out["start_logits"], out["end_logits"] = logits[..., 0], logits[..., 1]
            else:
                out["token_logits"] = logits
        return out


# ----------------------------------------------------------------------------- checkpoints
def read_safetensors(path):
    dt = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        blob = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(blob[b:e], dtype=dt[info["dtype"]]).reshape(info["shape"])
    return out


def load_hf(model, ckpt_dir, dtype=torch.float64, ignore_prefixes=("decoder.",)):
    """Loads an HF ModernBERT checkpoint into `model` with load_state_dict(strict=True): every
    stored tensor must be a parameter of the module (except the training-only ignore_prefixes)."""
    tensors = read_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    sd = {k: torch.from_numpy(np.array(v, dtype=np.float64)) for k, v in tensors.items()
          if not k.startswith(ignore_prefixes)}
    model.to(dtype).load_state_dict(sd, strict=True)
    return model.eval()


def write_safetensors(path, tensors):
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, a in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for a in tensors.values():
            f.write(np.ascontiguousarray(a, dtype="<f4").tobytes())


def hf_config(c):
    cfg = {"architectures": ["ModernBertModel"], "model_type": "modernbert", "attention_bias": False,
           "attention_dropout": 0.0, "bos_token_id": 50281, "cls_token_id": 50281, "eos_token_id": 50282,
           "sep_token_id": 50282, "pad_token_id": 50283, "classifier_activation": "gelu", "classifier_bias": False,
           "classifier_dropout": 0.0, "classifier_pooling": "mean", "decoder_bias": True, "embedding_dropout": 0.0,
           "global_rope_theta": 160000.0, "local_rope_theta": 10000.0, "hidden_activation": "gelu",
           "initializer_cutoff_factor": 2.0, "initializer_range": 0.02, "mlp_bias": False, "mlp_dropout": 0.0,
           "norm_bias": False, "norm_eps": 1e-05, "torch_dtype": "float32", "transformers_version": "4.48.0"}
    cfg.update(c)
    return dict(sorted(cfg.items()))


def random_state(model, seed):
    """N(0, 0.02) for every linear / embedding weight, LayerNorm weight 1 (no biases)."""
    g = torch.Generator().manual_seed(seed)
    sd = {}
    for name, p in model.state_dict().items():
        if name.endswith("norm.weight"):
            sd[name] = torch.ones_like(p)
        else:
            sd[name] = torch.randn(p.shape, generator=g, dtype=torch.float32) * 0.02
    model.load_state_dict(sd, strict=True)
    return {k: v.numpy() for k, v in sd.items()}


def peer_inputs(seq, vocab, seed):
    """input ids of random tokens (CLS first, SEP last real), the last seq/8 padded (mask 0)."""
    rng = np.random.default_rng(seed + seq)
    pad = seq // 8
    ids = rng.integers(100, vocab - 200, size=seq)
    ids[0], ids[seq - pad - 1] = 50281, 50282
    ids[seq - pad:] = 50283
    mask = np.ones(seq, np.int64)
    mask[seq - pad:] = 0
    return {"input_ids": ids.tolist(), "attention_mask": mask.tolist(), "token_type_ids": [0] * seq}


def export_onnx(model, path, opset=14):
    ids = torch.zeros(1, 16, dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(model, (ids, torch.ones_like(ids)), path, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": {1: "seq"}, "attention_mask": {1: "seq"},
                                        "last_hidden_state": {1: "seq"}},
                          opset_version=opset, do_constant_folding=True)


def compare(model_dir, outdir, seqs):
    """Accuracy of a peer's last_hidden_state (OUTDIR/seq{S}.f32) against the torch fp32 reference,
    over the real (mask 1) tokens: max abs difference and the minimum per-token cosine."""
    H = json.load(open(os.path.join(model_dir, "config.json")))["hidden_size"]
    res = {}
    for s in seqs:
        mask = np.array(json.load(open(os.path.join(model_dir, "inputs", "seq%d.json" % s)))["attention_mask"]) == 1
        ref = np.fromfile(os.path.join(model_dir, "reference", "seq%d.f32" % s), "<f4").reshape(s, H)[mask]
        got = np.fromfile(os.path.join(outdir, "seq%d.f32" % s), "<f4").reshape(s, H)[mask]
        cos = (ref * got).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(got, axis=1)
        res[s] = {"max_abs": float(np.abs(ref - got).max()), "min_token_cosine": float(cos.min())}
    print(json.dumps(res))
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--compare", metavar="OUTDIR", help="only compare OUTDIR/seq{S}.f32 with OUT's reference")
    ap.add_argument("--layers", type=int, default=BASE["num_hidden_layers"])
    ap.add_argument("--window", type=int, default=BASE["local_attention"])
    ap.add_argument("--seqs", default="512,2048")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-onnx", action="store_true")
    a = ap.parse_args(argv)
    if a.compare:
        compare(a.out, a.compare, [int(x) for x in a.seqs.split(",")])
        return 0
    c = dict(BASE, num_hidden_layers=a.layers, local_attention=a.window)
    os.makedirs(os.path.join(a.out, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(a.out, "reference"), exist_ok=True)
    torch.manual_seed(a.seed)
    model = ModernBertModel(c).float().eval()
    w = random_state(model, a.seed)
    write_safetensors(os.path.join(a.out, "model.safetensors"), w)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(hf_config(c), f, indent=2)
        f.write("\n")
    for s in (int(x) for x in a.seqs.split(",")):
        inp = peer_inputs(s, c["vocab_size"], a.seed)
        with open(os.path.join(a.out, "inputs", "seq%d.json" % s), "w") as f:
            json.dump(inp, f)
        with torch.no_grad():
            y = model(torch.tensor([inp["input_ids"]]), torch.tensor([inp["attention_mask"]]))
        y.numpy().astype("<f4").tofile(os.path.join(a.out, "reference", "seq%d.f32" % s))
    if not a.no_onnx:
        sys.path.insert(0, HERE)
        from make_model import quantize_onnx  # the peers' int8 rewrite (this file sits next to it)
        export_onnx(model, os.path.join(a.out, "model.onnx"))
        n = quantize_onnx(os.path.join(a.out, "model.onnx"), os.path.join(a.out, "model_int8.onnx"))
        print("make_modernbert_onnx: %d weight MatMuls quantized" % n)
    print("make_modernbert_onnx: wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
