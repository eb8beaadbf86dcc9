#!/usr/bin/env bash
# End-to-end figures of flowboost on Kafka (release build): throughput (events/s) and
# latency from produce to prediction (p50, p99) for ada-olmr with N = 10 and N = 100
# Hoeffding trees, on a 4-partition topic of the mediamill-like multi-label generator
# (120 features, 101 labels), with 1 and 2 workers.
#
#   scripts/kafka_bench.sh            prints a Markdown table (last lines)
#
# Per configuration:
#   - throughput: a backlog of $BACKLOG events is produced first, then the job reads it
#     from the earliest offsets until idle; events/s = events / (first record read ->
#     last prediction handed to the producer), from the job's summary;
#   - latency: the job starts on an empty topic, then $LIVE events are produced at a
#     fixed rate (RATE_FRACTION of the measured throughput); latency = the prediction
#     record's timestamp - the event record's timestamp (both stamped by their producers,
#     milliseconds), matched by event id, read back with `flowboost kafka read`.
# Environment: GENERATOR (default mediamill; multilabel is the small 30-feature, 8-label
# preset), BACKLOG (default max(200, 15000 / N) events), LIVE (default BACKLOG / 2),
# RATE_FRACTION (default 0.5), MERGE_BLOCK (the job's --merge-block, default 64), NS and
# WS (the tree counts and worker counts, default "10 100" and "1 2"),
# JOB_EXTRA (more options for the job, e.g. "--kafka-set fetch.wait.max.ms=10"),
# FLOWBOOST_KAFKA_BROKERS (use a running broker).
set -euo pipefail
cd "$(dirname "$0")/.."
GENERATOR="${GENERATOR:-mediamill}"
MERGE_BLOCK="${MERGE_BLOCK:-64}"
NS="${NS:-10 100}"
WS="${WS:-1 2}"
RATE_FRACTION="${RATE_FRACTION:-0.5}"

cargo build --release --quiet
BIN="${CARGO_TARGET_DIR:-target}/release/flowboost"
if [[ -z "${FLOWBOOST_KAFKA_BROKERS:-}" ]]; then
    BROKERS="$(scripts/kafka.sh start | tail -n 1)"
    trap 'scripts/kafka.sh stop >/dev/null 2>&1 || true' EXIT
else
    BROKERS="$FLOWBOOST_KAFKA_BROKERS"
fi
RUN="bench-$(date +%s)-$$"
ROWS=()
job() { # events-topic predictions-topic group workers learners idle
    "$BIN" run --brokers "$BROKERS" --source "kafka:$1" --sink "kafka:$2" --group "$3" \
        --start earliest --exit-when-idle "$6" --report-interval 0 --workers "$4" \
        --generator "$GENERATOR" --algo ada-olmr --learners "$5" --commit-interval-ms 1000 --merge-block "$MERGE_BLOCK" ${JOB_EXTRA:-} | tail -n 1
}
field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); 
v=d
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2"; }

for N in $NS; do
    for W in $WS; do
        tag="$RUN-n$N-w$W"
        B_N="${BACKLOG:-$((15000 / N > 200 ? 15000 / N : 200))}"
        L_N="${LIVE:-$((B_N / 2))}"
        echo "== ada-olmr N=$N, $W worker(s) ==" >&2
        # Throughput on a backlog.
        "$BIN" kafka produce --brokers "$BROKERS" --topic "$tag-backlog" --partitions 4 \
            --generator "$GENERATOR" --examples "$B_N" --seed 1 >/dev/null
        "$BIN" kafka create-topic --brokers "$BROKERS" --topic "$tag-bp" --partitions 1
        S="$(job "$tag-backlog" "$tag-bp" "$tag-g1" "$W" "$N" 2)"
        TPUT="$(field "$S" events_per_second)"
        echo "backlog: $S" >&2
        # Latency on a live stream at a fraction of that rate.
        RATE="$(python3 -c "print(max(1.0, $TPUT * $RATE_FRACTION))")"
        "$BIN" kafka create-topic --brokers "$BROKERS" --topic "$tag-live" --partitions 4
        "$BIN" kafka create-topic --brokers "$BROKERS" --topic "$tag-lp" --partitions 1
        job "$tag-live" "$tag-lp" "$tag-g2" "$W" "$N" 3 >/tmp/"$tag".job &
        JOB=$!
        sleep 1
        "$BIN" kafka produce --brokers "$BROKERS" --topic "$tag-live" --partitions 4 \
            --generator "$GENERATOR" --examples "$L_N" --seed 2 --rate "$RATE" >/dev/null
        wait "$JOB"
        L="$("$BIN" kafka read --brokers "$BROKERS" --topic "$tag-lp" --expect "$L_N" \
            --timeout 120 --latency-from "$tag-live" | tail -n 1)"
        echo "live at $RATE events/s: $L" >&2
        ROWS+=("| $N | $W | $B_N | $(printf %.1f "$TPUT") | $(printf %.1f "$RATE") | $L_N | $(field "$L" latency_ms.p50) | $(field "$L" latency_ms.p99) | $(field "$L" latency_ms.matched) |")
    done
done
echo
echo "ada-olmr, generator $GENERATOR, 4-partition topic, merge block $MERGE_BLOCK"
echo
echo "| N (trees) | workers | backlog (events) | throughput (events/s) | live rate (events/s) | live events | latency p50 (ms) | latency p99 (ms) | events matched |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
