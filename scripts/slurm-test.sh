#!/usr/bin/env bash
# A real Slurm on localhost runs a 6-job study (examples/slurm/test-study.toml)
# as an array of 3 shards plus the dependent merge, through
# examples/slurm/submit.sh, and the merged CSV must equal the unsharded
# run's byte for byte.
#
# It installs Debian's slurm-wlm and munge with apt-get where they are
# missing (as root, or with sudo -n), starts its own munged, slurmctld and
# slurmd from a generated slurm.conf in a temporary directory (their logs
# and state stay there; ports are picked free), and stops them on exit.
# Where the packages cannot be installed (no apt-get, not root and no
# passwordless sudo) it prints SKIP and why, and exits 0.
#
#   scripts/slurm-test.sh            (.ci/run calls it after the Go tests)
#   SLURM_TEST_TIMEOUT=300           seconds to wait for the jobs
#   SLURM_TEST_KEEP=1                keep the temporary directory
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
timeout=${SLURM_TEST_TIMEOUT:-300}

skip() {
  echo "slurm-test: SKIP: $*"
  exit 0
}

as_root=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  fi
fi
root_ok() { [ "$(id -u)" = 0 ] || [ ${#as_root[@]} -gt 0 ]; }

# Debian puts the daemons in /usr/sbin, which a non-root PATH may lack.
export PATH=$PATH:/usr/sbin:/sbin
need=(munged slurmctld slurmd sbatch squeue scontrol)
missing=()
for b in "${need[@]}"; do
  command -v "$b" >/dev/null 2>&1 || missing+=("$b")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || skip "${missing[*]} missing and no apt-get to install slurm-wlm and munge"
  root_ok || skip "${missing[*]} missing; installing slurm-wlm and munge needs root or passwordless sudo"
  echo "slurm-test: installing slurm-wlm and munge (missing: ${missing[*]})"
  export DEBIAN_FRONTEND=noninteractive
  if ! { "${as_root[@]}" apt-get update -qq && "${as_root[@]}" apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null; }; then
    skip "apt-get could not install slurm-wlm and munge"
  fi
  for b in "${need[@]}"; do
    command -v "$b" >/dev/null 2>&1 || skip "$b still missing after installing slurm-wlm and munge"
  done
fi
# slurmd starts jobs as their owner: it runs as root (the job runs as us).
root_ok || skip "slurmd must run as root: not root and no passwordless sudo"

tmp=$(mktemp -d /tmp/splitplan-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
  local rc=$?
  set +e
  for ((k = ${#pids[@]} - 1; k >= 0; k--)); do
    "${as_root[@]}" kill "${pids[$k]}" 2>/dev/null
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.1
    done
  done
  if [ $rc != 0 ]; then
    echo "slurm-test: FAILED (exit $rc); daemon and job logs from $tmp:"
    for f in "$tmp"/*.log "$tmp"/work/*.out; do
      [ -f "$f" ] || continue
      echo "===== $f"
      tail -n 60 "$f"
    done
  fi
  if [ "${SLURM_TEST_KEEP:-}" = 1 ]; then
    echo "slurm-test: kept $tmp"
  else
    "${as_root[@]}" rm -rf "$tmp"
  fi
  exit $rc
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# munge: a key of our own and a daemon on a socket of our own.
mkdir -p "$tmp/munge"
key=$tmp/munge/munge.key
if [ ! -s "$key" ]; then
  dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
fi
chmod 711 "$tmp/munge"
chmod 400 "$key"
socket=$tmp/munge/munge.socket
force=()
[ "$(id -u)" = 0 ] && force=(--force) # munged refuses root without it
munged --foreground "${force[@]}" --key-file="$key" --socket="$socket" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge/seed" >>"$tmp/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
  [ -S "$socket" ] && break
  sleep 0.1
done
[ -S "$socket" ] || { echo "slurm-test: munged did not start"; exit 1; }

host=$(hostname -s)
cpus=$(nproc)
mem=$(free -m | awk '/^Mem:/ {print int($2 * 0.9)}')
ctld_port=$(free_port)
slurmd_port=$(free_port)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/work"
conf=$tmp/slurm.conf
cat >"$conf" <<CONF
ClusterName=splitplan-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$conf
"${as_root[@]}" env SLURM_CONF="$conf" slurmctld -D -i -f "$conf" >>"$tmp/slurmctld.log" 2>&1 &
pids+=($!)
"${as_root[@]}" env SLURM_CONF="$conf" slurmd -D -f "$conf" -N "$host" >>"$tmp/slurmd.log" 2>&1 &
pids+=($!)
up=
for _ in $(seq 60); do
  if state=$(sinfo -h -n "$host" -o %T 2>/dev/null) && [ "$state" = idle ]; then
    up=1
    break
  fi
  sleep 1
done
[ -n "$up" ] || { echo "slurm-test: node $host not idle after 60 s (state: ${state:-none})"; exit 1; }
echo "slurm-test: slurmctld and slurmd up on $host ($cpus CPUs, ports $ctld_port/$slurmd_port)"

# The binary, and the reference: the same study unsharded on this host.
go build -o "$tmp/splitplan" .
study=$repo/examples/slurm/test-study.toml
"$tmp/splitplan" study --out "$tmp/ref" "$study" 2>/dev/null
"$tmp/splitplan" study merge --out "$tmp/ref.csv" "$study" "$tmp/ref" 2>/dev/null
chmod -R a+rX "$tmp"

cd "$tmp/work"
out=$(SPLITPLAN=$tmp/splitplan "$repo/examples/slurm/submit.sh" "$study" "$tmp/work/results" 3 "$tmp/work/merged.csv")
echo "slurm-test: $out"
array=$(sed -n 's/^array job \([0-9]*\) .*/\1/p' <<<"$out")
merge=$(sed -n 's/.*merge job \([0-9]*\):.*/\1/p' <<<"$out")
[ -n "$array" ] && [ -n "$merge" ] || { echo "slurm-test: could not read the job ids"; exit 1; }

deadline=$((SECONDS + timeout))
while [ -n "$(squeue -h -j "$array,$merge" -o %i 2>/dev/null)" ]; do
  if [ $SECONDS -ge $deadline ]; then
    squeue -j "$array,$merge" || true
    echo "slurm-test: jobs not done after $timeout s"
    exit 1
  fi
  sleep 1
done
states=$(scontrol show job "$array" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort | uniq -c | tr -s ' ' | paste -sd,)
mstate=$(scontrol show job "$merge" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
echo "slurm-test: array tasks:$states; merge: $mstate"
[ "$mstate" = COMPLETED ] || { echo "slurm-test: the merge job did not complete"; exit 1; }
[ "$(ls results/*.csv | wc -l)" = 6 ] || { echo "slurm-test: want 6 results, have: $(ls results)"; exit 1; }
for k in 0 1 2; do
  grep -q "shard $((k + 1))/3: 2 jobs, 2 run now, 0 failed" "splitplan-study-${array}_$k.out" ||
    { echo "slurm-test: task $k's log does not say it ran its 2 jobs"; exit 1; }
done
if ! cmp merged.csv "$tmp/ref.csv"; then
  diff "$tmp/ref.csv" merged.csv | head -20
  echo "slurm-test: the merged CSV of the Slurm run differs from the unsharded run"
  exit 1
fi
echo "slurm-test: PASS: 3 shards on Slurm, merged ($(($(wc -l <merged.csv) - 1)) rows) == unsharded, byte for byte"
