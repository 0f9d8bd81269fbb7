#!/usr/bin/env python3
"""Oracle corrections of the held-out serving predictions (docs/model.md,
"What bounds the serving targets").

Each oracle multiplies a cell's predictions (cell: GPU, model, engine, mode,
as `perf validate` keys them) by the factor that minimises the cell's mean
absolute percentage error, chosen on the very rows it is scored on: one
factor per cell, or one per group of the cell's rows (same engine version
and parallelism columns, same concurrency, same lengths). No model of the
rows with that freedom can do better, so each figure bounds what a
correction of that kind can reach. It prints the median per-cell MAPE
(the lower middle cell, as `perf validate` takes it) of TTFT and TPOT and
the cells within 20% TTFT.

Usage:

  go run . perf validate --measured data/measured-serving/serving_benchmarks.csv \\
      --cross-validate gpu --out /tmp/heldout.csv
  python3 scripts/serving_oracles.py data/measured-serving/serving_benchmarks.csv /tmp/heldout.csv
"""
import collections
import csv
import statistics
import sys

PARALLEL = ("backend_version", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size",
            "prefill_num_workers", "prefill_tp_size", "prefill_attention_dp_size", "prefill_moe_ep_size",
            "decode_num_workers", "decode_tp_size", "decode_attention_dp_size", "decode_moe_ep_size")


def lower_median(x):
    x = sorted(x)
    return x[(len(x) - 1) // 2]


def best_factor(pairs):
    """The f minimising mean |f p / m − 1| over (predicted p, measured m):
    the median of m / p weighted by p / m."""
    pts = sorted((m / p, p / m) for p, m in pairs)
    half, acc = sum(w for _, w in pts) / 2, 0.0
    for r, w in pts:
        acc += w
        if acc >= half:
            return r
    return 1.0


def concurrency(r):
    src = r["silicon_data_source"]
    if "silicon_concurrency=" in src:
        return src.split("silicon_concurrency=")[1].split(";")[0]
    return r["batch_size"]


ORACLES = (
    ("none", None),
    ("the best single factor per cell", lambda r: ()),
    ("the best factor per (cell, engine version and every parallelism column)", lambda r: tuple(r[c] for c in PARALLEL)),
    ("the best factor per (cell, concurrency)", concurrency),
    ("the best factor per (cell, input and output length)", lambda r: (r["isl"], r["osl"])),
)


def main():
    data, heldout = sys.argv[1], sys.argv[2]
    rows = {r["id"]: r for r in csv.DictReader(open(data, newline=""))}
    cells = collections.defaultdict(list)
    for x in csv.DictReader(open(heldout, newline="")):
        if not x["predicted_ttft_ms"]:
            continue
        r = rows[x["id"]]
        cells[(r["system"], r["model_path"], r["backend"], r["mode"])].append(
            (r, float(x["predicted_ttft_ms"]), float(x["predicted_tpot_ms"])))
    for name, key in ORACLES:
        tt, tp = [], []
        for rs in cells.values():
            groups = collections.defaultdict(list)
            for r, pt, pp in rs:
                groups[key(r) if key else None].append((r, pt, pp))
            et, ep = [], []
            for g in groups.values():
                a = [(pt, float(r["silicon_ttft_ms"])) for r, pt, _ in g]
                b = [(pp, float(r["silicon_tpot_ms"])) for r, _, pp in g]
                fa, fb = (best_factor(a), best_factor(b)) if key else (1.0, 1.0)
                et += [abs(fa * p / m - 1) for p, m in a]
                ep += [abs(fb * p / m - 1) for p, m in b]
            tt.append(100 * statistics.mean(et))
            tp.append(100 * statistics.mean(ep))
        print(f"{name}: TTFT {lower_median(tt):.1f}%, TPOT {lower_median(tp):.1f}%, "
              f"cells within 20% TTFT {sum(1 for t in tt if t <= 20)} of {len(tt)}")


if __name__ == "__main__":
    main()
