# SPDX-License-Identifier: Apache-2.0
"""Write synthetic checkpoints of the other BERT families (RoBERTa / XLM-RoBERTa / CamemBERT,
ELECTRA, ALBERT, nomic-bert, ModernBERT) and every head they have in transformers, laid out as
transformers / sentence-transformers save them (config.json with the real keys and model_type,
model.safetensors with the exact tensor names and prefixes), plus numpy goldens beside them.

Library: make_family_model(out, name), build_family_model(out_dir, name) (checkpoint + cases),
FAMILY_MODELS, and CLI:
  make_family_checkpoints.py --out DIR [--model NAME]... [--extra-tensor NAME]...
(--extra-tensor adds an F32 [4] tensor of that name, for tests of unused-tensor reporting; no
goldens are written then.)

Every model: vocab 512, F32, "fullscale" init (linear weights N(0, 1/fan_in), embeddings N(0, 1),
LayerNorm weight 1 + N(0, 0.1), bias N(0, 0.05), linear biases N(0, 0.1); make_checkpoint._draw) in
the listed tensor order from default_rng(seed). Shapes (head counts, widths, embedding sizes, group
counts, windows, biases) differ from model to model on purpose. Tokenizer files: vocab.txt
(make_checkpoint.vocab_tokens, BERT specials) for ELECTRA and nomic-bert (WordPiece); a small
tokenizer.json (family_tokenizers.py) for the others: byte-level BPE (RoBERTa, ModernBERT),
Unigram + Metaspace (XLM-R, CamemBERT, ALBERT).

Cases (DIR/MODEL/cases/CASE/ ids.txt mask.txt types.txt + OUTPUT.f32, float32 LE):
  len1 (the first special), len7 (CLS w*5 SEP), len7_pad (CLS w w SEP + 3 pads, mask 0),
  len20_pair (CLS a*8 SEP | b*9 SEP, types 0 / 1 for families with token types; RoBERTa:
  <s> a*8 </s></s> b*8 </s>, types 0), len40_pad (CLS w*28 SEP + 10 pads), lenmax (the longest
  sequence the model takes, <= 128).
Outputs as tasks_numpy / families_numpy name them: last_hidden_state [S, H] always, and by head
pooler_output [H], logits [labels], start_logits / end_logits [S], token_logits [S, labels],
sentence_embedding [H]. Padding invisibility is checked at generation (real rows of every output
equal those of the unpadded sequence within 1e-9).
DIR/families_manifest.txt: one "MODEL FAMILY TASK CASE SEQ" line per case.
"""

import argparse
import json
import os
import shutil
import sys
import zlib

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
import families_numpy as fnp  # noqa: E402
import make_checkpoint as mc  # noqa: E402
import family_tokenizers as ftok  # noqa: E402
import make_task_checkpoints as mtc  # noqa: E402
import tasks_numpy  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = "The movie was REALLY good, and the acting was great!"
TEXT_A, TEXT_B = "Who was rude?", "The Hotel was clean, but the staff was RUDE."

VOCAB = 512
ST_MAX_SEQ = 96

# Special token ids per family (vocab 512): cls / sep / pad, and the first ordinary id.
SPECIALS = {
    "roberta": {"cls": 0, "pad": 1, "sep": 2, "unk": 3, "mask": 4, "first_regular": 5},
    "albert": {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4, "first_regular": 5},
    "modernbert": {"pad": 0, "cls": 1, "sep": 2, "unk": 3, "mask": 4, "first_regular": 5},
    "electra": mc.special_ids(VOCAB),
    "nomic_bert": mc.special_ids(VOCAB),
    "qwen3": {"cls": 0, "pad": 1, "sep": 2, "unk": 3, "mask": 4, "first_regular": 5},  # roberta_bpe's
    "gemma3_text": {"cls": 0, "pad": 1, "sep": 2, "unk": 3, "mask": 4, "first_regular": 5},  # roberta_bpe's
}

