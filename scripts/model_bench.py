#!/usr/bin/env python3
"""Model files, measured: size on disk beside size in memory, save and load time, and
`flowboost predict` throughput beside `flowboost eval` throughput on the same data.

    scripts/model_bench.py                       # all four models (mediamill takes minutes)
    scripts/model_bench.py --cases a9a,letter    # a subset
    scripts/model_bench.py --mediamill-examples 5000

Cases (the issue's): a9a Online BBM with 100 trees; the mediamill-size generator with
Ada.OLMR, 100 trees on 20 random features; letter OnlineMBBM with 100 trees; bibtex FALT
with an RBF kernel (width 16, as docs/thresholding.md). Each model is trained by `eval
--save-model` on the training data, described by `inspect --json` (file size, memory
measured by the binary's counting allocator, load time), then the held-out data (or, for
letter and the generator, the same stream) is run twice: `eval --load-model` (predict and
learn) and `predict --model` (predict only), each timed, wall and CPU seconds.

Commands run one after another, pinned with `taskset -c 1` when taskset exists. It builds
the release binary first. Output: a Markdown table on stdout, JSON in --out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"


def cases(mediamill_examples: int) -> dict:
    a9a = DATA / "a9a"
    bib = DATA / "bibtex"
    letter = ["--data", str(DATA / "letter" / "letter-recognition.data"), "--header", "no",
              "--target", "first"]
    mm = ["--generator", "mediamill", "--examples", str(mediamill_examples)]
    return {
        "a9a": dict(
            title="a9a, Online BBM, 100 trees",
            model=["--algo", "online-bbm", "--learners", "100"],
            train=["--data", str(a9a / "a9a")],
            test=["--data", str(a9a / "a9a.t")],
        ),
        "mediamill": dict(
            title=f"mediamill-size generator ({mediamill_examples} examples), Ada.OLMR, 100 trees on 20 features",
            model=["--algo", "ada-olmr", "--learners", "100", "--feature-subset", "20"],
            train=mm,
            test=mm,
        ),
        "letter": dict(
            title="letter, OnlineMBBM, 100 trees",
            model=["--algo", "online-mbbm", "--learners", "100"],
            train=letter,
            test=letter,
        ),
        "bibtex": dict(
            title="bibtex, FALT with an RBF kernel (width 16)",
            model=["--algo", "falt-kernel", "--kernel-width", "16"],
            train=["--data", str(bib / "bibtex-train.arff"), "--xml", str(bib / "bibtex.xml")],
            test=["--data", str(bib / "bibtex-test.arff"), "--xml", str(bib / "bibtex.xml")],
        ),
    }


def timed(cmd: list[str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """Runs a command; returns it with its wall and CPU (user + system) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return p, wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="a9a,mediamill,letter,bibtex")
    ap.add_argument("--mediamill-examples", type=int, default=43907)
    ap.add_argument("--out", default=str(REPO / "bench-out" / "models"))
    ap.add_argument("--binary", default=None, help="use this flowboost binary (no build)")
    args = ap.parse_args()
    if not DATA.is_dir():
        sys.exit(f"{DATA} not found: the benchmark reads ../shared/data")
    if args.binary:
        exe = args.binary
    else:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
        exe = str(REPO / "target" / "release" / "flowboost")
    pin = ["taskset", "-c", "1"] if shutil.which("taskset") else []
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    all_cases = cases(args.mediamill_examples)
    for name in args.cases.split(","):
        c = all_cases[name]
        model = out / f"{name}.fbm"
        train = [*pin, exe, "eval", *c["model"], *c["train"], "--save-model", str(model), "--json"]
        p, train_wall, train_cpu = timed(train)
        report = json.loads(p.stdout.strip().splitlines()[-1])
        saved = re.search(r"saved the model .* \(([\d.]+) MB in ([\d.]+) s", p.stderr)
        save_mb, save_s = float(saved.group(1)), float(saved.group(2))
        p, _, _ = timed([*pin, exe, "inspect", str(model), "--json"])
        info = json.loads(p.stdout)
        # The held-out stream, learned (eval) and predicted only (predict).
        p, eval_wall, eval_cpu = timed([*pin, exe, "eval", "--load-model", str(model), *c["test"], "--json"])
        evaluated = json.loads(p.stdout.strip().splitlines()[-1])["examples"]
        p, pred_wall, pred_cpu = timed([*pin, exe, "predict", "--model", str(model), *c["test"],
                                        "--output", "/dev/null"])
        predicted = int(re.search(r": (\d+) examples in", p.stderr).group(1))
        row = dict(
            case=name, title=c["title"], train_examples=report["examples"],
            train_wall=train_wall, train_cpu=train_cpu,
            file_mb=info["file_bytes"] / 1e6,
            memory_mb=(info["memory_bytes"] or 0) / 1e6,
            save_seconds=save_s, save_mb_per_s=save_mb / max(save_s, 1e-9),
            load_seconds=info["load_seconds"],
            load_mb_per_s=info["file_bytes"] / 1e6 / max(info["load_seconds"], 1e-9),
            held_out_examples=evaluated,
            eval_wall=eval_wall, eval_cpu=eval_cpu, eval_eps_cpu=evaluated / max(eval_cpu, 1e-9),
            predict_wall=pred_wall, predict_cpu=pred_cpu,
            predict_eps_cpu=predicted / max(pred_cpu, 1e-9),
            stages=len(info["stages"]), leaves=info["total"]["leaves"],
            support_vectors=info["total"]["support_vectors"],
            commands=dict(train=" ".join(train[len(pin):])),
        )
        rows.append(row)
        print(f"{name}: done", file=sys.stderr)
    (out / "results.json").write_text(json.dumps(rows, indent=1))
    print("| model | file MB | memory MB | save s (MB/s) | load s (MB/s) | held-out examples | eval examples/CPU s | predict examples/CPU s | predict / eval |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['title']} | {r['file_mb']:.1f} | {r['memory_mb']:.1f} | "
              f"{r['save_seconds']:.3f} ({r['save_mb_per_s']:.0f}) | "
              f"{r['load_seconds']:.3f} ({r['load_mb_per_s']:.0f}) | {r['held_out_examples']} | "
              f"{r['eval_eps_cpu']:,.0f} | {r['predict_eps_cpu']:,.0f} | "
              f"{r['predict_eps_cpu'] / max(r['eval_eps_cpu'], 1e-9):.1f}x |")


if __name__ == "__main__":
    main()
