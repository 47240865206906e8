#!/usr/bin/env bash
# One-shot GPU check (docs/gpu.md): on a machine with an NVIDIA GPU and the CUDA toolkit,
# and no network, turn a short GPU lease into measurements even when some kernel is wrong
# (docs/gpu.md). Steps, each under `timeout` and the overall deadline, each leaving its
# output in OUT_DIR even when cut off:
#   binaries  prebuilt ones (scripts/gpu_prebuild.sh on the build machine, which also ran
#             the static checks: docs/gpu.md step 0) when they run here, else configure + build
#   backend   `attnbench backend --backend cuda`; on failure stop at once with the summary
#   smoke     every CUDA row once on one tiny shape (scripts/gpu_smoke.json) under a 5 s
#             deadline: pass / wrong / crash / hang per row; later steps leave out the rows
#             that crashed or hung (--quarantine-from, and their GPU test suites)
#   ceilings  measured once (ceilings.json), passed to every later sweep (--ceilings-from)
#   gpu_tests the GPU test binary as one process, restarted past a hung or crashed test
#   fp8       flash3_fp8 (e4m3) beside flash3 (bf16) in one sweep (docs/cpu.md, "bf16 and fp8")
#   bwd       bwd and fwd_bwd of flash2, cublas_unfused and the cuDNN rows (docs/backward.md)
#   bwd_profile Nsight Compute's sections on flash2's backward kernel at hd 128, N 8k, both tiles
#   bwd_peers PyTorch's FlashAttention-2, cuDNN and efficient backward on the bwd step's problems
#   crossover causal flash2/flash3/cuDNN against the scans over L = 1k-64k (docs/alternatives.md)
#   sweep     the quick sweep, resumed after a sticky error, hang or crash (resume_sweep.sh)
#   peers     library peers on the sweep's problems (PyTorch), if time is left
# then summary.txt, printed last. Exit 0 only when every step succeeded.
#
#   scripts/gpu_check.sh OUT_DIR
#
# Dependencies come from the system, or from .debs/root or .debs/root.tgz (Debian packages that
# scripts/fetch_debs.sh unpacks on a networked machine; carry .debs/root and .debs/bin;
# .debs/root holds cudnn-frontend's headers too, docs/cudnn.md; cuDNN itself comes from
# python3's nvidia-cudnn wheel). Budget: 8 minutes on one H200 with 16 cores.
# Environment (docs/gpu.md): GPU_CHECK_PREBUILT (tarball or build folder; default
# .prebuilt/attnbench-gpu.tar.gz), GPU_CHECK_BUILD_DIR (default build-gpu), GPU_CHECK_BUDGET_S
# (overall, default 470), GPU_CHECK_BUILD_S (240), GPU_CHECK_SMOKE_S (60), GPU_CHECK_SMOKE_WAIT_S
# (5), GPU_CHECK_CEILINGS_S (45), GPU_CHECK_TESTS_S (120), GPU_CHECK_TEST_WAIT_S (10),
# GPU_CHECK_FP8_S (90), GPU_CHECK_BWD_S (115), GPU_CHECK_BWD_PROFILE_S (45), GPU_CHECK_BWD_PEERS_S (45), GPU_CHECK_BWD_ARGS,
# GPU_CHECK_CROSSOVER_S (60), GPU_CHECK_CROSSOVER_ARGS, GPU_CHECK_PEERS_S (100), GPU_CHECK_STATIC=1 (run the static checks
# here too), GPU_CHECK_SWEEP_ARGS (default "--preset quick --dtype bf16 --reps 5"), GPU_CHECK_FP8_ARGS,
# GPU_CHECK_SMOKE_ARGS (extra smoke arguments), GPU_CHECK_ALLOW_NO_GPU=1 (the dry run: without
# a usable GPU every sweep step runs on the cpu backend, to test this script), GPU_CHECK_BUNDLE
# (a .tar.gz to pack OUT_DIR into at the end, early stops included: the device tool brings back
# at most 8 files from $OUT, and OUT_DIR holds about 25).
set -uo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/gpu_check.sh OUT_DIR" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1" || exit 2
out="$(cd "$1" && pwd)"
build="${GPU_CHECK_BUILD_DIR:-$root/build-gpu}"
t_start=$(date +%s)
deadline=$(( t_start + ${GPU_CHECK_BUDGET_S:-470} ))
status_file="$out/steps.tsv"
: > "$status_file"
rm -f "$out/stopped.txt"

