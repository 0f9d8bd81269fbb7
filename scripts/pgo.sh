#!/usr/bin/env bash
# pgo.sh regenerates default.pgo, the CPU profile the Go toolchain uses
# for profile-guided optimization whenever it builds the splitplan command
# (`go build`, `go run .`, `go install`: -pgo=auto reads default.pgo from
# the main package's directory). With it the compiler inlines the
# simulator's hot calls and devirtualizes its interface calls (the
# performance model's, the batching policy's): a search takes ≈ 5–8%
# fewer instructions. Outputs do not change: the optimizations change
# which calls are inlined, never the arithmetic (Go does not fuse
# floating-point operations on amd64, and never reorders them).
#
# The profile is what splitplan spends its time on: the searches of the
# paper's evaluation and of a GPU-pair space (search benchmarks), and the
# simulator's own benchmarks (both workloads, every design, sarathi
# batching). Regenerate it after a change to the simulator's hot path; a
# stale profile still builds, and only loses part of the gain.
#
# Usage: scripts/pgo.sh          (from the repository root; ≈ 2 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Profiles of builds without the current profile, so that an old one does
# not steer what the new one records.
go test -pgo=off -o "$tmp/search.test" -c ./search
go test -pgo=off -o "$tmp/evaluator.test" -c ./evaluator
(cd search && "$tmp/search.test" -test.run XXX -test.benchtime 1x \
	-test.bench 'OptimizeCost70|IsoPowerConversation|GPUPairsCost70' \
	-test.cpuprofile "$tmp/search.pprof" >/dev/null)
(cd evaluator && "$tmp/evaluator.test" -test.run XXX -test.benchtime 20x \
	-test.bench 'Coding70|Conv70|Conv100|Coding100' \
	-test.cpuprofile "$tmp/evaluator.pprof" >/dev/null)
go tool pprof -proto "$tmp/search.pprof" "$tmp/evaluator.pprof" >"$tmp/default.pgo" 2>/dev/null
mv "$tmp/default.pgo" default.pgo
echo "wrote default.pgo ($(wc -c <default.pgo) bytes)"
