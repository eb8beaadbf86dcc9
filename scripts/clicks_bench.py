#!/usr/bin/env python3
"""Logged clicks at scale: a simulated log of 10 million impressions (46 items, top 3
shown, uniform logging, clicks delayed by 50 impressions on average) replayed from a file
through `flowboost replay-clicks` with a top-k booster, on 1 and 2 dataflow workers;
beside it, Vowpal Wabbit's conditional contextual bandit reduction (`--ccb_explore_adf`)
learning from the same log.

    scripts/clicks_bench.py                          # 10M impressions (long: see docs/topk.md)
    scripts/clicks_bench.py --impressions 1000000 --vw-impressions 200000
    scripts/clicks_bench.py --binary target/release/flowboost --skip-vw
    # Vowpal Wabbit on all 10M impressions (about 3 hours) in calls of 2.5M each:
    scripts/clicks_bench.py --skip-kafka --replay-workers "" --vw-impressions 10000000 \
        --vw-state bench-out/vw-10M --vw-chunk 2500000 --out bench-out/clicks_bench_vw10M.json

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
3. through Kafka (the emulator of scripts/kafka.sh, started afresh for each run), on the
   first `--kafka-impressions` impressions of the same simulator: `flowboost kafka produce
   --generator clicks --impressions N --click-delay 50 --partitions 2 --follow-group G
   --max-backlog B --delete-committed` (impressions and clicks on topics of their own,
   stamped with the simulated clock; the producer runs beside the job, pinned to core 0,
   at most B impressions ahead of the job's commits, and deletes what the job committed,
   as a retention would: the emulator keeps every record it holds in memory), and
   `flowboost run --source kafka:impressions --feedback kafka:clicks --generator clicks
   --algo topk-bbm --weak linear --learners 5 --k 3 --click-window --merge-order
   timestamps --pending-ttl WINDOW --workers W --exit-when-idle 10 --max-merge-wait-ms
   1000000000 --kafka-set queued.min.messages=1` for W = 1, 2 (impressions per second over
   the job's wall time less its idle wait; the merge waits out the producer's pauses, so
   the order is the data's, as on a replay);
4. Vowpal Wabbit (`pip install vowpalwabbit` into .venv-vw): on the first
   `--vw-impressions` impressions of the same log (the simulator streams, so they are
   the log of that length), `--ccb_explore_adf -q UA --epsilon 0`: for each impression a
   greedy prediction of the 3 slots first (its ranking, scored with the simulator's truth
   from simulator.json), then learning from the logged slots (cost -click, probability of
   the logged item in its slot given the items before it, 1/(46 - j) under uniform
   logging). The Python loop formats VW's text examples; its throughput includes that.
   `flowboost replay-clicks` on a log of the same length (1 worker) is the comparison
   point. With `--vw-state DIR --vw-chunk C` each call learns C more impressions and
   keeps VW's model (`--save_resume`) and its place in the log in DIR, so a long run can
   be split over several calls (it continues exactly: the same true CTR, bit for bit, as
   one call); the last call prints the table.

Prints a Markdown table and writes JSON to --out (default bench-out/clicks_bench.json).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
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
    """A fresh broker (the emulator): stopped and started again, so no run inherits
    another's topics or state."""
    script = REPO / "scripts" / "kafka.sh"
    subprocess.run([str(script), "stop"], capture_output=True)
    out = subprocess.run([str(script), "start"], capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def broker_peak_rss_mb() -> float | None:
    """The running emulator's peak resident memory (VmHWM), in MB."""
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
    committed (`--delete-committed`), so the emulator, which keeps every record in memory
    (about 1.3 KB each), holds a bounded backlog. It runs beside the job, pinned to core 0.
    Returns the job's summary, its times, and the producer's summary and times."""
    b = broker()
    group = f"bench{workers}"
    # Nobody reads the rankings here: a retention of 2 s keeps the emulator from holding
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
           "--max-merge-wait-ms", "1000000000",
           "--kafka-set", "queued.min.messages=1",
           # The emulator ignores fetch size limits: a backlog over about 100 MB comes in one
           # fetch, which the client refuses below this (../shared/KAFKA.md).
           "--kafka-set", "receive.message.max.bytes=2000000000"]
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


# Runs in .venv-vw: VW's CCB on the first N impressions of a simulated log; prints JSON.
# With a state directory it stops after CHUNK impressions (0: none) and saves VW's model
# (--save_resume) and its place in the log and sums there; the next call goes on from them.
VW_SIDE = r"""
import json, math, os, sys, time
from vowpalwabbit import Workspace

log, n_max, state_dir, chunk = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
sim = json.load(open(log.rsplit('/', 1)[0] + '/simulator.json'))
cfg, tr = sim['config'], sim['truth']
m, k, L, V = cfg['items'], cfg['slots'], tr['latent'], tr['feature_values']
if cfg['logging'] != 'uniform':
    raise SystemExit('the VW comparison needs a uniform log (its per-slot probabilities)')
exam = tr['examination']
emb, iv, ib = tr['user_embeddings'], tr['item_vectors'], tr['item_bias']
cache = {}
def relevance(user):
    r = cache.get(user)
    if r is None:
        z = [0.0] * L
        for f, v in enumerate(user):
            at = (f * V + v) * L
            for i in range(L):
                z[i] += emb[at + i]
        norm = 1.0 / (math.sqrt(len(user)) * math.sqrt(L))
        r = []
        for a in range(m):
            dot = sum(z[i] * iv[a * L + i] for i in range(L))
            r.append(1.0 / (1.0 + math.exp(-(tr['intercept'] + ib[a] + tr['scale'] * dot * norm))))
        cache[user] = r
    return r

ARGS = '--ccb_explore_adf -q UA --epsilon 0 --quiet'
state = {'n': 0, 'truth_sum': 0.0, 'offset': None, 'wall_s': 0.0, 'cpu_s': 0.0, 'chunks': 0}
log_id = {'log': os.path.abspath(log), 'log_bytes': os.path.getsize(log), 'n_max': n_max}
if state_dir and os.path.exists(os.path.join(state_dir, 'state.json')):
    state = json.load(open(os.path.join(state_dir, 'state.json')))
    if any(state.get(k, v) != v for k, v in log_id.items()):
        raise SystemExit(f'{state_dir} holds a run on another log or length: '
                         f'{ {k: state.get(k) for k in log_id} }, not {log_id}')
    model = os.path.join(state_dir, state.get('model', 'vw.model'))
    vw = Workspace(f'{ARGS} --save_resume -i {model}')
else:
    vw = Workspace(ARGS + (' --save_resume' if state_dir else ''))
actions = [f'ccb action |A a{a}' for a in range(m)]
predict_slots = [f'ccb slot |S p{j}' for j in range(k)]
f = open(log, 'rb')
header = f.readline().decode().rstrip('\n').split(',')
col = {h: i for i, h in enumerate(header)}
ucols = [col[h] for h in header if h.startswith('user_feature_')]
ts, it, pos, clk = col['timestamp'], col['item_id'], col['position'], col['click']
if state['offset'] is not None:
    f.seek(state['offset'])
truth_sum, n = state['truth_sum'], state['n']
stop_at = min(n_max, n + chunk) if chunk > 0 else n_max
rows = []
t0, c0 = time.time(), time.process_time()
def finish(rows):
    global truth_sum, n
    user = tuple(int(rows[0][c]) for c in ucols)
    shared = 'ccb shared |U ' + ' '.join(f'f{i}_{v}' for i, v in enumerate(user))
    pred = vw.predict([shared] + actions + predict_slots)
    ranking = [slot[0][0] for slot in pred]
    rel = relevance(user)
    truth_sum += sum(e * rel[a] for e, a in zip(exam, ranking)) / k
    labels = [f'ccb slot {r[it]}:{-1.0 if r[clk] == "1" else 0.0}:{1.0 / (m - j)} |S p{j}'
              for j, r in enumerate(sorted(rows, key=lambda r: int(r[pos])))]
    vw.learn([shared] + actions + labels)
    n += 1
offset = f.tell()
while n < stop_at:
    at = f.tell()
    line = f.readline()
    if not line:
        break
    r = line.decode().rstrip('\n').split(',')
    if rows and r[ts] != rows[0][ts]:
        finish(rows)
        rows = []
        offset = at
        if n >= stop_at:
            break
    rows.append(r)
if rows and n < stop_at:
    finish(rows)
    offset = f.tell()
wall, cpu = time.time() - t0, time.process_time() - c0
state.update(**log_id, n=n, truth_sum=truth_sum, offset=offset, wall_s=state['wall_s'] + wall,
             cpu_s=state['cpu_s'] + cpu, chunks=state['chunks'] + 1)
if state_dir:
    # A new model file per call, then the state that names it (an atomic rename): a call
    # killed on the way leaves the previous state and its model as they were.
    old_model = state.get('model')
    state['model'] = f"vw-{state['chunks']}.model"
    vw.save(os.path.join(state_dir, state['model']))
    with open(os.path.join(state_dir, 'state.json.tmp'), 'w') as out:
        json.dump(state, out)
    os.replace(os.path.join(state_dir, 'state.json.tmp'), os.path.join(state_dir, 'state.json'))
    if old_model and old_model != state['model']:
        os.remove(os.path.join(state_dir, old_model))
vw.finish()
print(json.dumps({'impressions': n, 'true_ctr': truth_sum / max(n, 1), 'wall_s': state['wall_s'],
                  'cpu_s': state['cpu_s'], 'chunks': state['chunks'], 'done': n >= n_max,
                  'impressions_per_second': n / max(state['wall_s'], 1e-9)}))
"""


def run_vw(log: Path, n: int, state: Path | None = None, chunk: int = 0) -> tuple[dict, dict]:
    py = vw_python()
    if state is not None:
        state.mkdir(parents=True, exist_ok=True)
    stdout, t = timed([str(py), "-c", VW_SIDE, str(log), str(n), str(state or ""), str(chunk)],
                      "1")
    return json.loads(stdout.strip().splitlines()[-1]), t


def fmt(e: dict) -> str:
    return f"{e['estimate']:.5f} [{e['low']:.5f}, {e['high']:.5f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impressions", type=int, default=10_000_000)
    ap.add_argument("--vw-impressions", type=int, default=1_000_000)
    ap.add_argument("--binary", help="the flowboost binary (default: build target/release)")
    ap.add_argument("--skip-vw", action="store_true")
    ap.add_argument("--vw-state", help="run Vowpal Wabbit in chunks: its model and place in the "
                    "log are kept in this directory, and each call goes on from them "
                    "(with --vw-chunk)")
    ap.add_argument("--vw-chunk", type=int, default=0,
                    help="with --vw-state: impressions per call (0: to the end)")
    ap.add_argument("--kafka-impressions", type=int, default=10_000_000,
                    help="impressions through Kafka (at most --impressions; default 10,000,000)")
    ap.add_argument("--max-backlog", type=int, default=200_000,
                    help="the Kafka producer stays at most this many impressions ahead of the "
                         "job's commits (default 200,000; the emulator keeps every record it "
                         "holds in memory, about 1.3 KB each)")
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
        state = Path(args.vw_state) if args.vw_state else None
        vw, vw_t = run_vw(small / "clicks.csv", n, state, args.vw_chunk)
        if not vw["done"]:
            print(f"Vowpal Wabbit: {vw['impressions']:,} of {n:,} impressions learned in "
                  f"{vw['chunks']} call(s) ({vw['wall_s']:.0f} s, {vw['cpu_s']:.0f} s CPU); its "
                  f"state is in {state}: run the same command again to go on", flush=True)
            return 0
        if state is not None:
            # The whole run's time is the sum of its calls' loops (their start-ups left
            # out); the memory is the last call's.
            vw_t = {**vw_t, "wall_s": vw["wall_s"], "cpu_s": vw["cpu_s"], "chunks": vw["chunks"]}
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
        print(f"| VW --ccb_explore_adf -q UA (Python loop) | {w['true_ctr']:.5f} | {wt['wall_s']:.1f} | "
              f"{wt['cpu_s']:.1f} | {w['impressions'] / wt['wall_s']:.0f} | {wt['max_rss_mb']:.0f} |")
        print(f"| logging policy (uniform) | {f['true_ctr']['logging']['estimate']:.5f} | | | | |")
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
