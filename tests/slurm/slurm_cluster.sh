#!/usr/bin/env bash
# A one-node Slurm cluster on localhost for the tests, in a folder of its own (sourced):
#   slurm_cluster_start DIR   -> 0 and SLURM_CONF exported, or 77 with the reason on stdout
#   slurm_cluster_stop        -> stops the daemons this started (by their pids)
# munged, slurmctld and slurmd run as root with their sockets, spool, state and logs in DIR,
# ports picked free; nothing in /etc is touched but the Debian package's munge key, read.

slurm_cluster_why() { echo "slurm test skipped: $*"; return 77; }

slurm_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_cluster_start() {
  local dir="$1"
  for b in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v "$b" >/dev/null || { slurm_cluster_why "no $b (scripts/setup.sh installs slurm-wlm and munge)"; return; }
  done
  [[ $(id -u) -eq 0 ]] || { slurm_cluster_why "the daemons run as root here and this is uid $(id -u)"; return; }
  [[ -r /etc/munge/munge.key ]] || { slurm_cluster_why "no readable /etc/munge/munge.key"; return; }
  mkdir -p "$dir"/{munge,spool,state,log}
  SLURM_TEST_DIR="$dir"
  install -m 0400 /etc/munge/munge.key "$dir/munge/munge.key"
  munged --force --socket="$dir/munge/sock" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" ||
    { slurm_cluster_why "munged did not start: $(tail -n 2 "$dir/log/munged.log" 2>/dev/null)"; return; }
  local host cpus mem_mb ctld_port d_port
  host="$(hostname -s)"
  cpus="$(nproc)"
  mem_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
  ctld_port="$(slurm_free_port)"
  d_port="$(slurm_free_port)"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=attnbench-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
SchedulerParameters=defer_batch=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -i || { slurm_cluster_why "slurmctld did not start: $(tail -n 3 "$dir/log/slurmctld.log" 2>/dev/null)"; return; }
  slurmd || { slurm_cluster_why "slurmd did not start: $(tail -n 3 "$dir/log/slurmd.log" 2>/dev/null)"; return; }
  local t
  for t in $(seq 1 100); do
    sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && return 0
    sleep 0.2
  done
  slurm_cluster_why "the node did not become idle in 20 s: $(sinfo -h -o '%T %E' 2>&1 | head -n 1)"
}

slurm_cluster_stop() {
  local dir="${SLURM_TEST_DIR:-}" f pid
  [[ -n "$dir" ]] || return 0
  for f in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/pid"; do
    [[ -f "$f" ]] || continue
    pid="$(cat "$f")"
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
}
