#!/usr/bin/env python3
"""Find the shipped benchmark runs that ran with speculative decoding (MTP).

The InferenceX rows of data/measured-serving/serving_benchmarks.csv record
their engine image but not whether the run drafted tokens with a multi-token
prediction (MTP) head. InferenceX's launch matrix,
.github/configs/nvidia-master.yaml (later configs/nvidia-master.yaml) in
SemiAnalysisAI/InferenceX (Apache-2.0),
says it: each entry names its image, and each point of its search space its
layout (tp, ep, dp-attn), its concurrencies and `spec-decoding: mtp` or none.
A row is an MTP run when every entry of every version of that file that
matches it (model prefix, GPU, framework, precision, image, input and output
lengths, layout, concurrency) is an MTP point; a row matched by both kinds,
or by none, is left as it is.

Usage (the repository as `fetch github:SemiAnalysisAI/InferenceX` brings it):

  python3 scripts/inferencex_mtp.py --repo /work/.mirror/SemiAnalysisAI+InferenceX/repo \
      --data data/measured-serving/serving_benchmarks.csv \
      --out evaluator/perf/measured/speculative_runs.csv

Needs PyYAML. The output is sorted by id; rerunning on the same inputs
writes the same bytes.
"""
import argparse
import collections
import csv
import subprocess
import sys

import yaml

CONFIGS = (".github/configs/nvidia-master.yaml", "configs/nvidia-master.yaml")
CONFIG = "nvidia-master.yaml"
GPU = {"b200": "b200_sxm", "b300": "b300_sxm", "h200": "h200_sxm", "h100": "h100_sxm", "gb200": "gb200", "gb300": "gb300"}
FRAMEWORK = {"sglang": "sglang", "trt": "trtllm", "vllm": "vllm"}
# The rows' model names (silicon_data_source model=) to the matrix's prefixes.
PREFIX = {"DeepSeek-R1": "dsr1", "DeepSeek-V3": "dsr1", "GPT-OSS-120B": "gptoss", "Kimi-K2.5": "kimik2.5",
          "Qwen3.5": "qwen3.5", "MiniMax": "minimaxm2.5", "GLM": "glm5"}


def num(x):
    """A row's integer column, 0 where it is empty."""
    return int(x) if x else 0


def image(s):
    return (s or "").replace("nvcr.io#", "nvcr.io/").strip()


# PyYAML's C loader where it was built with libyaml (the same documents,
# some ten times faster over the matrix's hundreds of versions).
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def gitdir(repo):
    """The git directory of repo: repo itself when it is one (a bare copy,
    as fetch brings it), else its checkout's."""
    r = subprocess.run(["git", "-C", repo, "rev-parse", "--git-dir"], capture_output=True, text=True)
    if r.returncode == 0:
        d = r.stdout.strip()
        return d if d.startswith("/") else f"{repo}/{d}"
    return repo


def versions(repo):
    """Every version of the matrix on the default branch, at either path."""
    for path in CONFIGS:
        out = subprocess.run(["git", "--git-dir", repo, "log", "--format=%H", "--", path],
                             check=True, capture_output=True, text=True).stdout.split()
        for h in out:
            shown = subprocess.run(["git", "--git-dir", repo, "show", f"{h}:{path}"], capture_output=True, text=True)
            if shown.returncode != 0:
                continue  # the commit that moved or deleted it
            try:
                yield h, yaml.load(shown.stdout, Loader=Loader) or {}
            except yaml.YAMLError:
                continue  # a version that does not parse says nothing


def tp_writings(tp, dp):
    """The matrix's (tp, dp-attn) for a row's tp and attention DP: the rows
    write attention DP as tp 1 × dp N or as tp N; the matrix as tp N with
    dp-attn."""
    for t in {tp, tp * dp}:
        for dpa in (dp > 1,) if t == tp and dp > 1 else (False, True):
            yield t, dpa


def seq_len_configs(e):
    """An entry's fixed-length configurations: its seq-len-configs, or in
    the later format its scenarios' fixed-seq-len ones (the other
    scenarios, agentic traces, have no fixed lengths)."""
    return e.get("seq-len-configs") or (e.get("scenarios") or {}).get("fixed-seq-len") or []


def matrix(repo):
    points = collections.defaultdict(set)  # key -> {(spec, entry name)}
    n = 0
    for _, doc in versions(repo):
        n += 1
        for name, e in doc.items():
            if not isinstance(e, dict) or e.get("disagg"):
                continue
            gpu = GPU.get(str(e.get("runner", "")).split("-")[0])
            fw = FRAMEWORK.get(e.get("framework"))
            if gpu is None or fw is None:
                continue
            for sc in seq_len_configs(e):
                for p in sc.get("search-space") or []:
                    concs = list(p.get("conc-list") or [])
                    c, end = p.get("conc-start"), p.get("conc-end")
                    while c and end and c <= end:
                        concs.append(c)
                        c *= 2
                    key = (e.get("model-prefix"), gpu, fw, e.get("precision"), image(e.get("image")),
                           sc.get("isl"), sc.get("osl"), p.get("tp"), p.get("ep") or 1, bool(p.get("dp-attn")))
                    for c in concs:
                        points[key + (c,)].add((p.get("spec-decoding", "none"), name))
    return points, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    points, n = matrix(gitdir(a.repo))
    found = []
    with open(a.data, newline="") as f:
        for r in csv.DictReader(f):
            if r["mode"] != "agg":
                continue
            src = dict(kv.strip().split("=", 1) for kv in r["silicon_data_source"].split(";") if "=" in kv)
            if "image" not in src:
                continue
            pre = next((v for k, v in PREFIX.items() if src.get("model", "").startswith(k)), None)
            tp, dp, ep = num(r["tp_size"]), max(num(r["attention_dp_size"]), 1), max(num(r["moe_ep_size"]), 1)
            conc = num(src.get("silicon_concurrency"))
            hits = set()
            for t, dpa in tp_writings(tp, dp):
                hits |= points.get((pre, r["system"], r["backend"], r["precision"], image(src["image"]),
                                    num(r["isl"]), num(r["osl"]), t, ep, dpa, conc), set())
            specs = {s for s, _ in hits}
            if specs == {"mtp"}:
                found.append((r["id"], "mtp", " ".join(sorted({nm for _, nm in hits})), image(src["image"])))
    found.sort()
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "spec_decoding", "config_entries", "image"])
        w.writerows(found)
    print(f"{len(found)} MTP runs from {n} versions of {CONFIG}", file=sys.stderr)


if __name__ == "__main__":
    main()
