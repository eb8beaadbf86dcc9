#!/usr/bin/env python3
"""Issue 3's figures: test 0-1 loss and examples per second of the binary boosters.

Runs `flowboost eval` (release build) with the holdout protocol (train file, then test file,
still learning) on a9a, adult and census-income, for single (linear and vfdt), online-bbm,
adaboost-ol, adaboost-ol-s and oza, with N = 10 and N = 100, linear and vfdt weak learners,
on the sequential engine and on the dataflow engine with 2 workers. Writes a markdown table
and a JSON file. Usage:

    scripts/binary_table.py [--out bench-out/binary] [--datasets a9a,adult,census]
                            [--learners 10,100] [--engines sequential,dataflow2] [--quick]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("FLOWBOOST_SHARED", os.path.join(ROOT, "..", "shared"))
DATA = os.path.join(SHARED, "data")

DATASETS = {
    "a9a": ["--data", f"{DATA}/a9a/a9a", "--test", f"{DATA}/a9a/a9a.t"],
    "adult": ["--data", f"{DATA}/adult/adult.data", "--test", f"{DATA}/adult/adult.test"],
    "census": ["--data", f"{DATA}/census-income/census-income.data.gz",
               "--test", f"{DATA}/census-income/census-income.test.gz", "--ignore", "25"],
}
# The paper's Table 3 (test 0-1 loss): VW baseline, Online BBM, AdaBoost.OL.
PAPER = {"a9a": (0.1509, 0.1495, 0.1497), "adult": (0.1543, 0.1526, 0.1536),
         "census": (0.0471, 0.0469, 0.0469)}
ALGOS = ["single", "online-bbm", "adaboost-ol", "adaboost-ol-s", "oza"]


def run(binary, args):
    cmd = [binary, "eval", *args, "--json"]
    t = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, " ".join(cmd), out.stderr.strip()
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["wall_seconds"] = time.time() - t
    return r, " ".join(cmd), ""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(ROOT, "bench-out", "binary"))
    p.add_argument("--datasets", default="a9a,adult,census")
    p.add_argument("--learners", default="10,100")
    p.add_argument("--weak", default="linear,vfdt")
    p.add_argument("--engines", default="sequential,dataflow2")
    p.add_argument("--tree-params", default="random")
    p.add_argument("--seed", default="1")
    args = p.parse_args()
    if not os.path.isdir(DATA):
        sys.exit(f"no data at {DATA}")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    binary = os.path.join(target, "release", "flowboost")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for ds in args.datasets.split(","):
        for weak in args.weak.split(","):
            for algo in ALGOS:
                for n in ([1] if algo == "single" else [int(x) for x in args.learners.split(",")]):
                    for engine in args.engines.split(","):
                        eng = ["--engine", "sequential"] if engine == "sequential" else \
                            ["--engine", "dataflow", "--workers", engine.removeprefix("dataflow")]
                        a = ["--algo", algo, "--weak", weak, "--seed", args.seed,
                             "--tree-params", args.tree_params, *DATASETS[ds], *eng]
                        if algo != "single":  # one learner reads no --learners
                            a += ["--learners", str(n)]
                        r, cmd, err = run(binary, a)
                        row = {"dataset": ds, "algorithm": algo, "weak": weak, "learners": n,
                               "engine": engine, "command": cmd}
                        if r is None:
                            row["error"] = err
                        else:
                            row.update(zero_one_loss=r["zero_one_loss"], seconds=r["seconds"],
                                       examples_per_second=r["examples_per_second"])
                        rows.append(row)
                        print(json.dumps(row), flush=True)
    with open(os.path.join(args.out, "binary.json"), "w") as f:
        json.dump(rows, f, indent=1)
    lines = ["| dataset | weak | algorithm | N | engine | test 0-1 loss | examples/s | seconds |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['dataset']} | {r['weak']} | {r['algorithm']} | {r['learners']} | {r['engine']} | error | | |")
        else:
            lines.append(f"| {r['dataset']} | {r['weak']} | {r['algorithm']} | {r['learners']} | {r['engine']} | "
                         f"{r['zero_one_loss']:.4f} | {r['examples_per_second']:,.0f} | {r['seconds']:.1f} |")
    lines.append("")
    lines.append("The paper's Table 3 (test 0-1 loss, VW baseline / Online BBM / AdaBoost.OL): " +
                 "; ".join(f"{k} {v[0]} / {v[1]} / {v[2]}" for k, v in PAPER.items()))
    with open(os.path.join(args.out, "binary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
