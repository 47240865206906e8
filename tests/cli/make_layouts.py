"""Writes the block-layout inputs of tests/cli.cmake's bad-input cases:
layout_f4.npy (float32, a wrong dtype) and layout_2x2.npy (uint8 0/1, 2 x 2 blocks)."""
from __future__ import annotations

import argparse
import os

from npy_bytes import npy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    out = ap.parse_args().out_dir
    with open(os.path.join(out, "layout_f4.npy"), "wb") as f:
        f.write(npy("<f4", (2, 2), bytes(16)))
    with open(os.path.join(out, "layout_2x2.npy"), "wb") as f:
        f.write(npy("|u1", (2, 2), bytes([1, 0, 0, 1])))


if __name__ == "__main__":
    main()
