"""The benchmarks' shared argument checks (benchmarks/cpu_vs_torch.py check_run_args): a bad
value is named in one line and exits 2 before anything runs, in every benchmark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ["cpu_vs_torch.py", "cpu_vs_torch_bwd.py", "cpu_decode_vs_torch.py", "cpu_vs_mambapy.py"]


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], capture_output=True,
                          text=True, check=False, timeout=60)


@pytest.mark.parametrize("script", BENCHMARKS)
def test_a_non_positive_count_is_named(script: str) -> None:
    proc = run(script, "--threads", "0")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith("error: --threads: 0 is not positive")


@pytest.mark.parametrize("script", BENCHMARKS)
def test_a_missing_binary_is_named(script: str, tmp_path: Path) -> None:
    missing = tmp_path / "no_attnbench"
    proc = run(script, "--attnbench", str(missing))
    assert proc.returncode == 2, proc.stderr
    assert f"attnbench binary not found: {missing}" in proc.stderr
