# SPDX-License-Identifier: Apache-2.0
"""Generate the reference checkpoints and numpy golden outputs used by the C++ tests.

  make_testdata.py --out DIR [--force]

Deterministic (fixed seeds) and idempotent: if DIR/COMPLETE records the same version and the same
hash of the reference scripts, nothing is done. Layout:

  DIR/calib.txt                         20 English sentences made of vocab words
  DIR/manifest.txt                      one "MODEL CASE SEQ" line per case
  DIR/MODEL/{config.json, vocab.txt, tokenizer_config.json, model*.safetensors[, index.json]}
  DIR/MODEL/cases/CASE/ids.txt|mask.txt|types.txt       space-separated integers
  DIR/MODEL/cases/CASE/last_hidden_state.f32            float32 LE [seq, hidden]
  DIR/MODEL/cases/CASE/pooler_output.f32                float32 LE [hidden]
  DIR/MODEL/cases/CASE/logits.f32                       float32 LE [labels] (labels > 0 only)
  DIR/COMPLETE
  DIR/tasks_manifest.txt                one "MODEL TASK CASE SEQ" line per task-model case
  DIR/TASK_MODEL/...                    task checkpoints (make_task_checkpoints.py) and their cases:
    cases/CASE/ids.txt mask.txt types.txt, last_hidden_state.f32 and, by task, pooler_output.f32,
    logits.f32, start_logits.f32 + end_logits.f32, token_logits.f32 [seq, labels],
    sentence_embedding.f32, sparse_embedding.f32 [vocab] + fill_mask_probs.f32 [seq, vocab]
    (masked-LM); text cases also text.txt | text_a.txt + text_b.txt, offsets.txt and
    for QA best_span.txt + answer.txt (see tests/reference/README.md)
  DIR/families/                         RoBERTa / ELECTRA / ALBERT / nomic-bert / ModernBERT checkpoints
                                        and goldens (make_family_checkpoints.py; families_manifest.txt)

Golden outputs are computed in float64 by bert_numpy.py from the tensors read back from disk
(so F16/BF16 models use the rounded weights) and cast to float32 at the end.
"""

import os
import sys

try:
    import numpy as np  # noqa: F401
except ImportError:  # e.g. a pyenv interpreter picked up by CMake; Debian's python3 has numpy
    _SYS_PY = "/usr/bin/python3"
    if os.path.exists(_SYS_PY) and os.path.realpath(sys.executable) != os.path.realpath(_SYS_PY):
        os.execv(_SYS_PY, [_SYS_PY] + sys.argv)
    raise

import argparse
import hashlib
import re
import shutil
import time
import zlib

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bert_numpy  # noqa: E402
import make_checkpoint as mc  # noqa: E402
import make_family_checkpoints as mfc  # noqa: E402
import make_task_checkpoints as mt  # noqa: E402
import bge_m3_numpy  # noqa: E402
import colbert_numpy  # noqa: E402
import tasks_numpy  # noqa: E402

VERSION = 3
_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCES = ("make_testdata.py", "make_checkpoint.py", "bert_numpy.py", "make_task_checkpoints.py",
            "tasks_numpy.py", "families_numpy.py", "make_family_checkpoints.py", "family_tokenizers.py",
            "family_tokenizer_ids.json", "colbert_numpy.py", "bge_m3_numpy.py")

# name: (hidden, heads, layers, intermediate, vocab, max_pos, labels, dtype, shards, prefix, init, seed)
# Models sharing a seed and shapes share weights: base2_h1 == base2_h12 except for the head count;
# tiny_sharded and tiny_noprefix hold identical values (identical golden outputs); tiny_f16/bf16
# are those values rounded to F16/BF16.
MODELS = {
    "base2_h12":        (768, 12, 2, 3072, 512, 128, 2, "F32", 1, True, "fullscale", 1),
    "base2_h1":         (768, 1, 2, 3072, 512, 128, 2, "F32", 1, True, "fullscale", 1),
    "h192_3x64":        (192, 3, 2, 768, 512, 128, 0, "F32", 1, True, "fullscale", 3),
    "h128_4x32":        (128, 4, 2, 512, 512, 128, 3, "F32", 1, True, "fullscale", 4),
    "h128_4x32_std002": (128, 4, 2, 512, 512, 128, 3, "F32", 1, True, "std002", 4),
    "tiny_f16":         (64, 2, 2, 128, 512, 128, 2, "F16", 1, True, "fullscale", 5),
    "tiny_bf16":        (64, 2, 2, 128, 512, 128, 2, "BF16", 1, True, "fullscale", 5),
    "tiny_sharded":     (64, 2, 2, 128, 512, 128, 2, "F32", 3, True, "fullscale", 5),
    "tiny_noprefix":    (64, 2, 2, 128, 512, 128, 2, "F32", 1, False, "fullscale", 5),
}

