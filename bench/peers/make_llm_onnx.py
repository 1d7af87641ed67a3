#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""EmbeddingGemma-300M and Qwen3-Embedding-0.6B as torch 1.13 modules (HF transformers semantics
and tensor names), and the ONNX Runtime peer of their full-size speed comparison (issue 24).

Copy this file, make_modernbert_onnx.py (its rotary / safetensors helpers) and
bench_ort_modernbert.mjs into a writable copy of ../shared/peers, then
  python3 make_llm_onnx.py --family gemma3_text --out models/embeddinggemma
  python3 make_llm_onnx.py --family qwen3 --out models/qwen3_embedding
writes, with random weights in the real shapes:
  OUT/config.json + OUT/model.safetensors    the HF checkpoint (Gemma3TextModel / Qwen3Model,
                                             unprefixed names: embed_tokens.weight, layers.N.self_attn.q_proj.weight, ...)
  OUT/modules.json, OUT/1_Pooling/, ...      the sentence-transformers folder around it (Gemma:
                                             mean pooling, 2_Dense 768 -> 3072, 3_Dense 3072 -> 768
                                             (no bias, Identity), 4_Normalize; Qwen: last-token
                                             pooling, 2_Normalize)
  OUT/onnx_fp32/model.onnx (+ external data  fp32 torch.onnx.export of the same network (opset 14,
  files for Qwen: over protobuf's 2 GB)       dynamic sequence length); inputs input_ids,
                                             attention_mask; outputs last_hidden_state, sentence_embedding
  OUT/model_int8.onnx                        make_model.quantize_onnx of it (every weight MatMul
                                             DynamicQuantizeLinear + MatMulInteger, per-tensor, as
                                             quantize_dynamic emits) and the embedding Gather on an
                                             int8 table + DequantizeLinear (quantize_dynamic's Gather rewrite)
  OUT/inputs/seq{S}.json                     random ids (Gemma: <bos> first; Qwen: <|endoftext|> last), no padding
  OUT/reference/seq{S}.{last_hidden_state,sentence_embedding}.f32   torch fp32 outputs of those inputs
--compare DIR compares DIR/seq{S}.{output}.f32 with the torch reference (or with another peer's
outputs: --reference DIR2); --selfcheck runs the torch
module against tests/reference/families_numpy.py (float64, written independently from the same
HF code) on a 2-layer copy with a small vocabulary.

Semantics (HF transformers 4.56.1+ modeling_gemma3 / modeling_qwen3, sentence-transformers 5.1):
- Qwen3: x = embed[ids]; x += o(attn(rms(x))); x += down(silu(gate(y)) * up(y)), y = rms(x);
  q/k RMSNorm per head before the rotate-half rotary (rope_theta), scores / sqrt(head_dim),
  causal; final norm; last-token pooling (the last token with mask 1), Normalize.
- Gemma3 (use_bidirectional_attention): x = embed[ids] * sqrt(hidden); every RMSNorm scales by
  (1 + w); x += post_attn_norm(o(attn(input_norm(x)))); x += post_ffn_norm(down(gelu_tanh(gate(y))
  * up(y))), y = pre_ffn_norm(x); q/k norms, scores * query_pre_attn_scalar^-0.5; sliding layers
  ((l + 1) % 6 != 0) use rope_local_base_freq and see keys |i - j| <= sliding_window // 2, full
  layers rope_theta and every key; final norm; mean pooling, the Dense chain, Normalize.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_modernbert_onnx import ACTS, rope_cos_sin, rotate_half, write_safetensors  # noqa: E402

# The real shapes (EmbeddingGemma-300M's and Qwen3-Embedding-0.6B's config.json).
GEMMA = dict(hidden_size=768, intermediate_size=1152, num_hidden_layers=24, num_attention_heads=3,
             num_key_value_heads=1, head_dim=256, query_pre_attn_scalar=256, sliding_window=512,
             sliding_window_pattern=6, rope_theta=1000000.0, rope_local_base_freq=10000.0, rms_norm_eps=1e-6,
             vocab_size=262144, max_position_embeddings=2048, hidden_activation="gelu_pytorch_tanh",
             dense=[3072, 768], bos_token_id=2, eos_token_id=1, pad_token_id=0)
QWEN = dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
            num_key_value_heads=8, head_dim=128, rope_theta=1000000.0, rms_norm_eps=1e-6, vocab_size=151669,
            max_position_embeddings=32768, hidden_act="silu", attention_bias=False,
            bos_token_id=151643, eos_token_id=151643)
FAMILIES = {"gemma3_text": GEMMA, "qwen3": QWEN}
OUTPUTS = ("last_hidden_state", "sentence_embedding")


def sliding_layers(c):
    if c.get("layer_types"):
        return [t == "sliding_attention" for t in c["layer_types"]]
    every = c.get("sliding_window_pattern", 6)
    return [bool((i + 1) % every) for i in range(c["num_hidden_layers"])]


class RMSNorm(nn.Module):
    """Qwen3RMSNorm (x * rsqrt(mean(x^2) + eps) * w) or Gemma3RMSNorm (... * (1 + w))."""

    def __init__(self, dim, eps, gemma):
        super().__init__()
        self.eps, self.gemma = eps, gemma
        self.weight = nn.Parameter(torch.zeros(dim) if gemma else torch.ones(dim))

    def forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y * (1.0 + self.weight) if self.gemma else y * self.weight


class Attention(nn.Module):
    def __init__(self, c, gemma):
        super().__init__()
        H, self.A, self.KV, self.d = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        b = bool(c.get("attention_bias", False))
        self.q_proj = nn.Linear(H, self.A * self.d, bias=b)
        self.k_proj = nn.Linear(H, self.KV * self.d, bias=b)
        self.v_proj = nn.Linear(H, self.KV * self.d, bias=b)
        self.o_proj = nn.Linear(self.A * self.d, H, bias=b)
        self.q_norm = RMSNorm(self.d, c["rms_norm_eps"], gemma)
        self.k_norm = RMSNorm(self.d, c["rms_norm_eps"], gemma)
        self.scaling = (c["query_pre_attn_scalar"] if gemma else self.d) ** -0.5

    def forward(self, x, cos, sin, additive_mask):
        B, S, _ = x.shape
        q = self.q_norm(self.q_proj(x).view(B, S, self.A, self.d)).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(B, S, self.KV, self.d)).transpose(1, 2)
        v = self.v_proj(x).view(B, S, self.KV, self.d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        g = self.A // self.KV  # repeat_kv: query head a reads KV head a // g
        k = k[:, :, None].expand(B, self.KV, g, S, self.d).reshape(B, self.A, S, self.d)
        v = v[:, :, None].expand(B, self.KV, g, S, self.d).reshape(B, self.A, S, self.d)
        scores = torch.matmul(q, k.transpose(-1, -2)) * self.scaling + additive_mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.o_proj(ctx.transpose(1, 2).reshape(B, S, self.A * self.d))


class GatedMLP(nn.Module):
    def __init__(self, c, act):
        super().__init__()
        H, I = c["hidden_size"], c["intermediate_size"]
        self.gate_proj = nn.Linear(H, I, bias=False)
        self.up_proj = nn.Linear(H, I, bias=False)
        self.down_proj = nn.Linear(I, H, bias=False)
        self.act = ACTS[act]

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c, gemma):
        super().__init__()
        H, eps = c["hidden_size"], c["rms_norm_eps"]
        self.gemma = gemma
        self.self_attn = Attention(c, gemma)
        self.mlp = GatedMLP(c, c["hidden_activation"] if gemma else c["hidden_act"])
        self.input_layernorm = RMSNorm(H, eps, gemma)
        self.post_attention_layernorm = RMSNorm(H, eps, gemma)
        if gemma:
            self.pre_feedforward_layernorm = RMSNorm(H, eps, gemma)
            self.post_feedforward_layernorm = RMSNorm(H, eps, gemma)

    def forward(self, x, cos, sin, mask):
        a = self.self_attn(self.input_layernorm(x), cos, sin, mask)
        if not self.gemma:
            x = x + a
            return x + self.mlp(self.post_attention_layernorm(x))
        x = x + self.post_attention_layernorm(a)
        return x + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(x)))


