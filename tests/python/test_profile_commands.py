"""The command lines scripts/profile_ncu.sh and scripts/nsys_timeline.sh run (--dry-run).

No Nsight tool is needed: the dry run prints the commands, which are parsed
back with shlex and checked word by word.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "scripts" / "profile_ncu.sh"
TIMELINE = ROOT / "scripts" / "nsys_timeline.sh"
NAME = "flash2/cuda/bf16/B:1/H:8/Hkv:8/Nq:1024/Nkv:1024/d:64/mask:causal/Br:128/Bc:64"

ROOFLINE_METRICS = [
    "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "gpu__time_duration.sum",
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_hmul_pred_on.sum", "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
    "sm__inst_executed_pipe_tensor.sum",
]


def run(script: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = {**os.environ, "NCU": "ncu", "NSYS": "nsys", "PYTHON": "python3", **(env or {})}
    e.pop("ATTNBENCH_BIN", None)
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, check=False, env=e)


def commands(stdout: str) -> list[list[str]]:
    """The printed command lines as argument lists (comments skipped)."""
    return [shlex.split(line) for line in stdout.splitlines() if line and not line.startswith("#")]


def opt(argv: list[str], name: str) -> str:
    assert name in argv, f"{name} missing from {argv}"
    return argv[argv.index(name) + 1]


def split_app(argv: list[str]) -> tuple[list[str], list[str]]:
    """(ncu's own arguments, the application command line)."""
    i = next(i for i, a in enumerate(argv) if a.endswith("build/bin/attnbench"))
    return argv[:i], argv[i:]


# --- profile_ncu.sh -------------------------------------------------------------

def test_profile_dry_run_commands() -> None:
    p = run(PROFILE, "--dry-run", NAME)
    assert p.returncode == 0, p.stderr
    cmds = commands(p.stdout)
    assert len(cmds) == 2
    profile, export = cmds

    ncu, app = split_app(profile)
    assert ncu[0] == "ncu"
    assert "--nvtx" in ncu
    assert opt(ncu, "--nvtx-include") == "regex:attnbench@.+/"  # push/pop ranges of domain attnbench
    assert opt(ncu, "--clock-control") == "none"
    assert opt(ncu, "--cache-control") == "all"
    assert opt(ncu, "--metrics").split(",") == ROOFLINE_METRICS
    assert opt(ncu, "--export") == "out/ncu/profile"
    # attnbench selects the configuration; ncu only keeps what runs inside its ranges.
    assert app[1:] == ["sweep", "--profile", "--filter", NAME]

    assert export[:2] == ["ncu", "--import"]
    assert export[2] == "out/ncu/profile.ncu-rep"
    assert "--csv" in export and opt(export, "--page") == "raw"
    assert opt(export, "--print-units") == "base"
    assert export[-2:] == [">", "out/ncu/profile.csv"]
    assert "metric availability not checked" in p.stdout


def test_profile_out_prefix_extra_args_and_merge() -> None:
    p = run(PROFILE, "--dry-run", "--json", "results/h200/run.json", "flash2/.*Nq:4096", "out/x/odd",
            "--", "--preset", "smoke")
    assert p.returncode == 0, p.stderr
    profile, export, merge = commands(p.stdout)
    _, app = split_app(profile)
    assert app[1:] == ["sweep", "--profile", "--filter", "flash2/.*Nq:4096", "--preset", "smoke"]
    assert opt(profile, "--export") == "out/x/odd"
    assert export[-1] == "out/x/odd.csv"
    assert merge[0] == "python3" and merge[1].endswith("scripts/ncu_merge.py")
    assert opt(merge, "--json") == "results/h200/run.json"
    assert opt(merge, "--csv") == "out/x/odd.csv"
    assert opt(merge, "--out") == "out/x/odd.merged.json"


def test_profile_quotes_awkward_filters() -> None:
    weird = "mask:local:256,0\\+global:16/ it's"
    p = run(PROFILE, "--dry-run", weird)
    assert p.returncode == 0, p.stderr
    _, app = split_app(commands(p.stdout)[0])
    assert opt(app, "--filter") == weird


def test_profile_drops_missing_metrics_and_falls_back_for_tensor(tmp_path: Path) -> None:
    # A saved `ncu --query-metrics` listing (base names) without the fp16 op
    # counters and without sm__inst_executed_pipe_tensor, but with the per-op ones.
    listing = tmp_path / "query.txt"
    listing.write_text(
        "Device NVIDIA H200 (GH100)\n"
        "-----------------------------------------------------------------\n"
        "Metric Name                                        Metric Description\n"
        "dram__bytes_read                                   # of bytes read from DRAM\n"
        "dram__bytes_write                                  # of bytes written to DRAM\n"
        "lts__t_bytes                                       # of bytes requested\n"
        "gpu__time_duration                                 total duration in nanoseconds\n"
        "sm__sass_thread_inst_executed_op_fadd_pred_on      # of FADD thread instructions\n"
        "sm__sass_thread_inst_executed_op_fmul_pred_on      # of FMUL thread instructions\n"
        "sm__sass_thread_inst_executed_op_ffma_pred_on      # of FFMA thread instructions\n"
        "sm__inst_executed_pipe_tensor_op_hmma              # of warp instructions (HMMA)\n"
        "sm__inst_executed_pipe_tensor_op_gmma              # of warp instructions (GMMA)\n")
    p = run(PROFILE, "--dry-run", "--metrics-query", str(listing), NAME)
    assert p.returncode == 0, p.stderr
    metrics = opt(commands(p.stdout)[0], "--metrics").split(",")
    assert metrics == [
        "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "gpu__time_duration.sum",
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
        "sm__inst_executed_pipe_tensor_op_hmma.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum",
    ]
    for dropped in ("hadd", "hmul", "hfma"):
        assert f"sm__sass_thread_inst_executed_op_{dropped}_pred_on.sum is not available on this GPU; dropped" in p.stderr
    assert "sm__inst_executed_pipe_tensor.sum is not available on this GPU; using" in p.stderr
    assert "metric availability not checked" not in p.stdout


def test_profile_no_metric_available_fails(tmp_path: Path) -> None:
    listing = tmp_path / "query.txt"
    listing.write_text("Metric Name   Metric Description\nsm__cycles_elapsed   cycles\n")
    p = run(PROFILE, "--dry-run", "--metrics-query", str(listing), NAME)
    assert p.returncode == 2 and "none of the metrics is available" in p.stderr


def test_profile_nvtx_filter_escapes_delimiters() -> None:
    p = run(PROFILE, "--dry-run", "--nvtx-filter", "flash2/cuda/.*mask:local:256,0")
    assert p.returncode == 0, p.stderr
    include = opt(commands(p.stdout)[0], "--nvtx-include")
    # / (push/pop stack), , (start/end list) and @ (domain) are ncu filter syntax: escaped.
    assert include == r"regex:attnbench@.*(flash2\/cuda\/.*mask:local:256\,0).*/"


def test_profile_sections_and_kernel_regex() -> None:
    p = run(PROFILE, "--dry-run", "--sections", "SpeedOfLight,WarpStateStats", "--kernel-regex", "flash2_bwd_kernel",
            NAME, "out/p")
    assert p.returncode == 0, p.stderr
    profile, export, details = commands(p.stdout)
    ncu, _ = split_app(profile)
    assert opt(ncu, "--kernel-name") == "regex:flash2_bwd_kernel"
    assert [ncu[i + 1] for i, a in enumerate(ncu) if a == "--section"] == ["SpeedOfLight", "WarpStateStats"]
    assert opt(ncu, "--metrics").split(",") == ROOFLINE_METRICS  # the roofline metrics still come
    assert opt(export, "--page") == "raw" and export[-1] == "out/p.csv"
    assert opt(details, "--page") == "details" and details[-1] == "out/p.details.csv"
    bad = run(PROFILE, "--dry-run", "--sections", "Speed Of Light", NAME)
    assert bad.returncode == 2 and "'Speed Of Light' is not an ncu section identifier" in bad.stderr


def test_full_run_with_sections_exports_details(tmp_path: Path) -> None:
    env = fake_tools(tmp_path, FIXTURES / "ncu_raw.csv", query=None)
    p = run_real(env, "--sections", "WarpStateStats", "--kernel-regex", "bwd", NAME, str(tmp_path / "p"))
    assert p.returncode == 0, p.stderr
    log = (tmp_path / "log").read_text().splitlines()
    assert any(line.startswith("ncu --nvtx") and "--kernel-name regex:bwd" in line and "--section WarpStateStats" in line
               for line in log)
    assert f"ncu --import {tmp_path / 'p'}.ncu-rep --csv --page details --print-units base" in log
    assert (tmp_path / "p.details.csv").exists() and "details:" in p.stdout


def test_profile_usage_errors() -> None:
    p = run(PROFILE)
    assert p.returncode == 2 and "FILTER" in p.stderr
    p = run(PROFILE, "--bogus", NAME)
    assert p.returncode == 2 and "unknown option --bogus" in p.stderr


def test_profile_without_ncu_says_so() -> None:
    p = run(PROFILE, NAME, env={"NCU": "/nonexistent/ncu"})
    assert p.returncode == 2
    assert "ncu must be on PATH" in p.stderr


# --- nsys_timeline.sh -------------------------------------------------------------

def test_timeline_dry_run() -> None:
    p = run(TIMELINE, "--dry-run")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    argv = shlex.split(lines[0])
    nsys, app = split_app(argv)
    assert nsys[:2] == ["nsys", "profile"]
    assert "--trace=cuda,nvtx,cublas" in nsys
    assert "--output=out/nsys/timeline" in nsys
    assert app[1:] == ["sweep", "--profile", "--filter", "/Nq:1024/Nkv:1024/"]
    text = "\n".join(lines[1:])
    assert "nsys-ui out/nsys/timeline.nsys-rep" in text
    assert "nsys stats --report nvtx_sum,nvtx_kern_sum,cuda_gpu_kern_sum out/nsys/timeline.nsys-rep" in text


def test_timeline_filter_out_and_extra_args() -> None:
    p = run(TIMELINE, "--dry-run", "--filter", "flash2/", "out/t/x", "--", "--preset", "smoke")
    assert p.returncode == 0, p.stderr
    nsys, app = split_app(shlex.split(p.stdout.splitlines()[0]))
    assert "--output=out/t/x" in nsys
    assert app[1:] == ["sweep", "--profile", "--filter", "flash2/", "--preset", "smoke"]


def test_timeline_without_nsys_is_clear() -> None:
    p = run(TIMELINE, env={"NSYS": "/nonexistent/nsys"})
    assert p.returncode == 2
    assert "Nsight Systems is not installed here" in p.stderr
    assert "scripts/profile_ncu.sh" in p.stderr


@pytest.mark.parametrize("script", [PROFILE, TIMELINE])
def test_help(script: Path) -> None:
    p = run(script, "--help")
    assert p.returncode == 0 and "--dry-run" in p.stdout and "docs/profiling.md" in p.stdout


# --- sweep arguments taken from the JSON ----------------------------------------------

def test_json_supplies_the_sweep_of_the_odd_point(tmp_path: Path) -> None:
    bench = tmp_path / "run.json"
    bench.write_text(json.dumps({"context": {"command_line": (
        "build/bin/attnbench sweep --preset full --nq 1024,4096 --out results/x.json --reps=20 "
        "--mask 'local:256,0+global:16' --resume --filter flash2/ --benchmark_min_time=0.1 --backend cuda")},
        "benchmarks": []}))
    p = run(PROFILE, "--dry-run", "--json", str(bench), NAME)
    assert p.returncode == 0, p.stderr
    _, app = split_app(commands(p.stdout)[0])
    # Same preset and axes; output, timing, selection options dropped; FILTER replaces --filter.
    assert app[1:] == ["sweep", "--profile", "--filter", NAME, "--preset", "full", "--nq", "1024,4096",
                       "--mask", "local:256,0+global:16", "--backend", "cuda"]
    # Explicit attnbench args win over the JSON's.
    p = run(PROFILE, "--dry-run", "--json", str(bench), NAME, "out/o", "--", "--preset", "quick")
    _, app = split_app(commands(p.stdout)[0])
    assert app[1:] == ["sweep", "--profile", "--filter", NAME, "--preset", "quick"]


def test_sweep_args_helper() -> None:
    from abnsight.sweep_args import sweep_args

    assert sweep_args("attnbench sweep --filter x --out=o.json --hot --seq 512") == ["--seq", "512"]
    assert sweep_args("attnbench list") == []


# --- a full run against stand-ins for ncu and attnbench ----------------------------------

FAKE_NCU = r'''#!/usr/bin/env bash
# Stand-in for ncu: --query-metrics prints $FAKE_QUERY (or fails), --import prints
# $FAKE_CSV, a profile run logs its options, runs the application and writes the report.
echo "ncu $*" >> "$FAKE_LOG"
case " $* " in
  *" --query-metrics "*) [[ -n "${FAKE_QUERY:-}" ]] || { echo "==ERROR== no device" >&2; exit 1; }; cat "$FAKE_QUERY" ;;
  *" --import "*) cat "$FAKE_CSV" ;;
  *) out=""
     while (($#)); do
       case "$1" in
         --export) out="$2"; shift 2 ;;
         --nvtx-include|--clock-control|--cache-control|--metrics|--section|--kernel-name) shift 2 ;;
         --*) shift ;;
         *) break ;;
       esac
     done
     "$@"; touch "$out.ncu-rep" ;;
esac
'''
FAKE_APP = '#!/usr/bin/env bash\necho "attnbench $*" >> "$FAKE_LOG"\n'
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ncu"


def fake_tools(tmp_path: Path, csv: Path, query: str | None) -> dict[str, str]:
    ncu, app = tmp_path / "ncu", tmp_path / "attnbench"
    ncu.write_text(FAKE_NCU)
    app.write_text(FAKE_APP)
    ncu.chmod(0o755)
    app.chmod(0o755)
    env = {"NCU": str(ncu), "ATTNBENCH_BIN": str(app), "PYTHON": sys.executable,
           "FAKE_LOG": str(tmp_path / "log"), "FAKE_CSV": str(csv), "FAKE_QUERY": ""}
    if query is not None:
        (tmp_path / "query.txt").write_text(query)
        env["FAKE_QUERY"] = str(tmp_path / "query.txt")
    return env


def run_real(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(PROFILE), *args], capture_output=True, text=True, check=False,
                          env={**os.environ, **env})


