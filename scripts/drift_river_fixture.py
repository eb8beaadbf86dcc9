#!/usr/bin/env python3
"""Writes operators/tests/fixtures/drift_river.json: River's change points on seeded sequences.

The Rust test operators/tests/drift.rs runs flowboost's detectors (operators/src/drift/) on
the same sequences with the same parameters and requires the same indices.

    python3 -m venv /tmp/river-venv && /tmp/river-venv/bin/pip install river
    /tmp/river-venv/bin/python scripts/drift_river_fixture.py

The sequences are stored in the fixture (so the Rust side needs no Python generator):
Bernoulli streams as strings of '0'/'1', real-valued streams as integers k standing for
k / 1024 (a dyadic rational, exact in binary on both sides).
"""

import json
import math
import os
import random

import river
from river import drift

SCALE = 1024
OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "operators",
    "tests",
    "fixtures",
    "drift_river.json",
)


def bernoulli(seed, n, p_at):
    rng = random.Random(seed)
    return [1 if rng.random() < p_at(i) else 0 for i in range(n)]


def gaussian(seed, n, mean_at, sd):
    rng = random.Random(seed)
    return [round(rng.gauss(mean_at(i), sd) * SCALE) for i in range(n)]


def piecewise(points, values):
    """values[j] from points[j-1] (inclusive) to points[j]."""

    def at(i):
        for p, v in zip(points, values):
            if i < p:
                return v
        return values[-1]

    return at


def ramp(start, end, lo, hi):
    def at(i):
        if i < start:
            return lo
        if i >= end:
            return hi
        return lo + (hi - lo) * (i - start) / (end - start)

    return at


SEQUENCES = {
    # Error streams (0 = right, 1 = wrong).
    "bernoulli_abrupt": {
        "kind": "bits",
        "about": "Bernoulli, p = 0.2 on [0, 1000), 0.6 on [1000, 3000), 0.3 on [3000, 5000); seed 1",
        "values": bernoulli(1, 5000, piecewise([1000, 3000], [0.2, 0.6, 0.3])),
    },
    "bernoulli_gradual": {
        "kind": "bits",
        "about": "Bernoulli, p = 0.1 before 1500, rising linearly to 0.5 at 3500, 0.5 after; seed 2",
        "values": bernoulli(2, 5000, ramp(1500, 3500, 0.1, 0.5)),
    },
    "bernoulli_stationary": {
        "kind": "bits",
        "about": "Bernoulli, p = 0.3 throughout, 5000 values; seed 3",
        "values": bernoulli(3, 5000, lambda i: 0.3),
    },
    "gaussian_shift": {
        "kind": "dyadic",
        "about": "Gaussian sd 1, mean 0 on [0, 1500), 2 on [1500, 3000), -1 on [3000, 4000); "
        "seed 4; value k stands for k / 1024",
        "values": gaussian(4, 4000, piecewise([1500, 3000], [0.0, 2.0, -1.0]), 1.0),
    },
}


def as_floats(seq):
    if seq["kind"] == "bits":
        return [float(v) for v in seq["values"]]
    return [v / SCALE for v in seq["values"]]


# (detector, parameters, sequences). Parameters are River's names; {} is River's defaults.
RUNS = [
    ("adwin", {}, ["bernoulli_abrupt", "bernoulli_gradual", "bernoulli_stationary", "gaussian_shift"]),
    ("adwin", {"delta": 0.01, "clock": 1}, ["bernoulli_abrupt", "gaussian_shift"]),
    ("adwin", {"max_buckets": 2, "min_window_length": 10, "grace_period": 100}, ["gaussian_shift"]),
    ("page_hinkley", {}, ["bernoulli_abrupt", "bernoulli_gradual", "bernoulli_stationary", "gaussian_shift"]),
    ("page_hinkley", {"mode": "up", "threshold": 20.0}, ["bernoulli_abrupt", "gaussian_shift"]),
    ("page_hinkley", {"mode": "down", "threshold": 20.0, "alpha": 0.999}, ["bernoulli_abrupt", "gaussian_shift"]),
    ("ddm", {}, ["bernoulli_abrupt", "bernoulli_gradual", "bernoulli_stationary"]),
    ("ddm", {"warm_start": 100, "warning_threshold": 1.5, "drift_threshold": 2.5}, ["bernoulli_abrupt"]),
]


def make(name, params):
    if name == "adwin":
        return drift.ADWIN(**params)
    if name == "page_hinkley":
        return drift.PageHinkley(**params)
    if name == "ddm":
        return drift.binary.DDM(**params)
    raise ValueError(name)


def run(name, params, xs):
    det = make(name, params)
    drifts, warnings = [], []
    for i, x in enumerate(xs):
        det.update(x)
        if det.drift_detected:
            drifts.append(i)
        if getattr(det, "warning_detected", False):
            warnings.append(i)
    out = {"drifts": drifts}
    if name == "ddm":
        out["warning_runs"] = runs_of(warnings)
    if name == "adwin":
        out["final_width"] = det.width
        out["final_total"] = det.total
    return out


def runs_of(indices):
    """Consecutive indices as [first, last] pairs."""
    out = []
    for i in indices:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def write(doc, f):
    """JSON with one line per sequence and per run."""
    d = lambda v: json.dumps(v, separators=(",", ":"))
    f.write("{\n")
    f.write(f' "river_version": {d(doc["river_version"])},\n')
    f.write(f' "script": {d(doc["script"])},\n')
    f.write(f' "dyadic_scale": {d(doc["dyadic_scale"])},\n')
    f.write(' "sequences": {\n')
    items = list(doc["sequences"].items())
    for j, (k, v) in enumerate(items):
        f.write(f"  {d(k)}: {d(v)}" + (",\n" if j + 1 < len(items) else "\n"))
    f.write(" },\n")
    f.write(' "runs": [\n')
    for j, r in enumerate(doc["runs"]):
        f.write(f"  {d(r)}" + (",\n" if j + 1 < len(doc["runs"]) else "\n"))
    f.write(" ]\n}\n")


def main():
    runs = []
    for name, params, seqs in RUNS:
        for s in seqs:
            r = {"detector": name, "params": params, "sequence": s}
            r.update(run(name, params, as_floats(SEQUENCES[s])))
            runs.append(r)
            print(name, params, s, r["drifts"])
    sequences = {}
    for k, seq in SEQUENCES.items():
        values = seq["values"]
        stored = "".join(str(v) for v in values) if seq["kind"] == "bits" else values
        sequences[k] = {"kind": seq["kind"], "about": seq["about"], "values": stored}
    doc = {
        "river_version": river.__version__,
        "script": "scripts/drift_river_fixture.py",
        "dyadic_scale": SCALE,
        "sequences": sequences,
        "runs": runs,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        write(doc, f)
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    assert math.isfinite(SCALE)
    main()