class TextModel(nn.Module):
    """last_hidden_state of HF Qwen3Model / Gemma3TextModel (bidirectional) for input_ids,
    attention_mask [B, S]."""

    def __init__(self, c, family):
        super().__init__()
        self.c, self.gemma = c, family == "gemma3_text"
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([DecoderLayer(c, self.gemma) for _ in range(c["num_hidden_layers"])])
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"], self.gemma)
        self.sliding = sliding_layers(c) if self.gemma else [False] * c["num_hidden_layers"]

    def forward(self, input_ids, attention_mask):
        x = self.embed_tokens(input_ids)
        dt, S = x.dtype, input_ids.shape[1]
        if self.gemma:
            # HF: torch.tensor(hidden ** 0.5, dtype=weights' dtype): float32 for these checkpoints
            x = x * torch.tensor(float(np.float32(self.c["hidden_size"] ** 0.5)), dtype=dt)
        neg = torch.finfo(dt).min
        keep = attention_mask[:, None, None, :].bool()  # [B, 1, 1, S] over keys
        pos = torch.arange(S)
        if self.gemma:
            near = (pos[:, None] - pos[None, :]).abs() <= self.c["sliding_window"] // 2
            full_mask = (~keep).to(dt) * neg
            local_mask = (~(keep & near)).to(dt) * neg
            rope_full = rope_cos_sin(self.c["rope_theta"], self.c["head_dim"], S, dt)
            rope_local = rope_cos_sin(self.c["rope_local_base_freq"], self.c["head_dim"], S, dt)
        else:
            full_mask = (~(keep & (pos[None, :] <= pos[:, None]))).to(dt) * neg  # causal
            rope_full = rope_local = rope_cos_sin(self.c["rope_theta"], self.c["head_dim"], S, dt)
        for i, layer in enumerate(self.layers):
            cos, sin = rope_local if self.sliding[i] else rope_full
            x = layer(x, cos, sin, local_mask if self.sliding[i] else full_mask)
        return self.norm(x)


