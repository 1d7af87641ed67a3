# SPDX-License-Identifier: Apache-2.0
"""Independent float64 numpy reference of the other BERT-family encoders and their task heads, in
HuggingFace transformers semantics (nomic-bert: nomic-ai/contrastors modeling_hf_nomic_bert.py).
Shares no code with the converter or the runtime; sentence-transformers pooling is tasks_numpy's.

  load_model(dir)                  -> Model (checkpoint dir or sentence-transformers folder)
  run(model, ids, types, mask)     -> dict of float64 outputs for one sequence ([S] inputs):
      last_hidden_state [S, H]           always
      pooler_output [H]                  models with a pooler (RobertaModel, AlbertModel, ...)
      logits [labels]                    *ForSequenceClassification
      start_logits [S], end_logits [S]   *ForQuestionAnswering
      token_logits [S, labels]           *ForTokenClassification
      sentence_embedding [H]             sentence-transformers folder
  family_of(config) -> "roberta" | "electra" | "albert" | "nomic_bert" | "modernbert"
  normalized_config(config) -> the family's config with defaults and both ModernBERT spellings
      resolved (keys documented in _normalize)

Semantics (every weight read back from disk and promoted to float64; y = x @ W.T + b, W [out, in]):
  mask          : additive (1 - mask) * finfo(float32).min over the KEY axis (padded keys get weight
                  0; padded query rows are still computed). Attention softmax(q k^T / sqrt(d) + m) v,
                  head a owns features [a*d, (a+1)*d) of q, k, v and of the context.
  RoBERTa / XLM-RoBERTa / CamemBERT (model_type roberta / xlm-roberta / camembert, prefix roberta.):
      BERT's post-LN encoder; position ids = padding_idx + cumsum(ids != padding_idx) for non-pad
      ids and padding_idx for pad ids (padding_idx = pad_token_id, default 1), i.e. the first real
      token is at position padding_idx + 1; token types (type_vocab_size 1 usually) added as in
      BERT. Heads: *ForSequenceClassification = classifier.out_proj(tanh(classifier.dense(h[0])));
      token classification classifier(h); QA qa_outputs(h); RobertaModel's pooler tanh(dense(h[0])).
  ELECTRA (prefix electra.): embeddings word + position (0..S-1) + token type of embedding_size, then
      LayerNorm(embedding_size), then embeddings_project (E -> H) when embedding_size != hidden_size;
      BERT encoder; no pooler. SequenceClassification = classifier.out_proj(gelu(classifier.dense(h[0])))
      (exact erf GELU, whatever hidden_act); token classification / QA as BERT.
  ALBERT (prefix albert.): embeddings of embedding_size + LayerNorm(E), then
      encoder.embedding_hidden_mapping_in (E -> H); for i in 0..num_hidden_layers-1 the group
      g = int(i / (num_hidden_layers / num_hidden_groups)) runs all of its inner_group_num layers
      (albert_layer_groups.g.albert_layers.k: attention.{query,key,value,dense,LayerNorm} post-LN,
      then full_layer_layer_norm(x + ffn_output(act(ffn(x))))), act = hidden_act (gelu_new: tanh
      approximation). Pooler: tanh(albert.pooler(h[0])); SequenceClassification classifier(pooler).
  nomic-bert (model_type nomic_bert, NomicBertModel: unprefixed names; For*: bert.): embeddings
      word + token type (when type_vocab_size > 0) (+ absolute positions only when
      rotary_emb_fraction is 0), emb_ln; per block attn.Wqkv -> [3, heads, head_dim] (rows q, k, v,
      head-major), rotary on q and k over the first head_dim * rotary_emb_fraction features
      (rotate-half, or pairs when rotary_emb_interleaved; inv_freq = base^(-2i/rot_dim), positions
      0..S-1; dynamic NTK when rotary_scaling_factor is set and S > max_trained_positions: base *=
      (f * S / max_trained - (f - 1))^(rot_dim / (rot_dim - 2))), scores / sqrt(head_dim),
      attn.out_proj; post-norm: x = norm1(x + attn(x)); x = norm2(x + mlp(x)); prenorm (as the file
      does it): r = x; per block r += attn(norm1(r)) ... the encoder returns the last block's MLP
      output (no residual, no final norm). Gated MLP (swiglu / geglu / glu):
      fc2(fc11(x) * act(fc12(x))), act silu / erf gelu / sigmoid; otherwise fc2(gelu(fc1(x)))
      (exact GELU for every gelu spelling, as the file's NomicBertMLP). Biases: Wqkv and out_proj
      when qkv_proj_bias, fc11/fc12/fc1 when mlp_fc1_bias, fc2 when mlp_fc2_bias. LayerNorm eps
      layer_norm_epsilon. SequenceClassification: classifier(tanh(bert.pooler.dense(h[0]))).
  ModernBERT (model_type modernbert, prefix model.): x = norm(tok_embeddings[ids]) (no positions, no
      token types); layer l: x += Wo(attn(attn_norm(x))) with attn_norm the identity in layer 0,
      x += mlp(mlp_norm(x)); final_norm. Wqkv rows viewed as [3, heads, head_dim]; rotary
      rotate-half over the whole head_dim with theta = global_rope_theta (160000) on full-attention
      layers and local_rope_theta (10000) on sliding layers; layer l is sliding when l %
      global_attn_every_n_layers != 0 (or layer_types[l] == "sliding_attention"), and then query i
      sees key j only when |i - j| <= local_attention // 2 (and key j is not padding). MLP: input,
      gate = Wi(x).chunk(2); Wo(act(input) * gate). Biases only when attention_bias / mlp_bias;
      LayerNorms have a bias only when norm_bias; eps norm_eps. Head: head.norm(act(head.dense(p)))
      with act = classifier_activation, head.dense bias when classifier_bias; SequenceClassification
      p = h[0] (classifier_pooling cls) or sum(h * mask) / sum(mask) (mean), then classifier;
      token classification / QA: classifier(head(h)) on every token (QA columns 0 / 1).
  Qwen3 (model_type qwen3, Qwen3Model unprefixed, Qwen3ForCausalLM prefix model.; transformers'
      modeling_qwen3): x = embed_tokens[ids] (no norm, no positions, no token types); layer l:
      x += o_proj(attn(input_layernorm(x))), x += down_proj(silu(gate_proj(y)) * up_proj(y)) with
      y = post_attention_layernorm(x); final norm. RMSNorm(x) = x / sqrt(mean(x^2) + eps) * weight,
      eps rms_norm_eps. Attention: q_proj [heads * head_dim], k_proj / v_proj [kv_heads *
      head_dim] (query head a reads KV head a // (heads / kv_heads)), per-head RMSNorm q_norm /
      k_norm over head_dim, rotate-half rotary over the whole head_dim with rope_theta, scores /
      sqrt(head_dim), CAUSAL (query i sees keys j <= i) and the key padding mask; every projection
      has a bias only when attention_bias. lm_head (Qwen3ForCausalLM) is not part of the encoder.
  Gemma 3 text (model_type gemma3_text, Gemma3TextModel unprefixed; transformers' modeling_gemma3
      and configuration_gemma3 of 4.56.1 and later, PR #40700; use_bidirectional_attention true,
      as EmbeddingGemma): x = embed_tokens[ids] * float32(sqrt(hidden)) (the scale in the weights'
      dtype, float32); layer l: x += PA(o_proj(attn(IN(x)))), x += PF(down(gelu_tanh(gate(y)) *
      up(y))) with y = PRE(x), IN / PA / PRE / PF = input_layernorm / post_attention_layernorm /
      pre_feedforward_layernorm / post_feedforward_layernorm; final norm. Gemma3RMSNorm(x) =
      x / sqrt(mean(x^2) + eps) * (1 + weight). Attention: Qwen3's grouped-query heads and per-head
      q_norm / k_norm (Gemma3RMSNorm), rotate-half rotary over head_dim with rope_local_base_freq
      on sliding layers and rope_theta on full ones, scores * query_pre_attn_scalar^-0.5, no causal
      mask: full layers see every non-padding key; sliding layers (layer_types[l], or (l + 1) %
      sliding_window_pattern != 0) see key j when |i - j| < sliding_window // 2 + 1 (the config
      turns sliding_window into sliding_window // 2 + 1; _bidirectional_window_overlay keeps
      abs(q - kv) < it, and the causal sliding mask it ORs with is a subset).
"""

