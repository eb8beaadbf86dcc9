#!/usr/bin/env bash
# The predictions' checksums of two reference runs, to show that a change leaves them
# byte-identical: a9a (the file driver, AdaBoost.OL with Hoeffding trees, the default
# options) and a Kafka replay (the binary generator's 20,000 events on 4 partitions,
# every 5th unlabeled with its label on a feedback topic; the job with 2 workers;
# predictions read back and sorted by event id); and the README's main job (`run`).
#
#   FLOWBOOST=target/release/flowboost scripts/prediction_checksums.sh
#
# Needs ../shared/data/a9a; starts Apache Kafka (scripts/kafka.sh) unless
# FLOWBOOST_KAFKA_BROKERS is set. Prints one `sha256 name` line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
FLOWBOOST="${FLOWBOOST:-target/release/flowboost}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$FLOWBOOST" run --data ../shared/data/a9a/a9a --algo adaboost-ol --output "$work/a9a.jsonl" 2>/dev/null
echo "$(sha256sum <"$work/a9a.jsonl" | cut -d' ' -f1) a9a ($(wc -l <"$work/a9a.jsonl") predictions)"
"$FLOWBOOST" run >"$work/default.jsonl" 2>/dev/null
echo "$(sha256sum <"$work/default.jsonl" | cut -d' ' -f1) the README's main job ($(wc -l <"$work/default.jsonl") predictions)"

if [[ -z "${FLOWBOOST_KAFKA_BROKERS:-}" ]]; then
    trap 'scripts/kafka.sh stop >/dev/null || true; rm -rf "$work"' EXIT
    FLOWBOOST_KAFKA_BROKERS="$(scripts/kafka.sh start | tail -n 1)"
fi
b="$FLOWBOOST_KAFKA_BROKERS"
tag="checksums-$$-$(date +%s)"
"$FLOWBOOST" kafka produce --brokers "$b" --topic "$tag-events" --partitions 4 \
    --generator binary --examples 20000 --unlabeled-every 5 \
    --feedback-topic "$tag-feedback" --feedback-delay 300 >/dev/null
"$FLOWBOOST" kafka create-topic --brokers "$b" --topic "$tag-pred" --partitions 2 >/dev/null
"$FLOWBOOST" run --brokers "$b" --source "kafka:$tag-events" --sink "kafka:$tag-pred" \
    --feedback "kafka:$tag-feedback" --group "$tag-group" --generator binary \
    --learners 10 --workers 2 --exit-when-idle 2 >/dev/null 2>"$work/job.log" ||
    { grep -v ' WARN ' "$work/job.log" >&2; exit 1; }
"$FLOWBOOST" kafka read --brokers "$b" --topic "$tag-pred" --expect 20000 \
    --output "$work/replay.jsonl" >/dev/null
python3 - "$work/replay.jsonl" >"$work/replay.sorted" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
for l in sorted(lines, key=lambda l: json.loads(l)["id"]):
    sys.stdout.write(l)
PY
echo "$(sha256sum <"$work/replay.sorted" | cut -d' ' -f1) kafka replay ($(wc -l <"$work/replay.sorted") predictions)"
