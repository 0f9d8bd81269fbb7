#!/bin/bash
# Submits a splitplan study to Slurm: an array job of SHARDS tasks, one
# shard each (study.sbatch), and the merge (merge.sbatch), which starts
# only once every task has succeeded. Prints the two job ids.
#
#   examples/slurm/submit.sh STUDY.toml RESULTS_DIR SHARDS [MERGED.csv]
#
# RESULTS_DIR must be on a file system every node shares. Extra sbatch
# options (partition, account, time) go in SBATCH_* variables, e.g.
# SBATCH_PARTITION=cpu, which sbatch reads itself; SPLITPLAN names the
# binary when it is not splitplan on the nodes' PATH.
set -euo pipefail
if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: $0 STUDY.toml RESULTS_DIR SHARDS [MERGED.csv]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
study=$(realpath "$1")
mkdir -p "$2"
results=$(realpath "$2")
shards=$3
merged=$(realpath -m "${4:-${results%/}.csv}")
case $shards in
  '' | *[!0-9]* | 0) echo "$0: SHARDS must be a positive whole number, got '$shards'" >&2; exit 2 ;;
esac
if [ ! -r "$study" ]; then
  echo "$0: cannot read $study" >&2
  exit 2
fi
# The study file must parse, and every job's options pass optimize's own
# checks, before anything is queued (study --list checks them).
"${SPLITPLAN:-splitplan}" study --list "$study" >/dev/null
vars=ALL,STUDY=$study,RESULTS=$results,SHARDS=$shards,MERGED=$merged
if [ -n "${SPLITPLAN:-}" ]; then
  vars=$vars,SPLITPLAN=$SPLITPLAN
fi
array=$(sbatch --parsable --array="0-$((shards - 1))" --export="$vars" "$here/study.sbatch")
array=${array%%;*} # --parsable prints ID[;CLUSTER]
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes --export="$vars" "$here/merge.sbatch")
merge=${merge%%;*}
echo "array job $array ($shards shards), merge job $merge: $merged"
