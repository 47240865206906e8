#!/usr/bin/env bash
# cuda_libs.sh absent|present BIN WORK ARGS...: runs BIN ARGS (in WORK, which gets
# q/k/v.npy of shape (1, 2, 64, 32) for `run`) under LD_DEBUG=libs, which logs every
# shared object the process loads, dlopen included, and checks that none of libcuda,
# libcudart, libcublas(Lt) is among them (absent) or that libcudart is (present: the
# negative control, a command that loads the CUDA module). The log must show libc
# being initialised, so an empty log cannot pass.
set -u
mode="$1"; bin="$2"; work="$3"; shift 3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
python3 - "$work" <<'PY'
import struct, sys
def save(path, shape):
    n = 1
    for s in shape: n *= s
    d = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ", ".join(map(str, shape))
    d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + b"\0" * (4 * n))
for name in "qkv":
    save(f"{sys.argv[1]}/{name}.npy", (1, 2, 64, 32))
PY
cd "$work" || fail "cannot enter $work"
LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld" timeout 120 "$bin" "$@" >"$work/out" 2>"$work/err"
rc=$?
[[ $rc -eq 0 ]] || fail "exit $rc: $(cat "$work/err")"
cat "$work"/ld.* >"$work/ld.log" 2>/dev/null
grep -q "calling init: .*libc\.so" "$work/ld.log" || fail "LD_DEBUG=libs logged no library initialisation"
cuda="$(grep -oE "calling init: [^ ]*lib(cuda|cudart|cublas|cublasLt)\.so[^ ]*" "$work/ld.log" | sort -u)"
case "$mode" in
  absent) [[ -z "$cuda" ]] || fail "a CPU-only '$*' loaded: $cuda"
          echo "ok: '$*' loaded no CUDA library ($(grep -c "calling init:" "$work/ld.log") objects initialised)" ;;
  present) grep -q libcudart <<<"$cuda" || fail "'$*' did not load libcudart (the check would not see it)"
           echo "ok: '$*' loaded: $(echo $cuda)" ;;
  *) fail "mode must be absent or present, got '$mode'" ;;
esac