say() { echo "gpu_check [$(( $(date +%s) - t_start ))s] $*" >&2; }
# step NAME LOG TIMEOUT_S CMD...: runs CMD under `timeout` (the smaller of TIMEOUT_S and what
# the overall deadline leaves), its output into LOG as it comes, and records the status.
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
skip_step() {  # skip_step NAME WHY
  printf '%s\t%s\t0s\t%s\n' "$1" "skipped" "$2" >> "$status_file"
  say "$1: skipped ($2)"
}

# peers_step NAME PROBLEMS RESULTS LIMIT MIN [peers.py options...]: scripts/peers.py on the
# problems of PROBLEMS (a results JSON or its log), its JSON (RESULTS with .peers.json) merged into
# RESULTS when that exists; skipped under MIN seconds or without torch. peers.py writes its JSON
# only at the end, so its own budget stops starting problems 15 s before the step's limit.
peers_step() {
  local name="$1" problems="$2" results="$3" limit="$4" min="$5"; shift 5
  local peers_json="${results%.json}.peers.json"
  if [[ ! -f "$problems" ]]; then
    skip_step "$name" "no $(basename "$problems") from an earlier step"
  elif (( limit < min )); then
    skip_step "$name" "${limit}s for it (under ${min}s)"
  elif ! timeout 60 python3 -c "import torch" > "$out/$name.log" 2>&1; then
    skip_step "$name" "python3 cannot import torch; see $name.log"
  elif step "$name" "$out/$name.log" "$limit" python3 "$root/scripts/peers.py" --problems "$problems" \
      --device "$be" --attnbench "$bin" --out "$peers_json" --budget-s $(( limit - 15 )) "$@"; then
    [[ -f "$results" ]] && timeout 60 "$bin" merge "$results" "$peers_json" --out "$results" >> "$out/$name.log" 2>&1
  fi
  return 0
}

# ---- environment ---------------------------------------------------------------------------
[[ -x /usr/local/cuda/bin/nvcc ]] && export PATH="/usr/local/cuda/bin:$PATH"
{
  date -u
  nvidia-smi -L 2>&1 || echo "nvidia-smi -L failed"  # GPU 0: NAME (UUID: ...), the summary's device line
  nvidia-smi 2>&1 || echo "nvidia-smi failed"
  command -v nvcc >/dev/null && nvcc --version || echo "no nvcc on PATH"
  cmake --version 2>/dev/null | head -1; ninja --version 2>/dev/null; python3 --version
} > "$out/env.txt" 2>&1
# shellcheck source=scripts/gpu_env.sh
source "$root/scripts/gpu_env.sh"
gpu_env_setup "$root" "$out"

# ---- summary (also written when the check stops early) -----------------------------------------
write_summary() {
  python3 "$root/scripts/gpu_check_summary.py" "$out" > "$out/summary.txt" 2>&1
  say "done in $(( $(date +%s) - t_start ))s; outputs in $out"
  if [[ -n "${GPU_CHECK_BUNDLE:-}" ]]; then
    tar -czf "$GPU_CHECK_BUNDLE" -C "$(dirname "$out")" "$(basename "$out")" &&
      say "packed $out into $GPU_CHECK_BUNDLE ($(du -h "$GPU_CHECK_BUNDLE" | cut -f1))"
  fi
  echo
  cat "$out/summary.txt"
}
stop_early() {  # stop_early WHY: the summary says why nothing more ran
  echo "$1" > "$out/stopped.txt"
  say "stopping: $1"
  write_summary
  exit 1
}

