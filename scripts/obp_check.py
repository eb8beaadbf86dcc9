#!/usr/bin/env python3
"""flowboost's off-policy estimates against the Open Bandit Pipeline's (`obp`, by the Open
Bandit Dataset's authors) on the same simulated logs and the same policy.

    scripts/obp_check.py                       # builds the release binary, 2 logs x 20,000 impressions
    scripts/obp_check.py --binary target/ci/flowboost --impressions 5000

For each logging policy (uniform, bts) the script runs

    flowboost replay-clicks --generator clicks --impressions N --logging-policy P \
        --algo topk-bbm --learners 3 --json --dump-rows rows.csv

whose `--dump-rows` file holds the simulated log (every row: impression, position, item,
click, propensity), the evaluated policy's action distribution (the booster's top 3 for
each impression: a deterministic ranking, so one-hot per position) and the doubly robust
estimator's reward model (its click probability of every item at the row's position,
fitted online on the earlier impressions only). obp's `InverseProbabilityWeighting`,
`SelfNormalizedInverseProbabilityWeighting` and `DoublyRobust` then estimate the same
policy value from the same arrays (`reward`, `action`, `position`, `pscore`,
`action_dist` of shape (rows, items, 3), `estimated_rewards_by_reg_model` of the same
shape).

Tolerances, and why:
- **Point estimates: relative difference < 1e-9.** Both compute the same sums of the same
  floating-point numbers (the dump writes every number in its shortest round-trip form),
  in a different order; the rounding differences are about 1e-15.
- **95% intervals: widths within 15%.** obp's interval is a percentile bootstrap over
  rows (10,000 resamples, seeded); flowboost's is the normal interval estimate +- 1.96
  stderr with the standard error clustered by impression (the 3 rows of one impression
  share a user). They estimate the same spread in different ways: the bootstrap's Monte
  Carlo error on a 2.5% quantile is about 1-2% of the width, the IPW terms are skewed
  (few large weights) so the percentile interval is a little asymmetric, and the
  clustering changes the standard error by the (small) correlation of the rows of an
  impression. A difference beyond 15% would mean a wrong standard error.

obp on Python 3.11: obp 0.5.7 (the newest; 0.5.5 and 0.5.4 are the same estimators)
declares `python <3.11` and pins dependencies without Python 3.11 wheels (torch 1.12,
Pillow 9.1.1, PyYAML 6.0.0; 0.5.5 even scipy 1.7.3 and scikit-learn 1.0.2), so a plain
`pip install obp` fails on 3.11 ("requires a different Python"). Its code runs on 3.11:
the script installs obp==0.5.7 with `--no-deps --ignore-requires-python`, then its
dependencies at obp's pins where those have 3.11 wheels (numpy 1.23.5, scipy 1.9.3,
scikit-learn 1.1.3, pandas 1.5.2) and the nearest versions that do otherwise (torch
1.13.1, PyYAML 6.0.1, matplotlib < 3.8, seaborn 0.11.2). The virtual environment is
.venv-obp (about 3.7 GB: torch brings CUDA libraries; obp imports torch at import time).

Prints a table; exits 1 if a comparison fails. JSON with every number in --out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".venv-obp"
OBP = "obp==0.5.7"
DEPS = [
    "numpy==1.23.5",
    "scipy==1.9.3",
    "scikit-learn==1.1.3",
    "pandas==1.5.2",
    "matplotlib<3.8",
    "seaborn==0.11.2",
    "tqdm",
    "pyyaml==6.0.1",
    "torch==1.13.1",
]
POINT_TOLERANCE = 1e-9
WIDTH_TOLERANCE = 0.15


def venv_python() -> Path:
    """The virtual environment's Python, created and filled on the first run."""
    py = VENV / "bin" / "python"
    marker = VENV / ".obp-installed"
    if marker.is_file():
        return py
    if not py.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    env = dict(os.environ, PIP_ROOT_USER_ACTION="ignore")
    subprocess.run(pip + ["--no-deps", "--ignore-requires-python", OBP], check=True, env=env)
    subprocess.run(pip + DEPS, check=True, env=env)
    marker.write_text(OBP + "\n" + "\n".join(DEPS) + "\n")
    return py


def binary(args) -> str:
    if args.binary:
        return args.binary
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    return str(REPO / "target" / "release" / "flowboost")


