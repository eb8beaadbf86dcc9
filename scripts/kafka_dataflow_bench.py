#!/usr/bin/env python3
"""Figures of the Kafka job (one timely dataflow) against the same model without Kafka.

    scripts/kafka_dataflow_bench.py                 all sections, a Markdown report
    scripts/kafka_dataflow_bench.py --quick         smaller streams (a smoke run)
    scripts/kafka_dataflow_bench.py --sections throughput,idle

Sections (release build; a fresh Apache Kafka broker, the one scripts/kafka.sh runs, for
every run, pinned to core 1; the jobs run with the connector's default client settings):

  throughput  events/s of the job on a backlog (4 partitions, produced before the job
              starts; events / the job's busy time, first record read to last prediction
              handed to the producer) divided by the same model's events/s without Kafka
              (`flowboost run` on the same generator stream, predictions written to
              /dev/null) pinned to core 0; the job's timely worker thread pinned to core 0,
              its librdkafka threads to core 1 beside the broker. Configs:
              binary + adaboost-ol N=10, multilabel + ada-olmr N=10 and N=100, 1 worker,
              each with the events as JSON and as Avro (`--record-formats`).
  idle        CPU used by a job with no data over 30 s (after 5 s of start-up), from
              /proc/PID/stat (utime + stime of every thread), with 1 and 2 workers, and
              split into the timely worker threads and the rest (librdkafka).
  latency     p50 / p90 / p99 produce-to-prediction latency (the prediction record's
              broker timestamp - the event record's, matched by event id) with the job
              running before the producer starts, at half the job's maximum rate from the
              throughput section (--rates gives them without it), and binary N=10 at a
              fixed 1,000 events/s, for 15 s or 150,000
              events, whichever is shorter; the first fifth of the events is left out as the
              warm-up (`kafka read --latency-skip-events N`; `kafka produce --rate` paces
              from its first delivery, so its client's start-up, up to a second, is not
              in the rate). Beside it, the job's own measure over every event
              (`latency_ms` of its summary: the event's timestamp to the prediction
              handed to the producer), and over the predictions after the first fifth
              (its metrics page, scraped every 0.1 s: the difference between the
              latency histograms of the first scrape past the first fifth and of the
              last one; quantiles as the bucket bounds they fall in).
  live        the maximum rate of the live pipeline on this machine: the job running, a
              producer as fast as it goes (the producer, the broker and the job share the
              cores), its end-to-end rate (predictions over the time from the first event
              to the last prediction, the first second left out); then the latency at half
              that rate, for binary + adaboost-ol N=10 and multilabel + ada-olmr N=10.
  scaling     events/s and CPU per event (the process's utime + stime over the events)
              of the model without Kafka and of the job on a backlog (max(4, W)
              partitions), on W = 1, 2, 4, 8 workers (--scaling-workers), for binary +
              adaboost-ol N=10 and multilabel + ada-olmr N=100; each worker thread's CPU
              seconds (the job's summary, from /proc/thread-self/schedstat) and the other
              threads'; nothing pinned but the broker, on the last core; one run per
              count. Not in the default sections: it is for machines with more cores than
              the 2 of the VM this project is built on.
  workers     the scaling section on W = 1 and 2: total CPU per event with 2 workers /
              with 1 worker (its column "job CPU vs 1 worker"). On 2 cores this cannot
              show a speed-up (the broker and both workers contend).

  instructions
              the binary row of `throughput` (and multi-label N=10) counted in
              instructions instead of seconds, which the machine's load does not move:
              valgrind's callgrind (--separate-threads) over the job on a backlog and over
              the model without Kafka on the same stream (20,000 binary, 3,000 multi-label
              events; --quick: a tenth), on 1 and 2 workers; per event, each worker
              thread's instructions, the stage blocks' part (`process_stage_major`,
              inclusive) and the rest; the ratio (the model's worker instructions / the
              job's) is the ceiling of the throughput ratio on a machine that runs both at
              the same instructions per cycle, and the 2-worker column says what a second
              worker adds in work (not in contention). Each figure is a run of the events
              given less a run of a tenth as many, over the difference, so that the
              start-up (building the dataflow and the model, the client's connection) is
              left out. The job's rows for each of `--record-formats`. Needs valgrind;
              not in the default sections (minutes under valgrind).
  checkpoints events/s of the job on a backlog with a checkpoint every 10 s (transactional
              output, the default with --checkpoint-dir) divided by the same job's without
              checkpoints (pinned as in `throughput`), for the binary generator with
              adaboost-ol N=10 and the mediamill-size generator with ada-olmr N=100; the
              checkpoints' size and write time (the job's summary: writing the file,
              fsync, committing the transaction), and the restore time (reading, checking
              and decoding the last checkpoint: `flowboost inspect`'s load_seconds).

Options beside --quick and --sections: --record-formats json,avro (the default) are the
event formats of the throughput and instructions sections (the other sections use JSON);
--brokers HOST:PORT runs everything against a broker
that runs already (a real Kafka cluster: nothing is started, stopped or pinned, and every
topic and group name ends with this run's suffix); --retention-bytes BYTES creates the
topics of the paced latency runs (not the maximum-rate ones) with retention.bytes BYTES
and segment.bytes a quarter of it, so that the broker keeps a bounded log; their
latency is then that of the events still on the broker at the end (`kafka read` reads
what is left), and the events removed count as the warm-up left out. The job must still
read every event (checked).

Environment: FLOWBOOST (the binary; default target/release/flowboost after a build);
FLOWBOOST_KAFKA_DATA (where the broker keeps its data; default scripts/kafka.sh's).
"""

