#!/usr/bin/env python3
"""Issue 5's figures: the multi-label ranking boosters beside the paper's Table 3.

Part 1 (`--part table`): holdout protocol (the MULAN train file, then the test file, still
learning; the loss is the mean weighted rank loss on the test file), 100 VFDT trees with
the authors' per-tree random parameters, each on 20 random features, for

    single       one tree (the same random parameters), weight 1 per relevant label
    ada-olmr     Ada.OLMR
    bmr-rank     OnlineBMR, rank-loss potential, each gamma of the grid
    bmr-hinge    OnlineBMR, hinge-loss potential, each gamma of the grid

on emotions, scene (shuffled: MULAN's files are sorted by label set), yeast and
mediamill_reduced, over 10 seeds (1..10). The grid is {.2, .1, .01, .001} for small k and
{.05, .01, .005, .001} for mediamill (the paper's); "best BMR" is the gamma with the best
mean over the seeds. Reported: mean and standard deviation of the test rank loss, the
mean seconds (as measured, on a shared machine), and the Hamming loss and example-based
F1 of the label-set rule.

Part 2 (`--part timing`): one run each (seed 1, the second gamma of the grid) of
ada-olmr and online-bmr (both potentials) per dataset, with wall and CPU seconds (the
CPU seconds of the child process, exact with `--jobs 1`), for the run-time targets on a
shared machine.

Part 3 (`--part stream`): the built-in generator `mediamill` (43,907 examples, 120
features, 101 labels, about 4.4 relevant labels each), prequential, N = 100: examples per
second of ada-olmr and online-bmr on the dataflow engine with 1 and 2 workers.

Every run is cached (one JSON line per command in OUT/runs.jsonl), so an interrupted run
resumes where it stopped. Writes OUT/mlr_table.md and OUT/mlr_table.json. Usage:

    scripts/mlr_table.py [--out bench-out/mlr] [--part table,timing,stream] [--seeds 1-10]
                         [--datasets emotions,scene,yeast,mediamill_reduced] [--jobs 1]
                         [--stream-gamma 0.01] [--stream-potential hinge] [--binary PATH]

The binary is built with `cargo build --release` in $CARGO_TARGET_DIR (default target/).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("FLOWBOOST_SHARED", os.path.join(ROOT, "..", "shared"))
DATA = os.path.join(SHARED, "data")


def mulan(folder, stem, xml):
    d = os.path.join(DATA, folder)
    return ["--data", f"{d}/{stem}-train.arff", "--test", f"{d}/{stem}-test.arff",
            "--xml", f"{d}/{xml}"]


DATASETS = {
    "emotions": mulan("emotions", "emotions", "emotions.xml"),
    "scene": mulan("scene", "scene", "scene.xml"),
    "yeast": mulan("yeast", "yeast", "yeast.xml"),
    "mediamill_reduced": mulan("mediamill_reduced", "mediamill", "mediamill.xml"),
}
SHUFFLED = {"scene"}
SMALL_GRID = [0.2, 0.1, 0.01, 0.001]
LARGE_GRID = [0.05, 0.01, 0.005, 0.001]
GRID = {"emotions": SMALL_GRID, "scene": SMALL_GRID, "yeast": SMALL_GRID,
        "mediamill_reduced": LARGE_GRID}
# The paper's Table 3: (batch, Ada.OLMR loss, seconds, best BMR loss, seconds).
PAPER = {
    "emotions": (0.1699, 0.1600, 253, 0.1654, 611),
    "scene": (0.0720, 0.0881, 341, 0.0743, 1488),
    "yeast": (0.1820, 0.1874, 2675, 0.1836, 9170),
    "mediamill_reduced": (None, 0.0632, 4148, 0.0630, 288204),
}
TREES = ["--weak", "vfdt", "--tree-params", "random", "--feature-subset", "20"]


def seeds_of(spec):
    out = []
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


class Cache:
    def __init__(self, path):
        self.path = path
        self.runs = {}
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    r = json.loads(line)
                    self.runs[r["command"]] = r
        self.file = open(path, "a")

    def get(self, cmd):
        return self.runs.get(cmd)

    def put(self, cmd, reports, error, cpu):
        r = {"command": cmd, "reports": reports, "error": error,
             "load": os.getloadavg()[0], "cpu_seconds": cpu}
        self.runs[cmd] = r
        self.file.write(json.dumps(r) + "\n")
        self.file.flush()
        return r


def run(binary, cache, args):
    cmd = " ".join(["nice", binary, "eval", *args, "--json"])
    hit = cache.get(cmd)
    if hit is not None and not hit["error"]:
        return hit
    before = os.times()
    out = subprocess.run(["nice", binary, "eval", *args, "--json"], capture_output=True,
                         text=True)
    after = os.times()
    # CPU seconds of this child (user + system): exact with --jobs 1, mixed otherwise.
    cpu = (after.children_user - before.children_user) + (after.children_system -
                                                          before.children_system)
    if out.returncode != 0:
        print(f"FAILED: {cmd}\n{out.stderr.strip()}", file=sys.stderr)
        return cache.put(cmd, [], out.stderr.strip(), cpu)
    reports = [json.loads(line) for line in out.stdout.strip().splitlines()
               if line.startswith("{")]
    print(f"{time.strftime('%H:%M:%S')} {cmd.split(' eval ')[1][:150]}", file=sys.stderr)
    return cache.put(cmd, reports, "", cpu)


def mean_sd(xs):
    if not xs:
        return float("nan"), float("nan")
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd


def table_jobs(args):
    jobs = []
    for ds in args.datasets.split(","):
        for seed in seeds_of(args.seeds):
            base = [*DATASETS[ds], *TREES, "--seed", str(seed)]
            if ds in SHUFFLED:
                base += ["--shuffle", str(seed)]
            grid = ",".join(str(g) for g in GRID[ds])
            jobs.append((ds, "single", seed, [*base, "--algo", "single"]))
            jobs.append((ds, "ada-olmr", seed, [*base, "--algo", "ada-olmr", "--learners", "100"]))
            for pot in ["rank", "hinge"]:
                jobs.append((ds, f"bmr-{pot}", seed,
                             [*base, "--algo", "online-bmr", "--learners", "100",
                              "--potential", pot, "--gamma-grid", grid]))
    return jobs


def summarize_table(results, args):
    rows = []
    lines = ["| data | k | single vfdt | Ada.OLMR | s | best BMR rank (gamma) | s | "
             "best BMR hinge (gamma) | s | paper: batch / Ada.OLMR / best BMR |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for ds in args.datasets.split(","):
        cell = {}
        k = None
        for algo in ["single", "ada-olmr", "bmr-rank", "bmr-hinge"]:
            per_gamma = {}
            for (d, a, seed), r in results.items():
                if d != ds or a != algo or not r["reports"]:
                    continue
                reps = r["reports"][:-1] if algo.startswith("bmr") else r["reports"][-1:]
                for rep in reps:
                    k = rep["labels"]
                    g = rep["gamma"] if algo.startswith("bmr") else None
                    per_gamma.setdefault(g, []).append(rep)
            best = None
            for g, reps in per_gamma.items():
                rl = mean_sd([x["rank_loss"] for x in reps])
                sec = mean_sd([x["seconds"] for x in reps])[0]
                entry = {"dataset": ds, "algorithm": algo, "gamma": g, "runs": len(reps),
                         "rank_loss_mean": rl[0], "rank_loss_sd": rl[1], "seconds_mean": sec,
                         "hamming_loss_mean": mean_sd([x["hamming_loss"] for x in reps])[0],
                         "f1_mean": mean_sd([x["f1"] for x in reps])[0]}
                rows.append(entry)
                if best is None or rl[0] < best["rank_loss_mean"]:
                    best = entry
            cell[algo] = best
        paper = PAPER[ds]

        def fmt(e, gamma=False):
            if e is None:
                return "-"
            s = f"{e['rank_loss_mean']:.4f} ± {e['rank_loss_sd']:.4f}"
            if gamma:
                s += f" ({e['gamma']})"
            return s

        def sec(e):
            return "-" if e is None else f"{e['seconds_mean']:.1f}"

        p = " / ".join("-" if v is None else f"{v:.4f}" for v in (paper[0], paper[1], paper[3]))
        lines.append(f"| {ds} | {k} | {fmt(cell['single'])} | {fmt(cell['ada-olmr'])} | "
                     f"{sec(cell['ada-olmr'])} | {fmt(cell['bmr-rank'], True)} | "
                     f"{sec(cell['bmr-rank'])} | {fmt(cell['bmr-hinge'], True)} | "
                     f"{sec(cell['bmr-hinge'])} | {p} (s: {paper[2]} / {paper[4]}) |")
    lines.append("")
    lines.append("Every gamma (mean ± sd of the test rank loss; mean seconds; Hamming loss and "
                 "F1 of the top-m label-set rule):")
    lines.append("")
    lines.append("| data | algorithm | gamma | runs | rank loss | s | Hamming | F1 |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for e in rows:
        g = "-" if e["gamma"] is None else e["gamma"]
        lines.append(f"| {e['dataset']} | {e['algorithm']} | {g} | {e['runs']} | "
                     f"{e['rank_loss_mean']:.4f} ± {e['rank_loss_sd']:.4f} | "
                     f"{e['seconds_mean']:.1f} | {e['hamming_loss_mean']:.4f} | "
                     f"{e['f1_mean']:.4f} |")
    return lines, rows


def stream_jobs(args):
    jobs = []
    for algo in ["ada-olmr", "online-bmr"]:
        for workers in args.workers.split(","):
            a = ["--generator", "mediamill", "--protocol", "prequential", "--algo", algo,
                 "--learners", "100", *TREES, "--seed", "1", "--engine", "dataflow",
                 "--workers", workers]
            if algo == "online-bmr":
                a += ["--potential", args.stream_potential, "--gamma", str(args.stream_gamma)]
            jobs.append(("mediamill-generator", algo, int(workers), a))
    return jobs


def timing_jobs(args):
    jobs = []
    for ds in args.datasets.split(","):
        # `--engine sequential` (the default) keeps these commands apart from the table's.
        base = [*DATASETS[ds], *TREES, "--seed", "1", "--learners", "100",
                "--engine", "sequential"]
        if ds in SHUFFLED:
            base += ["--shuffle", "1"]
        g = str(GRID[ds][1])
        jobs.append((ds, "ada-olmr", 1, [*base, "--algo", "ada-olmr"]))
        for pot in ["rank", "hinge"]:
            jobs.append((ds, f"online-bmr {pot} {g}", 1,
                         [*base, "--algo", "online-bmr", "--potential", pot, "--gamma", g]))
    return jobs


def summarize_runs(results, label):
    lines = [f"| {label} | algorithm | workers | examples | wall s | CPU s | examples/s (wall) | "
             "rank loss | load (1 min) |", "|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for (ds, algo, workers), r in results.items():
        if not r["reports"]:
            continue
        rep = r["reports"][-1]
        cpu = r.get("cpu_seconds", float("nan"))
        rows.append({"data": ds, "algorithm": algo, "workers": workers,
                     "examples": rep["examples"], "seconds": rep["seconds"], "cpu_seconds": cpu,
                     "examples_per_second": rep["examples_per_second"],
                     "rank_loss": rep["rank_loss"], "load": r["load"], "command": r["command"]})
        lines.append(f"| {ds} | {algo} | {workers} | {rep['examples']} | {rep['seconds']:.1f} | "
                     f"{cpu:.1f} | {rep['examples_per_second']:.0f} | {rep['rank_loss']:.4f} | "
                     f"{r['load']:.1f} |")
    return lines, rows


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(ROOT, "bench-out", "mlr"))
    p.add_argument("--part", default="table,timing,stream")
    p.add_argument("--datasets", default="emotions,scene,yeast,mediamill_reduced")
    p.add_argument("--seeds", default="1-10")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--stream-gamma", type=float, default=0.01)
    p.add_argument("--stream-potential", default="hinge")
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--binary", help="use this flowboost binary (implies --no-build)")
    args = p.parse_args()
    parts = args.part.split(",")
    if "table" in parts and not os.path.isdir(DATA):
        sys.exit(f"no data at {DATA}")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    if not args.no_build and not args.binary:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    binary = args.binary or os.path.join(target, "release", "flowboost")
    os.makedirs(args.out, exist_ok=True)
    cache = Cache(os.path.join(args.out, "runs.jsonl"))
    md = [f"Generated by `scripts/mlr_table.py` on {time.strftime('%Y-%m-%d %H:%M')} "
          f"({os.cpu_count()} cores; seconds as measured, with the machine's load).", ""]
    summary = {}
    for part, make in [("table", table_jobs), ("timing", timing_jobs),
                       ("stream", stream_jobs)]:
        if part not in parts:
            continue
        jobs = make(args)
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [(j, pool.submit(run, binary, cache, j[3])) for j in jobs]
            results = {(j[0], j[1], j[2]): f.result() for j, f in futures}
        if part == "table":
            lines, rows = summarize_table(results, args)
        elif part == "timing":
            lines, rows = summarize_runs(results, "data (seed 1, one gamma)")
        else:
            lines, rows = summarize_runs(results, "stream")
        summary[part] = rows
        md += lines + [""]
    with open(os.path.join(args.out, "mlr_table.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(args.out, "mlr_table.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("\n".join(md))


if __name__ == "__main__":
    main()