def flowboost_run(exe: str, policy: str, impressions: int, dump: Path) -> dict:
    cmd = [exe, "replay-clicks", "--generator", "clicks", "--impressions", str(impressions),
           "--logging-policy", policy, "--algo", "topk-bbm", "--learners", "3", "--json",
           "--dump-rows", str(dump)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# Runs inside the obp virtual environment: reads the dump, prints obp's estimates as JSON.
OBP_SIDE = r"""
import json, sys
import numpy as np
from obp.ope import (DoublyRobust, InverseProbabilityWeighting,
                     SelfNormalizedInverseProbabilityWeighting)
import obp

dump, k = sys.argv[1], int(sys.argv[2])
with open(dump) as f:
    header = f.readline().strip().split(",")
data = np.loadtxt(dump, delimiter=",", skiprows=1, ndmin=2)
items = sum(h.startswith("q_") for h in header)
n = data.shape[0]
position = data[:, 1].astype(int)
action = data[:, 2].astype(int)
reward = data[:, 3]
pscore = data[:, 4]
ranks = data[:, 5:5 + k].astype(int)
q = data[:, 5 + k:5 + k + items]
action_dist = np.zeros((n, items, k))
for j in range(k):
    action_dist[np.arange(n), ranks[:, j], j] = 1.0
reg = np.zeros((n, items, k))
reg[np.arange(n), :, position] = q
common = dict(reward=reward, action=action, position=position, pscore=pscore,
              action_dist=action_dist)
out = {"obp_version": obp.__version__, "rows": int(n)}
for name, est, extra in [
    ("ipw_ctr", InverseProbabilityWeighting(), {}),
    ("snipw_ctr", SelfNormalizedInverseProbabilityWeighting(), {}),
    ("dr_ctr", DoublyRobust(), {"estimated_rewards_by_reg_model": reg}),
]:
    value = est.estimate_policy_value(**common, **extra)
    ci = est.estimate_interval(**common, **extra, alpha=0.05, n_bootstrap_samples=10000,
                               random_state=12345)
    out[name] = {"estimate": float(value), "low": float(ci["95.0% CI (lower)"]),
                 "high": float(ci["95.0% CI (upper)"])}
print(json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", help="the flowboost binary (default: build target/release)")
    ap.add_argument("--impressions", type=int, default=20_000)
    ap.add_argument("--policies", default="uniform,bts")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    args = ap.parse_args()
    py = venv_python()
    exe = binary(args)
    results, failures = [], []
    print("| logging | estimator | flowboost estimate [95% interval] | obp estimate [95% bootstrap interval] | "
          "relative difference | width ratio | true CTR |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for policy in args.policies.split(","):
            dump = Path(tmp) / f"rows-{policy}.csv"
            fb = flowboost_run(exe, policy, args.impressions, dump)
            side = subprocess.run([str(py), "-c", OBP_SIDE, str(dump), str(fb["k"])],
                                  check=True, capture_output=True, text=True)
            ob = json.loads(side.stdout.strip().splitlines()[-1])
            if ob["rows"] != fb["rows"]:
                failures.append(f"{policy}: {ob['rows']} rows in the dump, {fb['rows']} in the report")
            truth = fb["true_ctr"]["learned"]["estimate"]
            for key in ["ipw_ctr", "snipw_ctr", "dr_ctr"]:
                a, b = fb[key], ob[key]
                rel = abs(a["estimate"] - b["estimate"]) / max(abs(b["estimate"]), 1e-300)
                ratio = (a["high"] - a["low"]) / max(b["high"] - b["low"], 1e-300)
                ok = rel < POINT_TOLERANCE and abs(ratio - 1.0) < WIDTH_TOLERANCE
                if not ok:
                    failures.append(f"{policy} {key}: relative difference {rel:.2e}, width ratio {ratio:.3f}")
                results.append(dict(logging=policy, estimator=key, flowboost=a, obp=b,
                                    relative_difference=rel, width_ratio=ratio, true_ctr=truth,
                                    obp_version=ob["obp_version"]))
                print(f"| {policy} | {key} | {a['estimate']:.5f} [{a['low']:.5f}, {a['high']:.5f}] | "
                      f"{b['estimate']:.5f} [{b['low']:.5f}, {b['high']:.5f}] | {rel:.1e} | "
                      f"{ratio:.3f} | {truth:.5f} |")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    for f in failures:
        print("FAILED:", f, file=sys.stderr)
    print(f"{len(results) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
