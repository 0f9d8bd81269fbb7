#!/usr/bin/env bash
# paper-eval.sh times the whole evaluation of the Splitwise paper with the
# built-in defaults (BLOOM-176B, the six designs, 120 s simulations): for
# the coding and the conversation workload, the cheapest and the
# least-power cluster serving 70 req/s, and the most throughput within the
# power (455 kW) and the cost (1520 $/h) of 40 DGX-H100 (iso-power and
# iso-cost). It builds splitplan once (without urfave/cli's man-page
# support), runs the eight searches one after the other, prints each
# one's wall time (and CPU time, steadier on a busy machine) and the
# total, and writes their outputs to $OUT (default: a temporary
# directory).
#
# With BASE set to a commit, it also builds that commit (in a git worktree
# under $OUT) and runs the two builds alternately, PAIRS times (default
# 2), each writing its outputs to its own directory, then prints every
# run's total and the ratio of the base's best total to this build's: a
# speed-up measured on one machine at one time, which a machine slower or
# busier than another cannot flatter.
#
# Usage: scripts/paper-eval.sh            (from the repository root)
#        BIN=/path/to/splitplan scripts/paper-eval.sh   (time another build)
#        BASE=cc82a30 PAIRS=3 scripts/paper-eval.sh     (against a commit)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
if [[ -z "${BIN:-}" ]]; then
	BIN="$OUT/splitplan"
	go build -tags urfave_cli_no_docs -o "$BIN" .
fi

# run NAME ARGS... runs one search (optimize ARGS) with evaluate's $bin,
# writing its output to $dir/NAME.txt, prints its times and adds them to
# evaluate's $total and $cpu.
run() {
	local name=$1
	shift
	local t
	# bash's time: wall, user and system seconds of the search.
	t=$({ TIMEFORMAT='%R %U %S'; time "$bin" optimize "$@" >"$dir/$name.txt" 2>/dev/null; } 2>&1)
	read -r wall user sys <<<"$t"
	total=$(awk -v a="$total" -v b="$wall" 'BEGIN { printf "%.2f", a + b }')
	cpu=$(awk -v a="$cpu" -v b="$user" -v c="$sys" 'BEGIN { printf "%.2f", a + b + c }')
	printf '%-24s %6.2f s  (CPU %.2f s)\n' "$name" "$wall" "$(awk -v b="$user" -v c="$sys" 'BEGIN { print b + c }')"
}

# evaluate BIN DIR runs the eight searches with BIN, writing their outputs
# to DIR, and prints their times; it leaves the total wall time in $total.
evaluate() {
	local bin=$1 dir=$2
	mkdir -p "$dir"
	total=0
	local cpu=0
	for wl in coding conversation; do
		run "$wl-cost" --goal cost --rps 70 --workload "$wl"
		run "$wl-power" --goal power --rps 70 --workload "$wl"
		run "$wl-iso-power" --goal throughput --power-budget 455 --workload "$wl"
		run "$wl-iso-cost" --goal throughput --cost-budget 1520 --workload "$wl"
	done
	printf '%-24s %6.2f s  (CPU %.2f s; outputs in %s)\n' total "$total" "$cpu" "$dir"
}

if [[ -z "${BASE:-}" ]]; then
	evaluate "$BIN" "$OUT"
	exit 0
fi

tree="$OUT/base-tree"
git worktree add --detach "$tree" "$BASE" >/dev/null 2>&1 || {
	echo "paper-eval.sh: BASE=$BASE: cannot check that commit out (git worktree add failed)" >&2
	exit 2
}
trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || true' EXIT
(cd "$tree" && go build -tags urfave_cli_no_docs -o "$OUT/splitplan-base" .)
pairs=${PAIRS:-2}
best_new=""
best_base=""
for ((i = 1; i <= pairs; i++)); do
	echo "== base ($BASE), pair $i"
	evaluate "$OUT/splitplan-base" "$OUT/base-$i"
	best_base=$(awk -v a="${best_base:-$total}" -v b="$total" 'BEGIN { print (b < a ? b : a) }')
	echo "== this build, pair $i"
	evaluate "$BIN" "$OUT/new-$i"
	best_new=$(awk -v a="${best_new:-$total}" -v b="$total" 'BEGIN { print (b < a ? b : a) }')
done
awk -v b="$best_base" -v n="$best_new" -v base="$BASE" \
	'BEGIN { printf "best totals: base (%s) %.2f s, this build %.2f s: %.2fx as fast\n", base, b, n, b / n }'
