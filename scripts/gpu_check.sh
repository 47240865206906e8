#!/usr/bin/env bash
# One-shot GPU check (docs/gpu.md): on a machine with an NVIDIA GPU and the
# CUDA toolkit, and no network, configure for the local GPU, build with every
# core, run the static kernel checks and the `gpu` tests, measure the
# ceilings, run flash3_fp8 beside flash3 (fp8.json), the quick sweep on the cuda backend, and write logs, JSON and
# a summary table into OUT_DIR, printing the summary last.
#
#   scripts/gpu_check.sh OUT_DIR
#
# Dependencies come from the system, or from .debs/root (Debian packages that
# scripts/fetch_debs.sh unpacks on a networked machine; carry .debs/root and
# .debs/bin to the GPU machine; .debs/root holds cudnn-frontend's headers too, docs/cudnn.md;
# cuDNN itself comes from python3's nvidia-cudnn wheel). Budget: 8 minutes on one H200 with 16 cores.
# Environment: GPU_CHECK_SWEEP_ARGS (extra sweep arguments, default
# "--dtype bf16 --reps 5"), GPU_CHECK_BUILD_DIR (default build-gpu),
# GPU_CHECK_TEST_TIMEOUT (seconds per test, default 120), GPU_CHECK_BUILD_S
# (build time limit, default 240), GPU_CHECK_BUDGET_S (overall, default 470).
set -uo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/gpu_check.sh OUT_DIR" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1" || exit 2
out="$(cd "$1" && pwd)"
build="${GPU_CHECK_BUILD_DIR:-$root/build-gpu}"
sweep_args=(${GPU_CHECK_SWEEP_ARGS:---dtype bf16 --reps 5})
test_timeout="${GPU_CHECK_TEST_TIMEOUT:-120}"
t_start=$(date +%s)
status_file="$out/steps.tsv"
: > "$status_file"

say() { echo "gpu_check [$(( $(date +%s) - t_start ))s] $*" >&2; }
# step NAME LOG TIMEOUT_S CMD...: runs CMD with a time limit, logs, records status.
# Every step also stops at the overall deadline (GPU_CHECK_BUDGET_S, default 470 s).
deadline=$(( t_start + ${GPU_CHECK_BUDGET_S:-470} ))
step() {
  local name="$1" log="$2" limit="$3"; shift 3
  local t0=$(date +%s)
  local left=$(( deadline - t0 ))
  (( left < limit )) && limit=$left
  (( limit < 5 )) && limit=5
  say "$name ..."
  timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  local dt=$(( $(date +%s) - t0 ))
  local st=ok
  [[ $rc -ne 0 ]] && st="failed(rc=$rc)"
  [[ $rc -eq 124 || $rc -eq 137 ]] && st="timeout(${limit}s)"
  printf '%s\t%s\t%ss\t%s\n' "$name" "$st" "$dt" "${log#$out/}" >> "$status_file"
  say "$name: $st in ${dt}s (log ${log#$out/})"
  return $rc
}