CASES = ("len1", "len7", "lenmax", "len7_pad", "len20_types")

CALIB = [
    "The movie was really good, and the acting was great!",
    "I did not like the ending of this film.",
    "What a waste of time; the plot was boring and the script was awful.",
    "She said the food at the restaurant was fresh and delicious.",
    "The hotel room was clean, but the staff was rude.",
    "We watched the whole series in one week and liked every episode.",
    "This is the best book I have read this year.",
    "The battery of my new phone is terrible, so I returned it.",
    "Would you recommend this product to a friend?",
    "The music and the characters made the story feel real.",
    "It was a long day, and the weather was cold.",
    "They thought the price was too much for the quality.",
    "He never enjoyed a film as much as this one.",
    "The delivery was fast and the customer service was friendly.",
    "Our family had dinner at home with two old friends.",
    "I think the director made a few bad things in the last scene.",
    "My dog and my cat play in the house every morning.",
    "The coffee here is cheap, hot and tasty.",
    "Maybe the first hour was slow, but the end was amazing.",
    "It's not perfect, but it is definitely worth the money.",
]


def _basic_tokens(text):
    """Lowercase, split on whitespace and around punctuation (BERT BasicTokenizer for ASCII)."""
    return re.findall(r"[a-z0-9]+|[^\sa-z0-9]", text.lower())


def _sources_hash():
    h = hashlib.sha256()
    for name in _SOURCES:
        with open(os.path.join(_HERE, name), "rb") as f:
            h.update(name.encode() + b"\0" + f.read() + b"\0")
    return h.hexdigest()[:16]


def _stamp():
    return "edgebert-testdata version=%d sources=%s\n" % (VERSION, _sources_hash())


def case_inputs(case, vocab, max_pos):
    """(ids, mask, types) int64 arrays. Inputs depend only on the case name and vocab/max_pos,
    so every model with the same vocab sees the same token ids."""
    sp = mc.special_ids(vocab)
    rng = np.random.default_rng(zlib.crc32(case.encode()))

    def rand(n):
        return rng.integers(sp["first_regular"], vocab, size=n)

    cls, sep, pad = sp["cls"], sp["sep"], sp["pad"]
    if case == "len1":
        ids = np.array([cls])
        mask, types = np.ones(1), np.zeros(1)
    elif case == "len7":
        ids = np.concatenate([[cls], rand(5), [sep]])
        mask, types = np.ones(7), np.zeros(7)
    elif case == "lenmax":
        ids = np.concatenate([[cls], rand(max_pos - 2), [sep]])
        mask, types = np.ones(max_pos), np.zeros(max_pos)
    elif case == "len7_pad":  # [CLS] w w [SEP] [PAD] [PAD] [PAD]
        ids = np.concatenate([[cls], rand(2), [sep], [pad] * 3])
        mask = np.array([1, 1, 1, 1, 0, 0, 0])
        types = np.zeros(7)
    elif case == "len20_types":  # [CLS] a*8 [SEP] (type 0) | b*9 [SEP] (type 1)
        ids = np.concatenate([[cls], rand(8), [sep], rand(9), [sep]])
        mask = np.ones(20)
        types = np.array([0] * 10 + [1] * 10)
    else:
        raise ValueError(case)
    return ids.astype(np.int64), np.asarray(mask, np.int64), np.asarray(types, np.int64)


def _write_ints(path, arr):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write(" ".join(str(int(v)) for v in arr) + "\n")


def _write_f32(path, arr):
    np.ascontiguousarray(arr, dtype="<f4").tofile(path)


