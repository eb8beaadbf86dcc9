#!/usr/bin/env bash
# The long fuzz runs: every target of fuzz/ (libFuzzer through cargo-fuzz; needs the
# nightly toolchain and `cargo install cargo-fuzz`), each for SECONDS (default 600), two
# at a time, corpora seeded from ../shared/data and from models made here. Prints each
# target's executions and coverage (libFuzzer's last status line). A crash stops that
# target and leaves its input in fuzz/artifacts/TARGET/.
#
#   scripts/fuzz.sh                 # every target, 10 minutes each
#   scripts/fuzz.sh 60 libsvm csv   # two targets, a minute each
#
# Every test run also runs the same targets on stable for a short while
# (tests/fuzz_smoke.rs, FLOWBOOST_FUZZ_SECONDS).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(libsvm csv arff sniffed kafka_record job_file model_file)
data=${FLOWBOOST_SHARED:-../shared}/data
corpus=fuzz/corpus
seed() { # seed TARGET FILE...: the first 16 KB of each file
    mkdir -p "$corpus/$1"
    local t=$1
    shift
    for f in "$@"; do
        [[ -f $f ]] && head -c 16384 "$f" > "$corpus/$t/seed-$(basename "$f")"
    done
    return 0
}
seed libsvm "$data/a9a/a9a" "$data/mushrooms/mushrooms"
seed csv "$data/car/car.data.csv" "$data/balance-scale/balance-scale.csv" "$data/adult/adult.data"
seed arff "$data/emotions/emotions-train.arff" "$data/scene/scene-train.arff" "$data/birds/birds-train.arff"
seed sniffed "$data/a9a/a9a" "$data/car/car.data.csv" "$data/emotions/emotions-train.arff"
mkdir -p "$corpus/kafka_record" "$corpus/job_file" "$corpus/model_file"
printf '{"id": 7, "features": {"x": 0.5, "y": -1, "c": "u"}, "label": "b"}' > "$corpus/kafka_record/event.json"
printf '{"id": 8, "features": [1, 2, 3, 4, 5, 6, 7, 8], "labels": ["l1", "l3"]}' > "$corpus/kafka_record/multilabel.json"
printf '{"id": 9, "clicks": ["l2"], "shown": ["l2", "l4"]}' > "$corpus/kafka_record/clicks.json"
printf '12\0b 1:0.5 2:-3\n' > "$corpus/kafka_record/libsvm-keyed"
cat > "$corpus/job_file/job.toml" <<'TOML'
[kafka]
brokers = "127.0.0.1:9092"
source = "kafka:events"
sink = "kafka:predictions"
group = "g"
exit-when-idle = 5
[schema]
task = "multilabel"
dim = 120
num-labels = 101
[model]
algo = "ada-olmr"
learners = 10
TOML
cargo build --release --quiet --bin flowboost
for spec in binary:adaboost-ol multiclass:oza multilabel:ada-olmr; do
    target/release/flowboost run --generator "${spec%%:*}" --examples 300 --algo "${spec##*:}" \
        --learners 3 --output /dev/null --save-model "$corpus/model_file/${spec##*:}.fbm" 2>/dev/null
done
mkdir -p bench-out/fuzz
run() {
    local t=$1
    cargo +nightly fuzz run --sanitizer none -O "$t" "$corpus/$t" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        > "bench-out/fuzz/$t.log" 2>&1 || echo "$t: FAILED (see bench-out/fuzz/$t.log and fuzz/artifacts/$t/)"
    echo "$t: $(grep -E '^#[0-9]+' "bench-out/fuzz/$t.log" | tail -n 1)"
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "bench-out/fuzz/$t.log" | tr '\n' ' '
    echo
}
cargo +nightly fuzz build --sanitizer none -O >/dev/null
i=0
for t in "${targets[@]}"; do
    run "$t" &
    i=$((i + 1))
    if ((i % 2 == 0)); then wait; fi
done
wait
