"""Writes the e4m3 inputs of tests/cli.cmake's bad-input cases, pure Python:
q_u1.npy [1, 2, 16, 32] and k_u1.npy [1, 2, 16, 32] (valid e4m3 codes), v_nan7f.npy and
v_nanff.npy (one NaN code, 0x7F / 0xFF, at element 100), k_f4.npy (float32, the same shape)."""
from __future__ import annotations

import argparse
import os
import struct

from npy_bytes import npy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    out = ap.parse_args().out_dir
    shape = (1, 2, 16, 32)
    n = 2 * 16 * 32
    codes = bytes((i * 37) % 0x7E for i in range(n))  # 0x00..0x7D: finite, no NaN code
    files = {"q_u1.npy": npy("|u1", shape, codes), "k_u1.npy": npy("|u1", shape, codes),
             "k_f4.npy": npy("<f4", shape, struct.pack("<%df" % n, *([0.5] * n)))}
    for name, nan in (("v_nan7f.npy", 0x7F), ("v_nanff.npy", 0xFF)):
        v = bytearray(codes)
        v[100] = nan
        files[name] = npy("|u1", shape, bytes(v))
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
