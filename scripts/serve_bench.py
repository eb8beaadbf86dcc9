#!/usr/bin/env python3
"""`flowboost serve`, measured (issue 45's figures): on loopback, release build.

    scripts/serve_bench.py                          # both models, every measurement
    scripts/serve_bench.py --models binary          # one model
    scripts/serve_bench.py --phases max,latency     # some measurements
    scripts/serve_bench.py --bin target/release/flowboost --no-build
    scripts/serve_bench.py --models '' --phases vw   # against Vowpal Wabbit's daemon

For each model (binary: `run --generator binary --algo adaboost-ol --learners 10`;
multilabel: `run --generator multilabel --algo ada-olmr --learners 100`, both on 20,000
examples of the seeded generator, saved with --save-model):

- **max**: single-event `POST /v1/predict` requests per second with keep-alive: wrk, one
  thread, 1, 2 and 4 connections, --duration seconds per run, --runs runs, the median
  per connection count; the best count is reported. wrk's Lua script rotates over
  1,000 pre-formatted requests (seeded events in the Kafka job's JSON format, features by
  the model's names `f0`, `f1`, ...).
- **latency**: p50/p99 at half that rate, from an open-loop client in this script (wrk
  cannot hold a fixed rate, and Debian has no wrk2): requests are scheduled at fixed
  times over keep-alive connections and each latency is measured from its *scheduled*
  send time (no coordinated omission: a late send counts as latency). By default one
  request in flight per connection (8 connections; a due request waits for a free one);
  with --pipelined, every due request is written at once over 4 connections (HTTP/1.1
  pipelining), which a Python client can hold at tens of thousands a second. The
  client's own lag (actual send minus scheduled) is reported beside it (with one request
  per connection it includes the wait for a free connection).
- **batch**: one NDJSON body of --batch-binary / --batch-multilabel records to
  `POST /v1/predict` against `flowboost predict --model M --data FILE` on the same
  records as a LIBSVM file (--output /dev/null): predictions per second of each, and
  their ratio (the issue asks for serve >= 0.8 of predict).
- **profile**: where a batch's time goes: the batch body whole, and with its last
  record made bad (every record read, split and decoded, nothing predicted, a 422), with
  features by name and dense (`"features": [...]`).
- **reload**: `serve --follow PATH --follow-every 1`; the open-loop client at half rate
  while PATH is atomically replaced every second (a hard link to one of three copies of
  the model, written beforehand, renamed over PATH), against the same server with PATH
  left alone: p50, p99 and max of each, and the reloads counted by the server's metrics.

- **vw** (not in the default phases): against Vowpal Wabbit's daemon (`vw --daemon`, from
  the vowpalwabbit wheel on PyPI, installed into target/vw-venv) on the same model size:
  AdaBoost.OL with 10 linear weak learners in both (VW's `--boosting 10 --alg adaptive`),
  the same records, one connection from this script's client: one request at a time
  (round-trip p50/p99), 64 in flight, and a whole batch (see `measure_vw`).

--rate binary=R,multilabel=R gives the half rates (and skips the max phase).

Pinning: the server (and `flowboost predict`) with `taskset -c 1`, wrk and this script
(the clients, the replacing loop) on CPU 0. The server's CPU seconds (utime + stime
from /proc/PID/stat, before and after each measurement) are reported beside the wall
seconds; for predict, the child's rusage. Output: Markdown tables on stdout, JSON in
--out-dir/results.json.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import gc
import http.client
import json
import os
import random
import re
import resource
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")

MODELS = {
    "binary": dict(
        title="binary, adaboost-ol, N=10",
        run=["--generator", "binary", "--algo", "adaboost-ol", "--learners", "10"],
    ),
    "multilabel": dict(
        title="multilabel, ada-olmr, N=100",
        run=["--generator", "multilabel", "--algo", "ada-olmr", "--learners", "100"],
    ),
}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pin_self(cpu: int) -> None:
    try:
        os.sched_setaffinity(0, {cpu})
    except (AttributeError, OSError) as e:
        log(f"cannot pin this script to CPU {cpu}: {e}")


def taskset(cpu: int) -> list[str]:
    return ["taskset", "-c", str(cpu)] if shutil.which("taskset") else []


def ensure_wrk() -> str:
    wrk = shutil.which("wrk")
    if wrk:
        return wrk
    log("wrk missing: apt-get install -y wrk")
    subprocess.run(["apt-get", "install", "-y", "wrk"], check=True)
    wrk = shutil.which("wrk")
    if not wrk:
        sys.exit("wrk is not installed and apt-get did not install it")
    return wrk


def busy_fraction(seconds: float = 2.0) -> float:
    """The machine's busy CPU fraction (all CPUs) over `seconds`, from /proc/stat."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + v[4]
        return sum(v), idle
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1 - (i1 - i0) / max(1, t1 - t0)


def wait_quiet(limit: float, patience: float) -> float:
    """Waits (at most `patience` seconds) until the machine is at most `limit` busy
    (another job's build or tests would skew every figure); returns the last fraction."""
    deadline = time.time() + patience
    while True:
        b = busy_fraction()
        if b <= limit or time.time() > deadline:
            if b > limit:
                log(f"WARNING: the machine is {b:.0%} busy before a measurement (waited {patience:.0f} s)")
            return b
        log(f"the machine is {b:.0%} busy: waiting for it to be quiet")
        time.sleep(10)


QUIET = dict(limit=0.08, patience=600.0)


def quiet() -> float:
    return wait_quiet(QUIET["limit"], QUIET["patience"])


