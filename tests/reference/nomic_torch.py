# SPDX-License-Identifier: Apache-2.0
"""nomic-bert as a small torch 1.13 module with the checkpoint's tensor names, written separately
from families_numpy.py (after nomic-ai/contrastors modeling_hf_nomic_bert.py) as its cross-check.

  NomicBertModel(config_dict) ; load_hf(model, dir) (strict: every stored tensor is a parameter)
  forward(input_ids [B, S], token_type_ids, attention_mask) -> last_hidden_state [B, S, H]
  NomicBertForSequenceClassification: bert.* + classifier.* ; -> (last_hidden_state, pooled, logits)
"""

import json
import os
import struct

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


def _rotate_half(x, interleaved):
    if not interleaved:
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((-x2, x1), dim=-1)
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


class Rotary(nn.Module):
    def __init__(self, c, head_dim):
        super().__init__()
        self.dim = int(head_dim * c.get("rotary_emb_fraction", 0.0))
        self.base = float(c.get("rotary_emb_base", 10000.0))
        self.interleaved = bool(c.get("rotary_emb_interleaved", False))
        self.factor = c.get("rotary_scaling_factor")
        self.max_trained = c.get("max_trained_positions", 2048)

    def forward(self, x):  # x [B, S, A, d]
        S = x.shape[1]
        base = self.base
        if self.factor and S > self.max_trained:  # NomicBertDynamicNTKRotaryEmbedding
            base = base * ((self.factor * S / self.max_trained) - (self.factor - 1)) ** (self.dim / (self.dim - 2))
        inv_freq = 1.0 / (base ** (torch.arange(0, self.dim, 2, dtype=x.dtype) / self.dim))
        freqs = torch.outer(torch.arange(S, dtype=x.dtype), inv_freq)  # [S, dim/2]
        cos, sin = freqs.cos(), freqs.sin()
        if self.interleaved:
            cos, sin = cos.repeat_interleave(2, dim=-1), sin.repeat_interleave(2, dim=-1)
        else:
            cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
        cos, sin = cos[None, :, None, :], sin[None, :, None, :]
        r = x[..., :self.dim]
        return torch.cat([r * cos + _rotate_half(r, self.interleaved) * sin, x[..., self.dim:]], dim=-1)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        H, self.A = c["n_embd"], c["n_head"]
        self.d = H // self.A
        self.Wqkv = nn.Linear(H, 3 * H, bias=c.get("qkv_proj_bias", True))
        self.out_proj = nn.Linear(H, H, bias=c.get("qkv_proj_bias", True))
        self.rotary = Rotary(c, self.d)

    def forward(self, x, mask):
        B, S, H = x.shape
        qkv = self.Wqkv(x).view(B, S, 3, self.A, self.d)
        q, k, v = self.rotary(qkv[:, :, 0]), self.rotary(qkv[:, :, 1]), qkv[:, :, 2]
        q, k, v = (t.permute(0, 2, 1, 3) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / (self.d ** 0.5) + mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(B, S, H)
        return self.out_proj(ctx)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        H, kind = c["n_embd"], c.get("activation_function", "swiglu")
        inner = c.get("n_inner") or 4 * H
        b1, b2 = c.get("mlp_fc1_bias", True), c.get("mlp_fc2_bias", True)
        self.gated = kind in ("swiglu", "geglu", "glu")
        if self.gated:
            inner = (inner + 255) // 256 * 256
            self.fc11 = nn.Linear(H, inner, bias=b1)
            self.fc12 = nn.Linear(H, inner, bias=b1)
            self.act = {"swiglu": F.silu, "geglu": F.gelu, "glu": torch.sigmoid}[kind]
        else:
            self.fc1 = nn.Linear(H, inner, bias=b1)
            self.act = F.gelu
        self.fc2 = nn.Linear(inner, H, bias=b2)

    def forward(self, x):
        y = self.fc11(x) * self.act(self.fc12(x)) if self.gated else self.act(self.fc1(x))
        return self.fc2(y)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        eps = c.get("layer_norm_epsilon", 1e-5)
        self.prenorm = bool(c.get("prenorm", False))
        self.attn, self.mlp = Attention(c), MLP(c)
        self.norm1, self.norm2 = nn.LayerNorm(c["n_embd"], eps=eps), nn.LayerNorm(c["n_embd"], eps=eps)

    def forward(self, x, residual, mask):
        if self.prenorm:
            residual = x if residual is None else x + residual
            h = self.attn(self.norm1(residual), mask)
            residual = h + residual
            return self.mlp(self.norm2(residual)), residual
        x = self.norm1(x + self.attn(x, mask))
        return self.norm2(x + self.mlp(x)), None


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.type_vocab = c.get("type_vocab_size", 2)
        if self.type_vocab > 0:
            self.token_type_embeddings = nn.Embedding(self.type_vocab, c["n_embd"])

    def forward(self, ids, types):
        x = self.word_embeddings(ids)
        return x + self.token_type_embeddings(types) if self.type_vocab > 0 else x


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layers = nn.ModuleList([Block(c) for _ in range(c["n_layer"])])


class NomicBertModel(nn.Module):
    def __init__(self, c, pooler=False):
        super().__init__()
        self.embeddings = Embeddings(c)
        self.emb_ln = nn.LayerNorm(c["n_embd"], eps=c.get("layer_norm_epsilon", 1e-5))
        self.encoder = Encoder(c)
        if pooler:
            self.pooler = nn.Module()
            self.pooler.dense = nn.Linear(c["n_embd"], c["n_embd"])

    def forward(self, ids, types, attention_mask):
        x = self.emb_ln(self.embeddings(ids, types))
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(torch.float32).min
        residual = None
        for block in self.encoder.layers:
            x, residual = block(x, residual, mask)
        return x


class NomicBertForSequenceClassification(nn.Module):
    def __init__(self, c, num_labels):
        super().__init__()
        self.bert = NomicBertModel(c, pooler=True)
        self.classifier = nn.Linear(c["n_embd"], num_labels)

    def forward(self, ids, types, attention_mask):
        h = self.bert(ids, types, attention_mask)
        pooled = torch.tanh(self.bert.pooler.dense(h[:, 0]))
        return h, pooled, self.classifier(pooled)


def load_hf(model, ckpt_dir):
    with open(os.path.join(ckpt_dir, "model.safetensors"), "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        blob = f.read()
    sd = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        b, e = info["data_offsets"]
        sd[name] = torch.from_numpy(np.frombuffer(blob[b:e], "<f4").reshape(info["shape"]).astype(np.float64))
    model.double().load_state_dict(sd, strict=True)
    return model.eval()
