#!/usr/bin/env python3
"""Read the engine limits of the shipped disaggregated runs from their recipes.

The disaggregated InferenceX rows of data/measured-serving/serving_benchmarks.csv
record their worker layouts and concurrency but not the limits each worker
ran under. InferenceX's launch matrix, .github/configs/nvidia-master.yaml
(later configs/nvidia-master.yaml) in SemiAnalysisAI/InferenceX
(Apache-2.0), names for each disaggregated point the srt-slurm recipe it
ran (`CONFIG_FILE=recipes/...`), and NVIDIA/srt-slurm (Apache-2.0) holds
those recipes: the engine configuration of the prefill and decode workers
and the front end in front of them. This script writes, for every
disaggregated row with worker counts that the matrix names a recipe for:

  decode_max_batch   requests a decode rank runs at once (TensorRT-LLM's
                     max_batch_size, SGLang's max-running-requests); a
                     benchmark with more clients than the decode ranks
                     hold queues the rest for a slot
  prefill_max_batch  prompts a prefill rank runs at once
  prefill_max_tokens prompt tokens of one prefill iteration
  spec_decoding      mtp where every matching matrix point drafts tokens
  recipe             the recipe's path (several joined by a space)

A row is matched as inferencex_mtp.py matches the aggregated ones (model
prefix, GPU, framework, precision, image where the row names it, lengths,
both layouts, concurrency), in every version of the matrix. Of a recipe's
versions, the last committed on or before the row's measurement date is
read (the first, where none is earlier). A field on which the matched
recipes disagree is left empty, as is one a recipe does not set.

Usage (the repositories as `fetch github:SemiAnalysisAI/InferenceX` and
`fetch github:NVIDIA/srt-slurm` bring them):

  python3 scripts/inferencex_disagg.py \
      --repo /work/.mirror/SemiAnalysisAI+InferenceX/repo \
      --recipes /work/.mirror/NVIDIA+srt-slurm/repo \
      --data data/measured-serving/serving_benchmarks.csv \
      --out evaluator/perf/measured/disagg_recipes.csv

Needs PyYAML. The output is sorted by id; rerunning on the same inputs
writes the same bytes.
"""
import argparse
import collections
import csv
import subprocess
import sys

import yaml

import inferencex_mtp as ix

FRAMEWORKS = {"trtllm": ("dynamo-trt",), "sglang": ("dynamo-sglang",), "vllm": ("dynamo-vllm",)}


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


def layout(w):
    return (w.get("num-worker"), w.get("tp"), w.get("ep") or 1, bool(w.get("dp-attn")))


def config_file(*settings):
    for ss in settings:
        for s in ss or []:
            if isinstance(s, str) and s.startswith("CONFIG_FILE="):
                return s.split("=", 1)[1]
    return ""


def matrix(repo):
    points = collections.defaultdict(set)  # key -> {(spec, recipe)}
    n = 0
    for _, doc in ix.versions(repo):
        n += 1
        for _, e in doc.items():
            if not isinstance(e, dict) or not e.get("disagg"):
                continue
            gpu = ix.GPU.get(str(e.get("runner", "")).split("-")[0])
            if gpu is None:
                continue
            for sc in ix.seq_len_configs(e):
                for p in sc.get("search-space") or []:
                    pf, dc = p.get("prefill") or {}, p.get("decode") or {}
                    cf = config_file(pf.get("additional-settings"), dc.get("additional-settings"), p.get("additional-settings"))
                    key = (e.get("model-prefix"), gpu, e.get("framework"), e.get("precision"), ix.image(e.get("image")),
                           sc.get("isl"), sc.get("osl"), layout(pf), layout(dc))
                    for c in p.get("conc-list") or []:
                        points[key + (c,)].add((p.get("spec-decoding", "none"), cf))
    return points, n


class Recipes:
    """The recipes of an srt-slurm repository, every version of each."""

    def __init__(self, repo):
        self.repo = repo
        self.cache = {}

    def read(self, path, date):
        """The recipe at path as it stood on date (YYYY-MM-DD), or None."""
        if not path or ":" in path:
            return None  # (a variant within a file of several: not read)
        if path not in self.cache:
            vs = []
            for p in (path, path.replace("recipes/", "recipies/", 1)):
                for line in git(self.repo, "log", "--all", "--format=%H %cs", "--", p).splitlines():
                    h, d = line.split()
                    shown = subprocess.run(["git", "--git-dir", self.repo, "show", f"{h}:{p}"], capture_output=True, text=True)
                    if shown.returncode == 0:
                        try:
                            vs.append((d, h, yaml.load(shown.stdout, Loader=ix.Loader) or {}))
                        except yaml.YAMLError:
                            pass
            vs.sort(key=lambda v: (v[0], v[1]))
            self.cache[path] = vs
        vs = self.cache[path]
        if not vs:
            return None
        before = [v for v in vs if v[0] <= date]
        return (before[-1] if before else vs[0])[2]


