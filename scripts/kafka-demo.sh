#!/usr/bin/env bash
# flowboost on Kafka, end to end, on this machine:
#   1. starts Apache Kafka on loopback (scripts/kafka.sh; fetched from Maven Central the first time),
#   2. produces a labeled stream (multiclass generator, 400 events on 4 partitions), with a
#      malformed record after every 40th event, and every 5th event unlabeled, its label
#      sent 10 events later on a feedback topic,
#   3. runs `flowboost run` on it until it is idle (predictions, feedback, dead letters),
#   4. reads the topics back, and prints as its LAST line one JSON object:
#      {"produced":..,"malformed":..,"predictions":..,"dead_letters":..,"feedback_joined":..}
#
# Environment: FLOWBOOST_KAFKA_BROKERS (use a running broker instead of starting one),
# EXAMPLES (default 400), KEEP_BROKER=1 (leave the broker running afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."

EXAMPLES="${EXAMPLES:-400}"
echo "== building flowboost (release) ==" >&2
cargo build --release --quiet
BIN="${CARGO_TARGET_DIR:-target}/release/flowboost"

if [[ -z "${FLOWBOOST_KAFKA_BROKERS:-}" ]]; then
    echo "== starting the broker ==" >&2
    BROKERS="$(scripts/kafka.sh start | tail -n 1)"
    [[ "${KEEP_BROKER:-0}" == 1 ]] || trap 'scripts/kafka.sh stop >/dev/null 2>&1 || true' EXIT
else
    BROKERS="$FLOWBOOST_KAFKA_BROKERS"
fi
echo "broker at $BROKERS" >&2

RUN="demo-$(date +%s)-$$"
EVENTS="$RUN-events"; FEEDBACK="$RUN-feedback"; PREDICTIONS="$RUN-predictions"; DEAD="$RUN-dead-letters"
for t in "$PREDICTIONS" "$DEAD"; do
    "$BIN" kafka create-topic --brokers "$BROKERS" --topic "$t" --partitions 1
done

echo "== producing $EXAMPLES events to $EVENTS (4 partitions) ==" >&2
PRODUCED="$("$BIN" kafka produce --brokers "$BROKERS" --topic "$EVENTS" --partitions 4 \
    --generator multiclass --examples "$EXAMPLES" --unlabeled-every 5 \
    --feedback-topic "$FEEDBACK" --feedback-delay 10 --malformed-every 40 | tail -n 1)"
echo "$PRODUCED" >&2

echo "== running the job until idle ==" >&2
SUMMARY="$("$BIN" run --brokers "$BROKERS" --source "kafka:$EVENTS" --sink "kafka:$PREDICTIONS" \
    --feedback "kafka:$FEEDBACK" --dead-letter "kafka:$DEAD" --group "$RUN" --start earliest \
    --exit-when-idle 2 --report-interval 1 --generator multiclass --algo oza --learners 10 \
    --workers 2 | tail -n 1)"
echo "$SUMMARY" >&2

echo "== reading the outputs back ==" >&2
PRED="$("$BIN" kafka read --brokers "$BROKERS" --topic "$PREDICTIONS" --idle 2 | tail -n 1)"
DL="$("$BIN" kafka read --brokers "$BROKERS" --topic "$DEAD" --idle 2 | tail -n 1)"
echo "predictions topic: $PRED" >&2
echo "dead-letter topic: $DL" >&2

python3 - "$PRODUCED" "$SUMMARY" "$PRED" "$DL" <<'PY'
import json, sys
produced, summary, pred, dl = (json.loads(a) for a in sys.argv[1:])
print(json.dumps({
    "produced": produced["produced"],
    "malformed": produced["malformed"],
    "predictions": pred["records"],
    "dead_letters": dl["records"],
    "feedback_joined": summary["feedback_joined"],
}))
PY
