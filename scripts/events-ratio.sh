#!/usr/bin/env bash
# events-ratio.sh measures issue 13's last target: the simulator's events
# per second against a bare event loop with the same heap. It builds the
# evaluator's test binary once (with the command's PGO profile,
# default.pgo, as `go build` compiles the simulator into splitplan), then
# runs N invocations (default 40), each timing both loops back to back on
# one core:
#
#   BenchmarkBareEventLoop       the heap alone: 40 machines' run ends and
#                                the same arrivals, as many events
#   BenchmarkCoding70HH35x5Loop  the simulator's event loop: coding,
#                                70 req/s, 120 s, Splitwise-HH 35P/5T
#
# and prints each invocation's times and ratio, then the best of each over
# the other and the median and quartiles of the ratios. Time on a shared
# host moves with its neighbours, and moves the simulation (more code, more
# memory) more than the bare loop: the ratio of one invocation is only
# comparable with ratios taken at the same time.
#
# With INSTR=1 and valgrind installed, it also counts each loop's
# instructions (cachegrind, GOGC=off; the difference of 40 and 20
# iterations, so that a run's fixed costs cancel) — a figure no neighbour
# moves. The simulation's count is given with and without its set-up and
# forced collection, which its benchmark does outside the timer
# (BenchmarkCoding70HH35x5LoopSetup).
#
# Usage: scripts/events-ratio.sh [N]          (from the repository root)
#        INSTR=1 scripts/events-ratio.sh 20
#        PGO=off scripts/events-ratio.sh      (the build without the profile)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-40}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pgo=${PGO:-$PWD/default.pgo}
[[ -f $pgo || $pgo == off ]] || pgo=off
go test -pgo="$pgo" -o "$tmp/evaluator.test" -c ./evaluator
bin=$tmp/evaluator.test
cd evaluator

if [[ ${INSTR:-0} == 1 ]]; then
	# irefs BENCH N: the instructions of N iterations of BENCH (and of
	# the test binary's start).
	irefs() {
		GOGC=off valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
			"$bin" -test.run XXX -test.bench "$1\$" -test.cpu 1 -test.benchtime "$2x" 2>&1 |
			awk '/I *refs/ {gsub(",", "", $NF); print $NF}'
	}
	# instr BENCH: instructions per iteration.
	instr() {
		local a c
		a=$(irefs "$1" 20)
		c=$(irefs "$1" 40)
		echo $(((c - a) / 20))
	}
	bare=$(instr BareEventLoop)
	loop=$(instr Coding70HH35x5Loop)
	setup=$(instr Coding70HH35x5LoopSetup)
	awk -v b="$bare" -v l="$loop" -v s="$setup" 'BEGIN {
		printf "instructions per simulation: bare loop %.2f M, simulation %.2f M (%.3fx), without its set-up and forced collection (%.2f M) %.2f M (%.3fx)\n",
			b/1e6, l/1e6, l/b, s/1e6, (l-s)/1e6, (l-s)/b }'
fi

echo "invocation  bare ms  loop ms  ratio"
for i in $(seq "$n"); do
	"$bin" -test.run XXX -test.bench 'BareEventLoop|Coding70HH35x5Loop$' -test.cpu 1 -test.benchtime 30x 2>/dev/null |
		awk -v i="$i" '/^BenchmarkBareEventLoop/ {b = $3} /^BenchmarkCoding70HH35x5Loop/ {l = $3}
			END {printf "%10d %8.3f %8.3f %6.3f\n", i, b/1e6, l/1e6, l/b}'
done | tee "$tmp/runs"
sort -k4 -g "$tmp/runs" | awk '
	{ r[NR] = $4; if (NR == 1 || $2 < bb) bb = $2; if (NR == 1 || $3 < bl) bl = $3; if ($4 <= 2) w++ }
	END {
		med = NR % 2 ? r[(NR+1)/2] : (r[NR/2] + r[NR/2+1]) / 2
		printf "best: bare %.3f ms, loop %.3f ms: %.3fx\n", bb, bl, bl/bb
		printf "ratio: median %.3fx, quartiles %.3f-%.3fx, range %.3f-%.3fx; within 2x in %d of %d\n",
			med, r[int((NR+3)/4)], r[int((3*NR+3)/4)], r[1], r[NR], w, NR
	}'