import json
import math
import os

import numpy as np

import bert_numpy
import tasks_numpy

MASK_NEG = float(np.finfo(np.float32).min)

FAMILY_OF_MODEL_TYPE = {
    "roberta": "roberta", "xlm-roberta": "roberta", "camembert": "roberta",
    "electra": "electra", "albert": "albert", "nomic_bert": "nomic_bert", "modernbert": "modernbert",
    "qwen3": "qwen3", "gemma3_text": "gemma3_text",
}
# The base-model attribute of the For* classes (their tensor-name prefix).
PREFIX = {"roberta": "roberta.", "electra": "electra.", "albert": "albert.", "nomic_bert": "bert.",
          "modernbert": "model.", "qwen3": "model.",
          "gemma3_text": "model."}


def family_of(config):
    mt = config.get("model_type")
    if mt not in FAMILY_OF_MODEL_TYPE:
        raise ValueError("unsupported model_type %r" % (mt,))
    return FAMILY_OF_MODEL_TYPE[mt]


# ---------------------------------------------------------------------------------------------
# config
# ---------------------------------------------------------------------------------------------

def _modernbert_layers(c):
    """(sliding per layer, global theta, local theta) from either config spelling."""
    n = c["num_hidden_layers"]
    if c.get("layer_types") is not None:
        types = c["layer_types"]
        if len(types) != n or any(t not in ("full_attention", "sliding_attention") for t in types):
            raise ValueError("bad layer_types %r" % (types,))
        sliding = [t == "sliding_attention" for t in types]
    else:
        every = c.get("global_attn_every_n_layers", 3)
        sliding = [i % every != 0 for i in range(n)]
    rp = c.get("rope_parameters") or {}
    g = (rp.get("full_attention") or {}).get("rope_theta", c.get("global_rope_theta", 160000.0))
    loc = (rp.get("sliding_attention") or {}).get("rope_theta", c.get("local_rope_theta", 10000.0))
    for part in ("full_attention", "sliding_attention"):
        kind = (rp.get(part) or {}).get("rope_type", "default")
        if kind != "default":
            raise ValueError("unsupported rope_type %r" % kind)
    return sliding, float(g), float(loc)