# ---- binaries: prebuilt when they run here, else build ------------------------------------------
bin="" tests_bin="" bin_source=""
prebuilt="${GPU_CHECK_PREBUILT:-$root/.prebuilt/attnbench-gpu.tar.gz}"
if [[ -f "$prebuilt" || -d "$prebuilt" ]]; then
  pb="$prebuilt"
  if [[ -f "$prebuilt" ]]; then
    pb="$build-prebuilt"
    rm -rf "$pb" && mkdir -p "$pb" && tar -xzf "$prebuilt" -C "$pb" 2>"$out/prebuilt.log"
  fi
  gpu_env_add_toolkit  # built elsewhere: their RUNPATH names the build machine's toolkit
  # A prebuilt attnbench runs here when it starts and loads its CUDA module.
  if timeout 60 "$pb/bin/attnbench" list --backend cuda > "$out/prebuilt.log" 2>&1; then
    bin="$pb/bin/attnbench"; tests_bin="$pb/bin/attnbench_gpu_tests"
    bin_source="prebuilt ($prebuilt$( [[ -f "$pb/commit.txt" ]] && echo ", commit $(head -c 12 "$pb/commit.txt")"))"
    [[ -f "$pb/commit.txt" ]] && export ATTNBENCH_GIT_COMMIT="$(head -1 "$pb/commit.txt")"
    [[ -f "$pb/kernel_resources.json" ]] && cp -f "$pb/kernel_resources.json" "$out/" &&
      export ATTNBENCH_KERNEL_RESOURCES="$out/kernel_resources.json"
    [[ -f "$pb/static.log" ]] && cp -f "$pb/static.log" "$out/static.log"
    printf 'binaries\tok\t0s\tprebuilt.log\n' >> "$status_file"
    say "binaries: $bin_source"
  else
    say "prebuilt binaries do not run here (see prebuilt.log): building"
  fi
fi
# Without binaries that run here, the build needs its dependencies: checked before anything slow.
if [[ -z "$bin" ]]; then
  # The lent GPU machine has none of these and cannot install them: without the prefix from
  # scripts/fetch_debs.sh the configure step would fail minutes in.
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
fi
dry=0
if ! nvidia-smi -L > /dev/null 2>&1; then
  if [[ "${GPU_CHECK_ALLOW_NO_GPU:-0}" != 1 ]]; then
    echo "gpu_check: no NVIDIA GPU visible (nvidia-smi -L failed); see $out/env.txt" >&2
    exit 1
  fi
  dry=1
fi
if [[ -z "$bin" ]]; then
  cmake_args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNBENCH_CUDA=ON)
  if [[ -d "$carried" ]]; then
    cmake_args+=(-DCMAKE_PREFIX_PATH="$carried"
                 -DATTNBENCH_CBLAS_INCLUDE="$carried/include/x86_64-linux-gnu/openblas-pthread")
    say "using carried Debian packages in .debs/root"
  fi
  if ! step configure "$out/configure.log" 90 cmake "${cmake_args[@]}"; then
    tail -20 "$out/configure.log" >&2
    stop_early "configure failed (see configure.log)"
  fi
  grep -E "architectures|CUDA backend" "$out/configure.log" | sed 's/^-- /gpu_check: /' >&2
  # What the steps run, not the emulator's and the CPU tests' ~200 other targets.
  if ! step build "$out/build.log" "${GPU_CHECK_BUILD_S:-240}" cmake --build "$build" -j "$(nproc)" \
      --target attnbench attnbench_cuda attnbench_gpu_tests kernel_resources; then
    tail -30 "$out/build.log" >&2
    stop_early "build failed or ran out of time (see build.log)"
  fi
  bin="$build/bin/attnbench"; tests_bin="$build/bin/attnbench_gpu_tests"; bin_source="built here ($build)"
  cp -f "$build/kernel_resources.json" "$out/" 2>/dev/null
  if [[ "${GPU_CHECK_STATIC:-0}" == 1 ]]; then
    step static "$out/static.log" 60 ctest --test-dir "$build" -L static --output-on-failure
  fi
