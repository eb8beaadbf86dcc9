#!/usr/bin/env python3
"""The memory curve of a long generator run, with and without a model budget.

Runs `flowboost run --generator binary --examples N` (the release binary, pinned to one
CPU with taskset, under /usr/bin/time -v) twice, one run after the other: without a
budget and with `--max-model-bytes BUDGET`. Each time the job reports its progress
(every --every examples) the script reads the job's resident set (VmRSS in
/proc/PID/status) and prints, at the end, a table of examples seen against RSS in MB for
both runs, then each run's final progressive accuracy, wall and CPU seconds and peak RSS.

    scripts/model_budget_curve.py                       # 10,000,000 examples, 64M
    scripts/model_budget_curve.py --examples 1000000 --budget 16M --every 100000
    scripts/model_budget_curve.py --runs budget        # only the run with the budget

Build first: cargo build --release --bins.
"""

import argparse
import os
import re
import subprocess
import sys
import time

PROGRESS = re.compile(r"flowboost: (\d+) examples, progressive accuracy ([0-9.]+)")
DONE = re.compile(r"flowboost: done: .* progressive accuracy ([0-9.]+)")


def child_pid(pid, timeout=10.0):
    """The first child of `pid` (the job under /usr/bin/time)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.01)
    return None


def rss_mb(pid):
    """VmRSS of `pid` in MB (10^6 bytes), or None once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        return None
    return None


def run(args, label, extra):
    cmd = [
        "taskset", "-c", str(args.cpu), "/usr/bin/time", "-v", args.bin, "run",
        "--generator", "binary", "--examples", str(args.examples),
        "--report-every", str(args.every), "--output", "/dev/null",
    ] + extra
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    started = time.time()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    job = child_pid(proc.pid)
    curve = []  # (examples, rss MB, accuracy, wall seconds)
    result = {"cmd": " ".join(cmd)}
    for line in proc.stderr:
        m = PROGRESS.search(line)
        if m:
            rss = rss_mb(job) if job else None
            sample = (int(m.group(1)), rss, float(m.group(2)), time.time() - started)
            curve.append(sample)
            # Each sample as it comes, so that a run cut short still leaves its curve.
            print(f"# {label}: {sample[0]} examples, RSS {rss} MB, accuracy {sample[2]}, "
                  f"{sample[3]:.0f} s", flush=True)
            continue
        m = DONE.search(line)
        if m:
            result["accuracy"] = float(m.group(1))
        for key, label in [
            ("user", "User time (seconds):"),
            ("system", "System time (seconds):"),
            ("max_rss_kb", "Maximum resident set size (kbytes):"),
            ("wall", "Elapsed (wall clock) time (h:mm:ss or m:ss):"),
        ]:
            if line.strip().startswith(label):
                result[key] = line.strip()[len(label):].strip()
        if "error" in line.lower() or "panicked" in line:
            sys.stderr.write(line)
    proc.wait()
    if proc.returncode != 0:
        sys.exit(f"the run failed with exit code {proc.returncode}")
    result["curve"] = curve
    return result


def wall_seconds(text):
    parts = [float(p) for p in text.split(":")]
    s = 0.0
    for p in parts:
        s = s * 60 + p
    return s


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--examples", type=int, default=10_000_000)
    p.add_argument("--budget", default="64M")
    p.add_argument("--every", type=int, default=500_000, help="examples between samples")
    p.add_argument("--cpu", type=int, default=1, help="the CPU to pin the runs to")
    p.add_argument("--bin", default=os.path.join("target", "release", "flowboost"))
    p.add_argument("--runs", choices=["both", "none", "budget"], default="both",
                   help="which runs: both (no budget, then the budget), or one of them")
    args = p.parse_args()
    budget = f"--max-model-bytes {args.budget}"
    plan = {
        "none": [("no budget", [])],
        "budget": [(budget, ["--max-model-bytes", args.budget])],
    }
    order = ["none", "budget"] if args.runs == "both" else [args.runs]
    runs = [(label, run(args, label, extra)) for o in order for label, extra in plan[o]]
    if len(runs) == 1:
        runs.append(("(not run)", {"curve": []}))
    names = [n for n, _ in runs]
    print(f"| examples | RSS MB, {names[0]} | RSS MB, {names[1]} |")
    print("|---:|---:|---:|")
    samples = sorted({e for _, r in runs for e, *_ in r["curve"]})
    by_run = [{e: rss for e, rss, *_ in r["curve"]} for _, r in runs]
    for e in samples:
        cells = []
        for b in by_run:
            v = b.get(e)
            cells.append("" if v is None else f"{v:.0f}")
        print(f"| {e:,} | {cells[0]} | {cells[1]} |")
    print()
    print("| run | final accuracy | wall s | CPU s (user + sys) | peak RSS MB |")
    print("|---|---:|---:|---:|---:|")
    for name, r in runs:
        if "wall" not in r:
            continue
        cpu = float(r.get("user", "nan")) + float(r.get("system", "nan"))
        wall = wall_seconds(r.get("wall", "nan"))
        peak = int(r.get("max_rss_kb", "0")) * 1024 / 1e6
        print(f"| {name} | {r.get('accuracy', float('nan')):.4f} | {wall:.0f} | {cpu:.0f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
