"""The host e4m3 codec (core/fp8.cpp) against independent implementations of OCP FP8 E4M3
(E4M3FN): ml_dtypes.float8_e4m3fn and torch.float8_e4m3fn, each where importable.

The C++ codec is compiled here, with a three-function C shim, into a shared library (the
build's static libraries export no C symbols); no compiler, no test. Both directions: every
one of the 256 codes decodes to the same float (bit for bit, -0 included; NaN where they have
NaN), and a dense sweep of float32 values, every midpoint between adjacent e4m3 values and its
two float32 neighbours, the subnormal range, values beyond 448 and the specials encode to the
same code. The independent encoders do not saturate (448 < |x| rounds to NaN there), so the
reference clamps to +-448 first; NaN inputs must give 0x7F from the C++ codec (the device's
canonical NaN) and a NaN code from the reference. A negative control shows the comparison
sees a double rounding (through float16) at the midpoints.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SHIM = r"""
#include <cstddef>
#include <cstdint>
#include <span>
#include "core/fp8.hpp"
extern "C" {
void shim_decode(const std::uint8_t* c, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = attnbench::e4m3_to_float(c[i]);
}
void shim_encode(const float* x, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = attnbench::e4m3_from_float(x[i]);
}
float shim_scale(const float* x, std::size_t n) { return attnbench::e4m3_scale_for(std::span<const float>(x, n)); }
}
"""


def _references():
    refs = {}
    try:
        import ml_dtypes

        t = ml_dtypes.float8_e4m3fn
        refs["ml_dtypes"] = (lambda codes: codes.view(t).astype(np.float32),
                             lambda x: x.astype(t).view(np.uint8))
    except ImportError:
        pass
    try:
        import torch

        refs["torch"] = (
            lambda codes: torch.from_numpy(codes.copy()).view(torch.float8_e4m3fn).float().numpy(),
            lambda x: torch.from_numpy(x.copy()).to(torch.float8_e4m3fn).view(torch.uint8).numpy())
    except ImportError:
        pass
    return refs


REFS = _references()
pytestmark = pytest.mark.skipif(not REFS, reason="neither ml_dtypes nor torch is importable")


@pytest.fixture(scope="module")
def codec(tmp_path_factory):
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++") or shutil.which("clang++")
    if not cxx:
        pytest.skip("no C++ compiler to build core/fp8.cpp")
    d = tmp_path_factory.mktemp("fp8")
    (d / "shim.cpp").write_text(SHIM)
    lib = d / "libfp8.so"
    subprocess.run([cxx, "-std=c++20", "-O1", "-shared", "-fPIC", "-I", ROOT, os.path.join(ROOT, "core", "fp8.cpp"),
                    str(d / "shim.cpp"), "-o", str(lib)], check=True, capture_output=True, text=True)
    so = ctypes.CDLL(str(lib))
    for f in (so.shim_decode, so.shim_encode):
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    so.shim_scale.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    so.shim_scale.restype = ctypes.c_float

    def decode(codes: np.ndarray) -> np.ndarray:
        codes = np.ascontiguousarray(codes, dtype=np.uint8)
        out = np.empty(codes.shape, np.float32)
        so.shim_decode(codes.ctypes.data, out.ctypes.data, ctypes.c_size_t(codes.size))
        return out

    def encode(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float32)
        out = np.empty(x.shape, np.uint8)
        so.shim_encode(x.ctypes.data, out.ctypes.data, ctypes.c_size_t(x.size))
        return out

    def scale(x: np.ndarray) -> float:
        x = np.ascontiguousarray(x, dtype=np.float32)
        return so.shim_scale(x.ctypes.data, ctypes.c_size_t(x.size))

    return decode, encode, scale


ALL = np.arange(256, dtype=np.uint8)
NAN_CODES = {0x7F, 0xFF}


def finite_values() -> np.ndarray:
    """The 127 non-negative finite e4m3 values in increasing order (codes 0x00..0x7E), by formula."""
    c = np.arange(0x7F)
    e, m = c >> 3, c & 7
    v = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7.0))
    assert np.all(np.diff(v) > 0)
    return v.astype(np.float32)


def sweep() -> np.ndarray:
    """Dense float32 inputs: a 12-bit mantissa grid over 2^-16 .. 2^11, every midpoint between
    adjacent e4m3 values and its two float32 neighbours, subnormal float32s, beyond 448, specials;
    both signs."""
    grid = (np.ldexp(1.0 + np.arange(4096)[None, :] / 4096.0, np.arange(-16, 12)[:, None])).ravel()
    v = finite_values().astype(np.float64)
    mids = ((v[:-1] + v[1:]) / 2).astype(np.float32)
    assert np.all(mids.astype(np.float64) == (v[:-1] + v[1:]) / 2)  # exact
    near = np.concatenate([mids, np.nextafter(mids, np.float32(0)), np.nextafter(mids, np.float32(1e9))])
    tiny = np.array([1e-45, 1e-40, 2.0 ** -126, 2.0 ** -10, 2.0 ** -11, 3 * 2.0 ** -11], np.float32)
    big = np.array([448, 449, 463.99, 464, 479.99, 480, 481, 1e4, 3.4e38], np.float32)
    specials = np.array([0.0, np.inf], np.float32)
    pos = np.concatenate([grid.astype(np.float32), v.astype(np.float32), near, tiny, big, specials])
    return np.concatenate([pos, -pos]).astype(np.float32)


def mismatches(got: np.ndarray, x: np.ndarray, ref_encode) -> np.ndarray:
    """Indices where `got` differs from the reference's code of clamp(x, -448, 448)."""
    want = ref_encode(np.clip(x, -448, 448).astype(np.float32))
    return np.nonzero(got != want)[0]


