# The run-time environment of prebuilt attnbench binaries on the lent GPU machine, sourced by
# scripts/gpu_check.sh and scripts/gpu_compare.sh: gpu_env_setup ROOT LOG_DIR unpacks
# .debs/root.tgz (scripts/fetch_debs.sh) when .debs/root is absent, and puts on
# LD_LIBRARY_PATH its libraries, cuDNN of python3's wheel (where that machine keeps it) and the
# machine's CUDA toolkit (prebuilt modules carry the build machine's RUNPATH).
gpu_env_setup() {
  local root="$1" log_dir="$2"
  # .debs/root.tgz is .debs/root compressed, 14 MB against 47: unpacked here.
  if [[ ! -d "$root/.debs/root/usr" && -f "$root/.debs/root.tgz" ]]; then
    tar -xzf "$root/.debs/root.tgz" -C "$root/.debs" 2>"$log_dir/debs_unpack.log" ||
      echo "gpu_env: .debs/root.tgz did not unpack (see $log_dir/debs_unpack.log)" >&2
  fi
  local carried="$root/.debs/root/usr"
  if [[ -d "$carried" ]]; then
    local arch_lib="$carried/lib/x86_64-linux-gnu"
    export LD_LIBRARY_PATH="$arch_lib:$arch_lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  local cudnn_wheel
  cudnn_wheel="$(timeout 30 python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null)"
  [[ -n "$cudnn_wheel" && -d "$cudnn_wheel/lib" ]] &&
    export LD_LIBRARY_PATH="$cudnn_wheel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [[ -x "$root/.debs/bin/cuobjdump" ]] && export CUOBJDUMP="$root/.debs/bin/cuobjdump"
  [[ -x "$root/.debs/bin/nvdisasm" ]] && export NVDISASM="$root/.debs/bin/nvdisasm"
  return 0
}

# Prebuilt binaries: this machine's CUDA libraries after the carried ones.
gpu_env_add_toolkit() {
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do
    [[ -d "$d" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH${LD_LIBRARY_PATH:+:}$d"
  done
  return 0
}
