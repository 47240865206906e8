"""The report's "Training" section (docs/backward.md): a real sweep with the pass axis and torch_sdpa's
backward peer, merged and loaded; each problem with a backward lists fwd, bwd and fwd+bwd
TFLOP/s and the bwd/fwd time ratio from the entries themselves; forward-only runs have no
section, and the forward's "best configuration" never takes a backward entry."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from abreport import report, training
from abreport.load import load_dataset
from conftest import ROOT, SCRIPTS

BIN = os.environ.get("ATTNBENCH_BIN", os.path.join(ROOT, "build", "bin", "attnbench"))
pytestmark = pytest.mark.skipif(not os.access(BIN, os.X_OK), reason=f"{BIN} not built")


def sweep(out, *extra):
    r = subprocess.run([BIN, "sweep", "--backend", "cpu", "--seq", "64", "--heads", "2", "--head-dim", "16",
                        "--mask", "none,causal", "--variant", "naive,flash2", "--no-ceilings", "--reps", "2",
                        "--out", str(out), *extra], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    d = tmp_path_factory.mktemp("training")
    s = sweep(d / "s.json", "--pass", "fwd,bwd,fwd_bwd")
    paths = [str(s)]
    if subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0:
        p = d / "p.json"
        r = subprocess.run([sys.executable, os.path.join(SCRIPTS, "peers.py"), "--problems", str(s), "--out", str(p),
                            "--variants", "torch_sdpa", "--reps", "2", "--rep-time", "0.002", "--threads", "1"],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        paths.append(str(p))
    m = d / "m.json"
    r = subprocess.run([BIN, "merge", *paths, "--out", str(m)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return load_dataset([str(m)])


def test_each_problem_lists_every_pass_and_the_ratio_from_the_entries(merged):
    ts = training.tables(merged)
    assert {named.mask for named, _ in ts} == {"none", "causal"}
    for named, rows in ts:
        names = {r.variant for r in rows}
        assert {"naive", "flash2"} <= names
        for r in rows:
            if r.peer:
                assert r.variant == "torch_sdpa"
            f, b = r.by_pass["fwd"], r.by_pass["bwd"]
            assert {e.pass_ for e in r.by_pass.values()} == {"fwd", "bwd", "fwd_bwd"}
            assert r.bwd_over_fwd == pytest.approx(b.time_ms / f.time_ms)
            assert b.flops == pytest.approx(2.5 * f.flops) and r.by_pass["fwd_bwd"].flops == pytest.approx(3.5 * f.flops)
            assert b.grad_err is not None and b.grad_err <= 1e-4
            assert f.problem_key != b.problem_key  # speedup pairs never mix passes
    text = "\n".join(training.section(merged))
    assert "## Training" in text and "| flash2 |" in text and "bwd/fwd" in text


def test_best_configuration_per_variant_is_a_forward_entry(merged):
    assert all(e.pass_ == "fwd" for e in report.best_per_variant(merged))


def test_forward_only_runs_have_no_training_section(tmp_path):
    """Negative control: the section is built from backward entries, not invented."""
    ds = load_dataset([str(sweep(tmp_path / "fwd.json"))])
    assert training.tables(ds) == [] and training.section(ds) == []


def test_backward_rows_of_the_versus_table_say_their_pass(merged):
    """The versus-libraries table lists a problem once per pass; a bwd or fwd_bwd row names it
    (before, the three rows of one problem read the same)."""
    assert {e.pass_ for e in merged.entries} == {"fwd", "bwd", "fwd_bwd"}
    for e in merged.entries:
        label = report.shape_text(e)
        assert label.endswith(f"pass:{e.pass_}") == (e.pass_ != "fwd"), label


def test_charts_keep_the_passes_apart(merged):
    """Against N each pass is its own series ("flash2 bwd"), and on the roofline the backward's
    points are drawn half-filled beside the forward's filled ones, with a pass legend."""
    from matplotlib.lines import Line2D

    from abreport import roofline, speedup

    seq = {c.stem: c for c in speedup.build(merged).charts}["tflops_seq_fp32"]
    assert {"flash2", "flash2 bwd", "flash2 fwd+bwd", "naive bwd"} <= set(seq.summary["points"])
    roof = roofline.build(merged).charts[0]
    assert roof.summary["passes"] == ["fwd", "bwd", "fwd_bwd"]
    ax = roof.fig.axes[0]
    fills = {ln.get_fillstyle() for ln in ax.lines if isinstance(ln, Line2D) and ln.get_linestyle() == "None"
             and ln.get_marker() not in ("D", "None", None)}
    assert {"left", "bottom"} <= fills