def _normalize(config):
    """Family-independent keys: family, hidden, heads, layers, intermediate, act, eps, vocab,
    max_pos, type_vocab, pad_id, embedding_size, plus the family's own (groups, inner, rotary_*,
    gated, prenorm, biases, sliding, thetas, window, classifier_*)."""
    c = config
    fam = family_of(c)
    n = {"family": fam}
    if fam == "nomic_bert":
        n.update(hidden=c["n_embd"], heads=c["n_head"], layers=c["n_layer"],
                 eps=c.get("layer_norm_epsilon", 1e-5), vocab=c["vocab_size"],
                 type_vocab=c.get("type_vocab_size", 2), pad_id=c.get("pad_token_id", 0),
                 act=c.get("activation_function", "swiglu"), prenorm=bool(c.get("prenorm", False)),
                 qkv_bias=c.get("qkv_proj_bias", True), fc1_bias=c.get("mlp_fc1_bias", True),
                 fc2_bias=c.get("mlp_fc2_bias", True),
                 rotary_fraction=float(c.get("rotary_emb_fraction", 0.0)),
                 rotary_base=float(c.get("rotary_emb_base", 10000.0)),
                 rotary_interleaved=bool(c.get("rotary_emb_interleaved", False)),
                 rotary_scaling_factor=c.get("rotary_scaling_factor"),
                 max_trained_positions=c.get("max_trained_positions", 2048),
                 max_pos=c.get("n_positions", 0))
        if c.get("rotary_emb_scale_base") is not None:
            raise ValueError("rotary_emb_scale_base (xPos) is not supported")
        hidden_features = c.get("n_inner") or 4 * n["hidden"]
        n["gated"] = n["act"] in ("swiglu", "geglu", "glu")
        if n["gated"]:  # NomciBertGatedMLP rounds the width up to a multiple of 256
            hidden_features = (hidden_features + 255) // 256 * 256
        n["intermediate"] = hidden_features
        return n
    n.update(hidden=c["hidden_size"], heads=c["num_attention_heads"], layers=c["num_hidden_layers"],
             intermediate=c["intermediate_size"], vocab=c["vocab_size"],
             max_pos=c["max_position_embeddings"])
    if fam == "qwen3":
        if c.get("rope_scaling") is not None or c.get("use_sliding_window"):
            raise ValueError("rope scaling / sliding windows are not modelled")
        n.update(kv_heads=c.get("num_key_value_heads", n["heads"]),
                 head_dim=c.get("head_dim", n["hidden"] // n["heads"]), eps=c.get("rms_norm_eps", 1e-6),
                 theta=float(c.get("rope_theta", 10000.0)), attention_bias=bool(c.get("attention_bias", False)),
                 act=c.get("hidden_act", "silu"), type_vocab=0, pad_id=c.get("pad_token_id", 0))
        return n
    if fam == "gemma3_text":
        if c.get("rope_scaling") is not None or c.get("attn_logit_softcapping") is not None:
            raise ValueError("rope scaling / attention soft-capping are not modelled")
        if not c.get("use_bidirectional_attention"):
            raise ValueError("only the bidirectional Gemma 3 (EmbeddingGemma) is modelled")
        L = n["layers"]
        if c.get("layer_types") is not None:
            sliding = [t == "sliding_attention" for t in c["layer_types"]]
        else:
            every = c.get("sliding_window_pattern", 6)
            sliding = [bool((i + 1) % every) for i in range(L)]
        rp = c.get("rope_parameters") or {}  # newer transformers: per layer type
        for part in ("full_attention", "sliding_attention"):
            if (rp.get(part) or {}).get("rope_type", "default") != "default":
                raise ValueError("unsupported rope_type")
        theta = (rp.get("full_attention") or {}).get("rope_theta", c.get("rope_theta", 1000000.0))
        local_theta = (rp.get("sliding_attention") or {}).get("rope_theta", c.get("rope_local_base_freq", 10000.0))
        n.update(kv_heads=c.get("num_key_value_heads", n["heads"]), head_dim=c.get("head_dim", 256),
                 eps=c.get("rms_norm_eps", 1e-6), theta=float(theta), local_theta=float(local_theta),
                 attention_bias=bool(c.get("attention_bias", False)), sliding=sliding,
                 window=int(c.get("sliding_window", 4096)) // 2 + 1,  # exclusive |i - j| bound
                 qpas=float(c.get("query_pre_attn_scalar", 256)),
                 act=c.get("hidden_activation", "gelu_pytorch_tanh"), type_vocab=0, pad_id=c.get("pad_token_id", 0))
        return n
    if fam == "modernbert":
        sliding, g, loc = _modernbert_layers(c)
        n.update(act=c.get("hidden_activation", "gelu"), eps=c.get("norm_eps", 1e-5),
                 norm_bias=bool(c.get("norm_bias", False)), attention_bias=bool(c.get("attention_bias", False)),
                 mlp_bias=bool(c.get("mlp_bias", False)), classifier_bias=bool(c.get("classifier_bias", False)),
                 classifier_act=c.get("classifier_activation", "gelu"),
                 classifier_pooling=c.get("classifier_pooling", "cls"), sliding=sliding,
                 global_theta=g, local_theta=loc, window=int(c.get("local_attention", 128)),
                 type_vocab=0, pad_id=c.get("pad_token_id", 50283))
        return n
    n.update(act=c.get("hidden_act", "gelu_new" if fam == "albert" else "gelu"),
             eps=c.get("layer_norm_eps", 1e-12), type_vocab=c.get("type_vocab_size", 2),
             pad_id=c.get("pad_token_id", 1 if fam == "roberta" else 0),
             embedding_size=c.get("embedding_size", 128))  # ElectraConfig / AlbertConfig default
    if fam == "roberta":
        n["embedding_size"] = n["hidden"]
    if fam == "albert":
        n.update(groups=c.get("num_hidden_groups", 1), inner=c.get("inner_group_num", 1))
        if n["layers"] % n["groups"]:
            raise ValueError("num_hidden_layers not a multiple of num_hidden_groups")
    return n


normalized_config = _normalize


# ---------------------------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------------------------

def act_fn(name):
    if name == "gelu":
        return bert_numpy.gelu_erf
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if name == "relu":
        return lambda x: np.maximum(x, 0.0)
    if name in ("silu", "swish"):
        return lambda x: x / (1.0 + np.exp(-x))
    if name == "tanh":
        return np.tanh
    raise ValueError("unsupported activation %r" % (name,))


def linear(w, name, x, bias=True):
    """x @ W.T (+ b). bias=True demands the bias tensor, False forbids it, None takes it if present."""
    y = x @ w[name + ".weight"].T
    has = name + ".bias" in w
    if bias is True and not has:
        raise KeyError(name + ".bias")
    if bias is False and has:
        raise ValueError("unexpected tensor %s.bias" % name)
    return y + w[name + ".bias"] if has else y


def norm(w, name, x, eps, bias=True):
    beta = w[name + ".bias"] if bias else np.zeros_like(w[name + ".weight"])
    if not bias and name + ".bias" in w:
        raise ValueError("unexpected tensor %s.bias" % name)
    return bert_numpy.layer_norm(x, w[name + ".weight"], beta, eps)


def heads_of(t, n_heads):
    """[S, H] -> [A, S, d], head a owning features a*d..a*d+d-1."""
    s, h = t.shape
    return t.reshape(s, n_heads, h // n_heads).transpose(1, 0, 2)


def attention(q, k, v, add_mask, scaling=None):
    """q, k, v [A, S, d]; add_mask [S, S] (query, key) additive; scores * scaling (default
    d^-0.5). -> context [S, A*d]."""
    a, s, d = q.shape
    scale = 1.0 / math.sqrt(d) if scaling is None else scaling
    scores = q @ k.transpose(0, 2, 1) * scale + add_mask[None]
    probs = bert_numpy.softmax(scores, axis=-1)
    return (probs @ v).transpose(1, 0, 2).reshape(s, a * d)


def key_mask(mask):
    """[S] 0/1 -> additive [S, S] mask over the key axis."""
    m = (1.0 - np.asarray(mask, np.float64)) * MASK_NEG
    return np.broadcast_to(m[None, :], (len(m), len(m)))


def rotary(x, base, rot_dim, interleaved=False, positions=None):
    """Rotary embedding of x [A, S, d] over its first rot_dim features (positions 0..S-1).
    Rotate-half (GPT-NeoX): x1 = x[:rot/2], x2 = x[rot/2:rot], out = x*cos + cat(-x2, x1)*sin with
    cos/sin of angle pos * base^(-2i/rot) repeated on both halves; interleaved (GPT-J): pairs
    (2i, 2i+1) rotate together."""
    _, s, d = x.shape
    if rot_dim == 0:
        return x
    if rot_dim % 2 or rot_dim > d:
        raise ValueError("rotary dim %d for head dim %d" % (rot_dim, d))
    pos = np.arange(s, dtype=np.float64) if positions is None else np.asarray(positions, np.float64)
    inv_freq = 1.0 / (base ** (np.arange(0, rot_dim, 2, dtype=np.float64) / rot_dim))
    ang = pos[:, None] * inv_freq[None, :]  # [S, rot/2]
    cos, sin = np.cos(ang), np.sin(ang)
    xr, rest = x[..., :rot_dim], x[..., rot_dim:]
    if interleaved:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
        out = np.empty_like(xr)
        out[..., 0::2] = x1 * cos - x2 * sin
        out[..., 1::2] = x2 * cos + x1 * sin
    else:
        half = rot_dim // 2
        x1, x2 = xr[..., :half], xr[..., half:]
        out = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return np.concatenate([out, rest], axis=-1)


# ---------------------------------------------------------------------------------------------
# encoders
# ---------------------------------------------------------------------------------------------

def roberta_position_ids(ids, padding_idx):
    """create_position_ids_from_input_ids: padding_idx + cumsum over non-pad ids; pads get padding_idx."""
    m = (np.asarray(ids) != padding_idx).astype(np.int64)
    return np.cumsum(m) * m + padding_idx


# HF names of a post-LN layer's parts: q, k, v, attention output, its LayerNorm, FFN in, out, norm.
BERT_LAYER = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
              "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm")
ALBERT_LAYER = ("attention.query", "attention.key", "attention.value", "attention.dense", "attention.LayerNorm",
                "ffn", "ffn_output", "full_layer_layer_norm")


def post_ln_layer(w, p, names, x, am, n, act):
    """One post-LN BERT-style layer with its tensors named p + names[i]."""
    q_, k_, v_, o_, on_, i_, f_, fn_ = (p + part for part in names)
    q, k, v = (heads_of(linear(w, t, x), n["heads"]) for t in (q_, k_, v_))
    a = norm(w, on_, x + linear(w, o_, attention(q, k, v, am)), n["eps"])
    return norm(w, fn_, a + linear(w, f_, act(linear(w, i_, a))), n["eps"])


def _absolute_embeddings(w, n, ids, types, positions):
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][positions])
    if n["type_vocab"] > 0:
        x = x + w["embeddings.token_type_embeddings.weight"][types]
    return norm(w, "embeddings.LayerNorm", x, n["eps"])


