#!/usr/bin/env bash
# Idempotent setup: installs the build and test dependencies of attnbench.
# Debian packages via apt-get (as root), Python packages via pip into the
# current interpreter. Safe to run again: installs only what is missing.
# Set ATTNBENCH_NO_APT=1 on machines without apt (e.g. the lent GPU box; see
# scripts/gpu_check.sh, which carries Debian packages instead).
#
#   setup.sh [--for main|tests] [--only system|python]
#     --for tests (default): everything scripts/test.sh needs (CI)
#     --for main: what scripts/run_main.sh needs: the build's packages, numpy, matplotlib
#                 and torch (requirements-main.txt), cudnn-frontend's headers; no test tools,
#                 no Chromium, no CUTLASS headers
#     --only system: Debian packages and headers; --only python: the pip requirements
#                 (run_main.sh installs these during the build, so torch's ~2 min overlap it)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

profile=tests
only=""
while (($#)); do
  case "$1" in
    --for) profile="${2:-}"; shift 2 ;;
    --only) only="${2:-}"; shift 2 ;;
    *) echo "setup: error: unknown argument '$1' (setup.sh [--for main|tests] [--only system|python])" >&2; exit 2 ;;
  esac
done
[[ "$profile" == main || "$profile" == tests ]] ||
  { echo "setup: error: --for '$profile' (expected main or tests)" >&2; exit 2; }
[[ -z "$only" || "$only" == system || "$only" == python ]] ||
  { echo "setup: error: --only '$only' (expected system or python)" >&2; exit 2; }
want() { [[ -z "$only" || "$only" == "$1" ]]; }

apt_pkgs=(cmake ninja-build g++ pkg-config libbenchmark-dev libgtest-dev libgmock-dev
          libfmt-dev nlohmann-json3-dev libopenblas-dev libre2-dev)
# Headless Chromium for the interactive page's browser test (tests/python/test_report_html_browser.py).
# slurm-wlm and munge for the Slurm job-array test (tests/slurm/; ~44 MB, ~9 s with apt's lists).
# clang-format for static.clang_format (docs/style.md).
[[ "$profile" == tests ]] && apt_pkgs+=(chromium slurm-wlm munge clang-format)

if want system && [[ "${ATTNBENCH_NO_APT:-0}" != 1 ]] && command -v apt-get >/dev/null; then
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
req="$here/requirements.txt"
[[ "$profile" == main ]] && req="$here/requirements-main.txt"
# Installs the requirements when any listed distribution is missing (following -r lines).
if want python && ! "$py" - "$req" <<'PY' 2>/dev/null
import importlib.metadata as md, os, re, sys
def check(path):
    for line in open(path):
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            check(os.path.join(os.path.dirname(path), line[3:].strip()))
            continue
        name = re.split(r"[<>=!~;\[ ]", line)[0]
        if name:
            md.version(name)
check(sys.argv[1])
PY
then
  echo "setup: installing Python requirements ($(basename "$req"))" >&2
  "$py" -m pip install -q -r "$req"
fi
# The tools as a package (pyproject.toml): `attnbench-tools` on PATH, editable so the checkout
# stays the code that runs (~5 s; needs PyPI for setuptools; the scripts run without it).
# Installed when absent or when the installed one points at another checkout.
if want python && ! (cd / && "$py" -c 'import attnbench_tools, os, sys
sys.exit(os.path.realpath(attnbench_tools.__file__) != os.path.realpath(sys.argv[1]))' \
                       "$here/attnbench_tools.py") 2>/dev/null; then
  "$py" -m pip install -q --root-user-action=ignore --no-deps -e "$here/.." ||
    echo "setup: attnbench-tools not installed (pip install -e . failed); scripts/*.py still run" >&2
fi
want system || exit 0

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

[[ "$profile" == tests ]] || exit 0

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