def limits(rc):
    """A recipe's decode and prefill limits."""
    b = rc.get("backend") or {}
    out = {}
    t = b.get("trtllm_config")
    s = b.get("sglang_config")
    if isinstance(t, dict):
        d, p = t.get("decode") or {}, t.get("prefill") or {}
        out["decode_max_batch"] = d.get("max_batch_size")
        out["prefill_max_batch"] = p.get("max_batch_size")
        out["prefill_max_tokens"] = p.get("max_num_tokens")
    elif isinstance(s, dict):
        d, p = s.get("decode") or {}, s.get("prefill") or {}
        out["decode_max_batch"] = d.get("max-running-requests")
        out["prefill_max_batch"] = p.get("max-running-requests")
        out["prefill_max_tokens"] = p.get("chunked-prefill-size")
    return {k: v for k, v in out.items() if isinstance(v, int) and v > 0}


FIELDS = ("decode_max_batch", "prefill_max_batch", "prefill_max_tokens")


def row_layouts(w, tp, dp, ep):
    """The matrix's ways of writing a row's worker layout (tp_writings)."""
    return {(w, t, ep, dpa) for t, dpa in ix.tp_writings(tp, dp)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--recipes", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    points, n = matrix(ix.gitdir(a.repo))
    index = collections.defaultdict(list)
    for k, v in points.items():
        index[k[:4] + k[5:7]].append((k, v))
    recipes = Recipes(ix.gitdir(a.recipes))
    num = ix.num
    out = []
    with open(a.data, newline="") as f:
        for r in csv.DictReader(f):
            if r["mode"] != "disagg" or not r["prefill_num_workers"] or not r["decode_num_workers"]:
                continue
            fields = [x.strip() for x in r["silicon_data_source"].split(";")]
            src = dict(x.split("=", 1) for x in fields if "=" in x)
            img = ix.image(src.get("image") or (fields[-1] if "=" not in fields[-1] else ""))
            date = src.get("measured", "")[:10]
            conc = num(src.get("silicon_concurrency"))
            model = src.get("model") or r["model_path"].split("/")[-1]
            pre = next((v for k, v in ix.PREFIX.items() if model.startswith(k)), None)
            P = row_layouts(num(r["prefill_num_workers"]), num(r["prefill_tp_size"]),
                           max(num(r["prefill_attention_dp_size"]), 1), max(num(r["prefill_moe_ep_size"]), 1))
            D = row_layouts(num(r["decode_num_workers"]), num(r["decode_tp_size"]),
                           max(num(r["decode_attention_dp_size"]), 1), max(num(r["decode_moe_ep_size"]), 1))
            hits = set()
            for fw in FRAMEWORKS.get(r["backend"], ()):
                for k, v in index.get((pre, r["system"], fw, r["precision"], num(r["isl"]), num(r["osl"])), []):
                    if k[4] and img and k[4] != img:
                        continue
                    if k[7] in P and k[8] in D and k[9] == conc:
                        hits |= v
            if not hits:
                continue
            specs = {s for s, _ in hits}
            stp = sorted({cf for s, cf in hits if s != "mtp" and cf})
            if any(":" not in cf for cf in stp):
                # A variant within a file of several (path:override) is
                # the same run as a plain recipe of another version of the
                # matrix; only the plain one is read.
                stp = [cf for cf in stp if ":" not in cf]
            row = {"id": r["id"], "spec_decoding": "mtp" if specs == {"mtp"} else "", "recipe": " ".join(stp)}
            got = [limits(rc) for rc in (recipes.read(cf, date) for cf in stp) if rc is not None]
            for fld in FIELDS:
                vals = {g.get(fld) for g in got}
                row[fld] = vals.pop() if len(vals) == 1 and None not in vals else ""
            out.append(row)
    out.sort(key=lambda x: x["id"])
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", *FIELDS, "spec_decoding", "recipe"], lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print(f"{len(out)} disaggregated runs matched in {n} versions of {ix.CONFIG}, "
          f"{sum(1 for x in out if x['decode_max_batch'] != '')} with a decode limit", file=sys.stderr)


if __name__ == "__main__":
    main()