def proc_cpu(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


# ---------------------------------------------------------------- models and records


def make_model(bin_: str, name: str, out: Path, examples: int) -> tuple[Path, dict]:
    path = out / f"{name}.fbm"
    cmd = [bin_, "run", *MODELS[name]["run"], "--examples", str(examples),
           "--save-model", str(path), "--output", "/dev/null"]
    log(" ".join(cmd))
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    info = json.loads(subprocess.run([bin_, "inspect", "--json", str(path)], check=True,
                                     capture_output=True, text=True).stdout)
    return path, info


def make_records(info: dict, n: int, seed: int) -> list[tuple[list[float], list[int]]]:
    """Seeded records: every feature a value (4 decimals), and labels for the file."""
    rng = random.Random(seed)
    dim = info["features"]
    nlab = len(info["labels"])
    multi = info["task"].lower().startswith("multi") and info["task"].lower() != "multiclass"
    recs = []
    for _ in range(n):
        x = [round(rng.gauss(0.0, 1.0), 4) for _ in range(dim)]
        if multi:
            y = sorted(rng.sample(range(nlab), 2))
        else:
            y = [rng.randrange(nlab)]
        recs.append((x, y))
    return recs


def event_json(i: int, x: list[float], names: list[str]) -> str:
    feats = ", ".join(f'"{nm}": {v!r}' for nm, v in zip(names, x))
    return f'{{"id": {i}, "features": {{{feats}}}}}'


def event_json_dense(i: int, x: list[float]) -> str:
    return f'{{"id": {i}, "features": [{", ".join(repr(v) for v in x)}]}}'


def write_libsvm(path: Path, recs, info: dict) -> None:
    """The same records as LIBSVM (1-based indices = f0, f1, ...), labels as the model's."""
    labels = info["labels"]
    with open(path, "w") as f:
        for x, y in recs:
            # LIBSVM labels are numeric: binary by the model's names ("0", "1"),
            # multi-label by index (0-based ids).
            lab = ",".join(labels[j] if len(labels) == 2 else str(j) for j in y)
            feats = " ".join(f"{k + 1}:{v!r}" for k, v in enumerate(x))
            f.write(f"{lab} {feats}\n")


# ---------------------------------------------------------------- the server


class Server:
    def __init__(self, bin_: str, model: Path, port: int, extra: list[str], cpu: int, logf: Path):
        self.port = port
        self.cmd = [*taskset(cpu), bin_, "serve", "--addr", f"127.0.0.1:{port}", "--threads",
                    "1", *extra]
        if "--follow" not in extra:
            self.cmd += ["--model", str(model)]
        log(" ".join(self.cmd))
        self.logf = open(logf, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self.logf, stderr=self.logf)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"serve exited {self.proc.returncode}: see {logf}")
            try:
                if get(port, "/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise SystemExit("serve did not become ready in 30 s")

    def cpu(self) -> float:
        return proc_cpu(self.proc.pid)

    def metric(self, name: str) -> float:
        text = get(self.port, "/metrics")[1].decode()
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.logf.close()


def get(port: int, path: str) -> tuple[int, bytes]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---------------------------------------------------------------- max rate: wrk

WRK_LUA = r"""
-- Single events, keep-alive: every request pre-formatted in init (one per line of the
-- events file given after --), rotated by request().
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local reqs = {}
local i = 0
function init(args)
  for line in io.lines(args[1]) do
    wrk.body = line
    reqs[#reqs + 1] = wrk.format(nil, "/v1/predict")
  end
end
function request()
  i = i % #reqs + 1
  return reqs[i]
end
"""


def wrk_run(wrk: str, server: Server, lua: Path, events: Path, conns: int, seconds: int) -> dict:
    cmd = [*taskset(0), wrk, "-t1", f"-c{conns}", f"-d{seconds}s", "-s", str(lua),
           f"http://127.0.0.1:{server.port}/v1/predict", "--", str(events)]
    busy = quiet()
    cpu0, t0 = server.cpu(), time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall, cpu = time.perf_counter() - t0, server.cpu() - cpu0
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errs = re.search(r"Socket errors:(.*)", out)
    return dict(conns=conns, rps=rps, requests=total, non2xx=int(bad.group(1)) if bad else 0,
                socket_errors=errs.group(1).strip() if errs else "", wall_s=wall, busy_before=busy,
                server_cpu_s=cpu, cmd=" ".join(cmd))


def measure_max(wrk, server, lua, events, conns_list, seconds, runs) -> dict:
    per = {}
    for c in conns_list:
        rs = [wrk_run(wrk, server, lua, events, c, seconds) for _ in range(runs)]
        med = statistics.median(r["rps"] for r in rs)
        per[c] = dict(median_rps=med, runs=rs)
        log(f"  wrk -c{c}: {[round(r['rps']) for r in rs]} req/s, server CPU "
            f"{sum(r['server_cpu_s'] for r in rs):.1f} s in {sum(r['wall_s'] for r in rs):.1f} s wall")
    best = max(per, key=lambda c: per[c]["median_rps"])
    return dict(best_conns=best, best_rps=per[best]["median_rps"], per_conns=per)


# ---------------------------------------------------------------- open loop at a fixed rate


def open_loop(port: int, requests: list[bytes], rate: float, seconds: float, conns: int = 8) -> dict:
    """Sends len = rate * seconds requests at fixed times t0 + i / rate over `conns`
    keep-alive connections (a request waits for a free connection if all are busy);
    latency = response complete - scheduled time."""
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(conns):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sel.register(s, selectors.EVENT_READ)
        socks.append(s)
    idle = collections.deque(socks)
    inflight: dict[socket.socket, float] = {}
    bufs: dict[socket.socket, bytearray] = {s: bytearray() for s in socks}
    backlog: collections.deque[float] = collections.deque()
    n_total = int(rate * seconds)
    interval = 1.0 / rate
    lat = []
    lag = []
    bad = 0
    nreq = len(requests)
    clock = time.perf_counter
    t0 = clock() + 0.05
    next_i = 0
    done = 0
    cl_re = re.compile(rb"content-length:\s*(\d+)", re.I)
    while done < n_total:
        now = clock()
        while next_i < n_total and t0 + next_i * interval <= now:
            backlog.append(t0 + next_i * interval)
            next_i += 1
        while backlog and idle:
            s = idle.popleft()
            sched = backlog.popleft()
            s.sendall(requests[(done + len(inflight)) % nreq])
            inflight[s] = sched
            lag.append(clock() - sched)
        if next_i < n_total:
            wait = t0 + next_i * interval - clock()
            # epoll sleeps in whole milliseconds: spin when the next send is closer.
            timeout = 0 if wait < 0.002 else wait - 0.0015
        else:
            timeout = 0.1
        for key, _ in sel.select(timeout):
            s = key.fileobj
            data = s.recv(1 << 16)
            if not data:
                raise SystemExit("the server closed a connection")
            buf = bufs[s]
            buf += data
            while True:
                h = buf.find(b"\r\n\r\n")
                if h < 0:
                    break
                m = cl_re.search(buf, 0, h)
                length = int(m.group(1)) if m else 0
                end = h + 4 + length
                if len(buf) < end:
                    break
                if buf[9:12] != b"200":
                    bad += 1
                del buf[:end]
                lat.append(clock() - inflight.pop(s))
                done += 1
                idle.append(s)
    wall = clock() - t0
    for s in socks:
        s.close()
    lat.sort()
    lag.sort()

    def q(xs, p):
        return xs[min(len(xs) - 1, int(p * len(xs)))]

    return dict(rate=rate, requests=n_total, non200=bad, wall_s=wall,
                achieved_rps=n_total / wall, conns=conns,
                p50_ms=q(lat, 0.50) * 1e3, p90_ms=q(lat, 0.90) * 1e3, p99_ms=q(lat, 0.99) * 1e3,
                p999_ms=q(lat, 0.999) * 1e3, max_ms=lat[-1] * 1e3,
                send_lag_p50_ms=q(lag, 0.5) * 1e3, send_lag_p99_ms=q(lag, 0.99) * 1e3)


def open_loop_pipelined(port: int, requests: list[bytes], rate: float, seconds: float,
                       conns: int = 4) -> dict:
    """As open_loop, but a request never waits for its connection: the requests due are
    written at once (one write per connection per turn, HTTP/1.1 pipelining, answered in
    order), so that a Python client holds tens of thousands of requests per second; the
    latency is still measured from each request's scheduled time."""
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(conns):
        s = socket.create_connection(("127.0.0.1", port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sel.register(s, selectors.EVENT_READ)
        socks.append(s)
    fifo = {s: collections.deque() for s in socks}
    bufs = {s: bytearray() for s in socks}
    n_total = int(rate * seconds)
    interval = 1.0 / rate
    nreq = len(requests)
    lat = []
    lag = []
    bad = 0
    clock = time.perf_counter
    t0 = clock() + 0.05
    next_i = 0
    done = 0
    turn = 0
    cl_re = re.compile(rb"content-length:\s*(\d+)", re.I)
    while done < n_total:
        now = clock()
        if next_i < n_total and t0 + next_i * interval <= now:
            due = min(n_total, int((now - t0) / interval) + 1)
            out: dict[socket.socket, list[bytes]] = {}
            for i in range(next_i, due):
                s = socks[turn % conns]
                turn += 1
                out.setdefault(s, []).append(requests[i % nreq])
                fifo[s].append(t0 + i * interval)
            for s, reqs in out.items():
                s.sendall(b"".join(reqs))
            sent = clock()
            lag.append(sent - (t0 + next_i * interval))
            next_i = due
        if next_i < n_total:
            wait = t0 + next_i * interval - clock()
            timeout = 0 if wait < 0.002 else wait - 0.0015
        else:
            timeout = 0.1
        for key, _ in sel.select(timeout):
            s = key.fileobj
            data = s.recv(1 << 18)
            if not data:
                raise SystemExit("the server closed a connection")
            buf = bufs[s]
            buf += data
            pos = 0
            now = clock()
            while True:
                h = buf.find(b"\r\n\r\n", pos)
                if h < 0:
                    break
                m = cl_re.search(buf, pos, h)
                end = h + 4 + (int(m.group(1)) if m else 0)
                if len(buf) < end:
                    break
                if buf[pos + 9:pos + 12] != b"200":
                    bad += 1
                lat.append(now - fifo[s].popleft())
                done += 1
                pos = end
            del buf[:pos]
    wall = clock() - t0
    for s in socks:
        s.close()
    lat.sort()
    lag.sort()

    def q(xs, p):
        return xs[min(len(xs) - 1, int(p * len(xs)))]

    return dict(rate=rate, requests=n_total, non200=bad, wall_s=wall, pipelined=True,
                achieved_rps=n_total / wall, conns=conns,
                p50_ms=q(lat, 0.50) * 1e3, p90_ms=q(lat, 0.90) * 1e3, p99_ms=q(lat, 0.99) * 1e3,
                p999_ms=q(lat, 0.999) * 1e3, max_ms=lat[-1] * 1e3,
                send_lag_p50_ms=q(lag, 0.5) * 1e3, send_lag_p99_ms=q(lag, 0.99) * 1e3)


def http_post(path: str, port: int, body: bytes, ctype: str = "application/json") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


CLIENT = dict(pipelined=False)


def measure_latency(server: Server, events: list[str], rate: float, seconds: float,
                    gate: bool = True) -> dict:
    reqs = [http_post("/v1/predict", server.port, e.encode()) for e in events]
    busy = quiet() if gate else float("nan")
    cpu0 = server.cpu()
    gc.disable()  # no collector pauses in the client's timing
    try:
        if CLIENT["pipelined"]:
            r = open_loop_pipelined(server.port, reqs, rate, seconds)
        else:
            r = open_loop(server.port, reqs, rate, seconds)
    finally:
        gc.enable()
    r["server_cpu_s"] = server.cpu() - cpu0
    r["busy_before"] = busy
    log(f"  open loop at {rate:.0f}/s: achieved {r['achieved_rps']:.0f}/s, p50 {r['p50_ms']:.3f} ms, "
        f"p99 {r['p99_ms']:.3f} ms, max {r['max_ms']:.1f} ms, send lag p99 "
        f"{r['send_lag_p99_ms']:.3f} ms, non-200 {r['non200']}, server CPU "
        f"{r['server_cpu_s']:.2f} s in {r['wall_s']:.2f} s")
    return r


# ---------------------------------------------------------------- batch vs predict


def post_batch(server: Server, body: bytes) -> tuple[int, bytes, float, float, float]:
    """POSTs one NDJSON body: (status, answer, wall s, server CPU s, busy before)."""
    busy = quiet()
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    cpu0, t0 = server.cpu(), time.perf_counter()
    c.request("POST", "/v1/predict", body=body, headers={"Content-Type": "application/x-ndjson"})
    r = c.getresponse()
    answer = r.read()
    wall = time.perf_counter() - t0
    cpu = server.cpu() - cpu0
    c.close()
    return r.status, answer, wall, cpu, busy


def profile_batch(server: Server, bodies: dict[str, bytes], n: int, runs: int) -> dict:
    """Where a batch's time goes: each body whole (read, split, decode, predict, encode,
    answer), and the same body with its last record made bad (an unknown feature: every
    record is read, split and decoded, nothing predicted, a short 422 answered)."""
    res = {}
    for shape, body in bodies.items():
        lines = body.rstrip(b"\n").split(b"\n")
        bad = b"\n".join(lines[:-1] + [b'{"id": 0, "features": {"no_such_feature": 1}}']) + b"\n"
        for what, b, want in (("whole", body, 200), ("decode_only", bad, 422)):
            walls, cpus = [], []
            for _ in range(runs):
                status, _, wall, cpu, _ = post_batch(server, b)
                if status != want:
                    raise SystemExit(f"profile {shape} {what}: HTTP {status}, expected {want}")
                walls.append(wall)
                cpus.append(cpu)
            w = statistics.median(walls)
            res[f"{shape}_{what}"] = dict(wall_s=w, server_cpu_s=statistics.median(cpus),
                                          us_per_record=w / n * 1e6, bytes=len(b))
            log(f"  profile {shape} {what}: {w:.3f} s ({w / n * 1e6:.2f} us/record), server CPU "
                f"{statistics.median(cpus):.3f} s")
    return res


def same_answer(served: dict, predicted: dict) -> bool:
    """Whether serve's prediction record and predict's line agree: the same scores, bit
    for bit (serve: `score`, or `ranking` by label index; predict: `scores`), and the same
    class or labels."""
    scores = predicted["scores"]
    if "score" in served:
        return served["score"] == scores[0] and served.get("class") == predicted["prediction"]
    by_index = {r["index"]: r["score"] for r in served.get("ranking", [])} if "ranking" in served else None
    if by_index is not None and [by_index.get(i) for i in range(len(scores))] != scores:
        return False
    return sorted(served.get("labels", [])) == sorted(predicted.get("labels", []))


def measure_batch(bin_: str, server: Server, model: Path, body: bytes, n: int, libsvm: Path,
                  out: Path, runs: int) -> dict:
    serve_runs = []
    # The first run's answers are compared with predict's: each prediction draws Hedge's
    # expert from the model's generator (as predict's do), so a server that answered
    # the batch before answers it from another point of the generator's stream.
    first = None
    for _ in range(runs):
        status, answers, wall, cpu, busy = post_batch(server, body)
        first = answers if first is None else first
        if status != 200:
            raise SystemExit(f"batch: HTTP {status}: {answers[:300]!r}")
        got = answers.count(b"\n") + (0 if answers.endswith(b"\n") else 1)
        if got != n:
            raise SystemExit(f"batch: {got} answers for {n} records")
        serve_runs.append(dict(wall_s=wall, server_cpu_s=cpu, per_s=n / wall, busy_before=busy))
        log(f"  serve batch: {n} in {wall:.3f} s ({n / wall:.0f}/s), server CPU {cpu:.2f} s")
    pred_runs = []
    pred_out = out / "predict.jsonl"
    cmd = [*taskset(1), bin_, "predict", "--model", str(model), "--data", str(libsvm),
           "--format", "libsvm", "--output", str(pred_out)]
    for _ in range(runs):
        busy = quiet()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            raise SystemExit(f"predict failed: {p.stderr[-2000:]}")
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        m = re.search(r"(\d+) examples in ([\d.]+) s", p.stderr)
        loop = float(m.group(2)) if m else float("nan")
        pred_runs.append(dict(wall_s=wall, cpu_s=cpu, loop_s=loop, per_s=n / wall,
                              loop_per_s=n / loop, busy_before=busy))
        log(f"  predict: {n} in {wall:.3f} s wall ({n / wall:.0f}/s; its loop {loop:.3f} s, "
            f"{n / loop:.0f}/s), CPU {cpu:.2f} s")
    # The same predictions? Compare the predicted labels, record by record.
    served = [json.loads(l) for l in first.splitlines() if l.strip()]
    predicted = [json.loads(l) for l in pred_out.read_text().splitlines() if l.strip()]
    (out / "serve-batch.ndjson").write_bytes(first)
    same = sum(1 for a, b in zip(served, predicted) if same_answer(a, b))
    s = statistics.median(r["per_s"] for r in serve_runs)
    pw = statistics.median(r["per_s"] for r in pred_runs)
    pl = statistics.median(r["loop_per_s"] for r in pred_runs)
    return dict(records=n, body_bytes=len(body), serve=serve_runs, predict=pred_runs,
                serve_per_s=s, predict_per_s=pw, predict_loop_per_s=pl,
                ratio_wall=s / pw, ratio_loop=s / pl, same_prediction=same,
                compared=min(len(served), len(predicted)), predict_cmd=" ".join(cmd))


# ---------------------------------------------------------------- reload pause


def measure_reload(bin_: str, model: Path, out: Path, events: list[str], rate: float,
                   seconds: float) -> dict:
    """The open loop at `rate` against `serve --follow PATH`, PATH left alone, then PATH
    replaced every second. The replacing is a rename of a hard link to one of three
    whole copies of the model written beforehand (so PATH is another inode each time,
    and the 1-second loop costs the clients' CPU no copying: a job writes its file
    elsewhere); the server loads each one as it would a job's new file."""
    res = {}
    fdir = out / "followed"
    shutil.rmtree(fdir, ignore_errors=True)
    fdir.mkdir()
    followed = fdir / "model.fbm"
    shutil.copyfile(model, followed)
    copies = []
    for k in range(3):
        c = fdir / f"copy{k}.fbm"
        shutil.copyfile(model, c)
        copies.append(c)
    tmp = fdir / ".model.fbm.tmp"
    loop = ("while :; do for c in " + " ".join(f"'{c}'" for c in copies) +
            f"; do ln -f \"$c\" '{tmp}' && mv -f '{tmp}' '{followed}'; sleep 1; done; done")
    for replace in (False, True):
        port = free_port()
        srv = Server(bin_, model, port, ["--follow", str(followed), "--follow-every", "1",
                                         "--model", str(followed)], 1,
                     out / f"serve-follow-{int(replace)}.log")
        replacer = None
        try:
            quiet()
            if replace:
                replacer = subprocess.Popen([*taskset(0), "sh", "-c", loop])
            reloads0 = srv.metric("flowboost_serve_model_reloads_total")
            r = measure_latency(srv, events, rate, seconds, gate=False)
            r["reloads"] = srv.metric("flowboost_serve_model_reloads_total") - reloads0
            r["reload_failures"] = srv.metric("flowboost_serve_model_reload_failures_total")
            r["cmd"] = " ".join(srv.cmd)
            if replace:
                r["replacer"] = loop
            log(f"  reload={'yes' if replace else 'no'}: {r['reloads']:.0f} reloads")
        finally:
            if replacer:
                replacer.terminate()
                replacer.wait()
            srv.stop()
        res["replaced" if replace else "still"] = r
    return res


# ---------------------------------------------------------------- Vowpal Wabbit's daemon

VW_VERSION = "9.11.9"
# The `vw` command line, through the Python wheel's workspace (the wheel ships no `vw`
# binary; `run_parser` is the binary's driver loop, so `--daemon` serves as `vw --daemon`).
VW_MAIN = ("import sys, vowpalwabbit\n"
           "ws = vowpalwabbit.Workspace(' '.join(sys.argv[1:]))\n"
           "ws.run_parser()\n"
           "ws.finish()\n")


def ensure_vw(out: Path) -> list[str]:
    """The command that runs `vw ARGS`: a venv under target/ with the vowpalwabbit wheel
    from PyPI (installed on first use)."""
    venv = REPO / "target" / "vw-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if subprocess.run([str(py), "-c", "import vowpalwabbit"], capture_output=True).returncode:
        log(f"installing vowpalwabbit=={VW_VERSION} from PyPI into {venv}")
        subprocess.run([str(py), "-m", "pip", "install", "-q", f"vowpalwabbit=={VW_VERSION}"],
                       check=True)
    main = out / "vw_main.py"
    main.write_text(VW_MAIN)
    return [str(py), str(main)]


def vw_line(x: list[float], y: int | None = None) -> str:
    feats = " ".join(f"f{j}:{v!r}" for j, v in enumerate(x))
    return ("" if y is None else ("1 " if y else "-1 ")) + "|f " + feats


class VwDaemon:
    """`vw -i MODEL -t --daemon --foreground --num_children 1` pinned to `cpu`: one child
    process answers one connection at a time, a line per example."""

    def __init__(self, vw: list[str], model: Path, port: int, cpu: int, logf: Path):
        self.port = port
        self.cmd = [*taskset(cpu), *vw, "-i", str(model), "-t", "--daemon", "--foreground",
                    "--port", str(port), "--num_children", "1", "--quiet"]
        log(" ".join(self.cmd))
        self.logf = open(logf, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self.logf, stderr=self.logf)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"vw exited {self.proc.returncode}: see {logf}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    s.sendall(b"|f f0:1\n")
                    if s.recv(100):
                        return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("vw --daemon did not answer in 60 s")

    def cpu(self) -> float:
        """The parent's and its children's CPU seconds (the child answers)."""
        pids = [self.proc.pid]
        kids = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                              text=True).stdout.split()
        pids += [int(k) for k in kids]
        total = 0.0
        for pid in pids:
            try:
                total += proc_cpu(pid)
            except OSError:
                pass
        return total

    def stop(self) -> None:
        subprocess.run(["pkill", "-P", str(self.proc.pid)], capture_output=True)
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.logf.close()


def count_answers(buf: bytearray, http: bool) -> tuple[int, int]:
    """Answers begun in `buf`: (how many, bytes to drop). HTTP/1.1 responses by their
    status lines (a non-200 status is fatal; a JSON body never holds `HTTP/1.1 `), the
    last 8 bytes kept for a status line split between two reads; VW's answers a line
    each. Cheap on purpose: the client must outrun the servers."""
    if not http:
        end = buf.rfind(b"\n") + 1
        return buf.count(b"\n", 0, end), end
    end = max(0, len(buf) - 8)
    n = buf.count(b"HTTP/1.1 ", 0, end + 8)
    if n != buf.count(b"HTTP/1.1 200 ", 0, end + 12):
        raise SystemExit(f"a non-200 answer in {bytes(buf[:300])!r}")
    return n, end


def closed_loop(port: int, reqs: list[bytes], n: int, depth: int, http: bool,
                server) -> dict:
    """One connection, `depth` requests in flight (1: one at a time), `n` requests in
    all: the answers per second, the round trips' p50/p99 (with depth 1), the server's
    CPU seconds."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray()
    sent = done = 0
    lat = []
    starts = collections.deque()
    clock = time.perf_counter
    gc.disable()
    try:
        cpu0, t0 = server.cpu(), clock()
        while done < n:
            if sent - done < depth and sent < n:
                k = min(depth - (sent - done), n - sent)
                s.sendall(b"".join(reqs[(sent + i) % len(reqs)] for i in range(k)))
                now = clock()
                starts.extend([now] * k)
                sent += k
            data = s.recv(1 << 18)
            if not data:
                raise SystemExit("the server closed the connection")
            buf += data
            got, used = count_answers(buf, http)
            if got:
                del buf[:used]
                now = clock()
                for _ in range(got):
                    lat.append(now - starts.popleft())
                done += got
        wall, cpu = clock() - t0, server.cpu() - cpu0
    finally:
        gc.enable()
        s.close()
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3
    return dict(requests=n, depth=depth, wall_s=wall, server_cpu_s=cpu, per_s=n / wall,
                p50_ms=q(0.5), p99_ms=q(0.99))


def measure_vw(bin_: str, out: Path, args) -> dict:
    """flowboost serve against Vowpal Wabbit's daemon on the same model size: AdaBoost.OL
    with 10 linear weak learners (flowboost `--algo adaboost-ol --weak linear --learners
    10`; VW `--boosting 10 --alg adaptive`, its implementation of the same paper), the
    same records. Both servers pinned to CPU 1 and one thread (one VW child), this client
    to CPU 0, one connection: one request at a time (round trips), 64 in flight (HTTP/1.1
    pipelining; VW's line protocol), and the whole batch at once (one NDJSON body; every
    line written before the answers are read)."""
    vdir = out / "vw"
    vdir.mkdir(exist_ok=True)
    vw = ensure_vw(vdir)
    path = vdir / "linear10.fbm"
    cmd = [bin_, "run", "--generator", "binary", "--algo", "adaboost-ol", "--weak", "linear",
           "--learners", "10", "--examples", str(args.examples), "--save-model", str(path),
           "--output", "/dev/null"]
    log(" ".join(cmd))
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    info = json.loads(subprocess.run([bin_, "inspect", "--json", str(path)], check=True,
                                     capture_output=True, text=True).stdout)
    train = make_records(info, args.examples, args.seed + 2)
    train_file = vdir / "train.vw"
    train_file.write_text("".join(vw_line(x, y[0]) + "\n" for x, y in train))
    vw_model = vdir / "boosting10.vw"
    vw_train = [*vw, "-d", str(train_file), "--boosting", "10", "--alg", "adaptive",
                "--loss_function", "logistic", "-f", str(vw_model), "--quiet"]
    log(" ".join(vw_train))
    subprocess.run(vw_train, check=True)
    names = [f"f{i}" for i in range(info["features"])]
    recs = make_records(info, args.batch_binary, args.seed + 1)
    http_reqs = [http_post("/v1/predict", 0, event_json(i, x, names).encode())
                 for i, (x, _) in enumerate(recs[:1000])]
    vw_reqs = [(vw_line(x) + "\n").encode() for x, _ in recs[:1000]]
    body = "".join(event_json(i, x, names) + "\n" for i, (x, _) in enumerate(recs)).encode()
    vw_body = b"".join((vw_line(x) + "\n").encode() for x, _ in recs)
    res = dict(model=" ".join(cmd[2:10]), vw_version=VW_VERSION, vw_train=" ".join(vw_train[2:]),
               features=info["features"], flowboost_bytes=path.stat().st_size,
               vw_bytes=vw_model.stat().st_size, batch=len(recs))
    seq_n, pipe_n = args.vw_requests, 10 * args.vw_requests
    srv = Server(bin_, path, free_port(), ["--max-body-bytes", str(2 * len(body))], 1,
                 vdir / "serve.log")
    res["serve_cmd"] = " ".join(srv.cmd)
    try:
        for what, n, depth in (("one_at_a_time", seq_n, 1), ("pipelined_64", pipe_n, 64)):
            runs = []
            for _ in range(args.runs):
                busy = quiet()
                r = closed_loop(srv.port, http_reqs, n, depth, True, srv)
                r["busy_before"] = busy
                runs.append(r)
            res.setdefault("flowboost", {})[what] = runs
            log(f"  serve {what}: {[round(r['per_s']) for r in runs]}/s")
        runs = []
        for _ in range(args.runs):
            status, answers, wall, cpu, busy = post_batch(srv, body)
            if status != 200:
                raise SystemExit(f"batch: HTTP {status}")
            runs.append(dict(wall_s=wall, server_cpu_s=cpu, per_s=len(recs) / wall,
                             busy_before=busy))
        res["flowboost"]["batch"] = runs
        log(f"  serve batch: {[round(r['per_s']) for r in runs]}/s")
    finally:
        srv.stop()
    d = VwDaemon(vw, vw_model, free_port(), 1, vdir / "vw.log")
    res["vw_cmd"] = " ".join(d.cmd)
    try:
        for what, n, depth in (("one_at_a_time", seq_n, 1), ("pipelined_64", pipe_n, 64)):
            runs = []
            for _ in range(args.runs):
                busy = quiet()
                r = closed_loop(d.port, vw_reqs, n, depth, False, d)
                r["busy_before"] = busy
                runs.append(r)
            res.setdefault("vw", {})[what] = runs
            log(f"  vw {what}: {[round(r['per_s']) for r in runs]}/s")
        runs = []
        for _ in range(args.runs):
            busy = quiet()
            r = vw_batch(d, vw_body, len(recs))
            r["busy_before"] = busy
            runs.append(r)
        res["vw"]["batch"] = runs
        log(f"  vw batch: {[round(r['per_s']) for r in runs]}/s")
    finally:
        d.stop()
    return res


def vw_batch(d: VwDaemon, body: bytes, n: int) -> dict:
    """Every line written (by a thread) while the answers are read."""
    s = socket.create_connection(("127.0.0.1", d.port))
    cpu0, t0 = d.cpu(), time.perf_counter()
    writer = threading.Thread(target=s.sendall, args=(body,))
    writer.start()
    got = 0
    while got < n:
        data = s.recv(1 << 20)
        if not data:
            raise SystemExit("vw closed the connection")
        got += data.count(b"\n")
    wall, cpu = time.perf_counter() - t0, d.cpu() - cpu0
    writer.join()
    s.close()
    return dict(wall_s=wall, server_cpu_s=cpu, per_s=n / wall)


def vw_table(r: dict) -> str:
    lines = [f"AdaBoost.OL, 10 linear weak learners, {r['features']} features; flowboost "
             f"model {r['flowboost_bytes']:,} bytes, VW {r['vw_version']} model "
             f"{r['vw_bytes']:,} bytes; medians of the runs", "",
             "| server | one at a time: req/s, p50 / p99 ms | 64 in flight: req/s | "
             f"batch of {r['batch']:,}: predictions/s | server CPU µs an answer (one at a time; "
             "64 in flight; batch) |",
             "| --- | --- | --- | --- | --- |"]
    for name, title in (("flowboost", "flowboost serve (HTTP/1.1, JSON)"),
                        ("vw", "vw --daemon (TCP lines)")):
        m = r[name]
        one, pipe, batch = m["one_at_a_time"], m["pipelined_64"], m["batch"]
        med = lambda runs, k: statistics.median(x[k] for x in runs)
        us = lambda runs: statistics.median(x["server_cpu_s"] / (x["per_s"] * x["wall_s"]) * 1e6
                                            for x in runs)
        lines.append(
            f"| {title} | {med(one, 'per_s'):,.0f}, {med(one, 'p50_ms'):.3f} / "
            f"{med(one, 'p99_ms'):.3f} | {med(pipe, 'per_s'):,.0f} | {med(batch, 'per_s'):,.0f} | "
            f"{us(one):.1f}; {us(pipe):.1f}; {us(batch):.2f} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "flowboost"))
    ap.add_argument("--no-build", action="store_true", help="use --bin as it is")
    ap.add_argument("--out-dir", default="/tmp/serve-bench")
    ap.add_argument("--models", default="binary,multilabel")
    ap.add_argument("--phases", default="max,latency,batch,profile,reload")
    ap.add_argument("--examples", type=int, default=20000, help="the models' training examples")
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--conns", default="1,2,4,8")
    ap.add_argument("--pipelined", action="store_true",
                    help="the open-loop client pipelines (for rates a request per connection "
                         "at a time cannot hold from Python)")
    ap.add_argument("--quiet", type=float, default=0.08,
                    help="wait before each measurement until the machine is at most this busy")
    ap.add_argument("--quiet-patience", type=float, default=600, help="seconds")
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--latency-seconds", type=float, default=20)
    ap.add_argument("--rate", default="", help="the half rate per model, name=R,... (skips max)")
    ap.add_argument("--batch-binary", type=int, default=100000)
    ap.add_argument("--batch-multilabel", type=int, default=20000)
    ap.add_argument("--batch-runs", type=int, default=3)
    ap.add_argument("--vw-requests", type=int, default=20000,
                    help="vw phase: requests one at a time (10 times as many 64 in flight)")
    args = ap.parse_args()

    pin_self(0)
    QUIET.update(limit=args.quiet, patience=args.quiet_patience)
    CLIENT.update(pipelined=args.pipelined)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    bin_ = args.bin
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "--bin", "flowboost"], cwd=REPO, check=True)
    wrk = ensure_wrk()
    phases = set(args.phases.split(","))
    given_rates = dict(kv.split("=") for kv in args.rate.split(",") if kv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True).stdout.strip()
    results = dict(date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   commit=commit, nproc=os.cpu_count(), args=vars(args), models={})
    resfile = out / "results.json"
    if "vw" in phases:
        log("vw: flowboost serve against Vowpal Wabbit's daemon")
        results["vw"] = measure_vw(bin_, out, args)
        resfile.write_text(json.dumps(results, indent=1))
    for name in [m for m in args.models.split(",") if m]:
        mdir = out / name
        mdir.mkdir(exist_ok=True)
        model, info = make_model(bin_, name, mdir, args.examples)
        names = [f"f{i}" for i in range(info["features"])]
        res = dict(title=MODELS[name]["title"], file_bytes=info["file_bytes"],
                   memory_bytes=info.get("memory_bytes"), features=info["features"],
                   labels=len(info["labels"]), load_seconds=info["load_seconds"])
        results["models"][name] = res
        recs = make_records(info, 1000, args.seed)
        events = [event_json(i, x, names) for i, (x, _) in enumerate(recs)]
        ev_file = mdir / "events.ndjson"
        ev_file.write_text("\n".join(events) + "\n")
        lua = mdir / "single.lua"
        lua.write_text(WRK_LUA)
        res["event_bytes"] = statistics.mean(len(e) for e in events)
        nbatch = args.batch_binary if name == "binary" else args.batch_multilabel
        body = b""
        if "batch" in phases:
            brecs = make_records(info, nbatch, args.seed + 1)
            body = "".join(event_json(i, x, names) + "\n" for i, (x, _) in enumerate(brecs)).encode()
            libsvm = mdir / "batch.libsvm"
            write_libsvm(libsvm, brecs, info)
            dense = "".join(event_json_dense(i, x) + "\n" for i, (x, _) in enumerate(brecs)).encode()
        max_body = max(1 << 20, 2 * len(body))
        srv = Server(bin_, model, free_port(), ["--max-body-bytes", str(max_body)], 1,
                     mdir / "serve.log")
        res["serve_cmd"] = " ".join(srv.cmd)
        half = None
        try:
            if name in given_rates:
                half = float(given_rates[name])
            elif "max" in phases or "latency" in phases or "reload" in phases:
                log(f"{name}: max rate")
                res["max"] = measure_max(wrk, srv, lua, ev_file, [int(c) for c in args.conns.split(",")],
                                         args.duration, args.runs)
                half = res["max"]["best_rps"] / 2
            res["half_rate"] = half
            resfile.write_text(json.dumps(results, indent=1))
            if "latency" in phases:
                log(f"{name}: latency at {half:.0f}/s")
                res["latency"] = measure_latency(srv, events, half, args.latency_seconds)
                resfile.write_text(json.dumps(results, indent=1))
            if "batch" in phases:
                log(f"{name}: batch of {nbatch}")
                res["batch"] = measure_batch(bin_, srv, model, body, nbatch, libsvm, mdir,
                                             args.batch_runs)
                resfile.write_text(json.dumps(results, indent=1))
                if "profile" in phases:
                    log(f"{name}: where a batch's time goes")
                    res["profile"] = profile_batch(srv, {"named": body, "dense": dense}, nbatch,
                                                   args.batch_runs)
                    resfile.write_text(json.dumps(results, indent=1))
        finally:
            srv.stop()
        if "reload" in phases:
            log(f"{name}: reload at {half:.0f}/s")
            res["reload"] = measure_reload(bin_, model, mdir, events, half, args.latency_seconds)
            resfile.write_text(json.dumps(results, indent=1))
    resfile.write_text(json.dumps(results, indent=1))
    print(table(results))
    if "vw" in results:
        print()
        print(vw_table(results["vw"]))


def table(results: dict) -> str:
    lines = [f"{results['date']}, commit {results['commit']}, {results['nproc']} CPUs", ""]
    lines.append("| model | max req/s (conns) | server CPU s / wall s | p50 / p99 ms at half | "
                 "batch serve /s | predict /s (wall; loop) | ratio (wall; loop) | "
                 "reload p99 / max ms (still; replaced, reloads) |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, r in results["models"].items():
        mx = r.get("max")
        best = mx and mx["per_conns"][mx["best_conns"]]["runs"]
        cpu = f"{sum(x['server_cpu_s'] for x in best):.1f} / {sum(x['wall_s'] for x in best):.1f}" if best else ""
        lat = r.get("latency")
        b = r.get("batch")
        rl = r.get("reload")
        lines.append(
            "| " + " | ".join([
                r["title"],
                f"{mx['best_rps']:,.0f} ({mx['best_conns']})" if mx else "",
                cpu,
                f"{lat['p50_ms']:.3f} / {lat['p99_ms']:.3f} at {r['half_rate']:,.0f}/s" if lat else "",
                f"{b['serve_per_s']:,.0f}" if b else "",
                f"{b['predict_per_s']:,.0f}; {b['predict_loop_per_s']:,.0f}" if b else "",
                f"{b['ratio_wall']:.2f}; {b['ratio_loop']:.2f}" if b else "",
                (f"{rl['still']['p99_ms']:.3f} / {rl['still']['max_ms']:.1f}; "
                 f"{rl['replaced']['p99_ms']:.3f} / {rl['replaced']['max_ms']:.1f}, "
                 f"{rl['replaced']['reloads']:.0f}") if rl else "",
            ]) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
