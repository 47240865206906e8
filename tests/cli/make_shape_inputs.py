"""Writes the .npy inputs of tests/cli.cmake's shape cases: q_zero_len.npy (float32 Q with
Nq = 0) and kv_1x2x8x16.npy (float32 K/V with B 1, Hkv 2, Nkv 8, d 16)."""
from __future__ import annotations

import argparse
import os

from npy_bytes import npy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    out = ap.parse_args().out_dir
    with open(os.path.join(out, "q_zero_len.npy"), "wb") as f:
        f.write(npy("<f4", (1, 2, 0, 16), b""))
    with open(os.path.join(out, "kv_1x2x8x16.npy"), "wb") as f:
        f.write(npy("<f4", (1, 2, 8, 16), bytes(4 * 2 * 8 * 16)))


if __name__ == "__main__":
    main()