def build_model(out_dir, name):
    hidden, heads, layers, inter, vocab, max_pos, labels, dtype, shards, prefix, init, seed = MODELS[name]
    mdir = os.path.join(out_dir, name)
    if os.path.exists(mdir):
        shutil.rmtree(mdir)
    mc.make_checkpoint(mdir, hidden, heads, layers, inter, vocab, max_pos, 2, labels, dtype,
                       shards, prefix, init, seed)
    weights, config = bert_numpy.load_checkpoint(mdir)  # reference uses the stored values
    lines = []
    for case in CASES:
        ids, mask, types = case_inputs(case, vocab, max_pos)
        res = bert_numpy.forward(weights, config, ids, types, mask)
        cdir = os.path.join(mdir, "cases", case)
        os.makedirs(cdir)
        _write_ints(os.path.join(cdir, "ids.txt"), ids)
        _write_ints(os.path.join(cdir, "mask.txt"), mask)
        _write_ints(os.path.join(cdir, "types.txt"), types)
        _write_f32(os.path.join(cdir, "last_hidden_state.f32"), res["last_hidden_state"])
        _write_f32(os.path.join(cdir, "pooler_output.f32"), res["pooler_output"])
        if labels > 0:
            _write_f32(os.path.join(cdir, "logits.f32"), res["logits"])
        if case == "len7_pad":
            # padding must be invisible to the real tokens: compare with the unpadded sequence
            n = int(mask.sum())
            ref = bert_numpy.forward(weights, config, ids[:n], types[:n], mask[:n])
            err = np.abs(ref["last_hidden_state"] - res["last_hidden_state"][:n]).max()
            err = max(err, np.abs(ref["pooler_output"] - res["pooler_output"]).max())
            if err > 1e-9:
                raise AssertionError("%s: padded and unpadded outputs differ by %g" % (name, err))
        if not all(np.all(np.isfinite(v)) for v in res.values() if v is not None):
            raise AssertionError("%s/%s: non-finite output" % (name, case))
        lines.append("%s %s %d\n" % (name, case, len(ids)))
    return lines


TASK_CASES = ("len7", "len7_pad", "len20_types")
TEXT = "The movie was REALLY good, and the acting was great!"
TEXT_A, TEXT_B = "Who was rude?", "The Hotel was clean, but the staff was RUDE."
QA_MAX_ANSWER_TOKENS = 5


def task_of(name):
    _, arch, _, _, pooling, _, _, _ = mt.TASK_MODELS[name]
    return tasks_numpy.task_of_architecture(arch, pooling is not None)


def _tokenize(text):
    """(ids, [(begin, end)]) of an ASCII text whose basic tokens are all whole vocab tokens."""
    vocab = {t: i for i, t in enumerate(mc.vocab_tokens(mt.VOCAB))}
    ids, spans = [], []
    for m in re.finditer(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]", text):
        tok = m.group(0).lower()
        if tok not in vocab:
            raise AssertionError("text token %r not in the vocab" % tok)
        ids.append(vocab[tok])
        spans.append((len(text[:m.start()].encode()), len(text[:m.end()].encode())))
    return ids, spans


def _text_case(pair):
    """(ids, mask, types, offsets [(begin, end, segment)], first/last context token)."""
    sp = mc.special_ids(mt.VOCAB)
    a_ids, a_sp = _tokenize(TEXT_A if pair else TEXT)
    ids = [sp["cls"]] + a_ids + [sp["sep"]]
    offs = [(0, 0, -1)] + [(b, e, 0) for b, e in a_sp] + [(0, 0, -1)]
    types = [0] * len(ids)
    first = last = -1
    if pair:
        b_ids, b_sp = _tokenize(TEXT_B)
        first, last = len(ids), len(ids) + len(b_ids) - 1
        ids += b_ids + [sp["sep"]]
        offs += [(b, e, 1) for b, e in b_sp] + [(0, 0, -1)]
        types += [1] * (len(b_ids) + 1)
    n = len(ids)
    return (np.array(ids, np.int64), np.ones(n, np.int64), np.array(types, np.int64), offs, first, last)