import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KAFKA_SH = os.path.join(ROOT, "scripts", "kafka.sh")
# librdkafka settings every job of the bench passes (none: the connector's defaults).
KAFKA_SET = []
TICK = os.sysconf("SC_CLK_TCK")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def binary():
    if os.environ.get("FLOWBOOST"):
        return os.environ["FLOWBOOST"]
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "flowboost")


# Where the broker keeps its log (scripts/kafka.sh's default unless FLOWBOOST_KAFKA_DATA
# says otherwise).
BROKER_DATA = os.environ.get("FLOWBOOST_KAFKA_DATA", "")


# Set by main: the address of a broker that runs already (--brokers), for a real Kafka
# cluster; None: a fresh broker of scripts/kafka.sh for every run.
EXTERNAL = None
# Set by main: the bytes each partition of the paced latency runs' topics keeps
# (--retention-bytes); None: no limit.
RETENTION = None
# A suffix for every topic and group of this run, so that runs against a broker that
# already holds other topics (--brokers) never meet old data.
RUN = f"{os.getpid()}-{int(time.time())}"


class Broker:
    """A fresh Apache Kafka broker (scripts/kafka.sh) pinned to core `core` (1 unless
    given), its data in BROKER_DATA, stopped on exit; with --brokers, the broker given (not started, not
    stopped, not pinned)."""

    def __init__(self, core=1):
        self.core = core

    def __enter__(self):
        if EXTERNAL:
            self.address = EXTERNAL
            return self
        env = dict(os.environ, FLOWBOOST_KAFKA_DATA=BROKER_DATA) if BROKER_DATA else None
        subprocess.run([KAFKA_SH, "stop"], cwd=ROOT, capture_output=True)
        out = subprocess.run(
            ["taskset", "-c", str(self.core), KAFKA_SH, "start"],
            cwd=ROOT, check=True, capture_output=True, text=True, env=env,
        ).stdout
        self.address = out.strip().splitlines()[-1]
        return self

    def __exit__(self, *exc):
        if not EXTERNAL:
            subprocess.run([KAFKA_SH, "stop"], cwd=ROOT, capture_output=True)


def kafka_version():
    """The Apache Kafka version that scripts/kafka.sh runs (from its pom)."""
    with open(os.path.join(ROOT, "scripts", "kafka", "pom.xml")) as f:
        m = re.search(r"<kafka.version>([^<]+)</kafka.version>", f.read())
    return m.group(1) if m else "?"


def threads_cpu(pid):
    """CPU seconds per thread kind of a running process: the timely workers
    (`timely:work-*`) and everything else (librdkafka's threads, the main thread)."""
    out = {"workers": 0.0, "other": 0.0}
    for _, comm, cpu in thread_stats(pid):
        out["workers" if comm.startswith("timely:work") else "other"] += cpu
    return out