# name: (model_type, architecture, shape/config options, labels, st (pooling, normalize) or None,
#        seed, layout options)
#   layout options: "noprefix" (base model saved alone: unprefixed names), "subdir" (ST
#   transformer in 0_Transformer/), "position_ids" (training-only I64 buffer), "mlm" (training-only
#   LM head tensors), "pretraining" (ELECTRA discriminator head)
FAMILY_MODELS = {
    # RoBERTa family: post-LN BERT, positions from padding_idx + 1, LayerNorm eps 1e-5
    "roberta_model": ("roberta", "RobertaModel", dict(hidden=64, heads=4, layers=2, inter=128), None, None,
                      31, ("noprefix", "position_ids")),
    "roberta_seqcls": ("roberta", "RobertaForSequenceClassification",
                       dict(hidden=96, heads=3, layers=2, inter=160, act="gelu"),
                       ["negative", "positive", "neutral"], None, 32, ()),
    "xlmr_token": ("xlm-roberta", "XLMRobertaForTokenClassification",
                   dict(hidden=64, heads=2, layers=3, inter=96),
                   ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"], None, 33, ()),
    "camembert_qa": ("camembert", "CamembertForQuestionAnswering", dict(hidden=64, heads=8, layers=2, inter=128),
                     None, None, 34, ()),
    "xlmr_st_mean_norm": ("xlm-roberta", "XLMRobertaModel", dict(hidden=64, heads=4, layers=2, inter=128),
                          None, ("mean", True), 35, ("noprefix",)),
    "roberta_mlm": ("roberta", "RobertaForMaskedLM", dict(hidden=64, heads=4, layers=2, inter=128), None, None,
                    36, ("mlm",)),
    # ELECTRA: factorized embeddings + embeddings_project when embedding_size < hidden
    "electra_model": ("electra", "ElectraModel", dict(hidden=64, heads=4, layers=2, inter=128, emb=32), None, None,
                      41, ("noprefix",)),
    "electra_seqcls": ("electra", "ElectraForSequenceClassification",
                       dict(hidden=64, heads=4, layers=2, inter=128, emb=64), ["contradiction", "entailment"],
                       None, 42, ()),
    "electra_token": ("electra", "ElectraForTokenClassification",
                      dict(hidden=96, heads=6, layers=2, inter=192, emb=48), ["O", "B-MISC", "I-MISC"], None, 43, ()),
    "electra_qa": ("electra", "ElectraForQuestionAnswering", dict(hidden=64, heads=4, layers=3, inter=128, emb=32),
                   None, None, 44, ()),
    "electra_mlm": ("electra", "ElectraForMaskedLM", dict(hidden=64, heads=4, layers=2, inter=128, emb=32), None,
                    None, 46, ("mlm",)),
    "electra_pretraining": ("electra", "ElectraForPreTraining", dict(hidden=64, heads=4, layers=2, inter=128, emb=32),
                            None, None, 45, ("pretraining", "position_ids")),
    # ALBERT: factorized embeddings, shared layer groups, gelu_new
    "albert_model": ("albert", "AlbertModel", dict(hidden=64, heads=4, layers=4, inter=128, emb=32, groups=2, inner=1),
                     None, None, 51, ("noprefix",)),
    "albert_seqcls": ("albert", "AlbertForSequenceClassification",
                      dict(hidden=96, heads=3, layers=3, inter=128, emb=48, groups=1, inner=2),
                      ["LABEL_0", "LABEL_1", "LABEL_2"], None, 52, ()),
    "albert_token": ("albert", "AlbertForTokenClassification",
                     dict(hidden=64, heads=2, layers=2, inter=128, emb=32, groups=1, inner=1),
                     ["O", "B-ORG", "I-ORG", "B-PER"], None, 53, ()),
    "albert_qa": ("albert", "AlbertForQuestionAnswering",
                  dict(hidden=64, heads=4, layers=6, inter=96, emb=16, groups=3, inner=1), None, None, 54, ()),
    "albert_mlm": ("albert", "AlbertForMaskedLM", dict(hidden=64, heads=4, layers=2, inter=128, emb=32, groups=1,
                                                       inner=1), None, None, 55, ("mlm",)),
    # nomic-bert: rotary, SwiGLU, fused Wqkv, post-norm (prenorm too)
    "nomic_model": ("nomic_bert", "NomicBertModel",
                    dict(hidden=64, heads=4, layers=2, inter=256, act="swiglu", rot_frac=1.0, rot_base=1000.0),
                    None, None, 61, ("noprefix",)),
    "nomic_st_mean_norm": ("nomic_bert", "NomicBertModel",
                           dict(hidden=64, heads=2, layers=2, inter=200, act="swiglu", rot_frac=1.0, rot_base=1000.0),
                           None, ("mean", True), 62, ("noprefix",)),
    "nomic_seqcls": ("nomic_bert", "NomicBertForSequenceClassification",
                     dict(hidden=96, heads=3, layers=2, inter=256, act="geglu", rot_frac=0.5, rot_base=10000.0,
                          interleaved=True, qkv_bias=True, fc1_bias=True, fc2_bias=True, ntk=2.0, max_trained=48),
                     ["LABEL_0", "LABEL_1"], None, 63, ()),
    "nomic_prenorm_ntk": ("nomic_bert", "NomicBertModel",
                          dict(hidden=64, heads=4, layers=2, inter=256, act="swiglu", rot_frac=1.0, rot_base=1000.0,
                               prenorm=True, ntk=2.0, max_trained=48, fc2_bias=True),
                          None, None, 64, ("noprefix",)),
    "nomic_glu": ("nomic_bert", "NomicBertModel",
                  dict(hidden=64, heads=4, layers=2, inter=192, act="glu", rot_frac=1.0, rot_base=1000.0,
                       fc1_bias=True),
                  None, None, 65, ("noprefix",)),
    # ModernBERT: pre-norm, rotary with global/local theta, sliding windows, GeGLU, bias-free norms
    "modernbert_model": ("modernbert", "ModernBertModel",
                         dict(hidden=64, heads=4, layers=4, inter=96, every=3, window=8), None, None, 71, ("noprefix",)),
    "modernbert_seqcls_mean": ("modernbert", "ModernBertForSequenceClassification",
                               dict(hidden=64, heads=2, layers=4, inter=80, every=2, window=16, biases=True,
                                    pooling="mean", new_spelling=True),
                               ["LABEL_0", "LABEL_1", "LABEL_2"], None, 72, ()),
    "modernbert_seqcls_cls": ("modernbert", "ModernBertForSequenceClassification",
                              dict(hidden=96, heads=6, layers=3, inter=128, every=3, window=6, pooling="cls",
                                   global_theta=50000.0, local_theta=2000.0),
                              ["no", "yes"], None, 73, ()),
    "modernbert_token": ("modernbert", "ModernBertForTokenClassification",
                         dict(hidden=64, heads=4, layers=3, inter=96, every=2, window=10, cls_act="silu"),
                         ["O", "B-LOC", "I-LOC"], None, 74, ()),
    "modernbert_qa": ("modernbert", "ModernBertForQuestionAnswering",
                      dict(hidden=64, heads=4, layers=3, inter=96, every=3, window=8, new_spelling=True),
                      None, None, 75, ()),
    "modernbert_mlm": ("modernbert", "ModernBertForMaskedLM", dict(hidden=64, heads=4, layers=3, inter=96, every=3,
                                                                   window=8), None, None, 76, ("mlm",)),
    "modernbert_st_mean_norm": ("modernbert", "ModernBertModel",
                                dict(hidden=64, heads=4, layers=4, inter=96, every=3, window=12), None,
                                ("mean", True), 77, ("noprefix", "subdir")),
    # Qwen3: causal, grouped-query heads with head_dim independent of hidden, q/k RMSNorm, SwiGLU
    "qwen3_model": ("qwen3", "Qwen3Model", dict(hidden=64, heads=4, kv_heads=2, head_dim=32, layers=2, inter=96,
                                                theta=10000.0), None, None, 81, ("noprefix",)),
    "qwen3_causallm": ("qwen3", "Qwen3ForCausalLM", dict(hidden=48, heads=6, kv_heads=6, head_dim=8, layers=3,
                                                         inter=80, theta=1000000.0, attention_bias=True),
                       None, None, 82, ("lm_head",)),
    "qwen3_st_lasttoken": ("qwen3", "Qwen3Model", dict(hidden=64, heads=8, kv_heads=2, head_dim=16, layers=2,
                                                       inter=128, theta=1000000.0, prompts={
                                                           "query": "Instruct: Given a web search query, retrieve "
                                                                    "relevant passages that answer the query\nQuery:"}),
                           None, ("lasttoken", True), 83, ("noprefix",)),
    # Gemma 3 (EmbeddingGemma's shape, small): 3 query heads over 1 KV head of 32 (heads x head_dim
    # != hidden), pattern 3 (layers 0, 1, 3 sliding, 2 global), window 16 (|i - j| <= 8: shorter
    # than the 20-, 40- and 128-token cases, longer than the 7-token ones), query_pre_attn_scalar
    # != head_dim, GeGLU tanh, post-norms; the new config spelling (layer_types, rope_parameters).
    "gemma3_model": ("gemma3_text", "Gemma3TextModel",
                     dict(hidden=64, heads=3, kv_heads=1, head_dim=32, layers=4, inter=96, every=3, window=16,
                          qpas=24, theta=1000000.0, local_theta=10000.0), None, None, 91, ("noprefix",)),
    "gemma3_new_spelling": ("gemma3_text", "Gemma3TextModel",
                                 dict(hidden=48, heads=4, kv_heads=2, head_dim=16, layers=3, inter=64, every=2,
                                      window=5, qpas=16, theta=50000.0, local_theta=500.0, new_spelling=True),
                                 None, None, 92, ("noprefix",)),
    # EmbeddingGemma's sentence-transformers folder: mean pooling, Dense H -> 4H -> H without bias
    # (Identity), Normalize, its two prompts
    "gemma3_st_dense": ("gemma3_text", "Gemma3TextModel",
                        dict(hidden=64, heads=3, kv_heads=1, head_dim=32, layers=3, inter=96, every=3, window=12,
                             qpas=32, theta=1000000.0, local_theta=10000.0,
                             prompts={"query": "task: search result | query: ", "document": "title: none | text: "}),
                        None, ("mean", True, [(256, False, False), (64, False, False)]), 93, ("noprefix",)),
}

CASES = ("len1", "len7", "len7_pad", "len20_pair", "len40_pad", "lenmax")
TEXT_CASES = ("text", "text_pair")


def family_of_type(model_type):
    return fnp.FAMILY_OF_MODEL_TYPE[model_type]


# The longest input of every model (RoBERTa: max_position_embeddings 130 = 128 + padding_idx + 1).
SEQ_MAX = 128


# ---------------------------------------------------------------------------------------------
# tensor lists
# ---------------------------------------------------------------------------------------------

class _Specs(list):
    """(name without prefix, shape, kind, is_head)."""

    def add(self, name, shape, kind, head=False):
        self.append((name, tuple(shape), kind, head))

    def lin(self, name, out_f, in_f, bias=True, head=False):
        self.add(name + ".weight", (out_f, in_f), "linear_w", head)
        if bias:
            self.add(name + ".bias", (out_f,), "bias", head)

    def ln(self, name, dim, bias=True, head=False):
        self.add(name + ".weight", (dim,), "ln_w", head)
        if bias:
            self.add(name + ".bias", (dim,), "ln_b", head)


def _bert_layer_specs(s, p, H, I):
    for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
        s.lin(p + part, H, H)
    s.ln(p + "attention.output.LayerNorm", H)
    s.lin(p + "intermediate.dense", I, H)
    s.lin(p + "output.dense", H, I)
    s.ln(p + "output.LayerNorm", H)


def _specs(model_type, arch, o, labels, layout):
    fam = family_of_type(model_type)
    H, L, I = o["hidden"], o["layers"], o["inter"]
    s = _Specs()
    nl = len(labels) if labels else 0
    if fam in ("roberta", "electra", "albert"):
        E = o.get("emb", H)
        s.add("embeddings.word_embeddings.weight", (VOCAB, E), "emb")
        s.add("embeddings.position_embeddings.weight", (_max_pos(fam), E), "emb")
        s.add("embeddings.token_type_embeddings.weight", (1 if fam == "roberta" else 2, E), "emb")
        s.ln("embeddings.LayerNorm", E)
        if fam == "electra" and E != H:
            s.lin("embeddings_project", H, E)
        if fam == "albert":
            s.lin("encoder.embedding_hidden_mapping_in", H, E)
            for g in range(o["groups"]):
                for k in range(o["inner"]):
                    p = "encoder.albert_layer_groups.%d.albert_layers.%d." % (g, k)
                    s.ln(p + "full_layer_layer_norm", H)
                    for part in ("query", "key", "value", "dense"):
                        s.lin(p + "attention." + part, H, H)
                    s.ln(p + "attention.LayerNorm", H)
                    s.lin(p + "ffn", I, H)
                    s.lin(p + "ffn_output", H, I)
        else:
            for i in range(L):
                _bert_layer_specs(s, "encoder.layer.%d." % i, H, I)
        if fam == "roberta" and arch.endswith("Model"):
            s.lin("pooler.dense", H, H)
        if fam == "albert" and (arch.endswith("Model") or arch.endswith("SequenceClassification")):
            s.lin("pooler", H, H)
        if arch.endswith("SequenceClassification"):
            if fam in ("roberta", "electra"):
                s.lin("classifier.dense", H, H, head=True)
                s.lin("classifier.out_proj", nl, H, head=True)
            else:
                s.lin("classifier", nl, H, head=True)
        elif arch.endswith("TokenClassification"):
            s.lin("classifier", nl, H, head=True)
        elif arch.endswith("QuestionAnswering"):
            s.lin("qa_outputs", 2, H, head=True)
        if "mlm" in layout and fam == "roberta":  # RobertaForMaskedLM lm_head (decoder tied)
            s.lin("lm_head.dense", H, H, head=True)
            s.ln("lm_head.layer_norm", H, head=True)
            s.add("lm_head.bias", (VOCAB,), "bias", True)
        if "mlm" in layout and fam == "albert":  # AlbertForMaskedLM predictions (decoder tied)
            s.add("predictions.bias", (VOCAB,), "bias", True)
            s.ln("predictions.LayerNorm", E, head=True)
            s.lin("predictions.dense", E, H, head=True)
        if "mlm" in layout and fam == "electra":  # ElectraForMaskedLM generator head (decoder tied)
            s.lin("generator_predictions.dense", E, H, head=True)
            s.ln("generator_predictions.LayerNorm", E, head=True)
            s.add("generator_lm_head.bias", (VOCAB,), "bias", True)
        if "pretraining" in layout:  # ElectraForPreTraining discriminator head
            s.lin("discriminator_predictions.dense", H, H, head=True)
            s.lin("discriminator_predictions.dense_prediction", 1, H, head=True)
        return s
    if fam == "qwen3":
        A, KV, d, b = o["heads"], o["kv_heads"], o["head_dim"], bool(o.get("attention_bias", False))
        s.add("embed_tokens.weight", (VOCAB, H), "emb")
        for i in range(L):
            p = "layers.%d." % i
            s.ln(p + "input_layernorm", H, bias=False)
            s.lin(p + "self_attn.q_proj", A * d, H, bias=b)
            s.lin(p + "self_attn.k_proj", KV * d, H, bias=b)
            s.lin(p + "self_attn.v_proj", KV * d, H, bias=b)
            s.lin(p + "self_attn.o_proj", H, A * d, bias=b)
            s.ln(p + "self_attn.q_norm", d, bias=False)
            s.ln(p + "self_attn.k_norm", d, bias=False)
            s.ln(p + "post_attention_layernorm", H, bias=False)
            s.lin(p + "mlp.gate_proj", I, H, bias=False)
            s.lin(p + "mlp.up_proj", I, H, bias=False)
            s.lin(p + "mlp.down_proj", H, I, bias=False)
        s.ln("norm", H, bias=False)
        if "lm_head" in layout:  # Qwen3ForCausalLM's LM head (untied here): not used by the encoder
            s.lin("lm_head", VOCAB, H, bias=False, head=True)
        return s
    if fam == "gemma3_text":  # Qwen3's tensors, the norms after both branches, a different pre-MLP name
        A, KV, d = o["heads"], o["kv_heads"], o["head_dim"]
        s.add("embed_tokens.weight", (VOCAB, H), "emb")
        for i in range(L):
            p = "layers.%d." % i
            s.add(p + "input_layernorm.weight", (H,), "gemma_ln_w")
            s.lin(p + "self_attn.q_proj", A * d, H, bias=False)
            s.lin(p + "self_attn.k_proj", KV * d, H, bias=False)
            s.lin(p + "self_attn.v_proj", KV * d, H, bias=False)
            s.lin(p + "self_attn.o_proj", H, A * d, bias=False)
            s.add(p + "self_attn.q_norm.weight", (d,), "gemma_ln_w")
            s.add(p + "self_attn.k_norm.weight", (d,), "gemma_ln_w")
            for nname in ("post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"):
                s.add(p + nname + ".weight", (H,), "gemma_ln_w")
            s.lin(p + "mlp.gate_proj", I, H, bias=False)
            s.lin(p + "mlp.up_proj", I, H, bias=False)
            s.lin(p + "mlp.down_proj", H, I, bias=False)
        s.add("norm.weight", (H,), "gemma_ln_w")
        return s
    if fam == "nomic_bert":
        n = _nomic_normalized(o)
        s.add("embeddings.word_embeddings.weight", (VOCAB, H), "emb")
        s.add("embeddings.token_type_embeddings.weight", (2, H), "emb")
        s.ln("emb_ln", H)
        for i in range(L):
            p = "encoder.layers.%d." % i
            s.lin(p + "attn.Wqkv", 3 * H, H, bias=n["qkv_bias"])
            s.lin(p + "attn.out_proj", H, H, bias=n["qkv_bias"])
            s.lin(p + "mlp.fc11", n["intermediate"], H, bias=n["fc1_bias"])
            s.lin(p + "mlp.fc12", n["intermediate"], H, bias=n["fc1_bias"])
            s.lin(p + "mlp.fc2", H, n["intermediate"], bias=n["fc2_bias"])
            s.ln(p + "norm1", H)
            s.ln(p + "norm2", H)
        if arch.endswith("SequenceClassification"):
            s.lin("pooler.dense", H, H)
            s.lin("classifier", nl, H, head=True)
        return s
    # modernbert
    b = bool(o.get("biases", False))
    s.add("embeddings.tok_embeddings.weight", (VOCAB, H), "emb")
    s.ln("embeddings.norm", H, bias=b)
    for i in range(L):
        p = "layers.%d." % i
        if i > 0:
            s.ln(p + "attn_norm", H, bias=b)
        s.lin(p + "attn.Wqkv", 3 * H, H, bias=b)
        s.lin(p + "attn.Wo", H, H, bias=b)
        s.ln(p + "mlp_norm", H, bias=b)
        s.lin(p + "mlp.Wi", 2 * I, H, bias=b)
        s.lin(p + "mlp.Wo", H, I, bias=b)
    s.ln("final_norm", H, bias=b)
    if not arch.endswith("Model"):
        s.lin("head.dense", H, H, bias=b, head=True)
        s.ln("head.norm", H, bias=b, head=True)
    if arch.endswith("SequenceClassification") or arch.endswith("TokenClassification"):
        s.lin("classifier", nl, H, head=True)
    elif arch.endswith("QuestionAnswering"):
        s.lin("classifier", 2, H, head=True)
    elif arch.endswith("MaskedLM"):
        s.add("decoder.bias", (VOCAB,), "bias", True)  # decoder.weight is tied to tok_embeddings
    return s


def _max_pos(fam):
    return 130 if fam == "roberta" else 128


def _nomic_normalized(o):
    return fnp.normalized_config(_config("nomic_bert", "NomicBertModel", o, None))


# ---------------------------------------------------------------------------------------------
# config.json
# ---------------------------------------------------------------------------------------------

def _labels(c, labels):
    if labels:
        c["id2label"] = {str(i): n for i, n in enumerate(labels)}
        c["label2id"] = {n: i for i, n in enumerate(labels)}


def _config(model_type, arch, o, labels):
    fam = family_of_type(model_type)
    sp = SPECIALS[fam]
    H, A, L, I = o["hidden"], o["heads"], o["layers"], o["inter"]
    if fam == "nomic_bert":
        c = {"activation_function": o["act"], "architectures": [arch],
             "auto_map": {"AutoConfig": "nomic-ai/nomic-bert-2048--configuration_hf_nomic_bert.NomicBertConfig",
                          "AutoModel": "nomic-ai/nomic-bert-2048--modeling_hf_nomic_bert.NomicBertModel"},
             "attn_pdrop": 0.0, "bos_token_id": None, "causal": False, "dense_seq_output": True,
             "embd_pdrop": 0.0, "eos_token_id": None, "fused_bias_fc": True, "fused_dropout_add_ln": True,
             "initializer_range": 0.02, "layer_norm_epsilon": 1e-12, "max_trained_positions": o.get("max_trained", 2048),
             "mlp_fc1_bias": o.get("fc1_bias", False), "mlp_fc2_bias": o.get("fc2_bias", False),
             "model_type": "nomic_bert", "n_embd": H, "n_head": A, "n_inner": I, "n_layer": L, "n_positions": 8192,
             "pad_vocab_size_multiple": 64, "parallel_block": False, "parallel_block_tied_norm": False,
             "prenorm": o.get("prenorm", False), "qkv_proj_bias": o.get("qkv_bias", False),
             "reorder_and_upcast_attn": False, "resid_pdrop": 0.0, "rotary_emb_base": o["rot_base"],
             "rotary_emb_fraction": o["rot_frac"], "rotary_emb_interleaved": o.get("interleaved", False),
             "rotary_emb_scale_base": None, "rotary_scaling_factor": o.get("ntk"), "scale_attn_by_inverse_layer_idx": False,
             "scale_attn_weights": True, "summary_activation": None, "summary_first_dropout": 0.0,
             "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
             "torch_dtype": "float32", "transformers_version": "4.40.0", "type_vocab_size": 2, "use_cache": True,
             "use_flash_attn": True, "use_rms_norm": False, "use_xentropy": True, "vocab_size": VOCAB}
        _labels(c, labels)
        return dict(sorted(c.items()))
    if fam == "qwen3":
        c = {"architectures": [arch], "attention_bias": bool(o.get("attention_bias", False)),
             "attention_dropout": 0.0, "bos_token_id": sp["cls"], "eos_token_id": sp["sep"], "head_dim": o["head_dim"],
             "hidden_act": "silu", "hidden_size": H, "initializer_range": 0.02, "intermediate_size": I,
             "max_position_embeddings": 128, "max_window_layers": L, "model_type": "qwen3",
             "num_attention_heads": A, "num_hidden_layers": L, "num_key_value_heads": o["kv_heads"],
             "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": o["theta"], "sliding_window": None,
             "tie_word_embeddings": arch != "Qwen3ForCausalLM", "torch_dtype": "float32",
             "transformers_version": "4.51.3", "use_cache": True, "use_sliding_window": False,
             "vocab_size": VOCAB}
        return dict(sorted(c.items()))
    if fam == "gemma3_text":
        every = o["every"]
        c = {"architectures": [arch], "attention_bias": False, "attention_dropout": 0.0,
             "attn_logit_softcapping": None, "bos_token_id": sp["cls"], "eos_token_id": sp["sep"],
             "final_logit_softcapping": None, "head_dim": o["head_dim"], "hidden_activation": "gelu_pytorch_tanh",
             "hidden_size": H, "initializer_range": 0.02, "intermediate_size": I, "max_position_embeddings": 128,
             "model_type": "gemma3_text", "num_attention_heads": A, "num_hidden_layers": L,
             "num_key_value_heads": o["kv_heads"], "pad_token_id": sp["pad"], "query_pre_attn_scalar": o["qpas"],
             "rms_norm_eps": 1e-06, "rope_scaling": None, "sliding_window": o["window"], "torch_dtype": "float32",
             "use_bidirectional_attention": True, "use_cache": True, "vocab_size": VOCAB}
        if o.get("new_spelling"):
            c["layer_types"] = ["sliding_attention" if (i + 1) % every else "full_attention" for i in range(L)]
            c["rope_parameters"] = {"full_attention": {"rope_theta": o["theta"], "rope_type": "default"},
                                    "sliding_attention": {"rope_theta": o["local_theta"], "rope_type": "default"}}
            c["transformers_version"] = "4.57.1"
        else:
            c.update(sliding_window_pattern=every, rope_theta=o["theta"], rope_local_base_freq=o["local_theta"],
                     transformers_version="4.56.1")
        return dict(sorted(c.items()))
    if fam == "modernbert":
        c = {"architectures": [arch], "attention_bias": bool(o.get("biases", False)), "attention_dropout": 0.0,
             "bos_token_id": sp["cls"], "classifier_activation": o.get("cls_act", "gelu"),
             "classifier_bias": bool(o.get("biases", False)), "classifier_dropout": 0.0,
             "classifier_pooling": o.get("pooling", "cls"), "cls_token_id": sp["cls"], "decoder_bias": True,
             "deterministic_flash_attn": False, "embedding_dropout": 0.0, "eos_token_id": sp["sep"],
             "hidden_activation": "gelu", "hidden_size": H, "initializer_cutoff_factor": 2.0,
             "initializer_range": 0.02, "intermediate_size": I, "layer_norm_eps": 1e-05,
             "local_attention": o["window"], "max_position_embeddings": 128, "mlp_bias": bool(o.get("biases", False)),
             "mlp_dropout": 0.0, "model_type": "modernbert", "norm_bias": bool(o.get("biases", False)),
             "norm_eps": 1e-05, "num_attention_heads": A, "num_hidden_layers": L, "pad_token_id": sp["pad"],
             "sep_token_id": sp["sep"], "sparse_pred_ignore_index": -100, "sparse_prediction": False,
             "torch_dtype": "float32", "vocab_size": VOCAB}
        gt, lt = o.get("global_theta", 160000.0), o.get("local_theta", 10000.0)
        if o.get("new_spelling"):  # transformers >= 4.57: layer_types + rope_parameters
            c["layer_types"] = ["sliding_attention" if i % o["every"] else "full_attention" for i in range(L)]
            c["rope_parameters"] = {"full_attention": {"rope_theta": gt, "rope_type": "default"},
                                    "sliding_attention": {"rope_theta": lt, "rope_type": "default"}}
            c["global_attn_every_n_layers"] = o["every"]  # still written (an attribute of the config)
            c["transformers_version"] = "4.57.1"
        else:
            c.update(global_attn_every_n_layers=o["every"], global_rope_theta=gt, local_rope_theta=lt,
                     transformers_version="4.48.0")
        _labels(c, labels)
        return dict(sorted(c.items()))
    c = {"architectures": [arch], "attention_probs_dropout_prob": 0.1, "hidden_act": o.get("act", "gelu"),
         "hidden_dropout_prob": 0.1, "hidden_size": H, "initializer_range": 0.02, "intermediate_size": I,
         "layer_norm_eps": 1e-12, "max_position_embeddings": _max_pos(fam), "model_type": model_type,
         "num_attention_heads": A, "num_hidden_layers": L, "pad_token_id": sp["pad"],
         "position_embedding_type": "absolute", "torch_dtype": "float32", "transformers_version": "4.40.0",
         "type_vocab_size": 2, "vocab_size": VOCAB}
    if fam == "roberta":
        c.update(bos_token_id=sp["cls"], eos_token_id=sp["sep"], layer_norm_eps=1e-05, type_vocab_size=1,
                 classifier_dropout=None, use_cache=True)
    elif fam == "electra":
        c.update(embedding_size=o["emb"], summary_activation="gelu", summary_last_dropout=0.1,
                 summary_type="first", summary_use_proj=True, classifier_dropout=None)
    elif fam == "albert":
        c.update(embedding_size=o["emb"], hidden_act=o.get("act", "gelu_new"), num_hidden_groups=o["groups"],
                 inner_group_num=o["inner"], bos_token_id=sp["cls"], eos_token_id=sp["sep"],
                 classifier_dropout_prob=0.1, hidden_dropout_prob=0, attention_probs_dropout_prob=0,
                 down_scale_factor=1, gap_size=0, net_structure_type=0, num_memory_blocks=0)
    _labels(c, labels)
    return dict(sorted(c.items()))


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------

def make_family_model(out, name, extra_tensors=()):
    """Write model `name` into `out` (replaced). Returns the folder holding config.json."""
    model_type, arch, o, labels, st, seed, layout = FAMILY_MODELS[name]
    fam = family_of_type(model_type)
    prompts = o.get("prompts")
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    ckpt = os.path.join(out, "0_Transformer") if "subdir" in layout else out
    os.makedirs(ckpt, exist_ok=True)
    prefix = "" if "noprefix" in layout else fnp.PREFIX[fam]
    rng = np.random.default_rng(seed)
    tensors = []
    for tname, shape, kind, head in _specs(model_type, arch, o, labels, layout):
        if kind == "gemma_ln_w":  # Gemma3RMSNorm weight w (the norm scales by 1 + w)
            x32 = rng.normal(0.0, 0.3, shape).astype(np.float32)
        else:
            x32 = mc._draw(rng, shape, kind, "fullscale").astype(np.float32)
        raw, _ = mc.encode(x32, "F32")
        tensors.append(((tname if head else prefix + tname), "F32", shape, raw))
    if "position_ids" in layout:
        pos = np.arange(_max_pos(fam), dtype="<i8").reshape(1, -1)
        tensors.append((prefix + "embeddings.position_ids", "I64", pos.shape, pos.tobytes()))
    for extra in extra_tensors:
        tensors.append((extra, "F32", (4,), np.zeros(4, "<f4").tobytes()))
    mtc._write_safetensors(os.path.join(ckpt, "model.safetensors"), tensors)
    mtc._dump_json(os.path.join(ckpt, "config.json"), _config(model_type, arch, o, labels))
    kind = ftok.KIND_OF_MODEL_TYPE.get(model_type)
    if kind:  # byte-level BPE / Unigram tokenizer.json (family_tokenizers.py)
        with open(os.path.join(ckpt, "tokenizer.json"), "w", encoding="utf-8", newline="\n") as f:
            json.dump(ftok.tokenizer_json(kind), f, ensure_ascii=False, indent=1)
            f.write("\n")
        mtc._dump_json(os.path.join(ckpt, "tokenizer_config.json"),
                       {"model_max_length": SEQ_MAX, "tokenizer_class": {
                           "roberta": "RobertaTokenizer", "xlm-roberta": "XLMRobertaTokenizer",
                           "camembert": "CamembertTokenizer", "albert": "AlbertTokenizer",
                           "modernbert": "PreTrainedTokenizerFast", "qwen3": "Qwen2TokenizerFast",
                           "gemma3_text": "GemmaTokenizerFast"}[model_type]})
    if fam in ("electra", "nomic_bert"):  # WordPiece with BERT's specials
        with open(os.path.join(ckpt, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
            for tok in mc.vocab_tokens(VOCAB):
                f.write(tok + "\n")
        mtc._dump_json(os.path.join(ckpt, "tokenizer_config.json"),
                       {"do_lower_case": True, "model_max_length": 128,
                        "tokenizer_class": "ElectraTokenizer" if fam == "electra" else "BertTokenizer"})
    if st is not None:
        pooling, normalize = st[:2]
        dense = st[2] if len(st) > 2 else ()  # (out_features, bias, tanh) per Dense module
        modules = [{"idx": 0, "name": "0", "path": "0_Transformer" if "subdir" in layout else "",
                    "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
        width = o["hidden"]
        for out_f, bias, tanh in dense:  # EmbeddingGemma: 2_Dense, 3_Dense (no bias, Identity)
            k = len(modules)
            path = "%d_Dense" % k
            modules.append({"idx": k, "name": str(k), "path": path, "type": "sentence_transformers.models.Dense"})
            os.makedirs(os.path.join(out, path))
            dt = [("linear.weight", "F32", (out_f, width),
                   mc.encode(rng.normal(0.0, 1.0 / np.sqrt(width), (out_f, width)).astype(np.float32), "F32")[0])]
            if bias:
                dt.append(("linear.bias", "F32", (out_f,),
                           mc.encode(rng.normal(0.0, 0.1, (out_f,)).astype(np.float32), "F32")[0]))
            mtc._write_safetensors(os.path.join(out, path, "model.safetensors"), dt)
            mtc._dump_json(os.path.join(out, path, "config.json"), {
                "in_features": width, "out_features": out_f, "bias": bias,
                "activation_function": "torch.nn.modules.activation.Tanh" if tanh else "torch.nn.modules.linear.Identity"})
            width = out_f
        if prompts:  # config_sentence_transformers.json's prompts (EmbeddingGemma's / Qwen3-Embedding's kind)
            mtc._dump_json(os.path.join(out, "config_sentence_transformers.json"), {
                "prompts": prompts, "default_prompt_name": None, "similarity_fn_name": "cosine",
                "__version__": {"sentence_transformers": "5.1.0"}})
        if normalize:
            k = len(modules)
            modules.append({"idx": k, "name": str(k), "path": "%d_Normalize" % k,
                            "type": "sentence_transformers.models.Normalize"})
            os.makedirs(os.path.join(out, "%d_Normalize" % k))
        mtc._dump_json(os.path.join(out, "modules.json"), modules)
        os.makedirs(os.path.join(out, "1_Pooling"))
        mtc._dump_json(os.path.join(out, "1_Pooling", "config.json"), {
            "word_embedding_dimension": o["hidden"],
            "pooling_mode_cls_token": pooling == "cls", "pooling_mode_mean_tokens": pooling == "mean",
            "pooling_mode_max_tokens": pooling == "max", "pooling_mode_mean_sqrt_len_tokens": pooling == "mean_sqrt_len",
            "pooling_mode_weightedmean_tokens": False, "pooling_mode_lasttoken": pooling == "lasttoken",
            "include_prompt": True})
        mtc._dump_json(os.path.join(out, "sentence_bert_config.json"),
                       {"max_seq_length": ST_MAX_SEQ, "do_lower_case": False})
    return ckpt


def task_of(name):
    _, arch, _, _, st, _, _ = FAMILY_MODELS[name]
    return tasks_numpy.task_of_architecture(arch, st is not None)


def case_inputs(case, fam, seq_max):
    """(ids, mask, types) int64 arrays; the same for every model of a family."""
    sp = SPECIALS[fam]
    rng = np.random.default_rng(zlib.crc32(("family/" + case).encode()))

    def rand(k):
        return list(rng.integers(sp["first_regular"], VOCAB, size=k))

    cls, sep, pad = sp["cls"], sp["sep"], sp["pad"]
    types = None
    if case == "len1":
        ids, mask = [cls], [1]
    elif case == "len7":
        ids, mask = [cls] + rand(5) + [sep], [1] * 7
    elif case == "len7_pad":
        ids, mask = [cls] + rand(2) + [sep] + [pad] * 3, [1] * 4 + [0] * 3
    elif case == "len40_pad":
        ids, mask = [cls] + rand(28) + [sep] + [pad] * 10, [1] * 30 + [0] * 10
    elif case == "len20_pair":
        if fam == "roberta":  # <s> A </s></s> B </s>, no token types
            ids = [cls] + rand(8) + [sep, sep] + rand(8) + [sep]
            types = [0] * 20
        else:
            ids = [cls] + rand(8) + [sep] + rand(9) + [sep]
            types = [0] * 10 + [1] * 10 if fam not in ("modernbert", "qwen3", "gemma3_text") else [0] * 20
        mask = [1] * 20
    elif case == "lenmax":
        ids, mask = [cls] + rand(seq_max - 2) + [sep], [1] * seq_max
    else:
        raise ValueError(case)
    if types is None:
        types = [0] * len(ids)
    return np.array(ids, np.int64), np.array(mask, np.int64), np.array(types, np.int64)


_PER_TOKEN = ("last_hidden_state", "start_logits", "end_logits", "token_logits", "fill_mask_probs")


def text_case(model_type, pair):
    """(ids, mask, types, offsets [(begin, end, segment)]) of the text case: ids as HF's tokenizers
    library gives them for the model's tokenizer.json (family_tokenizer_ids.json), or for the
    WordPiece families make_testdata's BERT tokenization of the same text."""
    kind = ftok.KIND_OF_MODEL_TYPE.get(model_type)
    if kind is None:
        import make_testdata  # lazily: make_testdata imports this module
        ids, mask, types, offsets, _, _ = make_testdata._text_case(pair)
        return ids, mask, types, offsets
    with open(os.path.join(_HERE, "family_tokenizer_ids.json"), encoding="utf-8") as f:
        enc = json.load(f)[kind]["text_pair" if pair else "text"]
    specials = set(range(len(ftok.SPECIALS[kind])))
    offsets, segment = [], 0
    for tid, (b, e) in zip(enc["ids"], enc["offsets"]):
        if tid in specials:
            if offsets and segment == 0:
                segment = 1
            offsets.append((0, 0, -1))
        else:
            offsets.append((b, e, segment))  # ASCII texts: characters are bytes
    ids = np.array(enc["ids"], np.int64)
    types = (np.array(enc["type_ids"], np.int64) if family_of_type(model_type) not in ("modernbert", "qwen3", "gemma3_text")
             else np.zeros_like(ids))
    return ids, np.ones(len(ids), np.int64), types, offsets


def build_family_model(out_dir, name):
    """Checkpoint + golden cases of `name` under out_dir/name. Returns its manifest lines."""
    model_type, _, o, _, _, _, _ = FAMILY_MODELS[name]
    fam = family_of_type(model_type)
    mdir = os.path.join(out_dir, name)
    make_family_model(mdir, name)
    model = fnp.load_model(mdir)
    task = task_of(name)
    lines = []
    for case in CASES + TEXT_CASES:
        offsets = None
        if case in TEXT_CASES:
            ids, mask, types, offsets = text_case(model_type, case == "text_pair")
        else:
            ids, mask, types = case_inputs(case, fam, SEQ_MAX)
        res = fnp.run(model, ids, types, mask)
        cdir = os.path.join(mdir, "cases", case)
        os.makedirs(cdir)
        for fname, arr in (("ids.txt", ids), ("mask.txt", mask), ("types.txt", types)):
            with open(os.path.join(cdir, fname), "w", encoding="ascii", newline="\n") as f:
                f.write(" ".join(str(int(v)) for v in arr) + "\n")
        for key, val in res.items():
            if not np.all(np.isfinite(val)):
                raise AssertionError("%s/%s: non-finite %s" % (name, case, key))
            np.ascontiguousarray(val, dtype="<f4").tofile(os.path.join(cdir, key + ".f32"))
        if case.endswith("_pad"):  # padding must be invisible to the real tokens and the heads
            k = int(mask.sum())
            ref = fnp.run(model, ids[:k], types[:k], mask[:k])
            for key, val in ref.items():
                got = res[key][:k] if key in _PER_TOKEN else res[key]
                if np.abs(got - val).max() > 1e-9:
                    raise AssertionError("%s/%s: padding changes %s by %g" % (name, case, key,
                                                                              np.abs(got - val).max()))
        if offsets is not None:
            mtc.write_text_case(cdir, offsets, case == "text_pair", TEXT, TEXT_A, TEXT_B)
        lines.append("%s %s %s %s %d\n" % (name, fam, task, case, len(ids)))
    return lines


def build_all(out_dir, names=None):
    lines = []
    for name in names or FAMILY_MODELS:
        lines += build_family_model(out_dir, name)
    with open(os.path.join(out_dir, "families_manifest.txt"), "w", encoding="ascii", newline="\n") as f:
        f.writelines(lines)
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description="Write synthetic checkpoints + goldens of the other BERT families.")
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", action="append", choices=sorted(FAMILY_MODELS))
    ap.add_argument("--extra-tensor", action="append", default=[])
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    if a.extra_tensor:
        for name in a.model or FAMILY_MODELS:
            make_family_model(os.path.join(a.out, name), name, a.extra_tensor)
        return 0
    build_all(a.out, a.model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