def test_full_run_profiles_exports_and_merges(tmp_path: Path) -> None:
    env = fake_tools(tmp_path, FIXTURES / "ncu_raw.csv", query=None)  # --query-metrics fails
    out = tmp_path / "o" / "odd"
    p = run_real(env, "--json", str(FIXTURES / "bench.json"), NAME, str(out))
    assert p.returncode == 0, p.stderr
    log = (tmp_path / "log").read_text().splitlines()
    assert log[0] == "ncu --query-metrics"
    assert "could not list metrics" in p.stderr  # falls back to requesting all of them
    assert log[1].startswith("ncu --nvtx --nvtx-include regex:attnbench@.+/ --clock-control none")
    # The JSON's command line ("attnbench sweep --filter Nq:1024") adds no sweep arguments.
    assert log[2] == f"attnbench sweep --profile --filter {NAME}"
    assert log[3] == f"ncu --import {out}.ncu-rep --csv --page raw --print-units base"
    assert (tmp_path / "o" / "odd.csv").read_text() == (FIXTURES / "ncu_raw.csv").read_text()
    merged = json.loads((tmp_path / "o" / "odd.merged.json").read_text())
    entry = next(b for b in merged["benchmarks"] if b["name"] == NAME)
    assert entry["dram_bytes_measured"] == 4325376 + 1048576 and entry["ncu_kernels"] == 1
    assert "7 kernel(s) profiled" in p.stderr
    assert f"roofline --out {out} {out}.merged.json" in p.stdout