@pytest.mark.parametrize("name", sorted(REFS))
def test_every_code_decodes_like_the_reference(codec, name):
    decode, _, _ = codec
    ref_decode, _ = REFS[name]
    got, want = decode(ALL), ref_decode(ALL)
    nan = np.isnan(want)
    assert set(np.nonzero(nan)[0].tolist()) == NAN_CODES
    assert np.all(np.isnan(got[nan]))
    # Bit for bit: -0 (0x80) keeps its sign.
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
    assert got[0x7E] == 448 and got[0x08] == 2.0 ** -6 and got[0x01] == 2.0 ** -9
    assert np.signbit(got[0x80]) and not np.signbit(got[0x00])


@pytest.mark.parametrize("name", sorted(REFS))
def test_every_code_round_trips_and_matches_the_reference_encoder(codec, name):
    decode, encode, _ = codec
    _, ref_encode = REFS[name]
    finite = np.array([c for c in range(256) if c not in NAN_CODES], np.uint8)
    values = decode(finite)
    assert np.array_equal(encode(values), finite)
    assert np.array_equal(ref_encode(values), finite)


@pytest.mark.parametrize("name", sorted(REFS))
def test_dense_sweep_encodes_like_the_reference(codec, name):
    _, encode, _ = codec
    _, ref_encode = REFS[name]
    x = sweep()
    assert x.size > 200_000
    got = encode(x)
    bad = mismatches(got, x, ref_encode)
    assert bad.size == 0, [(float(x[i]), int(got[i])) for i in bad[:10]]
    # Saturation and sign of zero, stated.
    assert np.all(got[np.abs(x) >= 448] & 0x7F == 0x7E)
    assert encode(np.array([0.0, -0.0], np.float32)).tolist() == [0x00, 0x80]


@pytest.mark.parametrize("name", sorted(REFS))
def test_nan_encodes_to_0x7f(codec, name):
    _, encode, _ = codec
    _, ref_encode = REFS[name]
    nans = np.array([np.nan, -np.nan, np.float32(np.nan) * 0], np.float32)
    nans = np.concatenate([nans, np.array([0x7FC00001, 0xFFFFFFFF, 0x7F800001], np.uint32).view(np.float32)])
    assert np.all(np.isnan(nans))
    assert encode(nans).tolist() == [0x7F] * nans.size
    assert all(int(c) & 0x7F == 0x7F for c in ref_encode(nans))


@pytest.mark.parametrize("name", sorted(REFS))
def test_negative_control_double_rounding_is_seen(codec, name):
    """An encoder that rounds through float16 first (a double rounding) differs from the
    reference at some of the swept values: the comparison is not vacuous."""
    _, ref_encode = REFS[name]
    x = sweep()
    x = x[np.isfinite(x) & (np.abs(x) < 448)]
    twice = ref_encode(x.astype(np.float16).astype(np.float32))
    assert mismatches(twice, x, ref_encode).size > 0


def test_scale_is_amax_over_448(codec):
    _, _, scale = codec
    x = np.array([0.5, -3.0, np.nan, np.inf, 2.0], np.float32)
    assert scale(x) == np.float32(3.0) / np.float32(448)
    assert scale(np.zeros(4, np.float32)) == 1.0