# ---- dependencies: carried prefix or the system's, checked before anything slow ----
# The lent GPU machine has none of these and cannot install them: without the
# prefix from scripts/fetch_debs.sh the configure step would fail minutes in.
sys_prefix="${GPU_CHECK_SYSTEM_PREFIX:-/usr}"
if [[ ! -d "$root/.debs/root/usr" ]]; then
  missing=()
  for h in fmt/format.h benchmark/benchmark.h gtest/gtest.h nlohmann/json.hpp re2/re2.h; do
    [[ -e "$sys_prefix/include/$h" ]] || missing+=("$h")
  done
  compgen -G "$sys_prefix/include/*/openblas*/cblas.h" >/dev/null ||
    [[ -e "$sys_prefix/include/cblas.h" ]] || missing+=("cblas.h (OpenBLAS)")
  if ((${#missing[@]})); then
    echo "gpu_check: error: no .debs/root and $sys_prefix lacks ${missing[*]}: run 'bash scripts/fetch_debs.sh' on a networked machine and carry .debs/root here (device tool: carry [\".debs/root\"]); see docs/gpu.md" >&2
    exit 2
  fi
fi

# ---- environment -----------------------------------------------------------------
[[ -x /usr/local/cuda/bin/nvcc ]] && export PATH="/usr/local/cuda/bin:$PATH"
{
  date -u
  nvidia-smi 2>&1 || echo "nvidia-smi failed"
  command -v nvcc >/dev/null && nvcc --version || echo "no nvcc on PATH"
  cmake --version | head -1; ninja --version; python3 --version
} > "$out/env.txt" 2>&1
# GPU_CHECK_ALLOW_NO_GPU=1 runs every step anyway (to test this script on a
# machine without a GPU: the gpu tests then skip and the cuda steps fail).
if ! nvidia-smi -L > /dev/null 2>&1 && [[ "${GPU_CHECK_ALLOW_NO_GPU:-0}" != 1 ]]; then
  echo "gpu_check: no NVIDIA GPU visible (nvidia-smi -L failed); see $out/env.txt" >&2
  exit 1
fi

cmake_args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNBENCH_CUDA=ON)
carried="$root/.debs/root/usr"
if [[ -d "$carried" ]]; then
  arch_lib="$carried/lib/x86_64-linux-gnu"
  cmake_args+=(-DCMAKE_PREFIX_PATH="$carried"
               -DATTNBENCH_CBLAS_INCLUDE="$carried/include/x86_64-linux-gnu/openblas-pthread")
  export LD_LIBRARY_PATH="$arch_lib:$arch_lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  say "using carried Debian packages in .debs/root"
else
  say "no .debs/root: using system packages (scripts/fetch_debs.sh prepares it elsewhere)"
fi
[[ -x "$root/.debs/bin/cuobjdump" ]] && export CUOBJDUMP="$root/.debs/bin/cuobjdump"
[[ -x "$root/.debs/bin/nvdisasm" ]] && export NVDISASM="$root/.debs/bin/nvdisasm"

# ---- configure + build -----------------------------------------------------------------
if ! step configure "$out/configure.log" 90 cmake "${cmake_args[@]}"; then
  echo "gpu_check: configure failed (tail of $out/configure.log):" >&2
  tail -20 "$out/configure.log" >&2
  exit 1
fi
grep -E "architectures|CUDA backend" "$out/configure.log" | sed 's/^-- /gpu_check: /' >&2
if ! step build "$out/build.log" "${GPU_CHECK_BUILD_S:-240}" cmake --build "$build" -j "$(nproc)"; then
  echo "gpu_check: build failed (tail of $out/build.log):" >&2
  tail -30 "$out/build.log" >&2
  exit 1
fi
bin="$build/bin/attnbench"
if ! "$bin" backend --backend cuda > "$out/backend.txt" 2>&1; then
  echo "gpu_check: the built binary cannot use the GPU:" >&2
  cat "$out/backend.txt" >&2
fi
# cudnn_sdpa exists only where configure found cuDNN and cudnn-frontend's headers (docs/cudnn.md:
# carried in .debs/root/cudnn_frontend); its gpu tests and sweep entries come with it: say which.
if "$bin" list --backend cuda 2>/dev/null | grep -q "^cudnn_sdpa "; then
  echo "cudnn_sdpa: built ($(grep -o 'cuDNN [0-9.]* at [^,]*' "$out/configure.log"))" > "$out/cudnn_row.txt"
else
  echo "cudnn_sdpa: NOT built: $(grep -o 'cudnn_sdpa row OFF.*' "$out/configure.log")" > "$out/cudnn_row.txt"
fi
say "$(cat "$out/cudnn_row.txt")"

# ---- static checks, GPU tests ------------------------------------------------------------
step static "$out/static.log" 60 ctest --test-dir "$build" -L static --output-on-failure
cp -f "$build/kernel_resources.json" "$out/" 2>/dev/null
step gpu_tests "$out/gpu_tests.log" 150 ctest --test-dir "$build" -L gpu --output-on-failure \
  --timeout "$test_timeout" -j 1 --output-junit "$out/gpu_tests.xml"

# ---- ceilings, fp8 beside bf16 (issue 16), quick sweep ----------------------------------------
step ceilings "$out/ceilings.txt" 60 "$bin" ceilings --backend cuda
# flash3_fp8 (e4m3) and flash3 (bf16) on the issue's shapes in one run, so their ratio is
# measured, not assembled (each row skips the other's dtype, recorded as skipped).
step fp8 "$out/fp8.log" "${GPU_CHECK_FP8_S:-90}" "$bin" sweep --backend cuda --variant flash3,flash3_fp8 \
  --dtype bf16,e4m3 --head-dim 128 --batch 4 --heads 16 --seq 4096,8192,16384 --mask none,causal \
  --reps 5 --out "$out/fp8.json"
export ATTNBENCH_BIN="$bin"
step sweep "$out/sweep.log" 300 "$root/scripts/resume_sweep.sh" \
  --preset quick --backend cuda --out "$out/quick.json" "${sweep_args[@]}"

# ---- library peers: PyTorch SDPA / FlexAttention / flash-attn on the sweep's problems ----------
# Up to GPU_CHECK_PEERS_S (default 100) of what the budget leaves; peers.py stops starting
# problems 15 s before its step's limit (the rest become skipped entries saying so), writes
# quick.peers.json, and merge folds it into quick.json for the summary and the report.
peers_left=$(( deadline - $(date +%s) - 5 ))
peers_limit=$(( peers_left < ${GPU_CHECK_PEERS_S:-100} ? peers_left : ${GPU_CHECK_PEERS_S:-100} ))
if [[ ! -f "$out/quick.json" ]]; then
  say "peers: skipped (no quick.json from the sweep)"
elif ! python3 -c "import torch" > "$out/peers.log" 2>&1; then
  say "peers: skipped (python3 cannot import torch; see peers.log)"
elif (( peers_limit < 30 )); then
  say "peers: skipped (${peers_left}s of the budget left)"
elif step peers "$out/peers.log" "$peers_limit" python3 "$root/scripts/peers.py" --problems "$out/quick.json" \
    --device cuda --out "$out/quick.peers.json" --budget-s $(( peers_limit - 15 )) \
    --flex-budget-s $(( peers_limit / 3 )); then
  "$bin" merge "$out/quick.json" "$out/quick.peers.json" --out "$out/quick.json" >> "$out/peers.log" 2>&1
fi

# ---- summary ------------------------------------------------------------------------------
python3 - "$out" > "$out/summary.txt" 2>&1 <<'PY'
import json, os, re, sys
from collections import defaultdict
out = sys.argv[1]
lines = []
env = open(os.path.join(out, "env.txt"), errors="replace").read()
gpu = re.search(r"GPU 0: ([^(\n]+)", env)
lines.append(f"device: {gpu.group(1).strip() if gpu else 'unknown'}")
if os.path.exists(os.path.join(out, "cudnn_row.txt")):
    lines.append(open(os.path.join(out, "cudnn_row.txt")).read().strip())
for row in open(os.path.join(out, "steps.tsv")):
    name, st, dt, log = row.rstrip("\n").split("\t")
    lines.append(f"step {name:10s} {st:18s} {dt:>5s}  {log}")
tests = os.path.join(out, "gpu_tests.log")
if os.path.exists(tests):
    m = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", open(tests, errors="replace").read())
    skipped = open(tests, errors="replace").read().count("***Skipped")
    if m:
        lines.append(f"gpu tests: {int(m.group(3)) - int(m.group(2)) - skipped} passed, "
                     f"{m.group(2)} failed, {skipped} skipped of {m.group(3)}")
kr = os.path.join(out, "kernel_resources.json")
if os.path.exists(kr):
    ks = json.load(open(kr)).get("kernels", [])
    spills = sum(1 for k in ks if k["spill_store_bytes"] or k["spill_load_bytes"])
    lines.append(f"kernels: {len(ks)} kernel/arch entries, {spills} with spills, "
                 f"max registers {max((k['registers'] for k in ks), default=0)}")
ceil = os.path.join(out, "quick.json")
doc = None
if os.path.exists(ceil):
    doc = json.load(open(ceil))
elif os.path.exists(ceil + ".log.jsonl"):  # sweep cut short: its results log
    lines.append("sweep incomplete: summary from quick.json.log.jsonl")
    doc = {"benchmarks": [json.loads(l) for l in open(ceil + ".log.jsonl") if l.strip().startswith("{")]}
if doc is not None:
    c = doc.get("context", {}).get("ceilings", {})
    meas, theo = c.get("measured", {}), c.get("theoretical", {})
    if meas:
        tf = meas.get("tflops", {})
        lines.append("ceilings measured: {:.0f} GB/s; TFLOP/s ".format(meas.get("bandwidth_gbps", 0)) +
                     " ".join(f"{k} {v:.1f}" for k, v in tf.items()))
    if theo:
        tf = theo.get("tflops", {})
        lines.append("ceilings theoretical: {:.0f} GB/s; TFLOP/s ".format(theo.get("bandwidth_gbps", 0)) +
                     " ".join(f"{k} {v:.1f}" for k, v in tf.items()))
    per = defaultdict(lambda: {"tf": 0.0, "gb": 0.0, "err": 0.0, "ok": 0, "skip": 0, "fail": 0, "bad": 0})
    for b in doc.get("benchmarks", []):
        v = per[b.get("variant", "?")]
        st = b.get("status", "failed" if b.get("error_occurred") else "ok")
        if st == "skipped":
            v["skip"] += 1
            continue
        if st != "ok":
            v["fail"] += 1
            continue
        v["ok"] += 1
        v["tf"] = max(v["tf"], b.get("tflops") or 0.0)
        v["gb"] = max(v["gb"], b.get("gbps") or 0.0)
        err = b.get("rel_err")
        if err is None:
            v["bad"] += 1
        else:
            v["err"] = max(v["err"], err)
        if b.get("err_ok") is False:
            v["bad"] += 1
    lines.append("")
    lines.append(f"{'variant':20s} {'best TFLOP/s':>12s} {'best GB/s':>10s} {'max rel err':>11s} "
                 f"{'ok/skip/fail':>13s}  result")
    for name in sorted(per):
        v = per[name]
        res = "PASS" if v["fail"] == 0 and v["bad"] == 0 and v["ok"] > 0 else (
            "none run" if v["ok"] == 0 and v["fail"] == 0 else "FAIL")
        lines.append(f"{name:20s} {v['tf']:12.2f} {v['gb']:10.1f} {v['err']:11.2e} "
                     f"{v['ok']:>5d}/{v['skip']}/{v['fail']:<4d}  {res}")
else:
    lines.append("no sweep result (quick.json): see sweep.log")
fp8 = os.path.join(out, "fp8.json")
if os.path.exists(fp8):  # flash3_fp8 beside flash3 bf16, one run
    rows = [b for b in json.load(open(fp8)).get("benchmarks", []) if b.get("status") == "ok"]
    lines.append("")
    lines.append(f"{'fp8 vs bf16':24s} {'Nq':>6s} {'mask':>7s} {'TFLOP/s':>8s} {'rel err':>9s} {'e2e err':>9s}")
    for b in sorted(rows, key=lambda b: (b.get("mask", ""), b.get("Nq", 0), b.get("variant", ""))):
        e2e = b.get("e2e_rel_err")
        lines.append(f"{b.get('variant', '?') + ' ' + b.get('dtype', '?'):24s} {b.get('Nq', 0):6d} "
                     f"{b.get('mask', '?'):>7s} {b.get('tflops') or 0:8.1f} {b.get('rel_err') or 0:9.2e} "
                     f"{e2e if e2e is not None else float('nan'):9.2e}")
print("\n".join(lines))
PY
say "done in $(( $(date +%s) - t_start ))s; outputs in $out"
echo
cat "$out/summary.txt"
if grep -qv $'\tok\t' "$status_file"; then exit 1; fi
exit 0
