"""scripts/peers.py's scan peers (scripts/peers_scans.py): mamba_ssm's selective_scan_fn and
mamba_chunk_scan_combined, flash-linear-attention's chunk_rwkv6, beside attnbench's selective_scan,
ssd and wkv6 on the problems the sweep ran them on. Their kernels need CUDA, so here the libraries
are stand-ins written in PyTorch from the libraries' documented semantics (not from the script's
references) and the CUDA-only gate is lifted: what is tested is the plumbing (problems, inputs,
layouts, the fp64 check, the entries). Controls: a stand-in that drops the D u skip, one that uses
fla's default scale K^-1/2 instead of RWKV's 1, and one that returns NaN all fail; on the CPU with
the gate in place every entry is skipped saying why, and problems without a scan row get none."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

from conftest import ROOT

torch = pytest.importorskip("torch", reason="PyTorch not installed (scripts/setup.sh installs it)")

import peers  # noqa: E402  (scripts/ is on pytest's pythonpath: pyproject.toml)
import peers_scans  # noqa: E402

BIN = os.environ.get("ATTNBENCH_BIN", os.path.join(ROOT, "build", "bin", "attnbench"))
SCANS = "mamba_ssm_selective_scan,mamba_ssm_ssd,fla_rwkv6"
# Ragged L, two groups of B and C; flash2 alone on a second mask: a problem without a scan row.
BASE = ["--backend", "cpu", "--seq", "37", "--heads", "2", "--head-dim", "16", "--no-ceilings", "--reps", "1",
        "--rep-time", "0.001"]
SWEEP = [*BASE, "--mask", "causal", "--variant", "flash2,selective_scan,ssd,wkv6", "--state", "8", "--groups", "2"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"{BIN} not built")
    out = tmp_path_factory.mktemp("scans") / "sweep.json"
    r = subprocess.run([BIN, "sweep", *SWEEP, "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    extra = out.parent / "flash2_none.json"
    r = subprocess.run([BIN, "sweep", *BASE, "--variant", "flash2", "--mask", "none", "--out", str(extra)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    both = out.parent / "both.json"
    r = subprocess.run([BIN, "merge", str(out), str(extra), "--out", str(both)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    return both


def silu(x):
    return x * torch.sigmoid(x)


def fake_selective_scan_fn(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False,
                           skip_d=False):
    """selective_scan_ref's semantics: u, delta, z [b, D, L], A [D, N], B, C [b, G, N, L]."""
    delta = delta.float() + delta_bias[None, :, None]
    delta = torch.nn.functional.softplus(delta) if delta_softplus else delta
    rep = u.shape[1] // B.shape[1]
    Bx, Cx = B.float().repeat_interleave(rep, dim=1), C.float().repeat_interleave(rep, dim=1)  # [b, D, N, L]
    x = torch.zeros(u.shape[0], u.shape[1], A.shape[1])
    ys = []
    for t in range(u.shape[2]):
        x = torch.exp(delta[:, :, t, None] * A) * x + delta[:, :, t, None] * Bx[..., t] * u[:, :, t, None].float()
        ys.append((x * Cx[..., t]).sum(-1))
    y = torch.stack(ys, dim=2)
    if not skip_d:
        y = y + D[None, :, None] * u.float()
    return (y * silu(z.float())).to(u.dtype)


def fake_chunk_scan_combined(x, dt, A, B, C, chunk_size, D=None, z=None, dt_bias=None, dt_softplus=False,
                             nan=False):
    """ssd_minimal's math, sequentially: x, z [b, L, H, P], dt [b, L, H], B, C [b, L, G, N]."""
    dt = dt.float() + dt_bias
    dt = torch.nn.functional.softplus(dt) if dt_softplus else dt
    rep = x.shape[2] // B.shape[2]
    Bx, Cx = B.float().repeat_interleave(rep, dim=2), C.float().repeat_interleave(rep, dim=2)  # [b, L, H, N]
    S = torch.zeros(x.shape[0], x.shape[2], B.shape[3], x.shape[3])
    ys = []
    for t in range(x.shape[1]):
        S = (torch.exp(dt[:, t] * A)[..., None, None] * S
             + dt[:, t, :, None, None] * Bx[:, t, :, :, None] * x[:, t, :, None, :].float())
        ys.append(torch.einsum("bhn,bhnp->bhp", Cx[:, t], S) + D[None, :, None] * x[:, t].float())
    y = torch.stack(ys, dim=1) * silu(z.float())
    return (y * float("nan") if nan else y).to(x.dtype)