# Long-context QA (eb_session_answer): the question TEXT_A over a context of several sentences,
# run by sessions of QA_WINDOW_MAX_LEN positions in windows of the context's tokens as
# HuggingFace's overflowing tokens do (starts 0, W - stride, 2 (W - stride), ... until a window
# reaches the end; W = max_len - len(question) - 3), one golden line per stride (-1: the default
# min(128, W // 2)).
QA_LONG_CONTEXT = " ".join(["The Hotel was clean, but the staff was RUDE. The movie was REALLY good, and the acting "
                            "was great!"] * 3)
QA_WINDOW_MAX_LEN = 24
QA_WINDOW_STRIDES = (0, 2, 5, -1)
QA_WINDOW_MAX_ANSWER_TOKENS = 30


def _long_context_goldens(model, ldir):
    """Writes question.txt, context.txt and windows.txt ("MAX_LEN STRIDE WINDOWS START END BEGIN
    END SCORE MARGIN MAX_TOKENS" per stride: the best span over every window's spans, START/END
    in the tokens of its window's run, BEGIN/END bytes in the context, MARGIN to the second best
    span of all windows)."""
    sp = mc.special_ids(mt.VOCAB)
    q_ids, _ = _tokenize(TEXT_A)
    c_ids, c_sp = _tokenize(QA_LONG_CONTEXT)
    window = QA_WINDOW_MAX_LEN - len(q_ids) - 3
    assert len(c_ids) > 3 * window
    os.makedirs(ldir)
    with open(os.path.join(ldir, "question.txt"), "wb") as f:
        f.write(TEXT_A.encode())
    with open(os.path.join(ldir, "context.txt"), "wb") as f:
        f.write(QA_LONG_CONTEXT.encode())
    lines = []
    for stride in QA_WINDOW_STRIDES:
        overlap = min(128, window // 2) if stride < 0 else stride
        spans = []  # (score, window index, i, j, begin, end)
        start, windows = 0, 0
        while True:
            part = c_ids[start:start + window]
            ids = np.array([sp["cls"]] + q_ids + [sp["sep"]] + part + [sp["sep"]], np.int64)
            types = np.array([0] * (len(q_ids) + 2) + [1] * (len(part) + 1), np.int64)
            res = tasks_numpy.run(model, ids, types, np.ones(len(ids), np.int64))
            first = len(q_ids) + 2
            for i in range(first, first + len(part)):
                for j in range(i, min(first + len(part), i + QA_WINDOW_MAX_ANSWER_TOKENS)):
                    score = float(res["start_logits"][i] + res["end_logits"][j])
                    spans.append((score, windows, i, j, c_sp[start + i - first][0], c_sp[start + j - first][1]))
            windows += 1
            if start + window >= len(c_ids):
                break
            start += window - overlap
        # the first of equal scores wins (earliest window, then earliest start and end)
        spans.sort(key=lambda t: (-t[0], t[1], t[2], t[3]))
        best = spans[0]
        margin = best[0] - spans[1][0]
        lines.append("%d %d %d %d %d %d %d %.9g %.9g %d\n" % (QA_WINDOW_MAX_LEN, stride, windows, best[2], best[3],
                                                             best[4], best[5], best[0], margin,
                                                             QA_WINDOW_MAX_ANSWER_TOKENS))
    with open(os.path.join(ldir, "windows.txt"), "w", encoding="ascii", newline="\n") as f:
        f.writelines(lines)


# Reranking (eb_session_rerank): one query over passages (calibration-style sentences whose words
# are all in the vocab), each pair "[CLS] query [SEP] passage [SEP]" with token types 0 / 1.
RERANK_QUERY = "Was the hotel staff rude?"
RERANK_PASSAGES = CALIB[:12] + ["The staff at the hotel was rude and the room was cold.",
                                "Rude staff.", "The hotel was clean."]


def _rerank_goldens(model, rdir):
    """query.txt, passages.txt (one a line) and scores.txt ("INDEX SCORE LOGIT" per passage in
    passage order: SCORE is CrossEncoder's score of the float64 logit)."""
    sp = mc.special_ids(mt.VOCAB)
    q_ids, _ = _tokenize(RERANK_QUERY)
    os.makedirs(rdir)
    with open(os.path.join(rdir, "query.txt"), "wb") as f:
        f.write(RERANK_QUERY.encode())
    with open(os.path.join(rdir, "passages.txt"), "wb") as f:
        f.write("".join(p + "\n" for p in RERANK_PASSAGES).encode())
    lines = []
    for i, passage in enumerate(RERANK_PASSAGES):
        p_ids, _ = _tokenize(passage)
        ids = np.array([sp["cls"]] + q_ids + [sp["sep"]] + p_ids + [sp["sep"]], np.int64)
        types = np.array([0] * (len(q_ids) + 2) + [1] * (len(p_ids) + 1), np.int64)
        logit = float(tasks_numpy.run(model, ids, types, np.ones(len(ids), np.int64))["logits"][0])
        lines.append("%d %.9g %.9g\n" % (i, tasks_numpy.cross_encoder_score(model.config, logit), logit))
    with open(os.path.join(rdir, "scores.txt"), "w", encoding="ascii", newline="\n") as f:
        f.writelines(lines)


# Truncation (eb_session_set_truncation): texts and pairs longer than sessions of MAX_LEN
# positions, cut as HuggingFace tokenizers does (tasks_numpy.truncate).
TRUNCATION_TEXTS = [RERANK_QUERY, "Rude staff.", CALIB[2], CALIB[4], CALIB[13], "Yes."]
TRUNCATION_MAX_LENS = (9, 12, 17, 24)


def _truncation_goldens(path):
    """truncation.txt: "STRATEGY MAX_LEN CUT|A|B|IDS" per case (B empty for a single text; CUT -1
    and IDS empty where the library raises an error: the session refuses the input)."""
    sp = mc.special_ids(mt.VOCAB)
    lines = []
    for strategy in ("longest_first", "only_second"):
        for max_len in TRUNCATION_MAX_LENS:
            for i, a in enumerate(TRUNCATION_TEXTS):
                for b in [None] + TRUNCATION_TEXTS[:i] + TRUNCATION_TEXTS[i + 1:]:
                    a_ids, b_ids = _tokenize(a)[0], None if b is None else _tokenize(b)[0]
                    specials = 2 if b is None else 3
                    kept = tasks_numpy.truncate(strategy, a_ids, b_ids, max_len - specials)
                    if kept is None:
                        lines.append("%s %d -1|%s|%s|\n" % (strategy, max_len, a, b or ""))
                        continue
                    ka, kb = kept
                    ids = [sp["cls"]] + ka + [sp["sep"]] + ([] if kb is None else kb + [sp["sep"]])
                    cut = len(a_ids) + len(b_ids or []) - len(ka) - len(kb or [])
                    lines.append("%s %d %d|%s|%s|%s\n" % (strategy, max_len, cut, a, b or "", " ".join(map(str, ids))))
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(lines)


def build_task_model(out_dir, name):
    mdir = os.path.join(out_dir, name)
    mt.make_task_model(mdir, name)
    model = tasks_numpy.load_model(mdir)
    task = task_of(name)
    cases = [(c,) + case_inputs(c, mt.VOCAB, mt.MAX_POS) for c in TASK_CASES]
    lines = []
    for case in cases + ["text", "text_pair"]:
        offsets = None
        if isinstance(case, tuple):
            case, ids, mask, types = case
        else:
            ids, mask, types, offsets, first, last = _text_case(case == "text_pair")
        res = tasks_numpy.run(model, ids, types, mask)
        cdir = os.path.join(mdir, "cases", case)
        os.makedirs(cdir)
        _write_ints(os.path.join(cdir, "ids.txt"), ids)
        _write_ints(os.path.join(cdir, "mask.txt"), mask)
        _write_ints(os.path.join(cdir, "types.txt"), types)
        for key, val in res.items():
            if not np.all(np.isfinite(val)):
                raise AssertionError("%s/%s: non-finite %s" % (name, case, key))
            _write_f32(os.path.join(cdir, key + ".f32"), val)
        if case == "len7_pad":  # padding must be invisible to the real tokens and to pooling
            n = int(mask.sum())
            ref = tasks_numpy.run(model, ids[:n], types[:n], mask[:n])
            for key, val in ref.items():
                got = res[key][:n] if key in ("last_hidden_state", "start_logits", "end_logits",
                                              "token_logits", "fill_mask_probs") else res[key]
                if np.abs(got - val).max() > 1e-9:
                    raise AssertionError("%s: padding changes %s" % (name, key))
        if offsets is not None:
            mt.write_text_case(cdir, offsets, case == "text_pair", TEXT, TEXT_A, TEXT_B)
            if task == "question_answering" and case == "text_pair":
                i, j, score, margin = tasks_numpy.best_span(res["start_logits"], res["end_logits"], first, last,
                                                            QA_MAX_ANSWER_TOKENS)
                b, e = offsets[i][0], offsets[j][1]
                with open(os.path.join(cdir, "best_span.txt"), "w", encoding="ascii", newline="\n") as f:
                    f.write("%d %d %d %d %.9g %.9g %d\n" % (i, j, b, e, score, margin, QA_MAX_ANSWER_TOKENS))
                with open(os.path.join(cdir, "answer.txt"), "wb") as f:
                    f.write(TEXT_B.encode()[b:e])
        lines.append("%s %s %s %d\n" % (name, task, case, len(ids)))
    if task == "question_answering":
        _long_context_goldens(model, os.path.join(mdir, "long_context"))
    if name.startswith("task_") and "_rerank" in name:
        _rerank_goldens(model, os.path.join(mdir, "rerank"))
        _truncation_goldens(os.path.join(mdir, "rerank", "truncation.txt"))
    return lines


def write_calib(out_dir):
    vocab = set(mc.vocab_tokens(512))
    for s in CALIB:
        missing = [t for t in _basic_tokens(s) if t not in vocab]
        if missing:
            raise AssertionError("calib sentence uses words not in the vocab: %s" % missing)
    with open(os.path.join(out_dir, "calib.txt"), "w", encoding="utf-8", newline="\n") as f:
        for s in CALIB:
            f.write(s + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate edgebert reference checkpoints + golden outputs.")
    ap.add_argument("--out", required=True)
    ap.add_argument("--force", action="store_true", help="regenerate even if COMPLETE matches")
    a = ap.parse_args(argv)
    out = os.path.abspath(a.out)
    complete = os.path.join(out, "COMPLETE")
    stamp = _stamp()
    if not a.force and os.path.exists(complete):
        with open(complete, "r", encoding="utf-8") as f:
            if f.read() == stamp:
                print("make_testdata: %s is up to date" % out)
                return 0
    t0 = time.time()
    os.makedirs(out, exist_ok=True)
    if os.path.exists(complete):
        os.remove(complete)
    write_calib(out)
    manifest = []
    for name in MODELS:
        t = time.time()
        manifest += build_model(out, name)
        print("make_testdata: %-18s %.2fs" % (name, time.time() - t))
    with open(os.path.join(out, "manifest.txt"), "w", encoding="ascii", newline="\n") as f:
        f.writelines(manifest)
    task_manifest = []
    for name in mt.TASK_MODELS:
        t = time.time()
        task_manifest += build_task_model(out, name)
        print("make_testdata: %-24s %.2fs" % (name, time.time() - t))
    with open(os.path.join(out, "tasks_manifest.txt"), "w", encoding="ascii", newline="\n") as f:
        f.writelines(task_manifest)
    t = time.time()
    colbert_numpy.make(out)
    print("make_testdata: colbert (PyLate folder) %.2fs" % (time.time() - t))
    t = time.time()
    bge_m3_numpy.make(out)
    print("make_testdata: bge_m3 (encoder + sparse / ColBERT heads) %.2fs" % (time.time() - t))
    t = time.time()
    fam_dir = os.path.join(out, "families")
    if os.path.exists(fam_dir):
        shutil.rmtree(fam_dir)
    os.makedirs(fam_dir)
    mfc.build_all(fam_dir)
    print("make_testdata: families/ (%d models) %.2fs" % (len(mfc.FAMILY_MODELS), time.time() - t))
    t = time.time()
    colbert_numpy.make_modernbert(out)  # (reads families/modernbert_model)
    print("make_testdata: colbert_modernbert (ModernBERT PyLate folder) %.2fs" % (time.time() - t))
    with open(complete, "w", encoding="utf-8") as f:
        f.write(stamp)
    print("make_testdata: wrote %s in %.1fs" % (out, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