fi
echo "binaries: $bin_source" > "$out/binaries.txt"

# ---- backend: stop here when the GPU is not usable (the dry run goes on on the cpu) -------------
be=cuda
if ! step backend "$out/backend.txt" 30 "$bin" backend --backend cuda; then
  if (( dry )); then
    be=cpu
    say "dry run (GPU_CHECK_ALLOW_NO_GPU=1, no usable GPU): the sweep steps run on the cpu backend"
  else
    stop_early "the cuda backend is not usable: $(tail -1 "$out/backend.txt")"
  fi
fi
# cudnn_sdpa: whether the build has the row, and (in the smoke step) whether cuDNN loads.
if timeout 60 "$bin" list --backend cuda 2>/dev/null | grep -q "^cudnn_sdpa "; then
  echo "cudnn_sdpa: built (libattnbench_cudnn.so; loaded on first use, its own failure disables only this row)" > "$out/cudnn_row.txt"
else
  echo "cudnn_sdpa: NOT built: $(grep -o 'cudnn_sdpa row OFF.*' "$out/configure.log" 2>/dev/null || echo 'no cuDNN at build time')" > "$out/cudnn_row.txt"
fi
export ATTNBENCH_BIN="$bin"
dry_args=()
(( dry )) && dry_args=(--dtype fp32)  # the CPU rows compute in fp32
sweep_default="--preset quick --dtype bf16 --reps 5"
(( dry )) && sweep_default="--preset quick --dtype fp32 --reps 1"
sweep_args=(${GPU_CHECK_SWEEP_ARGS:-$sweep_default})

# ---- smoke: every row once, tiny, short deadline -------------------------------------------------
step smoke "$out/smoke.log" "${GPU_CHECK_SMOKE_S:-60}" "$root/scripts/resume_sweep.sh" --backend "$be" \
  --sweep-file "$root/scripts/gpu_smoke.json" --wait-timeout "${GPU_CHECK_SMOKE_WAIT_S:-5}" --reps 1 \
  --rep-time 0.001 --no-ceilings --out "$out/smoke.json" "${dry_args[@]}" ${GPU_CHECK_SMOKE_ARGS:-}
quarantine=()
[[ -s "$out/smoke.json.log.jsonl" ]] && quarantine=(--quarantine-from "$out/smoke.json.log.jsonl")
bad_rows="$(python3 - "$out/smoke.json.log.jsonl" <<'PY' 2>/dev/null
import json, sys
rows = set()
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if isinstance(e, dict) and e.get("status") == "failed" and e.get("row_fault"):
        rows.add(e.get("variant", ""))
print(",".join(sorted(r for r in rows if r)))
PY
)"
[[ -n "$bad_rows" ]] && say "smoke: rows that crashed or hung, left out from here on: $bad_rows"

# ---- ceilings once, passed on -----------------------------------------------------------------
ceilings=()
if step ceilings "$out/ceilings.log" "${GPU_CHECK_CEILINGS_S:-45}" sh -c \
    "\"\$0\" ceilings --backend $be > \"\$1\"" "$bin" "$out/ceilings.json" &&
   python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["ceilings"]["measured"]' "$out/ceilings.json" \
     2>/dev/null; then
  ceilings=(--ceilings-from "$out/ceilings.json")
  # The exp roof: the measured ex2 rate beside the copy bandwidth and GEMM peaks.
  say "ceilings: $(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["ceilings"]; m, t = c.get("measured", {}), c.get("theoretical", {})