def fake_chunk_rwkv6(r, k, v, w, u, scale=None, initial_state=None, output_final_state=False, head_first=True):
    """fla's RWKV-6 ([b, T, H, K] when head_first is False); scale None is fla's default K^-1/2."""
    assert head_first is False
    scale = r.shape[-1] ** -0.5 if scale is None else scale
    S = torch.zeros(r.shape[0], r.shape[2], r.shape[3], v.shape[3])
    outs = []
    for t in range(r.shape[1]):
        kv = k[:, t].float()[..., None] * v[:, t].float()[..., None, :]
        outs.append(torch.einsum("bhk,bhkv->bhv", r[:, t].float() * scale, S + u.float()[None, :, :, None] * kv))
        S = torch.exp(w[:, t].float())[..., None] * S + kv
    return torch.stack(outs, dim=1).to(r.dtype), None


def install(monkeypatch, selective=fake_selective_scan_fn, combined=fake_chunk_scan_combined, rwkv6=fake_chunk_rwkv6):
    mods = {name: types.ModuleType(name) for name in (
        "mamba_ssm", "mamba_ssm.ops", "mamba_ssm.ops.selective_scan_interface", "mamba_ssm.ops.triton",
        "mamba_ssm.ops.triton.ssd_combined", "fla", "fla.ops", "fla.ops.rwkv6")}
    mods["mamba_ssm.ops.selective_scan_interface"].selective_scan_fn = selective
    mods["mamba_ssm.ops.triton.ssd_combined"].mamba_chunk_scan_combined = combined
    mods["fla.ops.rwkv6"].chunk_rwkv6 = rwkv6
    for name, m in mods.items():
        monkeypatch.setitem(sys.modules, name, m)


def run_peers(sweep, tmp_path, capsys) -> dict[str, dict]:
    out = tmp_path / "scans.peers.json"
    rc = peers.main(["--problems", str(sweep), "--out", str(out), "--variants", SCANS, "--reps", "1",
                     "--rep-time", "0.001", "--threads", "1", "--device", "cpu"])
    capsys.readouterr()
    assert rc == 0
    return {e["variant"]: e for e in json.load(open(out))["benchmarks"]}


def test_each_peer_runs_on_its_rows_problem_checked_against_fp64(sweep, tmp_path, capsys, monkeypatch):
    install(monkeypatch)
    monkeypatch.setattr(peers_scans, "NEEDS_CUDA", False)
    got = run_peers(sweep, tmp_path, capsys)
    assert sorted(got) == sorted(SCANS.split(","))
    rows = {e["variant"]: e for e in json.load(open(sweep))["benchmarks"] if e.get("status") == "ok"}
    for variant, e in got.items():
        row = peers_scans.SCAN_PEERS[variant][1]
        assert e["status"] == "ok", e.get("error_message")
        assert e["err_ok"] is True and e["rel_err"] < 1e-5, (variant, e["rel_err"])
        assert e["flops"] == rows[row]["flops"] and e["bytes_model"] == f"attnbench:{row}"
        if row != "wkv6":  # its state is d x d: no N, G axes
            assert e["dstate"] == 8 and e["ngroups"] == 2 and e["name"].endswith("/N:8/G:2/on:cpu")
        assert e["mask"] == "causal" and e["Nq"] == 37 and e["peer"] is True


@pytest.mark.parametrize("fault", ["selective_no_d", "rwkv6_default_scale", "ssd_nan"])
def test_a_wrong_library_result_fails_its_check(sweep, tmp_path, capsys, monkeypatch, fault):
    install(monkeypatch, **{
        "selective_no_d": {"selective": lambda *a, **k: fake_selective_scan_fn(*a, **k, skip_d=True)},
        "rwkv6_default_scale": {"rwkv6": lambda r, k, v, w, u, scale=None, head_first=True:
                                fake_chunk_rwkv6(r, k, v, w, u, scale=None, head_first=head_first)},
        "ssd_nan": {"combined": lambda *a, **k: fake_chunk_scan_combined(*a, **k, nan=True)}}[fault])
    monkeypatch.setattr(peers_scans, "NEEDS_CUDA", False)
    got = run_peers(sweep, tmp_path, capsys)
    victim = {"selective_no_d": "mamba_ssm_selective_scan", "rwkv6_default_scale": "fla_rwkv6",
              "ssd_nan": "mamba_ssm_ssd"}[fault]
    e = got[victim]
    assert e["err_ok"] is not True, (fault, e.get("rel_err"))
    if fault == "ssd_nan":
        assert e["status"] == "failed" and "non-finite" in e["error_message"]
    else:
        assert e["rel_err"] > 1e-2
    assert all(o["err_ok"] is True for v, o in got.items() if v != victim)


def test_on_the_cpu_each_scan_problem_is_skipped_saying_why_and_others_get_none(sweep, tmp_path, capsys,
                                                                                 monkeypatch):
    install(monkeypatch)
    got = run_peers(sweep, tmp_path, capsys)
    assert sorted(got) == sorted(SCANS.split(","))  # one each: the mask:none problem has no scan row
    for e in got.values():
        assert e["status"] == "skipped" and "CUDA only" in e["error_message"], e.get("error_message")
