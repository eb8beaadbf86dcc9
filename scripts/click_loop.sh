#!/usr/bin/env bash
# The click loop of `flowboost serve`, longer than its test (tests/serve_click_loop.rs,
# which this runs): the click simulator's users ask `serve --follow CHECKPOINTS --explore
# POLICY` for rankings, their clicks go to Kafka with the served propensities, the Kafka
# job learns with the click window and checkpoints, serve follows them. It prints the
# report (the served policy's true CTR per phase beside the uniform and the best
# ranking's, and the IPW, SNIPW and DR estimates from the served log against the true CTR
# of the policies they evaluate) and writes it to $REPORT.
#
#   scripts/click_loop.sh [PHASES [PER_PHASE [EXPLORE [SEED]]]]
#
# defaults: 20 phases of 1000 impressions, softmax:0.2, seed 3. It uses the broker of
# $FLOWBOOST_KAFKA_BROKERS, or starts its own with scripts/kafka.sh in
# $CLICK_LOOP_KAFKA_DIR (default .kafka/click-loop; a free port from 9092 up), and stops it.
# REPORT (default click_loop.json), PROFILE (cargo profile, default ci). The test's
# assertions apply (a run much shorter than the test's may fail them; the report is
# written first).
set -euo pipefail
cd "$(dirname "$0")/.."
phases=${1:-20}
per_phase=${2:-1000}
explore=${3:-softmax:0.2}
seed=${4:-3}
report=${REPORT:-click_loop.json}
case "$report" in /*) ;; *) report="$PWD/$report" ;; esac
started=""
if [ -z "${FLOWBOOST_KAFKA_BROKERS:-}" ]; then
  # A broker of its own, in a folder of its own (so that stopping it stops nothing else).
  export FLOWBOOST_KAFKA_DIR="${CLICK_LOOP_KAFKA_DIR:-$PWD/.kafka/click-loop}"
  FLOWBOOST_KAFKA_BROKERS=$(scripts/kafka.sh start | tail -n 1)
  export FLOWBOOST_KAFKA_BROKERS
  started=1
fi
cleanup() { if [ -n "$started" ]; then scripts/kafka.sh stop >/dev/null || true; fi; }
trap cleanup EXIT
FLOWBOOST_CLICK_LOOP_PHASES=$phases FLOWBOOST_CLICK_LOOP_PER_PHASE=$per_phase \
FLOWBOOST_CLICK_LOOP_EXPLORE=$explore FLOWBOOST_CLICK_LOOP_SEED=$seed \
FLOWBOOST_CLICK_LOOP_REPORT=$report \
  cargo test -p flowboost --profile "${PROFILE:-ci}" --test serve_click_loop -- --nocapture
echo "report: $report"