def roberta_encoder(w, n, ids, types, mask):
    pos = roberta_position_ids(ids, n["pad_id"])
    if pos.max() >= n["max_pos"]:
        raise ValueError("sequence too long for max_position_embeddings %d" % n["max_pos"])
    x = _absolute_embeddings(w, n, ids, types, pos)
    am, act = key_mask(mask), act_fn(n["act"])
    for i in range(n["layers"]):
        x = post_ln_layer(w, "encoder.layer.%d." % i, BERT_LAYER, x, am, n, act)
    return x


def electra_encoder(w, n, ids, types, mask):
    x = _absolute_embeddings(w, n, ids, types, np.arange(len(ids)))
    if n["embedding_size"] != n["hidden"]:
        x = linear(w, "embeddings_project", x)
    elif "embeddings_project.weight" in w:
        raise ValueError("embeddings_project present with embedding_size == hidden_size")
    am, act = key_mask(mask), act_fn(n["act"])
    for i in range(n["layers"]):
        x = post_ln_layer(w, "encoder.layer.%d." % i, BERT_LAYER, x, am, n, act)
    return x


def albert_group_of_layer(i, n):
    return int(i / (n["layers"] / n["groups"]))


def albert_encoder(w, n, ids, types, mask):
    x = _absolute_embeddings(w, n, ids, types, np.arange(len(ids)))
    x = linear(w, "encoder.embedding_hidden_mapping_in", x)
    am, act = key_mask(mask), act_fn(n["act"])
    for i in range(n["layers"]):
        g = albert_group_of_layer(i, n)
        for k in range(n["inner"]):
            p = "encoder.albert_layer_groups.%d.albert_layers.%d." % (g, k)
            x = post_ln_layer(w, p, ALBERT_LAYER, x, am, n, act)
    return x


