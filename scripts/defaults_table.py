#!/usr/bin/env python3
"""Issue 17's figures for the thresholding learners' defaults: the old defaults, the new
defaults and the Hedge grid (`--grid`), out of the box (no `--scale`, no tuning), beside
the tuned figures of docs/thresholding.md and the paper's Table 2.

Protocol (docs/thresholding.md's, without the batch scaling): one pass over the shuffled
MULAN training file (`--shuffle S --seed S` for each seed S), then the test file with the
model frozen (`--frozen-test`). The paper's F1 = 2 P R / (P + R) of the mean example-based
precision and recall, in %, mean +- sd over the seeds; wall seconds of the whole run
(reading included).

    before    the defaults before issue 17: raw features, M = 1, eta = 1
              (`--online-scaling none --repetitions 1 --eta 1`; the kernel width was and
              is 1; pa1-br: `--online-scaling none`)
    default   the command line's defaults now: online min-max scaling, M = L
    grid      `--grid`: the Hedge grid, the other options at their defaults

Every run is pinned to one core (`taskset -c 1`) and runs alone. Writes the markdown table
to stdout; one JSON line per run to OUT/runs.jsonl (reused when rerun).

    scripts/defaults_table.py [--out bench-out/defaults] [--seeds 1-3]
        [--datasets emotions,bibtex,mediamill_reduced] [--binary target/release/flowboost]
"""
import argparse
import json
import math
import os
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("FLOWBOOST_SHARED", os.path.join(ROOT, "..", "shared"))
DATA = os.path.join(SHARED, "data")

FILES = {
    "emotions": ("emotions", "emotions", "emotions.xml"),
    "scene": ("scene", "scene", "scene.xml"),
    "yeast": ("yeast", "yeast", "yeast.xml"),
    "bibtex": ("bibtex", "bibtex", "bibtex.xml"),
    "mediamill_reduced": ("mediamill_reduced", "mediamill", "mediamill.xml"),
}

# (dataset, algorithm) -> (tuned F1 of docs/thresholding.md's table, the paper's F1 or None)
REFERENCE = {
    ("emotions", "falt-kernel"): (72.33, 71.52),
    ("emotions", "falt"): (57.45, None),
    ("emotions", "salt"): (62.05, None),
    ("emotions", "pa1-br"): (52.29, None),
    ("scene", "falt-kernel"): (75.94, 74.17),
    ("yeast", "falt-kernel"): (67.62, 68.23),
    ("bibtex", "falt"): (44.98, 44.25),
    ("bibtex", "salt"): (47.02, 46.35),
    ("bibtex", "pa1-br"): (40.22, 40.61),
    ("mediamill_reduced", "falt"): (42.73, None),
    ("mediamill_reduced", "salt"): (44.32, None),
    ("mediamill_reduced", "falt-kernel"): (56.12, 61.70),
    ("mediamill_reduced", "pa1-br"): (46.82, None),
}

ALGOS = {
    "emotions": ["falt-kernel", "falt", "salt"],
    "scene": ["falt-kernel"],
    "yeast": ["falt-kernel"],
    "bibtex": ["salt", "falt", "pa1-br"],
    "mediamill_reduced": ["falt", "salt", "falt-kernel", "pa1-br"],
}

SETTINGS = {
    "before": ["--online-scaling", "none", "--repetitions", "1", "--eta", "1"],
    "default": [],
    "grid": ["--grid"],
}


def seeds_of(s):
    out = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def mean_sd(xs):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "bench-out", "defaults"))
    ap.add_argument("--seeds", default="1-3")
    ap.add_argument("--datasets", default="emotions,bibtex,mediamill_reduced")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "flowboost"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cache_path = os.path.join(args.out, "runs.jsonl")
    cache = {}
    if os.path.exists(cache_path):
        with open(cache_path) as f:
            for line in f:
                r = json.loads(line)
                cache[r["cmd"]] = r
    rows = []
    for ds in args.datasets.split(","):
        folder, stem, xml = FILES[ds]
        d = os.path.join(DATA, folder)
        data = ["--data", f"{d}/{stem}-train.arff", "--test", f"{d}/{stem}-test.arff",
                "--xml", f"{d}/{xml}", "--frozen-test"]
        for algo in ALGOS[ds]:
            for name, extra in SETTINGS.items():
                if algo.startswith("pa"):
                    # The PA baselines read neither M nor the grid; only the scaling is new.
                    if name == "grid":
                        continue
                    if name == "before":
                        extra = ["--online-scaling", "none"]
                f1s, secs, shown = [], [], None
                for s in seeds_of(args.seeds):
                    cmd = ["eval", "--algo", algo, *extra, *data, "--shuffle", str(s),
                           "--seed", str(s), "--json"]
                    key = " ".join(cmd)
                    if key not in cache:
                        t0 = time.time()
                        out = subprocess.run(["taskset", "-c", "1", args.binary, *cmd],
                                             capture_output=True, text=True)
                        wall = time.time() - t0
                        if out.returncode != 0:
                            raise SystemExit(f"FAILED: {key}\n{out.stderr}")
                        report = json.loads(out.stdout.strip().splitlines()[-1])
                        cache[key] = {"cmd": key, "report": report, "wall": wall}
                        with open(cache_path, "a") as f:
                            f.write(json.dumps(cache[key]) + "\n")
                    r = cache[key]["report"]
                    p, q = r["precision"], r["recall"]
                    f1s.append(100 * (2 * p * q / (p + q) if p + q > 0 else 0.0))
                    secs.append(cache[key]["wall"])
                    shown = " ".join(["flowboost", "eval", "--algo", algo, *extra])
                m, sd = mean_sd(f1s)
                tuned, paper = REFERENCE.get((ds, algo), (None, None))
                rows.append((ds, algo, name, len(f1s), m, sd, sum(secs) / len(secs), tuned,
                             paper, shown))
                print(f"{ds} {algo} {name}: {m:.2f} +- {sd:.2f}", flush=True)
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    print()
    print("| data | algorithm | setting | n | F1 | wall s | tuned F1 | paper F1 | command |")
    print("|---|---|---|---|---|---|---|---|---|")
    for ds, algo, name, n, m, sd, s, tuned, paper, shown in rows:
        print(f"| {ds} | {algo} | {name} | {n} | {m:.2f} ± {sd:.2f} | {s:.2f} | {fmt(tuned)} | "
              f"{fmt(paper)} | `{shown}` |")


if __name__ == "__main__":
    main()
