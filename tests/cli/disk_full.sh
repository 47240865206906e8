#!/usr/bin/env bash
# disk_full.sh BIN WORKDIR: a full disk loses nothing already finished.
# Needs root for a 64 KiB tmpfs; exits 77 (skipped) with the reason otherwise.
# 1. --resume must rewrite a log with a torn line on a full disk: exit 1, one line
#    naming the log and the OS error; the old log is kept byte for byte, no temp file.
# 2. The final JSON on a full disk: exit 1 naming the file; the old JSON kept, no temp.
# (Progress lines may precede the error; exactly one line is an error, the last.)
# 3. run --out on a full disk: exit 1 naming o.npy; the old o.npy kept.
set -uo pipefail
bin="$1"; work="$2"
[[ $(id -u) -eq 0 ]] || { echo "skipped: needs root to mount a tmpfs"; exit 77; }
rm -rf "$work"; mkdir -p "$work/mnt"
mount -t tmpfs -o size=64k tmpfs "$work/mnt" 2>"$work/mount.err" ||
  { echo "skipped: mount -t tmpfs failed: $(cat "$work/mount.err")"; exit 77; }
trap 'umount "$work/mnt" 2>/dev/null' EXIT
fail() { echo "FAIL: $*"; exit 1; }
m="$work/mnt"
sweep=(--backend cpu --variant naive --seq 64,96 --heads 2 --head-dim 32 --reps 1 --rep-time 0.01 --no-ceilings)
"$bin" sweep "${sweep[@]}" --out "$m/r.json" >/dev/null 2>&1 || fail "the first sweep failed"
fill() { dd if=/dev/zero of="$m/filler" bs=1k count=1024 2>/dev/null; sync; }
expect_io_error() {  # what file, stderr file, rc
  [[ $3 -eq 1 ]] || fail "$1: expected exit 1, got $3: $(cat "$2")"
  [[ $(grep -c "error" "$2") -eq 1 ]] || fail "$1: expected one error line: $(cat "$2")"
  tail -1 "$2" | grep -F "$1" | grep -q "No space left on device" || fail "should name $1 and ENOSPC: $(cat "$2")"
}

# 1. The rewrite on resume.
printf '{"name": "torn' >>"$m/r.json.log.jsonl"
log_before="$(cat "$m/r.json.log.jsonl")"
fill
"$bin" sweep "${sweep[@]}" --out "$m/r.json" --resume >/dev/null 2>"$work/resume.err"; rc=$?
expect_io_error "$m/r.json.log.jsonl" "$work/resume.err" $rc
[[ "$(cat "$m/r.json.log.jsonl")" == "$log_before" ]] || fail "the log changed"
ls "$m" | grep -q '\.tmp$' && fail "a temp file was left: $(ls "$m")"
echo "ok: resume on a full disk: $(cat "$work/resume.err")"

# 2. The final JSON: the log needs no rewrite (nothing torn), the JSON does not fit.
rm -f "$m/filler"
python3 - "$m/r.json.log.jsonl" <<'PY'
import sys
p = sys.argv[1]
t = open(p).read()
open(p, "w").write(t[: t.rfind("\n") + 1])  # cut the torn line off
PY
json_before="$(cat "$m/r.json")"
fill
"$bin" sweep "${sweep[@]}" --out "$m/r.json" --resume >/dev/null 2>"$work/json.err"; rc=$?
expect_io_error "$m/r.json" "$work/json.err" $rc
[[ "$(cat "$m/r.json")" == "$json_before" ]] || fail "the old JSON was lost"
ls "$m" | grep -q '\.tmp$' && fail "a temp file was left: $(ls "$m")"
echo "ok: final JSON on a full disk: $(cat "$work/json.err")"

# 3. run --out.
rm -f "$m/filler"
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
npy=(run --variant naive --q "$work/q.npy" --k "$work/k.npy" --v "$work/v.npy" --out "$m/o.npy")
"$bin" "${npy[@]}" >/dev/null 2>&1 || fail "run failed on a disk with room"
o_before="$(md5sum <"$m/o.npy")"
fill
"$bin" "${npy[@]}" >/dev/null 2>"$work/npy.err"; rc=$?
expect_io_error "$m/o.npy" "$work/npy.err" $rc
[[ "$(md5sum <"$m/o.npy")" == "$o_before" ]] || fail "the old o.npy was lost"
ls "$m" | grep -q '\.tmp$' && fail "a temp file was left: $(ls "$m")"
echo "ok: run --out on a full disk: $(cat "$work/npy.err")"
