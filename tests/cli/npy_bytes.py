"""The bytes of a .npy file (format 1.0) in pure Python, for the CLI tests' input writers
(make_layouts.py, make_fp8_inputs.py): no numpy needed where ctest runs them."""
from __future__ import annotations


def npy(descr: str, shape: tuple[int, ...], payload: bytes) -> bytes:
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ", ".join(map(str, shape)))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + payload
