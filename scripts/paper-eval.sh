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
# Usage: scripts/paper-eval.sh            (from the repository root)
#        BIN=/path/to/splitplan scripts/paper-eval.sh   (time another build)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
if [[ -z "${BIN:-}" ]]; then
	BIN="$OUT/splitplan"
	go build -tags urfave_cli_no_docs -o "$BIN" .
fi
total=0
cpu=0
run() {
	local name=$1
	shift
	local t
	# bash's time: wall, user and system seconds of the search.
	t=$({ TIMEFORMAT='%R %U %S'; time "$BIN" optimize "$@" >"$OUT/$name.txt" 2>/dev/null; } 2>&1)
	read -r wall user sys <<<"$t"
	total=$(awk -v a="$total" -v b="$wall" 'BEGIN { printf "%.2f", a + b }')
	cpu=$(awk -v a="$cpu" -v b="$user" -v c="$sys" 'BEGIN { printf "%.2f", a + b + c }')
	printf '%-24s %6.2f s  (CPU %.2f s)\n' "$name" "$wall" "$(awk -v b="$user" -v c="$sys" 'BEGIN { print b + c }')"
}
for wl in coding conversation; do
	run "$wl-cost" --goal cost --rps 70 --workload "$wl"
	run "$wl-power" --goal power --rps 70 --workload "$wl"
	run "$wl-iso-power" --goal throughput --power-budget 455 --workload "$wl"
	run "$wl-iso-cost" --goal throughput --cost-budget 1520 --workload "$wl"
done
printf '%-24s %6.2f s  (CPU %.2f s; outputs in %s)\n' total "$total" "$cpu" "$OUT"
