#!/usr/bin/env bash
# Idempotent setup: installs the build and test dependencies of attnbench.
# Debian packages via apt-get (as root), Python packages via pip into the
# current interpreter. Safe to run again: installs only what is missing.
# Set ATTNBENCH_NO_APT=1 on machines without apt (e.g. the lent GPU box; see
# scripts/gpu_check.sh, which carries Debian packages instead).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

apt_pkgs=(cmake ninja-build g++ pkg-config libbenchmark-dev libgtest-dev libgmock-dev
          libfmt-dev nlohmann-json3-dev libopenblas-dev libre2-dev)

if [[ "${ATTNBENCH_NO_APT:-0}" != 1 ]] && command -v apt-get >/dev/null; then
  missing=()
  for p in "${apt_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

py="${PYTHON:-python3}"
# Installs the requirements when any listed distribution is missing.
if ! "$py" - "$here/requirements.txt" <<'PY' 2>/dev/null
import importlib.metadata as md, re, sys
for line in open(sys.argv[1]):
    name = re.split(r"[<>=!~;\[ ]", line.split("#")[0].strip())[0]
    if name:
        md.version(name)
PY
then
  echo "setup: installing Python requirements" >&2
  "$py" -m pip install -q -r "$here/requirements.txt"
fi

# cudnn-frontend's header-only C++ graph API for the cudnn_sdpa row (docs/cudnn.md): only the
# wheel's include/ folder, unpacked into the cache that CMake searches. `pip install` would pull
# its Python dependencies (the CUTLASS DSL); the headers need none. Skipped without pip/PyPI: the
# row is then not built.
cudnn_fe_version=1.32.0
cudnn_fe_dir="${ATTNBENCH_CUDNN_FRONTEND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnbench/cudnn_frontend}/$cudnn_fe_version"
if [[ ! -f "$cudnn_fe_dir/include/cudnn_frontend.h" ]]; then
  echo "setup: fetching cudnn-frontend $cudnn_fe_version headers into $cudnn_fe_dir" >&2
  cudnn_fe_tmp="$(mktemp -d)"
  if "$py" -m pip download -q --no-deps --only-binary=:all: -d "$cudnn_fe_tmp" \
       "nvidia-cudnn-frontend==$cudnn_fe_version" &&
     "$py" -m zipfile -e "$cudnn_fe_tmp"/nvidia_cudnn_frontend-*.whl "$cudnn_fe_tmp/x" &&
     [[ -f "$cudnn_fe_tmp/x/include/cudnn_frontend.h" ]]; then
    mkdir -p "$cudnn_fe_dir"
    rm -rf "$cudnn_fe_dir/include.partial"
    mv "$cudnn_fe_tmp/x/include" "$cudnn_fe_dir/include.partial"
    mv "$cudnn_fe_dir/include.partial" "$cudnn_fe_dir/include"
  else
    echo "setup: warning: could not fetch nvidia-cudnn-frontend $cudnn_fe_version; cudnn_sdpa will not be built" >&2
  fi
  rm -rf "$cudnn_fe_tmp"
fi

# CUTLASS/CuTe C++ headers for the host emulator's layout oracle (tests/emu/hopper_oracle_test.cpp,
# ctest emu.hopper_oracle): only cutlass_library/source/include of the nvidia-cutlass wheel (cute/,
# cutlass/; ~27 MB), unpacked into the cache that tests/emu.cmake searches. Tests only; skipped
# without pip/PyPI (that test then reports itself skipped).
cutlass_version=4.2.0.0
cutlass_dir="${ATTNBENCH_CUTLASS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnbench/cutlass}/$cutlass_version"
if [[ ! -f "$cutlass_dir/include/cute/tensor.hpp" ]]; then
  echo "setup: fetching CUTLASS/CuTe $cutlass_version headers into $cutlass_dir" >&2
  cutlass_tmp="$(mktemp -d)"
  if "$py" -m pip download -q --no-deps --only-binary=:all: -d "$cutlass_tmp" "nvidia-cutlass==$cutlass_version" &&
     "$py" - "$cutlass_tmp" <<'PY'
import pathlib, sys, zipfile
tmp = pathlib.Path(sys.argv[1])
prefix = "cutlass_library/source/include/"
with zipfile.ZipFile(next(tmp.glob("nvidia_cutlass-*.whl"))) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = tmp / "include" / name[len(prefix):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(name))
PY
  then
    mkdir -p "$cutlass_dir"
    rm -rf "$cutlass_dir/include.partial"
    mv "$cutlass_tmp/include" "$cutlass_dir/include.partial"
    mv "$cutlass_dir/include.partial" "$cutlass_dir/include"
  else
    echo "setup: warning: could not fetch nvidia-cutlass $cutlass_version; emu.hopper_oracle will be skipped" >&2
  fi
  rm -rf "$cutlass_tmp"
fi
