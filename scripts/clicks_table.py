#!/usr/bin/env python3
"""Issue 7's logged-click replay figures (docs/topk.md, "Logged clicks").

For each file of the Open Bandit Dataset sample (random/all, random/men, bts/all,
bts/men) and each top-k booster (topk-adaptive, topk-bbm; 10 VFDT trees, k = 3, the
other options at their defaults), runs

    flowboost replay-clicks --data FILE --algo ALGO --k 3 --seed S --json

for seeds 1..10 (progressive: each impression is predicted, then learned from its logged
feedback). Reports the logged policy's CTR, and the booster's top-3 CTR by IPW
(position-dependent) and by the position-independent IPW, each as the seed-1 estimate
with its standard error and as the mean and standard deviation over the seeds.

Writes OUT/clicks_table.md and OUT/clicks_table.json. Usage:

    scripts/clicks_table.py [--out bench-out/clicks] [--seeds 1-10] [--binary PATH]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

FILES = ["random/all/all.csv.gz", "random/men/men.csv.gz", "bts/all/all.csv.gz", "bts/men/men.csv.gz"]
ALGOS = ["topk-adaptive", "topk-bbm"]


def seeds(spec):
    a, _, b = spec.partition("-")
    return list(range(int(a), int(b or a) + 1))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(root, "bench-out", "clicks"))
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--data", default=os.path.join(root, "..", "shared", "data", "open_bandit_dataset_small"))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    ap.add_argument("--binary", default=os.path.join(target, "release", "flowboost"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = {}
    for f in FILES:
        path = os.path.join(args.data, f)
        if not os.path.isfile(path):
            print(f"skipping {f}: not found", file=sys.stderr)
            continue
        for algo in ALGOS:
            runs = []
            for s in seeds(args.seeds):
                cmd = [args.binary, "replay-clicks", "--data", path, "--algo", algo, "--k", "3",
                       "--seed", str(s), "--json"]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
                print(f"{f} {algo} seed {s}: ipw {runs[-1]['ipw_ctr']['estimate']:.5f}", file=sys.stderr)
            results[f"{f} {algo}"] = runs
    with open(os.path.join(args.out, "clicks_table.json"), "w") as fh:
        json.dump(results, fh)

    def pm(e):
        return f"{e['estimate']:.5f} ± {e['stderr']:.5f}"

    def over(runs, key):
        xs = [r[key]["estimate"] for r in runs]
        sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
        return f"{statistics.mean(xs):.5f} ± {sd:.5f}"

    lines = [
        "| log | booster | rows / clicks | logged CTR ± SE | IPW CTR ± SE (seed 1) | PI-IPW CTR ± SE (seed 1) | IPW mean ± sd (seeds) | PI-IPW mean ± sd (seeds) | clicked rows matched (pos / top-3), seed 1 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in results.items():
        f, algo = name.split(" ")
        r = runs[0]
        lines.append(
            f"| {f} | {algo} | {r['rows']} / {r['clicks']} | {pm(r['logged_ctr'])} | {pm(r['ipw_ctr'])} | "
            f"{pm(r['ipw_ctr_position_independent'])} | {over(runs, 'ipw_ctr')} | "
            f"{over(runs, 'ipw_ctr_position_independent')} | {r['matched_clicks']} / {r['matched_clicks_top_k']} |"
        )
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "clicks_table.md"), "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