def test_full_run_uses_available_metrics(tmp_path: Path) -> None:
    env = fake_tools(tmp_path, FIXTURES / "ncu_raw.csv",
                     query="dram__bytes_read  x\ndram__bytes_write  x\ngpu__time_duration  x\n")
    p = run_real(env, NAME, str(tmp_path / "p"))
    assert p.returncode == 0, p.stderr
    profile = next(line for line in (tmp_path / "log").read_text().splitlines() if "--export" in line)
    assert opt(profile.split(), "--metrics") == "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum"
    assert "lts__t_bytes.sum is not available on this GPU; dropped" in p.stderr
    assert "next:" in p.stdout and "ncu_merge.py" in p.stdout


def test_full_run_with_no_kernel_fails_clearly(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("\n".join((FIXTURES / "ncu_raw.csv").read_text().splitlines()[1:3]) + "\n")
    env = fake_tools(tmp_path, empty, query=None)
    p = run_real(env, NAME, str(tmp_path / "p"))
    assert p.returncode == 2
    assert "ncu profiled no kernel" in p.stderr


def test_full_run_without_binary(tmp_path: Path) -> None:
    env = fake_tools(tmp_path, FIXTURES / "ncu_raw.csv", query=None)
    env["ATTNBENCH_BIN"] = str(tmp_path / "missing")
    p = run_real(env, NAME)
    assert p.returncode == 2 and "build first" in p.stderr
