#!/usr/bin/env bash
# Regenerates every figure under docs/ with the commands README.md and
# docs/guide.md show (run from the repository root; about a minute on two
# cores). The optima CSVs the guide's plot commands read are made first, in a
# temporary directory, by the commands the guide names. An argument names
# another directory to write the figures to (to look at them without
# touching docs/): scripts/docs-figures.sh /tmp/figs
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/splitplan" .
sp="$tmp/splitplan"
"$sp" optimize --goal throughput --power-budget 455 --duration 60s --points "$tmp/iso-power-points.csv" --out "$tmp/iso-power.csv" >/dev/null
"$sp" optimize --goal throughput --cost-budget 1520 --duration 60s --out "$tmp/iso-cost.csv" >/dev/null
"$sp" optimize --goal cost --rps 70 --duration 60s --points "$tmp/iso-throughput-points.csv" --out "$tmp/iso-throughput.csv" >/dev/null
"$sp" sweep --cluster HH:23:8 --cluster Baseline-H100:58 --rps 20:140:20 --duration 60s --plot "$out/sweep.png" >/dev/null
"$sp" evaluate --from "$tmp/iso-throughput.csv" --workload conversation --rps 10:100:10 --duration 60s --plot "$out/evaluate.png" >/dev/null
"$sp" plot heatmap --design HH --goal cost --rps 70 --max-machines 36 --exhaustive --duration 60s --out "$out/heatmap.png"
"$sp" plot pareto --points "$tmp/iso-power-points.csv" --optima "$tmp/iso-power.csv" --y cost --out "$out/pareto.png"
"$sp" plot summary --optima "$tmp/iso-power.csv,$tmp/iso-cost.csv,$tmp/iso-throughput.csv" --baseline Baseline-H100 --out "$out/summary.png"
"$sp" plot cdf --design HH --prompt 23 --token 8 --rps 70 --duration 60s --out "$out/cdf.png"
"$sp" optimize --goal energy --rps 70 --designs HH --power-caps 0.5:1.0:0.1 --plot "$tmp/hhcap" >/dev/null
cp "$tmp/hhcap/pairs.png" "$out/hhcap-energy.png"
"$sp" study --out "$tmp/study" examples/study/study.toml 2>/dev/null
"$sp" study merge --out "$tmp/study.csv" examples/study/study.toml "$tmp/study" 2>/dev/null
"$sp" plot study --merged "$tmp/study.csv" --out "$out/study.png" >/dev/null
"$sp" plot study-winners --merged "$tmp/study.csv" --out "$out/study-winners.png" >/dev/null
echo "docs figures regenerated: $out/{sweep,evaluate,heatmap,pareto,summary,cdf,hhcap-energy,study,study-winners}.png"
