"""scripts/peers.py's PyPI approximations (performer-pytorch, linformer, routing-transformer) on
the CPU beside attnbench's comparison rows: on the problems where the sweep ran the row, with its
model; their entries carry the distance to exact fp64 attention (their random parameters are
their own, so there is no check of the same approximation: rel_err and err_ok null) and what
they cannot run is skipped with the reason. Controls: exact attention put in the peer's place
measures a distance of ~0, and a library that does not import is skipped saying so."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, SCRIPTS

torch = pytest.importorskip("torch", reason="PyTorch not installed (scripts/setup.sh installs it)")
for mod in ("performer_pytorch", "linformer", "routing_transformer"):
    pytest.importorskip(mod, reason=f"{mod} not installed (scripts/requirements-main.txt installs it)")

import peers  # noqa: E402  (scripts/ is on pytest's pythonpath: pyproject.toml)

PEERS = os.path.join(SCRIPTS, "peers.py")
BIN = os.environ.get("ATTNBENCH_BIN", os.path.join(ROOT, "build", "bin", "attnbench"))
APPROX = "pypi_performer,pypi_linformer,pypi_routing"
ROW = {"pypi_performer": "performer", "pypi_linformer": "linformer", "pypi_routing": "routing"}
# Ragged Nq != Nkv; causal (Linformer refuses it, the others take causal at Nq == Nkv only).
SWEEP = ["--backend", "cpu", "--nq", "40", "--nkv", "90", "--heads", "2", "--kv-heads", "2", "--head-dim", "16",
         "--mask", "none,causal", "--variant", "flash2,linformer,performer,routing", "--no-ceilings", "--reps", "2"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"{BIN} not built")
    out = tmp_path_factory.mktemp("approx") / "sweep.json"
    r = subprocess.run([BIN, "sweep", *SWEEP, "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def approx(sweep):
    out = sweep.parent / "approx.peers.json"
    r = subprocess.run([sys.executable, PEERS, "--problems", str(sweep), "--out", str(out), "--variants", APPROX,
                        "--reps", "2", "--rep-time", "0.002", "--threads", "1"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return out, json.load(open(out))["benchmarks"]


def test_entries_carry_the_distance_to_exact_attention_and_the_rows_model(sweep, approx):
    _, entries = approx
    rows = {(e["variant"], e["mask"]): e for e in json.load(open(sweep))["benchmarks"]}
    ok = [e for e in entries if e["mask"] == "none"]
    assert sorted(e["variant"] for e in ok) == sorted(ROW)
    for e in ok:
        assert e["status"] == "ok", e.get("error_message")
        assert e["approx_err_vs_exact"] > 0.05, e["name"]  # an approximation, not exact attention
        assert e["rel_err"] is None and e["err_ok"] is None, e["name"]
        assert "own random" in e["approx_check"]
        row = rows[(ROW[e["variant"]], "none")]
        assert e["flops"] == row["flops"] and e["bytes"] == row["bytes"], e["name"]
        assert e["bytes_model"] == f"attnbench:{ROW[e['variant']]}"
        assert e["time_ms"] > 0


def test_what_cannot_run_is_skipped_with_the_reason(approx):
    _, entries = approx
    causal = {e["variant"]: e for e in entries if e["mask"] == "causal"}
    assert causal["pypi_linformer"]["status"] == "skipped"
    assert "no causal" in causal["pypi_linformer"]["error_message"]
    for v in ("pypi_performer", "pypi_routing"):  # Nq 40 != Nkv 90
        assert causal[v]["status"] == "skipped"
        assert "Nq == Nkv only" in causal[v]["error_message"], causal[v]["error_message"]


def test_merge_accepts_the_entries(sweep, approx, tmp_path):
    out, _ = approx
    r = subprocess.run([BIN, "merge", "--out", str(tmp_path / "m.json"), str(sweep), str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]


def _run(sweep, variant):
    _, problems = peers.problems_of(str(sweep))
    p = next(p for p in problems if p.mask == "none")
    args = argparse.Namespace(reps=1, rep_time=0.001, row_models=peers.row_models(str(sweep)))
    return peers.run_one(peers.Peers("cpu", False, 1.0), "lib", variant, p, peers.make_inputs(p, "cpu"), {}, args,
                         "lib", None)


def test_control_exact_attention_in_the_peers_place_is_at_distance_zero(sweep, monkeypatch):
    assert _run(sweep, "pypi_performer")["approx_err_vs_exact"] > 0.05
    monkeypatch.setattr(peers, "approx_call", lambda variant, p, q, k, v: peers.sdpa_call(p, q, k, v, False))
    assert _run(sweep, "pypi_performer")["approx_err_vs_exact"] < 1e-5


def test_a_library_that_does_not_import_is_skipped_saying_so(sweep, monkeypatch):
    def missing(variant, p, q, k, v):
        raise ImportError("No module named 'performer_pytorch'")

    monkeypatch.setattr(peers, "approx_call", missing)
    e = _run(sweep, "pypi_performer")
    assert e["status"] == "skipped"
    assert "not importable" in e["error_message"] and "requirements" in e["error_message"]
