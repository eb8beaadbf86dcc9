#!/usr/bin/env python3
"""Logged clicks at scale: a simulated log of 10 million impressions (46 items, top 3
shown, uniform logging, clicks delayed by 50 impressions on average) replayed from a file
through `flowboost replay-clicks` with a top-k booster, on 1 and 2 dataflow workers;
beside it, Vowpal Wabbit's conditional contextual bandit reduction (`--ccb_explore_adf`)
learning from the same log.

    scripts/clicks_bench.py                          # 10M impressions (long: see docs/topk.md)
    scripts/clicks_bench.py --impressions 1000000 --vw-impressions 200000
    scripts/clicks_bench.py --binary target/release/flowboost --skip-vw
    # Vowpal Wabbit on all 10M impressions (about 75 minutes), and flowboost beside it:
    scripts/clicks_bench.py --skip-kafka --replay-workers "" --vw-impressions 10000000 \
        --out bench-out/clicks_bench_vw10M.json

What it runs, one command at a time, each under `/usr/bin/time -v` (wall and CPU seconds,
maximum resident set size) and pinned with `taskset` (1 worker: core 1; 2 workers: cores
0 and 1) when taskset exists:

1. `flowboost simulate-clicks --impressions N --click-delay 50 --output bench-out/clicks-N`
   (the log, OBD format, with its simulator.json);
2. `flowboost replay-clicks --data bench-out/clicks-N/clicks.csv --algo topk-bbm
   --weak linear --learners 5 --k 3 --feedback-delay 1000 --batch-feedback --engine
   dataflow --workers W --json` for W = 1, 2 (the attribution window of 1,000
   impressions: a click delayed longer is not learned; with the simulator's mean delay of
   50 none is; --batch-feedback learns each epoch's feedback at its end instead of ending
   an epoch per impression, which the dataflow engine needs at this scale; the join's
   default time-to-live bounds its memory by the window). Linear weak
   learners: their memory is constant, while the Hoeffding trees' grows with the stream
   (docs/topk.md);
3. through Kafka (Apache Kafka, scripts/kafka.sh, started afresh for each run), on the
   first `--kafka-impressions` impressions of the same simulator: `flowboost kafka produce
   --generator clicks --impressions N --click-delay 50 --partitions 2 --follow-group G
   --max-backlog B --delete-committed` (impressions and clicks on topics of their own,
   stamped with the simulated clock; the producer runs beside the job, pinned to core 0,
   at most B impressions ahead of the job's commits, and deletes what the job committed,
   as a retention would), and
   `flowboost run --source kafka:impressions --feedback kafka:clicks --generator clicks
   --algo topk-bbm --weak linear --learners 5 --k 3 --click-window --merge-order
   timestamps --pending-ttl WINDOW --workers W --exit-when-idle 10 --max-merge-wait-ms
   1000000000` for W = 1, 2 (impressions per second over
   the job's wall time less its idle wait; the merge waits out the producer's pauses, so
   the order is the data's, as on a replay);
4. Vowpal Wabbit (`pip install vowpalwabbit` into .venv-vw): on the first
   `--vw-impressions` impressions of the same log (the simulator streams, so they are
   the log of that length), `--ccb_explore_adf -q UA --epsilon 0`: for each impression a
   greedy prediction of the 3 slots first (its ranking, scored with the simulator's truth
   from simulator.json), then learning from the logged slots (cost -click, probability of
   the logged item in its slot given the items before it, 1/(46 - j) under uniform
   logging). VW runs its own driver (the `vw` command line's: a parser thread beside the
   learner, pinned to core 1) on text examples that a Python process writes to its input
   (core 0); its predictions come back through a pipe and are scored here. Its wall and
   CPU seconds and memory are the VW process's. `flowboost replay-clicks` on a log of the
   same length (1 worker) is the comparison point.

Prints a Markdown table and writes JSON to --out (default bench-out/clicks_bench.json).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".venv-vw"
VW = "vowpalwabbit==9.11.9"


def timed(cmd: list[str], cores: str | None) -> tuple[str, dict]:
    """Runs cmd under /usr/bin/time -v (pinned to `cores`); returns stdout and the times."""
    full = list(cmd)
    if cores and shutil.which("taskset"):
        full = ["taskset", "-c", cores] + full
    full = ["/usr/bin/time", "-v"] + full
    p = subprocess.run(full, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return p.stdout, parse_time(p.stderr)


def parse_time(stderr: str) -> dict:
    """Wall and CPU seconds and the peak RSS from /usr/bin/time -v's report."""
    t = {}
    for key, pat in [("user", r"User time \(seconds\): ([\d.]+)"),
                     ("sys", r"System time \(seconds\): ([\d.]+)"),
                     ("rss_kb", r"Maximum resident set size \(kbytes\): (\d+)"),
                     ("wall", r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)")]:
        m = re.search(pat, stderr)
        t[key] = m.group(1) if m else None
    parts = [float(x) for x in (t["wall"] or "0").split(":")]
    wall = 0.0
    for x in parts:
        wall = wall * 60 + x
    return {"wall_s": wall, "cpu_s": float(t["user"]) + float(t["sys"]),
            "max_rss_mb": int(t["rss_kb"]) / 1024}


def binary(args) -> str:
    if args.binary:
        return args.binary
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    return str(REPO / "target" / "release" / "flowboost")


def simulate(exe: str, n: int, out: Path) -> tuple[dict, dict]:
    stdout, t = timed([exe, "simulate-clicks", "--impressions", str(n), "--click-delay", "50",
                       "--output", str(out)], "1")
    return json.loads(stdout.strip().splitlines()[-1]), t


def replay(exe: str, log: Path, workers: int) -> tuple[dict, dict]:
    cmd = [exe, "replay-clicks", "--data", str(log), "--algo", "topk-bbm", "--weak", "linear",
           "--learners", "5", "--k", "3", "--feedback-delay", "1000", "--batch-feedback",
           "--engine", "dataflow", "--workers", str(workers), "--json"]
    stdout, t = timed(cmd, "1" if workers == 1 else "0,1")
    return json.loads(stdout.strip().splitlines()[-1]), t


def broker() -> str:
    """A fresh Apache Kafka broker (scripts/kafka.sh): stopped and started again, so no run inherits
    another's topics or state."""
    script = REPO / "scripts" / "kafka.sh"
    subprocess.run([str(script), "stop"], capture_output=True)
    out = subprocess.run([str(script), "start"], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def broker_peak_rss_mb() -> float | None:
    """The running broker's peak resident memory (VmHWM), in MB."""
    try:
        pid = (REPO / ".kafka" / "broker.pid").read_text().strip()
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def kafka(exe: str, n: int, workers: int, window: int, max_backlog: int) -> tuple[dict, dict, dict]:
    """The same simulator through Kafka: `kafka produce --generator clicks` writes the
    impressions and their clicks (stamped with the simulated clock) to two topics of 2
    partitions while the job learns them with the click window, merged by timestamps,
    until idle. The producer follows the job's group (`--follow-group`): it stays at most
    `max_backlog` impressions ahead of the job's committed offsets and deletes what the job
    committed (`--delete-committed`), so the broker holds a bounded backlog. It runs beside the job, pinned to core 0.
    Returns the job's summary, its times, and the producer's summary and times."""
    b = broker()
    group = f"bench{workers}"
    # Nobody reads the rankings here: a retention of 2 s keeps the broker from holding
    # all of them (about 3.5 KB each, 10 million of them).
    subprocess.run([exe, "kafka", "create-topic", "--brokers", b, "--topic", "rankings",
                    "--partitions", "2", "--config", "retention.ms=2000"], check=True,
                   capture_output=True)
    produce = [exe, "kafka", "produce", "--brokers", b, "--topic", "impressions",
               "--feedback-topic", "clicks", "--partitions", "2", "--generator", "clicks",
               "--impressions", str(n), "--click-delay", "50", "--follow-group", group,
               "--max-backlog", str(max_backlog), "--delete-committed"]
    pinned = (["taskset", "-c", "0"] if shutil.which("taskset") else []) + produce
    producer = subprocess.Popen(["/usr/bin/time", "-v"] + pinned, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    # The job lists the topics' partitions when it starts: let the producer create them.
    time.sleep(3)
    idle = 10
    cmd = [exe, "run", "--brokers", b, "--source", "kafka:impressions", "--feedback",
           "kafka:clicks", "--sink", "kafka:rankings", "--group", group,
           "--generator", "clicks", "--algo", "topk-bbm", "--weak", "linear", "--learners", "5",
           "--k", "3", "--click-window", "--merge-order", "timestamps", "--pending-ttl",
           str(window), "--workers", str(workers), "--exit-when-idle", str(idle),
           "--report-interval", "0",
           # The producer pauses while the job is behind: the clicks' partitions are then
           # quiet, and the live rule (the default 100 ms) would release impressions before
           # the clicks that precede them in time, making the order depend on arrival times
           # and shortening some click windows. A record here always waits for every
           # partition: the order, and every prediction, is the data's, as on a replay.
           "--max-merge-wait-ms", "1000000000"]
    stdout, t = timed(cmd, "1" if workers == 1 else "0,1")
    t["idle_s"] = idle
    out, err = producer.communicate()
    if producer.returncode != 0:
        sys.stderr.write(err)
        raise SystemExit("failed: " + " ".join(produce))
    pt = parse_time(err)
    pt["summary"] = json.loads(out.strip().splitlines()[-1])
    t["broker_peak_rss_mb"] = broker_peak_rss_mb()
    subprocess.run([str(REPO / "scripts" / "kafka.sh"), "stop"], capture_output=True)
    return json.loads(stdout.strip().splitlines()[-1]), t, pt


def vw_python() -> Path:
    py = VENV / "bin" / "python"
    marker = VENV / ".vw-installed"
    if not marker.is_file():
        if not py.is_file():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        VW], check=True, env=dict(os.environ, PIP_ROOT_USER_ACTION="ignore"))
        marker.write_text(VW + "\n")
    return py


# Vowpal Wabbit reads its examples and writes its predictions as text, through its own
# driver (`run_parser`: a parser thread beside the learner, as the `vw` command line runs),
# in three processes joined by pipes:
#   FEED (this Python, core 0) -> VW (.venv-vw, core 1) -> score_vw (this process, core 0).
# Per impression FEED writes an unlabeled example (VW predicts the 3 slots greedily: the
# ranking the policy shows) and then the labeled one (VW learns from the logged slots).
FEED = r"""
import json, sys
log, n_max = sys.argv[1], int(sys.argv[2])
cfg = json.load(open(log.rsplit('/', 1)[0] + '/simulator.json'))['config']
m = cfg['items']
actions = ''.join(f'ccb action |A a{a}\n' for a in range(m))
predict_slots = ''.join(f'ccb slot |S p{j}\n' for j in range(cfg['slots']))
f = open(log, 'rb')
header = f.readline().decode().rstrip('\n').split(',')
col = {h: i for i, h in enumerate(header)}
ucols = [col[h] for h in header if h.startswith('user_feature_')]
ts, it, pos, clk = col['timestamp'], col['item_id'], col['position'], col['click']
out = sys.stdout
def write(rows):
    shared = 'ccb shared |U ' + ' '.join(f'f{i}_{rows[0][c]}' for i, c in enumerate(ucols)) + '\n'
    labels = ''.join(f'ccb slot {r[it]}:{-1.0 if r[clk] == "1" else 0.0}:{1.0 / (m - j)} |S p{j}\n'
                     for j, r in enumerate(sorted(rows, key=lambda r: int(r[pos]))))
    out.write(shared + actions + predict_slots + '\n' + shared + actions + labels + '\n')
n, rows = 0, []
for line in f:
    r = line.decode().rstrip('\n').split(',')
    if rows and r[ts] != rows[0][ts]:
        write(rows)
        n, rows = n + 1, []
        if n >= n_max:
            break
    rows.append(r)
if rows and n < n_max:
    write(rows)
out.flush()
"""

VW_RUN = r"""
from vowpalwabbit import Workspace
vw = Workspace('--ccb_explore_adf -q UA --epsilon 0 --quiet -d /dev/stdin -p /dev/stdout')
vw.run_parser()
vw.finish()
"""


class Truth:
    """The simulator's ground truth (simulator.json): the click probability of every item
    for a user, and the true CTR per slot of a ranking under the position-based model."""

    def __init__(self, log: Path):
        sim = json.loads((log.parent / "simulator.json").read_text())
        cfg, tr = sim["config"], sim["truth"]
        if cfg["logging"] != "uniform":
            raise SystemExit("the VW comparison needs a uniform log (its per-slot probabilities)")
        self.m, self.k, self.latent, self.values = (cfg["items"], cfg["slots"], tr["latent"],
                                                    tr["feature_values"])
        self.tr, self.cache = tr, {}

    def relevance(self, user: tuple) -> list[float]:
        r = self.cache.get(user)
        if r is None:
            tr, L = self.tr, self.latent
            z = [0.0] * L
            for f, v in enumerate(user):
                at = (f * self.values + v) * L
                for i in range(L):
                    z[i] += tr["user_embeddings"][at + i]
            norm = 1.0 / (math.sqrt(len(user)) * math.sqrt(L))
            r = []
            for a in range(self.m):
                dot = sum(z[i] * tr["item_vectors"][a * L + i] for i in range(L))
                r.append(1.0 / (1.0 + math.exp(-(tr["intercept"] + tr["item_bias"][a]
                                                 + tr["scale"] * dot * norm))))
            self.cache[user] = r
        return r

    def ctr(self, user: tuple, ranking: list[int]) -> float:
        rel = self.relevance(user)
        return sum(e * rel[a] for e, a in zip(self.tr["examination"], ranking)) / self.k


def users(log: Path):
    """Each impression's user features, in the log's order."""
    with open(log, "rb") as f:
        header = f.readline().decode().rstrip("\n").split(",")
        ts = header.index("timestamp")
        ucols = [i for i, h in enumerate(header) if h.startswith("user_feature_")]
        last = None
        for line in f:
            r = line.decode().rstrip("\n").split(",")
            if r[ts] != last:
                last = r[ts]
                yield tuple(int(r[c]) for c in ucols)


def run_vw(log: Path, n: int) -> tuple[dict, dict]:
    """VW on the first n impressions of the log: the true CTR of its greedy rankings as it
    learns, and its process's times (wall, CPU, peak memory)."""
    py = vw_python()
    truth = Truth(log)
    pin = ["taskset", "-c"] if shutil.which("taskset") else None
    feed = subprocess.Popen((pin + ["0"] if pin else []) + [sys.executable, "-c", FEED, str(log),
                            str(n)], stdout=subprocess.PIPE)
    with tempfile.TemporaryFile("w+") as err:
        vw = subprocess.Popen(["/usr/bin/time", "-v"] + (pin + ["1"] if pin else [])
                              + [str(py), "-c", VW_RUN], stdin=feed.stdout,
                              stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1 << 20)
        feed.stdout.close()
        # VW's predictions: per example one line per slot ("action:probability,..."), then
        # an empty line; the unlabeled example's lines come first, then the labeled one's.
        done, truth_sum, ranking, example = 0, 0.0, [], 0
        who = users(log)
        for line in vw.stdout:
            if line != "\n":
                if example == 0:
                    ranking.append(int(line[:line.index(":")]))
                continue
            if example == 0:
                truth_sum += truth.ctr(next(who), ranking)
                done, ranking = done + 1, []
            example ^= 1
        vw.wait()
        feed.wait()
        err.seek(0)
        stderr = err.read()
    if vw.returncode != 0 or feed.returncode != 0 or done != n:
        sys.stderr.write(stderr)
        raise SystemExit(f"Vowpal Wabbit failed after {done} of {n} impressions")
    t = parse_time(stderr)
    return {"impressions": done, "true_ctr": truth_sum / max(done, 1),
            "impressions_per_second": done / max(t["wall_s"], 1e-9)}, t


def fmt(e: dict) -> str:
    return f"{e['estimate']:.5f} [{e['low']:.5f}, {e['high']:.5f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impressions", type=int, default=10_000_000)
    ap.add_argument("--vw-impressions", type=int, default=1_000_000)
    ap.add_argument("--binary", help="the flowboost binary (default: build target/release)")
    ap.add_argument("--skip-vw", action="store_true")
    ap.add_argument("--kafka-impressions", type=int, default=10_000_000,
                    help="impressions through Kafka (at most --impressions; default 10,000,000)")
    ap.add_argument("--max-backlog", type=int, default=200_000,
                    help="the Kafka producer stays at most this many impressions ahead of the "
                         "job's commits (default 200,000)")
    ap.add_argument("--window", type=int, default=1000,
                    help="the Kafka job's click window, --pending-ttl (default 1000)")
    ap.add_argument("--skip-kafka", action="store_true")
    ap.add_argument("--kafka-workers", default="1,2",
                    help="worker counts of the Kafka runs (default 1,2)")
    ap.add_argument("--replay-workers", default="1,2",
                    help="worker counts of the file replay (default 1,2; empty: none)")
    ap.add_argument("--out", default=str(REPO / "bench-out" / "clicks_bench.json"))
    args = ap.parse_args()
    exe = binary(args)
    out_dir = REPO / "bench-out"
    results = {"date": time.strftime("%Y-%m-%d"), "machine": os.uname().nodename,
               "cores": os.cpu_count()}

    def save():
        """Writes what is measured so far (a long run that fails late keeps its figures)."""
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")

    big = out_dir / f"clicks-{args.impressions}"
    summary, t = simulate(exe, args.impressions, big)
    results["simulate"] = {"summary": summary, "time": t}
    save()
    print(f"simulated {summary['impressions']} impressions ({summary['rows']} rows, "
          f"{summary['clicks']} clicks): {t['wall_s']:.1f} s wall, {t['cpu_s']:.1f} s CPU, "
          f"{(big / 'clicks.csv').stat().st_size / 1e9:.2f} GB", flush=True)
    runs = []
    results["replay"] = runs
    for workers in [int(w) for w in args.replay_workers.split(",") if w.strip()]:
        report, t = replay(exe, big / "clicks.csv", workers)
        runs.append({"workers": workers, "report": report, "time": t})
        save()
        print(f"replayed on {workers} worker(s): {t['wall_s']:.1f} s wall, {t['cpu_s']:.1f} s CPU, "
              f"{report['impressions'] / t['wall_s']:.0f} impressions/s, "
              f"{t['max_rss_mb']:.0f} MB; joined {report['feedback']['joined']}, late "
              f"{report['feedback']['late']}, ttl {report['pending_ttl']} epochs", flush=True)

    kafka_runs = []
    results["kafka"] = kafka_runs
    if not args.skip_kafka:
        n = min(args.kafka_impressions, args.impressions)
        for workers in [int(w) for w in args.kafka_workers.split(",") if w.strip()]:
            report, t, pt = kafka(exe, n, workers, args.window, args.max_backlog)
            kafka_runs.append({"workers": workers, "impressions": n, "report": report,
                               "time": t, "produce_time": pt})
            save()
            busy = max(t["wall_s"] - t["idle_s"], 1e-9)
            print(f"Kafka, {workers} worker(s): {n} impressions produced in {pt['wall_s']:.1f} s "
                  f"({pt['cpu_s']:.1f} s CPU, waiting {pt['summary']['waited_for_group_seconds']:.1f} s "
                  f"for the job); job {t['wall_s']:.1f} s wall ({busy:.1f} s less the idle wait), "
                  f"{t['cpu_s']:.1f} s CPU, {t['max_rss_mb']:.0f} MB (broker {t.get('broker_peak_rss_mb') or 0:.0f} MB), events {report.get('events_in')}, "
                  f"joined {report.get('feedback_joined')}, no click {report.get('no_click')}, "
                  f"late {report.get('join', {}).get('late')}", flush=True)

    if not args.skip_vw:
        n = min(args.vw_impressions, args.impressions)
        small = out_dir / f"clicks-{n}"
        if n != args.impressions:
            simulate(exe, n, small)
        else:
            small = big
        vw, vw_t = run_vw(small / "clicks.csv", n)
        fb, fb_t = replay(exe, small / "clicks.csv", 1)
        results["vw"] = {"impressions": n, "vw": vw, "vw_time": vw_t, "flowboost": fb,
                         "flowboost_time": fb_t}

    print()
    print(f"| {args.impressions:,} impressions | workers | wall s | CPU s | impressions/s (wall) | "
          f"impressions per CPU s | max RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        t = r["time"]
        print(f"| flowboost replay-clicks (file) | {r['workers']} | {t['wall_s']:.1f} | "
              f"{t['cpu_s']:.1f} | {r['report']['impressions'] / t['wall_s']:.0f} | "
              f"{r['report']['impressions'] / t['cpu_s']:.0f} | {t['max_rss_mb']:.0f} |")
    for r in kafka_runs:
        t = r["time"]
        busy = max(t["wall_s"] - t["idle_s"], 1e-9)
        print(f"| flowboost run, Kafka ({r['impressions']:,} impressions, click window "
              f"{args.window}, by timestamps; wall less the {t['idle_s']} s idle wait) | "
              f"{r['workers']} | {busy:.1f} | {t['cpu_s']:.1f} | {r['impressions'] / busy:.0f} | "
              f"{r['impressions'] / t['cpu_s']:.0f} | {t['max_rss_mb']:.0f} |")
    if runs:
        rep = runs[0]["report"]
        tc = rep["true_ctr"]
        print()
        print("| policy | true CTR per slot | IPW | SNIPW | DR |")
        print("|---|---|---|---|---|")
        print(f"| logging (uniform) | {tc['logging']['estimate']:.5f} | logged: {fmt(rep['logged_ctr'])} | | |")
        print(f"| topk-bbm, 5 linear learners | {tc['learned']['estimate']:.5f} | {fmt(rep['ipw_ctr'])} | "
              f"{fmt(rep['snipw_ctr'])} | {fmt(rep['dr_ctr'])} |")
        print(f"| best ranking | {tc['best']['estimate']:.5f} | | | |")
    if "vw" in results:
        v = results["vw"]
        print()
        print(f"| first {v['impressions']:,} impressions | learned policy's true CTR | wall s | CPU s | "
              f"impressions/s | max RSS MB |")
        print("|---|---|---|---|---|---|")
        f, ft = v["flowboost"], v["flowboost_time"]
        print(f"| flowboost topk-bbm (1 worker) | {f['true_ctr']['learned']['estimate']:.5f} | "
              f"{ft['wall_s']:.1f} | {ft['cpu_s']:.1f} | {f['impressions'] / ft['wall_s']:.0f} | "
              f"{ft['max_rss_mb']:.0f} |")
        w, wt = v["vw"], v["vw_time"]
        print(f"| VW --ccb_explore_adf -q UA | {w['true_ctr']:.5f} | {wt['wall_s']:.1f} | "
              f"{wt['cpu_s']:.1f} | {w['impressions'] / wt['wall_s']:.0f} | {wt['max_rss_mb']:.0f} |")
        print(f"| logging policy (uniform) | {f['true_ctr']['logging']['estimate']:.5f} | | | | |")
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