r = lambda v: ("%.3g T exp/s" % (v / 1e12) if v >= 1e12 else "%.3g G exp/s" % (v / 1e9)) if isinstance(v, (int, float)) else "none"
print("copy %.0f GB/s; TFLOP/s %s; exp rate %s measured, %s theoretical%s" % (m.get("bandwidth_gbps", 0),
      " ".join("%s %.1f" % kv for kv in m.get("tflops", {}).items()), r(m.get("exps_per_s")),
      r(t.get("exps_per_s")), (" (" + m["exp_method"]["error"] + ")") if "error" in m.get("exp_method", {}) else ""))' \
      "$out/ceilings.json" 2>&1)"
fi

# ---- GPU tests: one process under the watchdog ----------------------------------------------------
if [[ -x "$tests_bin" ]]; then
  ATTNBENCH_WAIT_TIMEOUT_S="${GPU_CHECK_TEST_WAIT_S:-10}" step gpu_tests "$out/gpu_tests.out" \
    "${GPU_CHECK_TESTS_S:-120}" "$root/scripts/gpu_tests.sh" "$tests_bin" "$out" "$bad_rows"
else
  skip_step gpu_tests "no test binary $tests_bin"
fi

# ---- fp8 beside bf16, quick sweep -----------------------------------------------------------------
fp8_default="--variant flash3,flash3_fp8 --dtype bf16,e4m3 --head-dim 128 --batch 4 --heads 16 --seq 4096,8192,16384 --mask none,causal --reps 5"
(( dry )) && fp8_default="--variant flash2 --dtype bf16,e4m3 --head-dim 64 --heads 2 --seq 256 --mask none,causal --reps 1"
fp8_args=(${GPU_CHECK_FP8_ARGS:-$fp8_default})
# 90 s: on the H200 (5759d44) 21 of 24 entries took 48 s; each N 16k problem waits ~14 s (none)
# or ~7 s (causal) for its on-device fp32 reference (1.3e13 FLOPs), once per dtype.
step fp8 "$out/fp8.log" "${GPU_CHECK_FP8_S:-90}" "$root/scripts/resume_sweep.sh" --backend "$be" \
  "${fp8_args[@]}" "${ceilings[@]}" "${quarantine[@]}" --out "$out/fp8.json"
# ---- backward: bwd and fwd_bwd of the rows that claim them -------------------------
# Groups of one sweep file: the flash2 backward at its 8-warp tile (64 x 128, the issue's hd 128
# target) and the deterministic row at both tiles; flash2 at 64 x 64 beside the libraries (bwd
# and fwd_bwd); causal GQA at Hkv 2 (the head splits); a sliding window on flash2 (covering walk)
# and sparse (the transposed lists); causal at Nq = Nkv (cuDNN's band top-left aligned) beside
# Nq = Nkv - 64 (bottom-right: at 20cfac8 cuDNN's causal backward skipped no tile with it); the
# sparse row on local:8191,0 (causal's pairs and tiles, through its lists) runs the general
# d 128 64 x 64 kernel (queries in halves, sparse code, the next visit's rows prefetched, whole
# visits unmasked) beside flash2 causal's dense one (all 64 queries at once, neither).
# The cuDNN rows only where the build has them (an unknown variant name is an error).
lib_rows='"flash2", "cublas_unfused"'
gqa_rows='"flash2"'
grep -q "^cudnn_sdpa: built" "$out/cudnn_row.txt" && lib_rows+=', "cudnn_sdpa", "cudnn_sdpa_deterministic"' &&
  gqa_rows+=', "cudnn_sdpa"'
