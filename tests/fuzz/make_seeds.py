#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make_seeds.py: writes the small seed corpora of fuzz_checkpoint, fuzz_tokenizer and fuzz_c_api
(the input layouts are described at the top of each fuzz_*.cpp). fuzz_model's seeds come from
make_seeds.cpp. Usage: tests/fuzz/make_seeds.py [tests/fuzz/corpus]"""
import json
import os
import struct
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")


def put(fuzzer, name, data):
    d = os.path.join(root, fuzzer)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def safetensors(tensors, metadata=None):
    header, blob = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + blob


def f32(n, v=0.5):
    return struct.pack("<%df" % n, *([v] * n))


def lenpre(a, b):
    return struct.pack(">H", len(a)) + a + b


H, I, V, P = 4, 8, 6, 4
config = {"model_type": "bert", "hidden_size": H, "num_attention_heads": 2, "num_hidden_layers": 1,
          "intermediate_size": I, "vocab_size": V, "max_position_embeddings": P, "type_vocab_size": 2,
          "layer_norm_eps": 1e-12, "hidden_act": "gelu", "id2label": {"0": "NEG", "1": "POS"}}
t = {"embeddings.word_embeddings.weight": ("F32", [V, H], f32(V * H)),
     "embeddings.position_embeddings.weight": ("F32", [P, H], f32(P * H)),
     "embeddings.token_type_embeddings.weight": ("F32", [2, H], f32(2 * H)),
     "embeddings.LayerNorm.weight": ("F32", [H], f32(H, 1)), "embeddings.LayerNorm.bias": ("F32", [H], f32(H, 0))}
p = "encoder.layer.0."
for n, shp in [("attention.self.query", [H, H]), ("attention.self.key", [H, H]), ("attention.self.value", [H, H]),
               ("attention.output.dense", [H, H]), ("intermediate.dense", [I, H]), ("output.dense", [H, I])]:
    t[p + n + ".weight"] = ("F32", shp, f32(shp[0] * shp[1], 0.1))
    t[p + n + ".bias"] = ("F32", [shp[0]], f32(shp[0], 0.0))
for n in ["attention.output.LayerNorm", "output.LayerNorm"]:
    t[p + n + ".weight"] = ("F32", [H], f32(H, 1))
    t[p + n + ".bias"] = ("F32", [H], f32(H, 0))
t["pooler.dense.weight"] = ("F32", [H, H], f32(H * H, 0.1))
t["pooler.dense.bias"] = ("F32", [H], f32(H, 0))
t["classifier.weight"] = ("F32", [2, H], f32(2 * H, 0.1))
t["classifier.bias"] = ("F32", [2], f32(2, 0))
st = safetensors(t, {"format": "pt"})
mixed = safetensors({"a": ("F16", [2, 2], struct.pack("<4e", 1, -2, 0.5, 65504)),
                     "b": ("BF16", [3], b"\x80\x3f\x00\xc0\x80\x7f"), "ids": ("I64", [2], struct.pack("<2q", 1, 2)),
                     "e": ("F32", [0], b"")})
cfg = json.dumps(config).encode()

put("fuzz_checkpoint", "json_nested", b"\x00" + b'{"a": [1, -2.5e3, true, null, "x\\u00e9\\ud83d\\ude00"], "b": {}}')
put("fuzz_checkpoint", "json_numbers", b"\x00" + b"[0, -0, 1e308, 9223372036854775807, -9223372036854775808, 1.5E-7]")
put("fuzz_checkpoint", "safetensors_bert", b"\x01" + st)
put("fuzz_checkpoint", "safetensors_dtypes", b"\x01" + mixed)
put("fuzz_checkpoint", "config", b"\x02" + cfg)
put("fuzz_checkpoint", "hf_dir", b"\x03" + lenpre(cfg, st))
index = json.dumps({"metadata": {"total_size": 16}, "weight_map": {"a": "a.safetensors", "b": "b.safetensors"}}).encode()
sa = safetensors({"a": ("F32", [2], f32(2))})
sb = safetensors({"b": ("F16", [2], struct.pack("<2e", 1, 2))})
put("fuzz_checkpoint", "sharded", b"\x04" + lenpre(index, lenpre(sa, sb)))
put("fuzz_checkpoint", "vocab", b"\x05" + lenpre(b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n##s\nCaf\xc3\xa9\n", b'{"do_lower_case": false}'))

put("fuzz_tokenizer", "plain", b"\x03the movie was good , not bad !")
put("fuzz_tokenizer", "unicode", "\x01Caf\u00e9s \u4e2d\u6587 \u03b1\u03b2 \u0434 \u00c9COLE \u0130 \u2028 x\u0301".encode())
put("fuzz_tokenizer", "controls", b"\x07a\x00b\tc\r\nd\xef\xbb\xbf\xff\xfe unable unabled [CLS] [SEP]")
put("fuzz_tokenizer", "long_word", b"\x09" + b"a" * 300 + b" " + b"ab" * 50)
put("fuzz_tokenizer", "own_vocab", b"\x81[UNK]\n[CLS]\n[SEP]\nab\n##c\n\x00abc abcc ab")
put("fuzz_tokenizer", "own_vocab_ids", b"\xe1x\ny\nz\n\x00xyz")

# fuzz_c_api: byte 0 = model (odd: int8), then calls: op byte (low digit = call, high nibble = slot).
create = bytes([0x00, 1, 10, 0, 1, 1, 1])             # slot 0: 1 thread, max 10, plain options
create2 = bytes([0x10, 2, 16, 0, 1, 1, 1])            # slot 1: 2 threads
run_ids = bytes([0x02, 5, 0x3e, 2, 1, 31, 1, 32, 1, 0, 1, 40, 0, 3, 1])
run_text = bytes([0x03, 18]) + b"the movie was good" + bytes([1])
run_emb = bytes([0x04, 3, 0x06]) + bytes(range(100, 196)) + bytes([1, 1, 0])
outputs = bytes([0x05, 0, 0, 0x05, 1, 0, 0x05, 2, 0, 0x05, 7, 0, 0x06, 0, 0])
put("fuzz_c_api", "basic_int8", b"\x01" + create + run_ids + outputs + run_text + outputs + run_emb + outputs)
put("fuzz_c_api", "basic_fp32", b"\x00" + create + run_text + outputs + bytes([0x01]) + outputs)
put("fuzz_c_api", "two_sessions", b"\x01" + create + create2 + run_ids + bytes([0x12, 3, 0, 4, 5, 6]) + outputs
    + bytes([0x15, 0, 0, 0x11, 0x15, 0, 0]))
put("fuzz_c_api", "misuse", b"\x01" + bytes([0x05, 0, 0, 0x02, 3, 0x01, 0x00, 0xff, 50, 0, 1, 1, 7, 0x00, 0, 0, 0, 1, 1, 5,
                                             0x07, 0, 0x07, 1, 0x07, 2, 0x07, 3, 0x08, 15, 0x09, 60]) + b"a" * 48 + bytes([5]) + b"b" * 5)
