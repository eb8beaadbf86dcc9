#!/usr/bin/env python3
"""The Python package, measured (issue 46's figures), on a9a, release build, pinned.

    scripts/python_bench.py                       # installs ./python into target/python-venv
    scripts/python_bench.py --river-examples 5000 --learners 10,100

Run with any Python 3.9+: it re-runs itself inside target/python-venv (created, and
`pip install "./python[test]"` run, when the package is missing there: a release build
of the Rust core, with River pinned), pinned to CPU 1 (`os.sched_setaffinity`).

For each N in --learners, on a9a (32,561 examples, 123 features):

- **one at a time**: a Python `for` loop of `predict_one(x)` then `learn_one(x, y)` over
  the examples (River's own progressive validation does the same), for
  `flowboost.AdaBoostOL(learners=N, seed=1)` and River's
  `ensemble.AdaBoostClassifier(tree.HoeffdingTreeClassifier(), n_models=N, seed=1)`
  (on the first --river-examples examples: River is slow), in this one process: the
  examples per CPU second of each (`time.process_time`, this process's CPU), wall
  seconds beside, and the accuracy of the predictions;
- **batches**: `predict_learn_many(X, y)` (one pass a row, as eval), and `predict_many(X)`
  then `learn_many(X, y)` (two), over blocks of --batch rows (a pandas DataFrame of the
  123 columns; test-then-train by block) against `flowboost eval
  --data a9a --algo adaboost-ol --learners N` (prequential, one example at a time, its
  own process: CPU seconds from rusage, and its own "N examples in S s"), the ratio of
  examples per CPU second (the issue asks for at least 0.7).

Output: a Markdown table on stdout, JSON in --out-dir/results.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / "target" / "python-venv"
PY = VENV / "bin" / "python"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ensure_venv() -> None:
    """Re-runs this script in the venv with the package installed."""
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    if not PY.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    if subprocess.run([str(PY), "-c", "import flowboost, river, pandas"],
                      capture_output=True).returncode:
        log(f'pip install "./python[test]" into {VENV} (a release build of the Rust core)')
        subprocess.run([str(PY), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", "./python[test]"], cwd=REPO, check=True)
    os.execv(str(PY), [str(PY), __file__, *sys.argv[1:]])


def timed(fn):
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - t0


def one_at_a_time(model, rows) -> float:
    """predict_one then learn_one on every row; returns the accuracy."""
    right = 0
    for x, y in rows:
        right += model.predict_one(x) == y
        model.learn_one(x, y)
    return right / len(rows)


def batches(model, frame, ys, size: int, one_pass: bool) -> float:
    """Test-then-train by blocks: `predict_learn_many` (one pass a row), or
    `predict_many` then `learn_many` (two); returns the accuracy."""
    right = 0
    for lo in range(0, len(ys), size):
        X = frame.iloc[lo:lo + size]
        y = ys[lo:lo + size]
        if one_pass:
            pred = model.predict_learn_many(X, y)
        else:
            pred = model.predict_many(X)
            model.learn_many(X, y)
        right += int((pred.to_numpy() == y).sum())
    return right / len(ys)


def eval_cli(bin_: str, data: Path, n: int) -> dict:
    cmd = ["taskset", "-c", "1", bin_, "eval", "--data", str(data), "--algo", "adaboost-ol",
           "--learners", str(n), "--seed", "1"]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(f"{' '.join(cmd)}: {p.stderr[-2000:]}")
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return dict(cmd=" ".join(cmd), cpu_s=cpu, wall_s=wall, log=p.stderr[-600:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "a9a" / "a9a"))
    ap.add_argument("--learners", default="10,100")
    ap.add_argument("--river-examples", type=int, default=5000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "flowboost"))
    ap.add_argument("--out-dir", default="/tmp/python-bench")
    args = ap.parse_args()
    ensure_venv()
    import flowboost
    import numpy as np
    import pandas as pd
    import river
    from river import ensemble, tree

    os.sched_setaffinity(0, {1})
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = flowboost.read_dataset(args.data)
    rows = data.rows
    names = [a["name"] for a in json.loads(data.schema)["attributes"]]
    frame = pd.DataFrame([x for x, _ in rows], columns=names).fillna(0.0).astype(np.float64)
    ys = np.array([y for _, y in rows])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True).stdout.strip()
    res = dict(date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               commit=commit, river=river.__version__, examples=len(rows),
               river_examples=min(args.river_examples, len(rows)), runs={})
    for n in [int(v) for v in args.learners.split(",")]:
        r = {}
        fb = flowboost.AdaBoostOL(learners=n, seed=1, schema=data.schema)
        acc, cpu, wall = timed(lambda: one_at_a_time(fb, rows))
        r["flowboost_one"] = dict(accuracy=acc, cpu_s=cpu, wall_s=wall, per_cpu_s=len(rows) / cpu)
        log(f"N={n} flowboost one at a time: {len(rows)} in {cpu:.2f} CPU s ({wall:.2f} wall), "
            f"accuracy {acc:.4f}")
        head = rows[:res["river_examples"]]
        rv = ensemble.AdaBoostClassifier(model=tree.HoeffdingTreeClassifier(), n_models=n, seed=1)
        acc, cpu, wall = timed(lambda: one_at_a_time(rv, head))
        r["river_one"] = dict(accuracy=acc, cpu_s=cpu, wall_s=wall, per_cpu_s=len(head) / cpu)
        log(f"N={n} River one at a time: {len(head)} in {cpu:.2f} CPU s ({wall:.2f} wall), "
            f"accuracy {acc:.4f}")
        fb_head = flowboost.AdaBoostOL(learners=n, seed=1, schema=data.schema)
        acc, cpu, wall = timed(lambda: one_at_a_time(fb_head, head))
        r["flowboost_one_head"] = dict(accuracy=acc, cpu_s=cpu, wall_s=wall,
                                       per_cpu_s=len(head) / cpu)
        for key, one_pass in (("flowboost_batches", True), ("flowboost_batches_two", False)):
            fb = flowboost.AdaBoostOL(learners=n, seed=1, schema=data.schema)
            acc, cpu, wall = timed(lambda: batches(fb, frame, ys, args.batch, one_pass))
            r[key] = dict(accuracy=acc, cpu_s=cpu, wall_s=wall, per_cpu_s=len(rows) / cpu)
            log(f"N={n} flowboost batches of {args.batch} ({key}): {cpu:.2f} CPU s "
                f"({wall:.2f} wall), accuracy {acc:.4f}")
        e = eval_cli(args.bin, Path(args.data), n)
        e["per_cpu_s"] = len(rows) / e["cpu_s"]
        m = re.search(r"accuracy[^0-9]*([0-9.]+)", e["log"])
        e["accuracy"] = float(m.group(1)) if m else None
        r["eval"] = e
        log(f"N={n} flowboost eval: {e['cpu_s']:.2f} CPU s ({e['wall_s']:.2f} wall)")
        r["ratio_one_vs_river_head"] = (r["flowboost_one_head"]["per_cpu_s"]
                                        / r["river_one"]["per_cpu_s"])
        r["ratio_batches_vs_eval"] = r["flowboost_batches"]["per_cpu_s"] / e["per_cpu_s"]
        r["ratio_batches_two_vs_eval"] = (r["flowboost_batches_two"]["per_cpu_s"]
                                          / e["per_cpu_s"])
        res["runs"][n] = r
        (out / "results.json").write_text(json.dumps(res, indent=1))
    print(f"{res['date']}, commit {res['commit']}, River {res['river']}, a9a "
          f"({res['examples']:,} examples; River on the first {res['river_examples']:,}), "
          "pinned to CPU 1\n")
    print("| N | flowboost, predict_one + learn_one: examples / CPU s (wall s), accuracy | "
          "River AdaBoostClassifier, the first examples: / CPU s (wall s), accuracy; "
          "flowboost on them | flowboost / River | batches, predict_learn_many (predict_many "
          "+ learn_many): / CPU s (wall s) | flowboost eval: / CPU s (wall s) | batches / "
          "eval |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n, r in res["runs"].items():
        one, rv, head, b, b2, e = (r["flowboost_one"], r["river_one"], r["flowboost_one_head"],
                                   r["flowboost_batches"], r["flowboost_batches_two"], r["eval"])
        print(f"| {n} | {one['per_cpu_s']:,.0f} ({one['wall_s']:.2f}), {one['accuracy']:.4f} | "
              f"{rv['per_cpu_s']:,.0f} ({rv['wall_s']:.2f}), {rv['accuracy']:.4f}; "
              f"{head['per_cpu_s']:,.0f} | {r['ratio_one_vs_river_head']:.1f} | "
              f"{b['per_cpu_s']:,.0f} ({b['wall_s']:.2f}) ({b2['per_cpu_s']:,.0f} "
              f"({b2['wall_s']:.2f})) | {e['per_cpu_s']:,.0f} ({e['wall_s']:.2f}) | "
              f"{r['ratio_batches_vs_eval']:.2f} ({r['ratio_batches_two_vs_eval']:.2f}) |")


if __name__ == "__main__":
    main()