def nomic_rotary_base(n, seq):
    """The rotary base at this sequence length (dynamic NTK beyond max_trained_positions)."""
    base, f = n["rotary_base"], n["rotary_scaling_factor"]
    rot = nomic_rotary_dim(n)
    if f and seq > n["max_trained_positions"]:
        base = base * ((f * seq / n["max_trained_positions"]) - (f - 1)) ** (rot / (rot - 2))
    return base


def nomic_rotary_dim(n):
    return int(n["hidden"] // n["heads"] * n["rotary_fraction"])


def nomic_encoder(w, n, ids, types, mask):
    x = w["embeddings.word_embeddings.weight"][ids]
    if n["type_vocab"] > 0:
        x = x + w["embeddings.token_type_embeddings.weight"][types]
    if n["rotary_fraction"] <= 0 and n["max_pos"] > 0:
        x = x + w["embeddings.position_embeddings.weight"][np.arange(len(ids))]
    x = norm(w, "emb_ln", x, n["eps"])
    am, A, H = key_mask(mask), n["heads"], n["hidden"]
    d = H // A
    rot, base = nomic_rotary_dim(n), nomic_rotary_base(n, len(ids))
    act = {"swiglu": act_fn("silu"), "geglu": act_fn("gelu"),
           "glu": lambda z: 1.0 / (1.0 + np.exp(-z))}.get(n["act"], act_fn("gelu"))

    def attn(p, h):
        qkv = linear(w, p + "attn.Wqkv", h, n["qkv_bias"]).reshape(len(ids), 3, A, d)
        q, k, v = (qkv[:, j].transpose(1, 0, 2) for j in range(3))  # [A, S, d]
        q = rotary(q, base, rot, n["rotary_interleaved"])
        k = rotary(k, base, rot, n["rotary_interleaved"])
        return linear(w, p + "attn.out_proj", attention(q, k, v, am), n["qkv_bias"])

    def mlp(p, h):
        if n["gated"]:
            y = linear(w, p + "mlp.fc11", h, n["fc1_bias"]) * act(linear(w, p + "mlp.fc12", h, n["fc1_bias"]))
        else:
            y = act(linear(w, p + "mlp.fc1", h, n["fc1_bias"]))
        return linear(w, p + "mlp.fc2", y, n["fc2_bias"])

    residual = None
    for i in range(n["layers"]):
        p = "encoder.layers.%d." % i
        if n["prenorm"]:
            residual = x if residual is None else x + residual
            h = attn(p, norm(w, p + "norm1", residual, n["eps"]))
            residual = h + residual
            x = mlp(p, norm(w, p + "norm2", residual, n["eps"]))
        else:
            x = norm(w, p + "norm1", x + attn(p, x), n["eps"])
            x = norm(w, p + "norm2", x + mlp(p, x), n["eps"])
    return x


def modernbert_window_mask(s, window):
    """[S, S] additive: 0 where |i - j| <= window // 2, finfo(float32).min elsewhere."""
    i = np.arange(s)
    return np.where(np.abs(i[:, None] - i[None, :]) <= window // 2, 0.0, MASK_NEG)


def modernbert_encoder(w, n, ids, types, mask):
    del types  # ModernBERT has no token types
    s, A, H, nb = len(ids), n["heads"], n["hidden"], n["norm_bias"]
    d = H // A
    x = norm(w, "embeddings.norm", w["embeddings.tok_embeddings.weight"][ids], n["eps"], nb)
    full = key_mask(mask)
    local = np.minimum(full, modernbert_window_mask(s, n["window"]))  # both masks: still finfo.min
    act = act_fn(n["act"])
    for l in range(n["layers"]):
        p = "layers.%d." % l
        if l == 0:
            if p + "attn_norm.weight" in w:
                raise ValueError("layer 0 has an attn_norm")
            h = x
        else:
            h = norm(w, p + "attn_norm", x, n["eps"], nb)
        qkv = linear(w, p + "attn.Wqkv", h, n["attention_bias"]).reshape(s, 3, A, d)
        q, k, v = (qkv[:, j].transpose(1, 0, 2) for j in range(3))
        theta = n["local_theta"] if n["sliding"][l] else n["global_theta"]
        q, k = rotary(q, theta, d), rotary(k, theta, d)
        ctx = attention(q, k, v, local if n["sliding"][l] else full)
        x = x + linear(w, p + "attn.Wo", ctx, n["attention_bias"])
        wi = linear(w, p + "mlp.Wi", norm(w, p + "mlp_norm", x, n["eps"], nb), n["mlp_bias"])
        inp, gate = wi[:, :n["intermediate"]], wi[:, n["intermediate"]:]
        x = x + linear(w, p + "mlp.Wo", act(inp) * gate, n["mlp_bias"])
    return norm(w, "final_norm", x, n["eps"], nb)


def rms_norm(w, name, x, eps):
    """Qwen3RMSNorm in float64: x / sqrt(mean(x^2) + eps) * weight, over the last axis."""
    if name + ".bias" in w:
        raise ValueError("unexpected tensor %s.bias" % name)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w[name + ".weight"]


def causal_mask(s):
    """[S, S] additive: 0 where key j <= query i, finfo(float32).min elsewhere."""
    i = np.arange(s)
    return np.where(i[None, :] <= i[:, None], 0.0, MASK_NEG)


def qwen3_encoder(w, n, ids, types, mask):
    del types  # Qwen3 has no token types
    s, A, KV, d, eps, b = len(ids), n["heads"], n["kv_heads"], n["head_dim"], n["eps"], n["attention_bias"]
    x = w["embed_tokens.weight"][ids]
    am = np.minimum(key_mask(mask), causal_mask(s))
    act = act_fn(n["act"])
    for l in range(n["layers"]):
        p = "layers.%d." % l
        h = rms_norm(w, p + "input_layernorm", x, eps)
        q = linear(w, p + "self_attn.q_proj", h, b).reshape(s, A, d)
        k = linear(w, p + "self_attn.k_proj", h, b).reshape(s, KV, d)
        v = linear(w, p + "self_attn.v_proj", h, b).reshape(s, KV, d)
        q = rms_norm(w, p + "self_attn.q_norm", q, eps).transpose(1, 0, 2)  # [A, S, d]
        k = rms_norm(w, p + "self_attn.k_norm", k, eps).transpose(1, 0, 2)
        v = v.transpose(1, 0, 2)
        q, k = rotary(q, n["theta"], d), rotary(k, n["theta"], d)
        group = A // KV  # repeat_kv: query head a reads KV head a // group
        k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)
        x = x + linear(w, p + "self_attn.o_proj", attention(q, k, v, am), b)
        y = rms_norm(w, p + "post_attention_layernorm", x, eps)
        x = x + linear(w, p + "mlp.down_proj",
                       act(linear(w, p + "mlp.gate_proj", y, False)) * linear(w, p + "mlp.up_proj", y, False), False)
    return rms_norm(w, "norm", x, eps)


def gemma_rms_norm(w, name, x, eps):
    """Gemma3RMSNorm in float64: x / sqrt(mean(x^2) + eps) * (1 + weight)."""
    if name + ".bias" in w:
        raise ValueError("unexpected tensor %s.bias" % name)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * (1.0 + w[name + ".weight"])


def gemma3_window_mask(s, window):
    """[S, S] additive: 0 where |i - j| < window (the already-converted exclusive bound)."""
    i = np.arange(s)
    return np.where(np.abs(i[:, None] - i[None, :]) < window, 0.0, MASK_NEG)


def gemma3_encoder(w, n, ids, types, mask):
    del types  # Gemma 3 has no token types
    s, A, KV, d, eps, b = len(ids), n["heads"], n["kv_heads"], n["head_dim"], n["eps"], n["attention_bias"]
    x = w["embed_tokens.weight"][ids] * float(np.float32(math.sqrt(n["hidden"])))
    full = key_mask(mask)
    local = np.minimum(full, gemma3_window_mask(s, n["window"]))
    act = act_fn(n["act"])
    g = lambda name, t: gemma_rms_norm(w, name, t, eps)  # noqa: E731
    for l in range(n["layers"]):
        p = "layers.%d." % l
        h = g(p + "input_layernorm", x)
        q = linear(w, p + "self_attn.q_proj", h, b).reshape(s, A, d)
        k = linear(w, p + "self_attn.k_proj", h, b).reshape(s, KV, d)
        v = linear(w, p + "self_attn.v_proj", h, b).reshape(s, KV, d)
        q = g(p + "self_attn.q_norm", q).transpose(1, 0, 2)  # [A, S, d]
        k = g(p + "self_attn.k_norm", k).transpose(1, 0, 2)
        v = v.transpose(1, 0, 2)
        theta = n["local_theta"] if n["sliding"][l] else n["theta"]
        q, k = rotary(q, theta, d), rotary(k, theta, d)
        group = A // KV
        k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)
        ctx = attention(q, k, v, local if n["sliding"][l] else full, n["qpas"] ** -0.5)
        x = x + g(p + "post_attention_layernorm", linear(w, p + "self_attn.o_proj", ctx, b))
        y = g(p + "pre_feedforward_layernorm", x)
        f = linear(w, p + "mlp.down_proj",
                   act(linear(w, p + "mlp.gate_proj", y, False)) * linear(w, p + "mlp.up_proj", y, False), False)
        x = x + g(p + "post_feedforward_layernorm", f)
    return g("norm", x)