def thread_stats(pid):
    """(thread id, name, CPU seconds) of every thread of a running process; none once it
    has ended."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        yield tid, comm, (int(fields[11]) + int(fields[12])) / TICK


class PinThreads(threading.Thread):
    """While process `pid` runs, pins its timely worker threads to core 0 and its other
    threads (librdkafka's clients, the main thread) to core 1, beside the broker: the
    worker gets a core of its own, as the model without Kafka does."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                for tid in os.listdir(f"/proc/{self.pid}/task"):
                    with open(f"/proc/{self.pid}/task/{tid}/comm") as f:
                        comm = f.read().strip()
                    os.sched_setaffinity(int(tid), {0} if comm.startswith("timely:work") else {1})
            except OSError:
                return
            self.stop.wait(0.02)


class ThreadSampler(threading.Thread):
    """While process `pid` runs, reads every thread's name and CPU seconds every 0.1 s;
    `by_name()` sums the last reading per thread name (librdkafka's `rdk:broker*`,
    `rdk:main`, the timely workers `timely:work-*`): where the CPU of a run went."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.last = {}
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            for tid, comm, cpu in thread_stats(self.pid):
                self.last[tid] = (comm, cpu)
            self.stop.wait(0.1)

    def by_name(self):
        out = {}
        for comm, cpu in self.last.values():
            out[comm] = out.get(comm, 0.0) + cpu
        return out


def cpu_of(pid):
    """utime + stime (seconds) of a running process, all threads."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def run_with_cpu(cmd, pin=None):
    """Runs cmd to the end; returns (stdout, stderr, wall seconds, CPU seconds of the child
    and its threads: the rusage of reaped children before and after)."""
    if pin is not None:
        cmd = ["taskset", "-c", pin] + cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return p.stdout, p.stderr, wall, cpu


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit(f"no JSON summary in:\n{text[-2000:]}")


def produce(fb, brokers, topic, generator, examples, seed=1, rate=None, partitions=4,
            record_format="json"):
    cmd = [fb, "kafka", "produce", "--brokers", brokers, "--topic", topic,
           "--partitions", str(partitions), "--record-format", record_format,
           "--generator", generator, "--examples", str(examples), "--seed", str(seed)]
    if rate:
        cmd += ["--rate", f"{rate:.1f}"]
    out, _, _, _ = run_with_cpu(cmd)
    return last_json(out)


def create(fb, brokers, topic, partitions=1, retention=None):
    """Creates `topic`; with `retention`, each partition keeps about that many bytes (in
    segments of a quarter of it)."""
    cmd = [fb, "kafka", "create-topic", "--brokers", brokers, "--topic", topic,
           "--partitions", str(partitions)]
    if retention:
        cmd += ["--config", f"retention.bytes={retention}",
                "--config", f"segment.bytes={max(retention // 4, 1)}"]
    run_with_cpu(cmd)


def job_cmd(fb, brokers, tag, generator, algo, n, workers, idle=None, record_format="json"):
    cmd = [fb, "run", "--brokers", brokers, "--source", f"kafka:{tag}-events",
           "--sink", f"kafka:{tag}-pred", "--group", f"{tag}-g", "--start", "earliest",
           "--report-interval", "0", "--workers", str(workers), "--generator", generator,
           "--algo", algo, "--learners", str(n), "--record-format", record_format] + KAFKA_SET
    if idle is not None:
        cmd += ["--exit-when-idle", str(idle)]
    return cmd


def baseline(fb, generator, algo, n, examples, workers=1, pin="0"):
    """The same model without Kafka (`flowboost run` on the generator's stream), pinned to
    `pin` (None: not pinned), on `workers` timely workers."""
    cmd = [fb, "run", "--generator", generator, "--examples", str(examples), "--algo", algo,
           "--learners", str(n), "--output", "/dev/null", "--report-every", "0",
           "--workers", str(workers)]
    _, err, wall, cpu = run_with_cpu(cmd, pin=pin)
    m = re.search(r"(\d+) examples in ([0-9.]+) s", err)
    secs = float(m.group(2))
    return {"events_per_second": examples / secs, "seconds": secs, "cpu_seconds": cpu,
            "wall_seconds": wall}


def kafka_backlog(fb, generator, algo, n, examples, workers, pin_threads, tag, extra=(),
                  partitions=4, broker_core=1, record_format="json"):
    """The job on a backlog of `examples` events (in `record_format`) on `partitions`
    partitions; with `pin_threads`, its worker threads pinned to core 0 and its other
    threads to core 1 (see PinThreads)."""
    with Broker(broker_core) as b:
        produce(fb, b.address, f"{tag}-events", generator, examples, partitions=partitions,
                record_format=record_format)
        create(fb, b.address, f"{tag}-pred")
        cmd = job_cmd(fb, b.address, tag, generator, algo, n, workers, idle=2,
                      record_format=record_format) + list(extra)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pinner = PinThreads(p.pid) if pin_threads else None
        if pinner:
            pinner.start()
        sampler = ThreadSampler(p.pid)
        sampler.start()
        out, err = p.communicate()
        sampler.stop.set()
        if pinner:
            pinner.stop.set()
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            raise SystemExit(f"the job failed ({p.returncode}): {err[-3000:]}")
        s = last_json(out)
        if s["events_in"] != examples or s["predictions"] != examples:
            raise SystemExit(f"the job did not take every event: {s}")
        s["process_cpu_seconds"] = (after.ru_utime + after.ru_stime) - (
            before.ru_utime + before.ru_stime)
        s["wall_seconds"] = wall
        s["threads_cpu_seconds"] = sampler.by_name()
        return s


CONFIGS = [("binary", "adaboost-ol", 10), ("multilabel", "ada-olmr", 10),
           ("multilabel", "ada-olmr", 100)]


def sizes(quick):
    if quick:
        return {("binary", 10): 20000, ("multilabel", 10): 2000, ("multilabel", 100): 400}
    return {("binary", 10): 200000, ("multilabel", 10): 30000, ("multilabel", 100): 6000}


def median_run(runs, key):
    """The run with the median `key` of an odd number of runs."""
    return sorted(runs, key=lambda r: r[key])[len(runs) // 2]


def throughput(fb, quick, report, rates, repeat, formats):
    rows = []
    for (generator, algo, n), fmt in [(c, f) for f in formats for c in CONFIGS]:
        examples = sizes(quick)[(generator, n)]
        log(f"== throughput: {generator} {algo} N={n}, {fmt} events, {examples} events, "
            f"median of {repeat}")
        bases, jobs = [], []
        for _ in range(repeat):
            bases.append(baseline(fb, generator, algo, n, examples))
            jobs.append(kafka_backlog(fb, generator, algo, n, examples, 1, True,
                                      f"tp-{generator}-{n}-{fmt}-{len(jobs)}",
                                      record_format=fmt))
            j = jobs[-1]
            log(f"   without Kafka {bases[-1]['events_per_second']:.0f}/s, job "
                f"{j['events_per_second']:.0f}/s (process CPU {j['process_cpu_seconds']:.2f} s, "
                f"worker {j['worker_cpu_seconds'][0]:.2f} s, threads "
                f"{ {k: v for k, v in j['threads_cpu_seconds'].items() if v >= 0.05} })")
        base = median_run(bases, "events_per_second")
        job = median_run(jobs, "events_per_second")
        ratio = job["events_per_second"] / base["events_per_second"]
        if fmt == "json":
            rates[(generator, n)] = job["events_per_second"]
        log(f"   median: without Kafka {base['events_per_second']:.0f}/s, job {job['events_per_second']:.0f}/s, ratio {ratio:.2f}")
        spread = (f"{min(j['events_per_second'] for j in jobs) / max(b['events_per_second'] for b in bases):.2f}"
                  f"-{max(j['events_per_second'] for j in jobs) / min(b['events_per_second'] for b in bases):.2f}")
        rows.append(
            f"| {generator} | {algo} | {n} | {fmt} | {examples} | {base['events_per_second']:.0f} | "
            f"{base['cpu_seconds']:.2f} | {job['events_per_second']:.0f} | "
            f"{job['busy_seconds']:.2f} | {job['process_cpu_seconds']:.2f} | "
            f"{job['worker_cpu_seconds'][0]:.2f} | **{ratio:.2f}** | {spread} |")
    report.append("### Throughput on a backlog: the job / the same model without Kafka (1 worker; "
                  "the model without Kafka and the job's worker thread pinned to core 0, the "
                  f"job's librdkafka threads and the broker to core 1; median of {repeat} runs)\n")
    report.append("| generator | algo | N | event format | events | without Kafka: events/s | "
                  "its CPU s | Kafka job: events/s | busy s | process CPU s | worker CPU s | "
                  "ratio | range (worst-best pairing) |")
    report.append("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    report.extend(rows)
    report.append("")


def idle(fb, quick, report):
    rows = []
    for workers in (1, 2):
        log(f"== idle: {workers} worker(s)")
        with Broker() as b:
            tag = f"idle-{workers}-{RUN}"
            create(fb, b.address, f"{tag}-events", 4)
            create(fb, b.address, f"{tag}-pred")
            p = subprocess.Popen(job_cmd(fb, b.address, tag, "binary", "adaboost-ol", 10, workers),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            time.sleep(5)
            c0, k0, t0 = cpu_of(p.pid), threads_cpu(p.pid), time.monotonic()
            time.sleep(3 if quick else 30)
            c1, k1, t1 = cpu_of(p.pid), threads_cpu(p.pid), time.monotonic()
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=60)
            if p.returncode != 0:
                raise SystemExit(f"the idle job did not stop cleanly ({p.returncode}): {err.decode()[-2000:]}")
            span = t1 - t0
            cores = (c1 - c0) / span
            wk = (k1["workers"] - k0["workers"]) / span
            other = (k1["other"] - k0["other"]) / span
            log(f"   {c1 - c0:.2f} CPU s over {span:.1f} s: {cores:.3f} core (workers {wk:.3f}, other threads {other:.3f})")
            rows.append(f"| {workers} | {span:.1f} | {c1 - c0:.2f} | **{cores:.3f}** | {wk:.3f} | {other:.3f} |")
    report.append("### CPU of an idle job (no data; SIGTERM afterwards, exit 0)\n")
    report.append("| workers | seconds measured | CPU s | cores | of which timely workers | librdkafka and other threads |")
    report.append("|---:|---:|---:|---:|---:|---:|")
    report.extend(rows)
    report.append("")


class MetricsWatch(threading.Thread):
    """Scrapes a job's metrics page every 0.1 s while it runs: the predictions written and
    the cumulative latency histogram, so that the latency of a window (after the warm-up)
    is the difference of two scrapes."""

    def __init__(self, address):
        super().__init__(daemon=True)
        self.url = f"http://{address}/metrics"
        self.scrapes = []
        self.stop = threading.Event()

    def run(self):
        import urllib.request
        while not self.stop.wait(0.1):
            try:
                text = urllib.request.urlopen(self.url, timeout=1).read().decode()
            except OSError:
                continue
            m = re.search(r"^flowboost_predictions_out_total (\S+)", text, re.M)
            buckets = {float(le): int(float(c)) for le, c in re.findall(
                r'^flowboost_event_latency_seconds_bucket\{le="([^"]+)"\} (\S+)', text, re.M)}
            if m and buckets:
                self.scrapes.append((int(float(m.group(1))), buckets))

    def window(self, after):
        """The latency (ms, as bucket bounds) of the predictions written after the first
        `after`: from the first scrape that had written `after` to the last scrape."""
        start = next((s for s in self.scrapes if s[0] >= after), None)
        if start is None or start is self.scrapes[-1]:
            return None
        end = self.scrapes[-1]
        diff = {le: end[1][le] - start[1].get(le, 0) for le in end[1]}
        bounds = sorted(diff)
        total = diff[bounds[-1]]
        if total <= 0:
            return None

        def q(x):
            le = next(b for b in bounds if diff[b] >= x * total)
            return "inf" if le == float("inf") else f"{le * 1000:g}"
        return {"count": total, "from": start[0], "p50": q(0.5), "p90": q(0.9), "p99": q(0.99),
                "within_50ms": diff[0.05] / total}


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def live_latency(fb, generator, algo, n, rate, examples, skip):
    """The job (1 worker) running before a producer of `examples` events at `rate` events/s
    (None: as fast as it can) starts; the produce-to-prediction latency of the events after
    the first `skip` events, and the end-to-end rate (`kafka read --latency-from`). With
    RETENTION and a rate, the topics keep only their last RETENTION bytes per partition:
    the latency is that of the events left (`skip` does not apply), and the events
    removed are returned as the warm-up left out."""
    retention = RETENTION if rate else None
    with Broker() as b:
        tag = f"lat-{generator}-{n}-{int(rate or 0)}-{RUN}"
        create(fb, b.address, f"{tag}-events", 4, retention)
        create(fb, b.address, f"{tag}-pred", 1, retention)
        metrics = f"127.0.0.1:{free_port()}"
        p = subprocess.Popen(job_cmd(fb, b.address, tag, generator, algo, n, 1, idle=10)
                             + ["--metrics-addr", metrics],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        watch = MetricsWatch(metrics)
        watch.start()
        time.sleep(2)
        produce(fb, b.address, f"{tag}-events", generator, examples, seed=2, rate=rate)
        out, err = p.communicate(timeout=600)
        watch.stop.set()
        watch.join()
        if p.returncode != 0:
            raise SystemExit(f"the job failed: {err.decode()[-2000:]}")
        s = last_json(out.decode())
        if s["events_in"] != examples:
            raise SystemExit(f"the job did not read every event (retention too small?): {s}")
        # The job's own measure (every event, the warm-up included).
        job = s["latency_ms"]
        read = [fb, "kafka", "read", "--brokers", b.address, "--topic", f"{tag}-pred",
                "--latency-from", f"{tag}-events"]
        if retention:
            # The job has written everything: what is left is read until idle.
            read += ["--idle", "3"]
        else:
            read += ["--expect", str(examples), "--timeout", "120",
                     "--latency-skip-events", str(skip)]
        out, _, _, _ = run_with_cpu(read)
        summary = last_json(out)
        lat = dict(summary["latency_ms"], job=job, window=watch.window(skip))
        if retention:
            lat["skipped"] = examples - lat["matched"]
        log(f"   {lat}, end to end {summary['end_to_end_events_per_second']:.0f} events/s")
        if not lat["matched"]:
            raise SystemExit(f"no prediction matched an event: {out}")
        return lat, summary["end_to_end_events_per_second"]


def paced_latency(fb, generator, algo, n, rate, seconds):
    """`live_latency` at `rate` events/s for `seconds` or 150,000 events, whichever is
    fewer (`kafka read --latency-from` reads the whole events topic back), the first fifth of the events left out as the warm-up (with RETENTION: those removed).
    Returns the events, the events left out and the latency."""
    examples = min(int(rate * seconds), 150_000)
    lat, _ = live_latency(fb, generator, algo, n, rate, examples, examples // 5)
    return examples, lat["skipped"], lat


def latency_row(generator, algo, n, what, examples, skip, lat):
    w = lat["window"]
    window = (f"{w['count']} | {w['p50']} / {w['p90']} / **{w['p99']}** | {w['within_50ms']:.4f}"
              if w else "- | - | -")
    return (f"| {generator} | {algo} | {n} | {what} | {examples} | {skip} | "
            f"{lat['matched']} | {lat['p50']:.0f} | {lat['p90']:.0f} | "
            f"**{lat['p99']:.0f}** | {lat['max']:.0f} | {lat['job']['p50']} / {lat['job']['p99']} | "
            f"{window} |")


def latency(fb, quick, report, rates):
    rows = []
    seconds = 8 if quick else 15
    # Half the maximum rate of each N = 10 config, then a fixed 1,000 events/s: on 2 cores
    # the producer, the broker and the job compete at half the maximum rate.
    plan = []
    for generator, algo, n in CONFIGS[:2]:
        rate = rates.get((generator, n))
        if rate is None:
            rate = kafka_backlog(fb, generator, algo, n, sizes(True)[(generator, n)], 1, True,
                                 f"lr-{generator}-{n}")["events_per_second"]
        plan.append((generator, algo, n, rate / 2))
    plan.append(("binary", "adaboost-ol", 10, 1000.0))
    for generator, algo, n, rate in plan:
        log(f"== latency: {generator} {algo} N={n} at {rate:.0f} events/s")
        examples, skip, lat = paced_latency(fb, generator, algo, n, rate, seconds)
        rows.append(latency_row(generator, algo, n, f"{rate:.0f}", examples, skip, lat))
    report.append("### Produce-to-prediction latency at half the maximum rate, and at 1,000 events/s "
                  "(1 worker, ms)\n")
    report.append(LATENCY_HEADER)
    report.extend(rows)
    report.append("")


LATENCY_HEADER = ("| generator | algo | N | events/s | events | warm-up left out (events) | measured | "
                  "p50 | p90 | p99 | max | the job's own p50 / p99, every event | "
                  "the job's own after the first fifth: predictions | p50 / p90 / p99 at most "
                  "(bucket bounds) | share within 50 ms |\n"
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def live(fb, quick, report):
    """The maximum rate of the whole live pipeline on this machine (the producer, the
    broker and the job sharing its cores): a producer as fast as it can go with the job
    running, its end-to-end rate (predictions matched over the time from the first event
    to the last prediction, nothing left out); then the latency at half that rate."""
    rows = []
    seconds = 8 if quick else 15
    for generator, algo, n in CONFIGS[:2]:
        examples = sizes(quick)[(generator, n)] if quick else (150_000 if generator == "binary"
                                                              else 60_000)
        log(f"== live maximum: {generator} {algo} N={n}, {examples} events as fast as they go")
        # Nothing left out: an unthrottled producer writes the events within about a
        # second, and the rate is over the whole run (the job's start included).
        lat, top = live_latency(fb, generator, algo, n, None, examples, 0)
        rows.append(latency_row(generator, algo, n, f"max: {top:.0f}", examples, 0, lat))
        half = top / 2
        log(f"== latency at half the live maximum: {half:.0f} events/s")
        count, skip, lat = paced_latency(fb, generator, algo, n, half, seconds)
        rows.append(latency_row(generator, algo, n, f"{half:.0f} (half)", count, skip, lat))
    report.append("### The live pipeline's maximum rate, and the latency at half of it "
                  "(1 worker, ms)\n")
    report.append(LATENCY_HEADER)
    report.extend(rows)
    report.append("")


def scaling(fb, quick, report, counts):
    rows = []
    broker_core = os.cpu_count() - 1
    for generator, algo, n in (CONFIGS[0], CONFIGS[2]):
        examples = sizes(quick)[(generator, n)]
        first = None
        for w in counts:
            log(f"== scaling: {generator} {algo} N={n}, {w} worker(s), {examples} events")
            base = baseline(fb, generator, algo, n, examples, workers=w, pin=None)
            job = kafka_backlog(fb, generator, algo, n, examples, w, False,
                                f"sc{w}-{generator}-{n}-{RUN}", partitions=max(4, w),
                                broker_core=broker_core)
            first = first or (base, job)
            b_us = base["cpu_seconds"] / examples * 1e6
            j_us = job["process_cpu_seconds"] / examples * 1e6
            log(f"   without Kafka {base['events_per_second']:.0f}/s ({b_us:.1f} CPU us/event), "
                f"job {job['events_per_second']:.0f}/s ({j_us:.1f} CPU us/event), "
                f"workers {job['worker_cpu_seconds']}")
            others = sorted(((c, n) for n, c in job["threads_cpu_seconds"].items()
                             if not n.startswith("timely:work")), reverse=True)
            log("   other threads (last reading, 0.1 s apart): "
                + ", ".join(f"{n} {c:.2f}" for c, n in others[:4]))
            rows.append(
                f"| {generator} | {algo} | {n} | {w} | {base['events_per_second']:.0f} | "
                f"{base['events_per_second'] / first[0]['events_per_second']:.2f} | {b_us:.1f} | "
                f"{job['events_per_second']:.0f} | "
                f"{job['events_per_second'] / first[1]['events_per_second']:.2f} | {j_us:.1f} | "
                f"**{job['process_cpu_seconds'] / first[1]['process_cpu_seconds']:.2f}** | "
                f"{job['busy_seconds']:.2f} | "
                f"{' + '.join(f'{c:.2f}' for c in job['worker_cpu_seconds'])} | "
                f"{job['process_cpu_seconds'] - sum(job['worker_cpu_seconds']):.2f} | "
                f"{job['events_per_second'] / base['events_per_second']:.2f} |")
    report.append(f"### Scaling with the number of workers ({os.cpu_count()} cores; nothing "
                  f"pinned but the broker, on core {broker_core}; one run each; the backlog "
                  "on max(4, workers) partitions)\n")
    report.append("| generator | algo | N | workers | without Kafka: events/s | its speed-up | "
                  "its CPU us/event | Kafka job: events/s | its speed-up | its CPU us/event | "
                  "job CPU vs 1 worker | job busy s | CPU s per worker thread | "
                  "CPU s of its other threads | job / model |")
    report.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    report.extend(rows)
    report.append("")


def callgrind_threads(prefix):
    """Per thread of a callgrind run (`--separate-threads=yes`, files PREFIX-NN): its
    instructions, whether it is a timely worker thread, and its instructions inside the
    stage blocks (`process_stage_major`, inclusive)."""
    import glob
    threads = []
    for f in sorted(glob.glob(prefix + "-*")):
        with open(f) as fh:
            text = fh.read()
        m = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if not m or "step_or_park" not in text:
            continue
        out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--auto=no", f],
                             capture_output=True, text=True).stdout
        # The function's inclusive total is its largest line (its other lines are the
        # parts of it inlined from elsewhere).
        stages = max((int(hit.group(1).replace(",", "")) for hit in re.finditer(
            r"^\s*([\d,]+) .*:flowboost_operators::engine::wavefront::process_stage_major\b",
            out, re.M)), default=0)
        threads.append({"total": int(m.group(1)), "stages": stages})
    return sorted(threads, key=lambda t: -t["total"])


def under_callgrind(cmd, prefix):
    import glob
    for f in glob.glob(prefix + "*"):
        os.remove(f)
    out = subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                          f"--callgrind-out-file={prefix}"] + cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"under valgrind: {' '.join(cmd)} failed ({out.returncode}): "
                         f"{out.stderr[-2000:]}")
    return callgrind_threads(prefix)


def instructions(fb, quick, report, formats):
    import shutil
    import tempfile
    if not shutil.which("valgrind"):
        raise SystemExit("the instructions section needs valgrind (apt-get install valgrind)")
    d = tempfile.mkdtemp(prefix="fb-cg-")

    def job(generator, algo, n, w, examples, fmt):
        with Broker() as b:
            tag = f"cg{w}-{generator}-{n}-{examples}-{fmt}-{RUN}"
            produce(fb, b.address, f"{tag}-events", generator, examples, partitions=4,
                    record_format=fmt)
            create(fb, b.address, f"{tag}-pred")
            return under_callgrind(job_cmd(fb, b.address, tag, generator, algo, n, w, idle=5,
                                           record_format=fmt),
                                   os.path.join(d, "job"))[:w]

    def model(generator, algo, n, w, examples, fmt=None):
        return under_callgrind(
            [fb, "run", "--generator", generator, "--examples", str(examples), "--algo", algo,
             "--learners", str(n), "--output", "/dev/null", "--report-every", "0",
             "--workers", str(w)], os.path.join(d, "model"))[:w]

    def steady(run, generator, algo, n, w, examples, fmt=None):
        """Per event and worker thread (heaviest first), the instructions of `examples`
        events less those of a tenth as many, over the difference: what one more event
        costs, the start-up (the dataflow, the model, the client's connection) left
        out."""
        small = run(generator, algo, n, w, examples // 10, fmt)
        big = run(generator, algo, n, w, examples, fmt)
        span = examples - examples // 10
        return [{k: (b[k] - s[k]) / span for k in ("total", "stages")} for s, b in zip(small, big)]

    rows = []
    plan = [("binary", "adaboost-ol", 10, 2000 if quick else 20000),
            ("multilabel", "ada-olmr", 10, 300 if quick else 3000)]
    models = {}
    for (generator, algo, n, examples), fmt in [(p, f) for f in formats for p in plan]:
        first = None
        for w in (1, 2):
            log(f"== instructions: {generator} {algo} N={n}, {fmt} events, {w} worker(s), "
                f"{examples} and {examples // 10} events")
            j = steady(job, generator, algo, n, w, examples, fmt)
            if (generator, n, w) not in models:
                models[(generator, n, w)] = steady(model, generator, algo, n, w, examples)
            m = models[(generator, n, w)]

            def total(ts, key="total"):
                return sum(t[key] for t in ts)

            def each(ts):
                return " + ".join(f"{t['total']:,.0f}" for t in ts)
            first = first or (total(j), total(m))
            log(f"   job workers {total(j):.0f}/event, model {total(m):.0f}/event")
            rows.append(
                f"| {generator} | {algo} | {n} | {fmt} | {examples} | {w} | {each(j)} | "
                f"{total(j, 'stages'):,.0f} | {total(j) - total(j, 'stages'):,.0f} | {each(m)} | "
                f"{total(m, 'stages'):,.0f} | {total(m) - total(m, 'stages'):,.0f} | "
                f"**{total(m) / total(j):.3f}** | {total(j) / first[0]:.3f} | "
                f"{total(m) / first[1]:.3f} |")
    shutil.rmtree(d)
    report.append("### Instructions per event (valgrind's callgrind; the worker threads only; "
                  "a run of the events given less a run of a tenth as many, so the start-up "
                  "is left out)\n")
    report.append("| generator | algo | N | event format | events | workers | job: per worker thread | its stage "
                  "blocks | the rest | model without Kafka: per worker thread | its stage blocks "
                  "| the rest | model / job | job vs 1 worker | model vs 1 worker |")
    report.append("|---|---|---:|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|")
    report.extend(rows)
    report.append("")


def checkpoints(fb, quick, report, repeat):
    import shutil
    import tempfile
    rows = []
    plan = [("binary", "adaboost-ol", 10, 20000 if quick else 200000),
            ("mediamill", "ada-olmr", 100, 300 if quick else 3000)]
    every = 2 if quick else 10
    for generator, algo, n, examples in plan:
        log(f"== checkpoints: {generator} {algo} N={n}, {examples} events, every {every} s")
        plain, with_cp = [], []
        last = None
        for i in range(repeat):
            plain.append(kafka_backlog(fb, generator, algo, n, examples, 1, True,
                                       f"cp0-{generator}-{n}-{i}"))
            d = tempfile.mkdtemp(prefix="fb-cp-")
            s = kafka_backlog(fb, generator, algo, n, examples, 1, True, f"cp1-{generator}-{n}-{i}",
                              ["--checkpoint-dir", d, "--checkpoint-every", str(every)])
            files = sorted(f for f in os.listdir(d) if f.endswith(".fbm"))
            out, _, _, _ = run_with_cpu([fb, "inspect", "--json", os.path.join(d, files[-1])])
            s["restore_seconds"] = last_json(out)["load_seconds"]
            shutil.rmtree(d)
            with_cp.append(s)
            log(f"   without {plain[-1]['events_per_second']:.0f}/s, with {s['events_per_second']:.0f}/s, "
                f"checkpoints {s['checkpoints']}, restore {s['restore_seconds']:.3f} s")
        base = median_run(plain, "events_per_second")
        cp = median_run(with_cp, "events_per_second")
        ratio = cp["events_per_second"] / base["events_per_second"]
        c = cp["checkpoints"]
        rows.append(f"| {generator} | {algo} | {n} | {examples} | {base['events_per_second']:.0f} | "
                    f"{cp['events_per_second']:.0f} | **{ratio:.2f}** | {c['written']} | "
                    f"{c['last_bytes'] / 1e6:.2f} | {c['last_seconds']:.3f} | {c['max_seconds']:.3f} | "
                    f"{c['total_seconds'] / cp['busy_seconds']:.3f} | {cp['restore_seconds']:.3f} |")
    report.append(f"### Checkpoints every {every} s (transactional output), on a backlog (1 worker, pinned "
                  f"as for throughput; median of {repeat} runs)\n")
    report.append("| generator | algo | N | events | no checkpoints: events/s | checkpoints: events/s | "
                  "ratio | checkpoints | last one MB | its seconds | slowest seconds | "
                  "checkpoint s / busy s | restore seconds |")
    report.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    report.extend(rows)
    report.append("")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small streams (a smoke run)")
    ap.add_argument("--sections", default="throughput,idle,latency,live,workers,checkpoints",
                    help="a comma-separated list of sections (scaling is not in the default: "
                         "it is for machines with more cores)")
    ap.add_argument("--scaling-workers", default="1,2,4,8", metavar="W,W,...",
                    help="the worker counts of the scaling section")
    ap.add_argument("--out", help="also write the Markdown report to this file")
    ap.add_argument("--record-formats", default="json,avro", metavar="F,F",
                    help="the event formats of the throughput and instructions sections "
                         "(json, avro; the other sections use json)")
    ap.add_argument("--rates", default="",
                    help="the job's maximum rates for the latency section, e.g. "
                         "binary:10=55000,multilabel:10=11700 (default: the throughput section's)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="throughput runs per configuration (odd; the median is reported)")
    ap.add_argument("--brokers", metavar="HOST:PORT",
                    help="a broker that runs already (a Kafka cluster) instead of a fresh "
                         "broker of scripts/kafka.sh per run; every topic and group gets this "
                         "run's suffix")
    ap.add_argument("--retention-bytes", type=int, metavar="BYTES",
                    help="the paced latency runs' topics keep about this many bytes per "
                         "partition (retention.bytes); the latency is then that of the "
                         "events left")
    args = ap.parse_args()
    global EXTERNAL, RETENTION
    EXTERNAL = args.brokers
    RETENTION = args.retention_bytes
    fb = binary()
    broker = (f"the broker at {EXTERNAL}" if EXTERNAL
              else f"Apache Kafka {kafka_version()} (scripts/kafka.sh)")
    report = [f"Measured {time.strftime('%Y-%m-%d')} on {os.uname().nodename} "
              f"({os.cpu_count()} cores), release build, {broker}, scripts/kafka_dataflow_bench.py"
              + (" --quick" if args.quick else "")
              + (f" --retention-bytes {RETENTION}" if RETENTION else "") + "\n"]
    rates = {}
    for item in filter(None, args.rates.split(",")):
        key, rate = item.split("=")
        generator, n = key.split(":")
        rates[(generator, int(n))] = float(rate)
    counts = [int(w) for w in args.scaling_workers.split(",")]
    formats = args.record_formats.split(",")
    for f in formats:
        if f not in ("json", "avro"):
            raise SystemExit(f"--record-formats: unknown format {f}")
    runs = {
        "throughput": lambda: throughput(fb, args.quick, report, rates, args.repeat, formats),
        "idle": lambda: idle(fb, args.quick, report),
        "instructions": lambda: instructions(fb, args.quick, report, formats),
        "latency": lambda: latency(fb, args.quick, report, rates),
        "live": lambda: live(fb, args.quick, report),
        "workers": lambda: scaling(fb, args.quick, report, [1, 2]),
        "scaling": lambda: scaling(fb, args.quick, report, counts),
        "checkpoints": lambda: checkpoints(fb, args.quick, report, args.repeat),
    }
    sections = args.sections.split(",")
    for s in sections:
        if s not in runs:
            raise SystemExit(f"unknown section {s}")
    # In the order above (latency uses throughput's rates); the report so far is written
    # after each section, so that a run cut short keeps what it measured.
    for s in runs:
        if s not in sections:
            continue
        runs[s]()
        if args.out:
            with open(args.out, "w") as f:
                f.write("\n".join(report) + "\n")
    print("\n".join(report))


if __name__ == "__main__":
    main()