shape='"dtype": "bf16", "head-dim": [128, 64], "batch": 1, "heads": 16, "seq": [8192, 16384], "mask": "none"'
cat >"$out/bwd_sweep.json" <<JSON
{"name": "gpu_check_bwd",
 "groups": [
   {"name": "bwd_tiles", "variant": ["flash2", "flash2_bwd_deterministic"], "pass": "bwd", "block": "64x128", $shape},
   {"name": "bwd_deterministic", "variant": "flash2_bwd_deterministic", "pass": "bwd", "block": "64x64", $shape},
   {"name": "bwd", "variant": [$lib_rows], "pass": ["bwd", "fwd_bwd"], "block": "64x64", $shape},
   {"name": "bwd_gqa", "variant": [$gqa_rows], "pass": "bwd", "block": "64x64", "dtype": "bf16", "head-dim": 128,
    "batch": 1, "heads": 16, "kv-heads": 2, "seq": 8192, "mask": "causal"},
   {"name": "bwd_window", "variant": ["flash2", "sparse"], "pass": "bwd", "block": "64x64", "dtype": "bf16",
    "head-dim": 128, "batch": 1, "heads": 16, "seq": 16384, "mask": "local:1024,0"},
   {"name": "bwd_alignment", "variant": [$gqa_rows], "pass": "bwd", "block": "64x64", "dtype": "bf16",
    "head-dim": 128, "batch": 1, "heads": 16, "nq": [8192, 8128], "nkv": 8192, "mask": "causal"},
   {"name": "bwd_instances", "variant": "sparse", "pass": "bwd", "block": "64x64", "dtype": "bf16",
    "head-dim": 128, "batch": 1, "heads": 16, "seq": 8192, "mask": "local:8191,0"}
 ]}
JSON
bwd_default=(--sweep-file "$out/bwd_sweep.json" --reps 5)
(( dry )) && bwd_default=(--variant flash2,naive --pass bwd,fwd_bwd --dtype fp32 --head-dim 64 --heads 2 --seq 256 --mask none,causal --reps 1)
if [[ -n "${GPU_CHECK_BWD_ARGS:-}" ]]; then bwd_args=(${GPU_CHECK_BWD_ARGS}); else bwd_args=("${bwd_default[@]}"); fi
step bwd "$out/bwd.log" "${GPU_CHECK_BWD_S:-115}" "$root/scripts/resume_sweep.sh" --backend "$be" \
  "${bwd_args[@]}" "${ceilings[@]}" "${quarantine[@]}" --out "$out/bwd.json"
# ---- the backward's profile: Nsight Compute on flash2's main backward kernel at the hd 128 target --
# (docs/backward.md "Profile"): bf16, B 1, H 16, N 8k, d 128, no mask, at 64 x 64 and 64 x 128,
# one launch each, with the sections that say what bounds it (tensor and shared-memory pipes, L2
# atomics, occupancy, warp stalls): bwd_profile.ncu-rep, .csv (raw) and .details.csv, a few lines
# in the summary. ncu reads the counters on the Firecracker runtime, not on gVisor
# (shared/TOOLCHAIN.md): there the step fails in seconds. The dry run checks the command lines.
prof_filter='flash2/cuda/bf16/B:1/H:16/Hkv:16/Nq:8192/Nkv:8192/d:128/mask:none/Br:64/Bc:(64|128)/pass:bwd'
prof_args=(--backend cuda --variant flash2 --pass bwd --dtype bf16 --head-dim 128 --batch 1 --heads 16
  --seq 8192 --mask none --block 64x64,64x128 "${quarantine[@]}")
prof_opts=(--sections SpeedOfLight,ComputeWorkloadAnalysis,MemoryWorkloadAnalysis,WarpStateStats,Occupancy
  --kernel-regex flash2_bwd_kernel)
ncu_bin="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null ||
  ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)"  # the newest /opt copy
if (( dry )); then
  step bwd_profile "$out/bwd_profile.log" 30 "$root/scripts/profile_ncu.sh" --dry-run "${prof_opts[@]}" \
    "$prof_filter" "$out/bwd_profile" -- "${prof_args[@]}"
elif [[ -z "$ncu_bin" ]]; then
  skip_step bwd_profile "no ncu (Nsight Compute) on PATH, in /usr/local/cuda/bin or /opt/nvidia/nsight-compute"
else
  step bwd_profile "$out/bwd_profile.log" "${GPU_CHECK_BWD_PROFILE_S:-45}" env NCU="$ncu_bin" ATTNBENCH_BIN="$bin" \
    "$root/scripts/profile_ncu.sh" "${prof_opts[@]}" "$prof_filter" "$out/bwd_profile" -- "${prof_args[@]}"