ENCODERS = {"roberta": roberta_encoder, "electra": electra_encoder, "albert": albert_encoder,
            "nomic_bert": nomic_encoder, "modernbert": modernbert_encoder, "qwen3": qwen3_encoder,
            "gemma3_text": gemma3_encoder}


# ---------------------------------------------------------------------------------------------
# models and heads
# ---------------------------------------------------------------------------------------------

class Model:
    def __init__(self, weights, config, pooling=None, normalize=False):
        self.weights = weights      # names without the base-model prefix -> float64
        self.config = config        # config.json dict
        self.n = _normalize(config)
        self.pooling = pooling      # sentence-transformers pooling or None
        self.normalize = normalize
        self.dense = []             # sentence-transformers Dense modules (tasks_numpy.read_dense_modules)

    @property
    def family(self):
        return self.n["family"]

    @property
    def architecture(self):
        return (self.config.get("architectures") or [""])[0]


def load_model(path):
    ckpt_dir, pooling, normalize = tasks_numpy.read_sentence_transformers(path)
    with open(os.path.join(ckpt_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    prefix = PREFIX[family_of(config)]
    raw, _ = bert_numpy.read_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    w = {}
    for name, arr in raw.items():
        key = name[len(prefix):] if name.startswith(prefix) else name
        w[key] = arr.astype(np.float64) if arr.dtype.kind == "f" else arr
    model = Model(w, config, pooling, normalize)
    model.dense = tasks_numpy.read_dense_modules(path)
    return model


def run(model, ids, types, mask):
    w, n = model.weights, model.n
    ids = np.asarray(ids, np.int64)
    types = np.zeros_like(ids) if types is None else np.asarray(types, np.int64)
    mask = np.ones(len(ids)) if mask is None else np.asarray(mask)
    h = ENCODERS[n["family"]](w, n, ids, types, mask)
    out = {"last_hidden_state": h}
    fam, arch = n["family"], model.architecture
    if fam == "albert" and "pooler.weight" in w:
        out["pooler_output"] = np.tanh(linear(w, "pooler", h[0]))
    elif fam in ("roberta", "nomic_bert") and "pooler.dense.weight" in w:
        out["pooler_output"] = np.tanh(linear(w, "pooler.dense", h[0]))
    if model.pooling is not None:
        # sentence-transformers' order: Pooling, the Dense modules, Normalize
        v = tasks_numpy.apply_dense(tasks_numpy.pool(h, mask, model.pooling, False), model.dense)
        out["sentence_embedding"] = v / max(np.linalg.norm(v), 1e-12) if model.normalize else v
        return out

    def mb_head(x):
        y = act_fn(n["classifier_act"])(linear(w, "head.dense", x, n["classifier_bias"]))
        return norm(w, "head.norm", y, n["eps"], n["norm_bias"])

    if arch.endswith("ForSequenceClassification"):
        if fam in ("roberta", "electra"):
            act = np.tanh if fam == "roberta" else bert_numpy.gelu_erf
            out["logits"] = linear(w, "classifier.out_proj", act(linear(w, "classifier.dense", h[0])))
        elif fam == "modernbert":
            m = np.asarray(mask, np.float64)[:, None]
            pooled = h[0] if n["classifier_pooling"] == "cls" else (h * m).sum(axis=0) / m.sum()
            out["logits"] = linear(w, "classifier", mb_head(pooled))
        else:  # albert, nomic_bert: classifier(pooler_output)
            out["logits"] = linear(w, "classifier", out["pooler_output"])
    elif arch.endswith("ForQuestionAnswering"):
        qa = linear(w, "classifier", mb_head(h)) if fam == "modernbert" else linear(w, "qa_outputs", h)
        out["start_logits"], out["end_logits"] = qa[:, 0], qa[:, 1]
    elif arch.endswith("ForTokenClassification"):
        out["token_logits"] = linear(w, "classifier", mb_head(h) if fam == "modernbert" else h)
    elif arch.endswith("ForMaskedLM"):
        logits = masked_lm_logits(w, n, fam, h)
        out["sparse_embedding"] = splade(logits, mask)
        out["fill_mask_probs"] = tasks_numpy.fill_mask_probs(logits)
    return out


# The *ForMaskedLM heads (transformers): (transform dense, its activation, norm, decoder bias);
# the decoder weight is tied to the word embeddings.
def masked_lm_logits(w, n, fam, h):
    """[tokens, vocab] logits of the family's masked-LM head on the encoder output h."""
    if fam == "modernbert":  # ModernBertPredictionHead (classifier_activation) + decoder
        x = act_fn(n["classifier_act"])(linear(w, "head.dense", h, n["classifier_bias"]))
        x = norm(w, "head.norm", x, n["eps"], n["norm_bias"])
        y = x @ w["embeddings.tok_embeddings.weight"].T
        return y + w["decoder.bias"] if "decoder.bias" in w else y
    dense, ln, bias, act = {
        "roberta": ("lm_head.dense", "lm_head.layer_norm", "lm_head.bias", "gelu"),          # RobertaLMHead
        "albert": ("predictions.dense", "predictions.LayerNorm", "predictions.bias", n["act"]),  # AlbertMLMHead
        "electra": ("generator_predictions.dense", "generator_predictions.LayerNorm", "generator_lm_head.bias",
                    "gelu"),                                                                 # ElectraGeneratorPredictions
    }[fam]
    x = norm(w, ln, act_fn(act)(linear(w, dense, h)), n["eps"])
    return x @ w["embeddings.word_embeddings.weight"].T + w[bias]


def splade(logits, mask):
    """SPLADE's sparse vector: max over the tokens whose mask is 1 of log(1 + relu(logits))."""
    m = np.asarray(mask, bool)
    return np.log1p(np.maximum(logits[m], 0.0)).max(axis=0)
