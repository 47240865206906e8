#!/usr/bin/env bash
# Prepares .debs/ (git-ignored) on a machine WITH network and apt, so that
# scripts/gpu_check.sh can build attnbench on a machine without them (the
# lent GPU box: nvcc, cmake, ninja, python3, but no Google Benchmark,
# GoogleTest, fmt, nlohmann-json, OpenBLAS or RE2, and no network).
#
#   scripts/fetch_debs.sh            # -> .debs/debs/*.deb, .debs/root/usr/..., .debs/root.tgz, .debs/bin/{cuobjdump,nvdisasm}
#
# It downloads the Debian packages the CMake configuration needs (and their
# run-time libraries), unpacks them with `dpkg -x` into .debs/root, adds the
# links Debian's alternatives system would have made for OpenBLAS, and, when
# pip can reach PyPI, unpacks cuobjdump and nvdisasm from their nvidia-cuda-*
# wheels into .debs/bin (for the SASS check). Idempotent: rerun to refresh.
set -euo pipefail
root_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root_dir/.debs"
pkgs=(libbenchmark-dev libbenchmark1debian libgtest-dev libgmock-dev libfmt-dev libfmt9
      nlohmann-json3-dev libopenblas-dev libopenblas0 libopenblas-pthread-dev libopenblas0-pthread
      libgfortran5 libquadmath0 libre2-dev libre2-9)

command -v apt-get >/dev/null || { echo "fetch_debs: needs apt-get (Debian/Ubuntu)" >&2; exit 1; }
mkdir -p "$out/debs"
cd "$out/debs"
if ! apt-get download "${pkgs[@]}" >/dev/null 2>"$out/apt.err"; then
  echo "fetch_debs: apt-get download failed; trying after apt-get update" >&2
  sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  apt-get download "${pkgs[@]}" >/dev/null
fi

rm -rf "$out/root"
mkdir -p "$out/root"
for deb in "$out"/debs/*.deb; do dpkg -x "$deb" "$out/root"; done

# What update-alternatives would link for the pthread OpenBLAS flavour.
arch_dir="$out/root/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
if [[ -d "$arch_dir/openblas-pthread" ]]; then
  for f in libopenblas.so libopenblas.so.0 libblas.so libblas.so.3 liblapack.so liblapack.so.3; do
    [[ -e "$arch_dir/openblas-pthread/$f" ]] && ln -sfn "openblas-pthread/$f" "$arch_dir/$f"
  done
fi

# Keep the tree small enough to carry to the GPU box (its copy limit is 64 MiB):
# static OpenBLAS, LAPACK and documentation are not needed.
find "$out/root" \( -name 'libopenblas*.a' -o -name 'liblapack*' \) -exec rm -f {} +
rm -rf "$out/root/usr/share/doc" "$out/root/usr/share/lintian" "$out/root/usr/src"

# cuobjdump and nvdisasm for `kernel_resources.py check-sass` (optional: needs PyPI).
if command -v python3 >/dev/null &&
   python3 -m pip download -q --no-deps -d "$out/wheels" nvidia-cuda-cuobjdump \
     nvidia-cuda-nvdisasm 2>/dev/null; then
  mkdir -p "$out/bin"
  python3 - "$out" <<'PY'
import glob, os, sys, zipfile
out = sys.argv[1]
for tool in ("cuobjdump", "nvdisasm"):
    whl = sorted(glob.glob(os.path.join(out, "wheels", f"nvidia_cuda_{tool}-*.whl")))[-1]
    with zipfile.ZipFile(whl) as z:
        name = next(n for n in z.namelist() if n.endswith("/bin/" + tool))
        dst = os.path.join(out, "bin", tool)
        with z.open(name) as src, open(dst, "wb") as f:
            f.write(src.read())
        os.chmod(dst, 0o755)
PY
else
  echo "fetch_debs: nvidia-cuda-cuobjdump not downloaded (no pip/PyPI): the SASS check will be skipped" >&2
fi

# cudnn-frontend's headers for the cudnn_sdpa row (docs/cudnn.md), copied from the cache
# scripts/setup.sh fills, into .debs/root so that carrying .debs/root alone brings them.
fe_cache="${ATTNBENCH_CUDNN_FRONTEND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attnbench/cudnn_frontend}"
if compgen -G "$fe_cache/*/include/cudnn_frontend.h" >/dev/null; then
  rm -rf "$out/root/cudnn_frontend"
  cp -r "$fe_cache" "$out/root/cudnn_frontend"
else
  echo "fetch_debs: no cudnn-frontend headers in $fe_cache (run scripts/setup.sh first): the GPU build will lack cudnn_sdpa" >&2
fi

du -sh "$out/root" | awk '{print "fetch_debs: " $1 " unpacked into .debs/root"}'
# The same tree compressed (OpenBLAS's 35 MB library is most of it): 47 MB unpacked left no room
# for the prebuilt binaries in the device call's 64 MiB; gpu_check.sh unpacks it there.
tar -czf "$out/root.tgz" -C "$out" root
du -sh "$out/root.tgz" | awk '{print "fetch_debs: " $1 " in .debs/root.tgz (carry it instead of .debs/root)"}'
ls "$out"/debs/*.deb | sed 's|.*/||' | tr '\n' ' '; echo