class SentenceEncoder(nn.Module):
    """The sentence-transformers pipeline: Transformer, Pooling (mean for Gemma, last token for
    Qwen), the Dense modules (no bias, Identity), Normalize. forward -> (last_hidden_state,
    sentence_embedding)."""

    def __init__(self, c, family):
        super().__init__()
        self.model = TextModel(c, family)
        self.pooling = "mean" if family == "gemma3_text" else "lasttoken"
        widths = [c["hidden_size"]] + list(c.get("dense", []))
        self.dense = nn.ModuleList([nn.Linear(a, b, bias=False) for a, b in zip(widths, widths[1:])])

    def forward(self, input_ids, attention_mask):
        h = self.model(input_ids, attention_mask)
        m = attention_mask.to(h.dtype)
        if self.pooling == "mean":
            v = (h * m[:, :, None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1e-9)
        else:  # the last token whose mask is 1 (right padding)
            last = (attention_mask.sum(1) - 1).view(-1, 1, 1).expand(-1, 1, h.shape[2])
            v = torch.gather(h, 1, last).squeeze(1)
        for d in self.dense:
            v = d(v)
        return h, F.normalize(v, p=2.0, dim=1)


# ----------------------------------------------------------------------------- checkpoints
def hf_config(c, family):
    cfg = {k: v for k, v in c.items() if k != "dense"}
    if family == "gemma3_text":
        cfg.update(architectures=["Gemma3TextModel"], model_type="gemma3_text", attention_bias=False,
                   attention_dropout=0.0, attn_logit_softcapping=None, final_logit_softcapping=None,
                   rope_scaling=None, use_bidirectional_attention=True, use_cache=True,
                   torch_dtype="float32", transformers_version="4.56.1", initializer_range=0.02)
    else:
        cfg.update(architectures=["Qwen3Model"], model_type="qwen3", attention_dropout=0.0, rope_scaling=None,
                   sliding_window=None, use_sliding_window=False, max_window_layers=c["num_hidden_layers"],
                   tie_word_embeddings=True, use_cache=True, torch_dtype="float32",
                   transformers_version="4.51.3", initializer_range=0.02)
    return dict(sorted(cfg.items()))


def random_state(module, seed):
    """Linear weights N(0, 0.02); the embedding table N(0, 0.02) (Gemma scales it by sqrt(768));
    Dense modules N(0, 1/sqrt(in)); norm weights w ~ N(0, 0.1) (Gemma's (1 + w)) or 1 + N(0, 0.1)."""
    g = torch.Generator().manual_seed(seed)
    sd = {}
    for name, p in module.state_dict().items():
        x = torch.randn(p.shape, generator=g, dtype=torch.float32)
        if "norm" in name:
            sd[name] = x * 0.1 + (0.0 if module.model.gemma else 1.0)
        elif name.startswith("dense."):
            sd[name] = x / math.sqrt(p.shape[1])
        else:
            sd[name] = x * 0.02
    module.load_state_dict(sd, strict=True)
    return sd


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def write_st_folder(out, c, family, sd):
    """config.json + model.safetensors at OUT (the Transformer module, path ""), then the
    sentence-transformers modules."""
    write_safetensors(os.path.join(out, "model.safetensors"),
                      {k[len("model."):]: v.numpy() for k, v in sd.items() if k.startswith("model.")})
    write_json(os.path.join(out, "config.json"), hf_config(c, family))
    H = c["hidden_size"]
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    pooling = "mean" if family == "gemma3_text" else "lasttoken"
    write_json(os.path.join(out, "1_Pooling", "config.json"), {
        "word_embedding_dimension": H, "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": pooling == "lasttoken", "include_prompt": True})
    width = H
    for i, out_f in enumerate(c.get("dense", [])):
        k = len(modules)
        path = "%d_Dense" % k
        modules.append({"idx": k, "name": str(k), "path": path, "type": "sentence_transformers.models.Dense"})
        os.makedirs(os.path.join(out, path), exist_ok=True)
        write_safetensors(os.path.join(out, path, "model.safetensors"), {"linear.weight": sd["dense.%d.weight" % i].numpy()})
        write_json(os.path.join(out, path, "config.json"), {
            "in_features": width, "out_features": out_f, "bias": False,
            "activation_function": "torch.nn.modules.linear.Identity"})
        width = out_f
    k = len(modules)
    modules.append({"idx": k, "name": str(k), "path": "%d_Normalize" % k, "type": "sentence_transformers.models.Normalize"})
    os.makedirs(os.path.join(out, "%d_Normalize" % k), exist_ok=True)
    write_json(os.path.join(out, "modules.json"), modules)
    write_json(os.path.join(out, "sentence_bert_config.json"), {"max_seq_length": 2048, "do_lower_case": False})


def peer_inputs(seq, c, family, seed):
    """Random token ids of length seq, every mask 1: Gemma's tokenizer puts <bos> first, Qwen's
    template appends <|endoftext|> (the token last-token pooling reads)."""
    rng = np.random.default_rng(seed + seq)
    ids = rng.integers(10, c["vocab_size"] - 10, size=seq)
    if family == "gemma3_text":
        ids[0] = c["bos_token_id"]
    else:
        ids[-1] = c["eos_token_id"]
    return {"input_ids": ids.tolist(), "attention_mask": [1] * seq}


# ----------------------------------------------------------------------------- ONNX
def export_onnx(module, path, opset=14):
    ids = torch.zeros(1, 16, dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(module, (ids, torch.ones_like(ids)), path, input_names=["input_ids", "attention_mask"],
                          output_names=list(OUTPUTS),
                          dynamic_axes={"input_ids": {1: "seq"}, "attention_mask": {1: "seq"},
                                        "last_hidden_state": {1: "seq"}},
                          opset_version=opset, do_constant_folding=True)


def quantize_gather(path):
    """quantize_dynamic's Gather rewrite: the embedding table (a Gather's fp32 initializer data)
    stored uint8 with one scale and zero point (asymmetric, per tensor), looked up then
    DequantizeLinear. Rewrites PATH in place; returns the number of Gathers rewritten."""
    import onnx
    from onnx import helper, numpy_helper
    m = onnx.load(path)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    nodes, n = [], 0
    for node in g.node:
        t = inits.get(node.input[0]) if node.op_type == "Gather" else None
        if t is None or len(t.dims) != 2:
            nodes.append(node)
            continue
        W = numpy_helper.to_array(t).astype(np.float32)
        lo, hi = min(float(W.min()), 0.0), max(float(W.max()), 0.0)
        scale = np.float32((hi - lo) / 255.0)
        zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
        Wq = np.clip(np.rint(W / scale) + zp, 0, 255).astype(np.uint8)
        b = "gq%d_" % n
        n += 1
        g.initializer.remove(t)
        g.initializer.extend([numpy_helper.from_array(Wq, b + "W_q"), numpy_helper.from_array(np.array(scale), b + "scale"),
                              numpy_helper.from_array(np.array(zp), b + "zp")])
        nodes += [helper.make_node("Gather", [b + "W_q", node.input[1]], [b + "y_q"], name=b + "gather"),
                  helper.make_node("DequantizeLinear", [b + "y_q", b + "scale", b + "zp"], [node.output[0]], name=b + "dq")]
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return n


# ----------------------------------------------------------------------------- checks
def compare(model_dir, outdir, seqs, refdir=None):
    """Cosine of a peer's outputs (OUTDIR/seq{S}.{output}.f32) against the torch fp32 reference
    (or REFDIR's outputs): the lowest per-token cosine of last_hidden_state, the cosine of
    sentence_embedding, max abs."""
    c = json.load(open(os.path.join(model_dir, "config.json")))
    refdir = refdir or os.path.join(model_dir, "reference")
    res = {}
    for s in seqs:
        r = {}
        for name in OUTPUTS:
            ref = np.fromfile(os.path.join(refdir, "seq%d.%s.f32" % (s, name)), "<f4").astype(np.float64)
            p = os.path.join(outdir, "seq%d.%s.f32" % (s, name))
            if not os.path.exists(p):
                continue
            got = np.fromfile(p, "<f4").astype(np.float64)
            if name == "last_hidden_state":
                ref, got = ref.reshape(s, c["hidden_size"]), got.reshape(s, c["hidden_size"])
            else:
                ref, got = ref.reshape(1, -1), got.reshape(1, -1)
            cos = (ref * got).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(got, axis=1)
            r[name] = {"min_cosine": round(float(cos.min()), 6), "max_abs": float(np.abs(ref - got).max())}
        res[s] = r
    print(json.dumps(res))
    return res


def selfcheck(family):
    """The torch module against families_numpy (float64) on a 2-layer copy, small vocabulary;
    Gemma with one sliding layer whose window is shorter than the input."""
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "reference"))
    import families_numpy as fnp
    c = dict(FAMILIES[family], num_hidden_layers=2, vocab_size=300)
    if family == "gemma3_text":
        c.update(sliding_window=10, sliding_window_pattern=2)
    torch.manual_seed(1)
    m = SentenceEncoder(c, family).double().eval()
    sd = random_state(m, 1)
    m.double()
    ids = np.random.default_rng(3).integers(0, 300, size=24)
    mask = np.ones(24, np.int64)
    mask[20:] = 0  # padding
    with torch.no_grad():
        h, e = m(torch.from_numpy(ids[None]), torch.from_numpy(mask[None]))
    w = {k[len("model."):]: v.double().numpy() for k, v in sd.items() if k.startswith("model.")}
    ref = fnp.ENCODERS[family](w, fnp.normalized_config(hf_config(c, family)), ids, None, mask)
    err = float(np.abs(h[0].numpy() - ref)[mask == 1].max())
    print("selfcheck %s: max abs torch - families_numpy over real tokens %.3g" % (family, err))
    return err < 1e-9


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", choices=sorted(FAMILIES), required=True)
    ap.add_argument("--out")
    ap.add_argument("--compare", metavar="OUTDIR", help="only compare OUTDIR/seq{S}.{output}.f32 with OUT's reference")
    ap.add_argument("--reference", metavar="DIR", help="with --compare: DIR's outputs instead of the torch reference")
    ap.add_argument("--selfcheck", action="store_true")
    ap.add_argument("--layers", type=int, help="fewer layers (a quick try; the default is the real count)")
    ap.add_argument("--seqs", default="128,512")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    seqs = [int(x) for x in a.seqs.split(",")]
    if a.selfcheck:
        return 0 if selfcheck(a.family) else 1
    if a.compare:
        compare(a.out, a.compare, seqs, a.reference)
        return 0
    c = dict(FAMILIES[a.family])
    if a.layers:
        c["num_hidden_layers"] = a.layers
    for sub in ("inputs", "reference"):
        os.makedirs(os.path.join(a.out, sub), exist_ok=True)
    torch.manual_seed(a.seed)
    module = SentenceEncoder(c, a.family).float().eval()
    sd = random_state(module, a.seed)
    write_st_folder(a.out, c, a.family, sd)
    del sd
    for s in seqs:
        inp = peer_inputs(s, c, a.family, a.seed)
        with open(os.path.join(a.out, "inputs", "seq%d.json" % s), "w") as f:
            json.dump(inp, f)
        with torch.no_grad():
            outs = module(torch.tensor([inp["input_ids"]]), torch.tensor([inp["attention_mask"]]))
        for name, y in zip(OUTPUTS, outs):
            y.numpy().astype("<f4").tofile(os.path.join(a.out, "reference", "seq%d.%s.f32" % (s, name)))
    from make_model import quantize_onnx  # the peers' int8 rewrite (this file sits next to it)
    os.makedirs(os.path.join(a.out, "onnx_fp32"), exist_ok=True)
    export_onnx(module, os.path.join(a.out, "onnx_fp32", "model.onnx"))
    del module
    n = quantize_onnx(os.path.join(a.out, "onnx_fp32", "model.onnx"), os.path.join(a.out, "model_int8.onnx"))
    k = quantize_gather(os.path.join(a.out, "model_int8.onnx"))
    print("make_llm_onnx: %d weight MatMuls and %d embedding Gather quantized" % (n, k))
    print("make_llm_onnx: wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
