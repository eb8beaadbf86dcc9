#!/usr/bin/env python3
"""Two flowboost binaries, one tree ensemble, ten seeds: does a change in the trees move
accuracy beyond seed noise? (issue 18: "show that accuracy does not move beyond noise
over 10 seeds" where a different rounding moves a split).

    scripts/tree_seeds.py OLD_BIN NEW_BIN [--seeds 1-10] [--datasets a9a,mushrooms]
                          [--algo oza] [--learners 10] [--tree-params random]

For each data set and seed S it runs, with each binary, one after another:

    BIN eval --algo ALGO --weak vfdt --learners N --tree-params P --seed S --shuffle S
             --data ... [--test ...] --predictions FILE --json

(holdout where the data set has a test file, else prequential over the shuffled file),
and prints per data set: mean and standard deviation of accuracy over the seeds for each
binary, the mean paired difference (new - old) with its standard error, and how many
seeds gave byte-identical predictions. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("FLOWBOOST_SHARED", ROOT.parent / "shared")) / "data"

DATASETS = {
    "a9a": ["--data", str(DATA / "a9a/a9a"), "--test", str(DATA / "a9a/a9a.t")],
    "mushrooms": ["--data", str(DATA / "mushrooms/mushrooms")],
    "nursery": ["--data", str(DATA / "nursery/nursery.csv")],
}


def seeds(spec: str) -> list[int]:
    out = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def run(binary: str, args: list[str], pred: Path) -> float:
    cmd = [binary, "eval", *args, "--predictions", str(pred), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])["accuracy"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--datasets", default="a9a,mushrooms")
    ap.add_argument("--algo", default="oza")
    ap.add_argument("--learners", default="10")
    ap.add_argument("--tree-params", default="random")
    a = ap.parse_args()
    print(f"| data | {a.algo}, {a.learners} trees ({a.tree_params}) | old accuracy | "
          "new accuracy | new - old (stderr) | identical predictions |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for ds in a.datasets.split(","):
            if ds not in DATASETS:
                sys.exit(f"unknown data set {ds}; known: {', '.join(DATASETS)}")
            old, new, same = [], [], 0
            for s in seeds(a.seeds):
                args = ["--algo", a.algo, "--weak", "vfdt", "--learners", a.learners,
                        "--tree-params", a.tree_params, "--seed", str(s), "--shuffle", str(s),
                        *DATASETS[ds]]
                if "--test" in DATASETS[ds]:
                    args += ["--protocol", "holdout"]
                po, pn = Path(tmp, "old.pred"), Path(tmp, "new.pred")
                old.append(run(a.old, args, po))
                new.append(run(a.new, args, pn))
                same += po.read_bytes() == pn.read_bytes()
            diff = [n - o for o, n in zip(old, new)]
            se = statistics.stdev(diff) / len(diff) ** 0.5 if len(diff) > 1 else 0.0
            sd = (lambda v: statistics.stdev(v) if len(v) > 1 else 0.0)
            print(f"| {ds} | seeds {a.seeds} | {statistics.mean(old):.4f} ± {sd(old):.4f} | "
                  f"{statistics.mean(new):.4f} ± {sd(new):.4f} | "
                  f"{statistics.mean(diff):+.4f} ({se:.4f}) | {same} of {len(diff)} |",
                  flush=True)


if __name__ == "__main__":
    main()