fi
# ---- the backward's library peers: PyTorch's FlashAttention-2 backward (torch_sdpa_flash) --------
# beside its cuDNN and memory-efficient ones, on bwd.json's problems in its order (the hd 128
# target first), folded into bwd.json for the summary's backward table; the fp64 gradient
# reference on the GPU. Problems left when its budget is spent are skipped saying so.
bwd_peers_left=$(( deadline - $(date +%s) - 5 ))
bwd_peers_limit=$(( bwd_peers_left < ${GPU_CHECK_BWD_PEERS_S:-45} ? bwd_peers_left : ${GPU_CHECK_BWD_PEERS_S:-45} ))
peers_step bwd_peers "$out/bwd.json" "$out/bwd.json" "$bwd_peers_limit" 20 \
  --variants torch_sdpa_flash,torch_sdpa_cudnn,torch_sdpa_efficient
# ---- the crossover: causal attention against the scans at one model width over L -----------------
# (docs/alternatives.md): the alternatives group at GPU lengths; 1k-64k fits the step's minute
# (causal flash2 at 64k, H 16, d 64: 1.1e13 FLOP, ~40 ms at 300 TFLOP/s), the full preset goes on.
cross_rows="cuda:flash2,cuda:flash3,tag:scan"
grep -q "^cudnn_sdpa: built" "$out/cudnn_row.txt" && cross_rows+=",cuda:cudnn_sdpa"
cross_default="--variant $cross_rows --mask causal --dtype bf16 --head-dim 64 --batch 1 --heads 16 --seq 1024,4096,16384,65536 --state 16 --groups 1 --reps 3"
(( dry )) && cross_default="--variant cpu:flash2,tag:scan --mask causal --dtype fp32 --head-dim 32 --heads 2 --seq 64,512 --state 16 --groups 1 --reps 1"
cross_args=(${GPU_CHECK_CROSSOVER_ARGS:-$cross_default})
# 60 s: on the H200 (5759d44) 26 of 28 entries took 43 s, 22 s of them the first at 64k (its
# on-device fp32 reference, now kept past the scans for cudnn_sdpa: harness/cuda/device_check.cpp).
step crossover "$out/crossover.log" "${GPU_CHECK_CROSSOVER_S:-60}" "$root/scripts/resume_sweep.sh" --backend "$be" \
  "${cross_args[@]}" "${ceilings[@]}" "${quarantine[@]}" --out "$out/crossover.json"
peers_reserve=$(( ${GPU_CHECK_PEERS_S:-100} < 60 ? ${GPU_CHECK_PEERS_S:-100} : 60 ))
sweep_limit=$(( deadline - $(date +%s) - peers_reserve ))
(( sweep_limit < 30 )) && sweep_limit=30
step sweep "$out/sweep.log" "$sweep_limit" "$root/scripts/resume_sweep.sh" \
  --backend "$be" --out "$out/quick.json" "${sweep_args[@]}" "${ceilings[@]}" "${quarantine[@]}"

# ---- library peers: PyTorch SDPA / FlexAttention / flash-attn on the sweep's problems -------------
# peers.py stops starting problems 15 s before its step's limit (the rest become skipped
# entries saying so), writes quick.peers.json, and merge folds it into quick.json. A sweep cut
# short leaves its results log, which peers.py reads as well.
peers_left=$(( deadline - $(date +%s) - 5 ))
peers_limit=$(( peers_left < ${GPU_CHECK_PEERS_S:-100} ? peers_left : ${GPU_CHECK_PEERS_S:-100} ))
problems="$out/quick.json"
[[ -f "$problems" ]] || problems="$out/quick.json.log.jsonl"
peers_step peers "$problems" "$out/quick.json" "$peers_limit" 30 --flex-budget-s $(( peers_limit / 3 ))

write_summary
if grep -qvE $'\t(ok|skipped)\t' "$status_file"; then exit 1; fi
exit 0
