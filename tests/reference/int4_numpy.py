#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# int4_numpy.py: golden files for the int4 weight format, written from its description in
# schemas/edgebert.fbs (Tensor, dtype I4) and backend/int4_weights.h in numpy only: per block of
# columns (or per row) the absmax a, candidate scales bf16(a * r / 7) for r = 1.00 .. 0.75 in 0.05
# steps, q = clip(rint(w / s), -8, 7), the candidate of least squared error (first on ties), the
# nibbles q + 8 with the even column in the low nibble (an odd row's padding nibble 8), value =
# q * s; and the per-channel int8 the runtime makes of them where XNNPACK has no int4 GEMM.
# usage: int4_numpy.py --out DIR   (writes DIR/int4/CASE.{weights.f32, packed.u8, scales.u16,
# dequantized.f32, q8.i8, q8_scales.f32} and DIR/int4/cases.txt: "CASE rows cols block")
import argparse
import os

import numpy as np

RATIOS = [np.float32(x) for x in ("1.0", "0.95", "0.9", "0.85", "0.8", "0.75")]


def bf16_round(x):
    """float32 -> nearest bfloat16 (ties to even), as float32 (the upper 16 bits kept)."""
    bits = np.atleast_1d(np.asarray(x, dtype=np.float32)).view(np.uint32).astype(np.uint64)
    bits = (bits + np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    return (bits.astype(np.uint32) << 16).view(np.float32), bits.astype(np.uint16)


def quantize_block(w):
    a = np.float32(np.max(np.abs(w))) if w.size else np.float32(0)
    if not a > np.float32(1e-30):
        return np.float32(1.0), np.zeros(w.shape, np.int32)
    best = None
    for r in RATIOS:
        s, _ = bf16_round(np.float32(np.float32(a * r) / np.float32(7)))
        s = np.float32(s[0])
        if not (s > 0 and np.isfinite(s)):
            continue
        q = np.clip(np.rint(w / s), -8, 7).astype(np.int32)
        err = np.sum((q.astype(np.float64) * np.float64(s) - w.astype(np.float64)) ** 2)
        if best is None or err < best[0]:
            best = (err, s, q)
    return best[1], best[2]


def quantize(w, block):
    rows, cols = w.shape
    width = block if block else cols
    nb = (cols + width - 1) // width
    q = np.zeros((rows, cols), np.int32)
    scales = np.zeros((rows, nb), np.float32)
    for r in range(rows):
        for b in range(nb):
            s, qb = quantize_block(w[r, b * width:(b + 1) * width])
            scales[r, b] = s
            q[r, b * width:(b + 1) * width] = qb
    u = q + 8
    if cols % 2:
        u = np.concatenate([u, np.full((rows, 1), 8, np.int32)], axis=1)
    packed = (u[:, 0::2] | (u[:, 1::2] << 4)).astype(np.uint8)
    deq = (q.astype(np.float32) * np.repeat(scales, width, axis=1)[:, :cols]).astype(np.float32)
    return packed, scales, q, deq


def int8_per_channel(q, scales, block):
    rows, cols = q.shape
    width = block if block else cols
    full = np.repeat(scales, width, axis=1)[:, :cols]
    q8 = np.zeros((rows, cols), np.int8)
    s8 = np.zeros(rows, np.float32)
    for r in range(rows):
        if np.all(scales[r] == scales[r, 0]):
            q8[r] = q[r]
            s8[r] = scales[r, 0]
            continue
        v = (q[r].astype(np.float32) * full[r]).astype(np.float32)
        amax = np.float32(np.max(np.abs(v)))
        S = np.float32(amax / np.float32(127)) if amax > 0 else np.float32(1)
        s8[r] = S
        q8[r] = np.clip(np.rint(v / S), -127, 127).astype(np.int8)
    return q8, s8


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = os.path.join(ap.parse_args().out, "int4")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(26)
    base = rng.standard_normal((24, 256)).astype(np.float32) * np.float32(0.05)
    base[3, 40] = 1.5      # an outlier weight: its block's scale, not the row's
    base[5, 64:96] = 0.0   # an all-zero block (scale 1)
    base[7, :] = 0.0       # an all-zero row
    odd = rng.standard_normal((5, 33)).astype(np.float32)
    cases = [("b32", base, 32), ("b64", base, 64), ("b256", base, 256), ("channel", base, 0), ("odd", odd, 0)]
    with open(os.path.join(out, "cases.txt"), "w") as f:
        for name, w, block in cases:
            packed, scales, q, deq = quantize(w, block)
            q8, s8 = int8_per_channel(q, scales, block)
            _, scale_bits = bf16_round(scales.reshape(-1))
            w.tofile(os.path.join(out, name + ".weights.f32"))
            packed.tofile(os.path.join(out, name + ".packed.u8"))
            scale_bits.astype("<u2").tofile(os.path.join(out, name + ".scales.u16"))
            deq.tofile(os.path.join(out, name + ".dequantized.f32"))
            q8.tofile(os.path.join(out, name + ".q8.i8"))
            s8.tofile(os.path.join(out, name + ".q8_scales.f32"))
            f.write("%s %d %d %d\n" % (name, w.shape[0], w.shape[1], block))


if __name__ == "__main__":
    main()
