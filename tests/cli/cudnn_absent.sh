#!/usr/bin/env bash
# cudnn_absent.sh BIN WORK: cuDNN is loaded on its own.
#  1. libattnbench_cuda.so needs no libcudnn / libnvrtc (readelf); control: the cuDNN module
#     libattnbench_cudnn.so beside it does (so the check sees NEEDED entries at all).
#  2. With a broken libcudnn.so.9 first on LD_LIBRARY_PATH (searched before the modules'
#     RUNPATH), and with the cuDNN module missing ($ATTNBENCH_CUDNN_MODULE):
#     `attnbench list --backend cuda` works and loads no libcudnn (LD_DEBUG), and a dry run
#     plans every other CUDA row exactly as with cuDNN present while cudnn_sdpa is skipped
#     with the loader's reason. Control: with cuDNN present the same dry run plans
#     cudnn_sdpa (no device here: its static rules only).
set -u
bin="$1"; work="$2"
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work/broken" || fail "cannot make $work"
dir="$(dirname "$bin")"
cuda_mod="$dir/libattnbench_cuda.so"; cudnn_mod="$dir/libattnbench_cudnn.so"
[[ -f "$cudnn_mod" ]] || { echo "skipped: no $cudnn_mod (this build has no cudnn_sdpa row)"; exit 77; }
needed() { readelf -d "$1" | grep -oE 'Shared library: \[[^]]*\]' | tr -d '[]' | awk '{print $3}'; }
needed "$cuda_mod" | grep -qE '^libcudart' || fail "readelf lists no NEEDED libcudart in $cuda_mod"
if needed "$cuda_mod" | grep -E '^lib(cudnn|nvrtc)'; then fail "$cuda_mod needs cuDNN or NVRTC"; fi
needed "$cudnn_mod" | grep -q '^libcudnn\.so' || fail "control: $cudnn_mod does not need libcudnn"

printf 'not a shared object\n' >"$work/broken/libcudnn.so.9"
sweep=(sweep --backend cuda --preset quick --dry-run)
"$bin" "${sweep[@]}" >"$work/present.txt" 2>"$work/present.err" || fail "dry run with cuDNN: $(cat "$work/present.err")"
grep -qE '^cudnn_sdpa/.* run$' "$work/present.txt" || fail "control: with cuDNN present no cudnn_sdpa configuration is planned"
for mode in broken missing; do
  if [[ $mode == broken ]]; then env=(LD_LIBRARY_PATH="$work/broken${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"); why='libcudnn.so.9'
  else env=(ATTNBENCH_CUDNN_MODULE="$work/nonexistent/libattnbench_cudnn.so"); why='cannot open shared object file'; fi
  env "${env[@]}" LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld_$mode" "$bin" list --backend cuda >"$work/list_$mode.txt" 2>&1 ||
    fail "$mode: attnbench list --backend cuda failed: $(cat "$work/list_$mode.txt")"
  grep -q '^cudnn_sdpa ' "$work/list_$mode.txt" || fail "$mode: list lost the cudnn_sdpa row"
  cat "$work"/ld_"$mode".* >"$work/ld_$mode.log" 2>/dev/null
  grep -q "calling init: .*libattnbench_cuda\.so" "$work/ld_$mode.log" || fail "$mode: list did not load the CUDA module"
  if grep -q "calling init: .*libcudnn" "$work/ld_$mode.log"; then fail "$mode: list loaded cuDNN"; fi
  env "${env[@]}" "$bin" "${sweep[@]}" >"$work/$mode.txt" 2>"$work/$mode.err" || fail "$mode: dry run failed: $(cat "$work/$mode.err")"
  python3 - "$work/present.txt" "$work/$mode.txt" "$why" <<'PY' || fail "$mode: see above"
import sys
present, absent, why = sys.argv[1:]
def rows(p):
    out = {}
    for line in open(p):
        name, group, verdict = line.rstrip("\n").split(" ", 2)
        out[name] = verdict
    return out
a, b = rows(present), rows(absent)
assert a.keys() == b.keys(), "the configurations differ"
def is_cudnn(n):  # both rows of the cuDNN module (cudnn_sdpa_deterministic: the backward)
    return n.split("/")[0] in ("cudnn_sdpa", "cudnn_sdpa_deterministic")
cudnn = [n for n in a if is_cudnn(n) and a[n] == "run"]
assert cudnn, "no cudnn_sdpa configuration planned with cuDNN present"
for n in a:
    if is_cudnn(n):  # what cuDNN would run is refused with the loader's reason
        disabled = b[n].startswith("skip: cuDNN did not load") and why in b[n]
        assert disabled if a[n] == "run" else (disabled or b[n] == a[n]), (n, a[n], b[n])
    else:
        assert a[n] == b[n], (n, a[n], b[n])
print(f"ok: {len(a) - len(cudnn)} other configurations as with cuDNN; the {len(cudnn)} cuDNN ones skipped: "
      + b[cudnn[0]][:160])
PY
done
