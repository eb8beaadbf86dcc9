#!/usr/bin/env bash
# Runs every test of flowboost: the README's test command, and what CI runs (.ci/run).
# Then cargo fmt, clippy (-D warnings) and rustdoc (-D warnings). Installs what it needs.
# Tests that read ../shared/data skip (and say so) when it is absent.
#
# The Kafka tests run against Apache Kafka: scripts/kafka.sh starts it on loopback
# (fetching it from Maven Central the first time, installing Java and Maven if missing),
# its plaintext address is exported as FLOWBOOST_KAFKA_BROKERS, its SASL_SSL listener and
# client properties file as FLOWBOOST_KAFKA_SASL_BROKERS and FLOWBOOST_KAFKA_SASL_CONFIG,
# and it is stopped (its data deleted) when this script ends. Set FLOWBOOST_KAFKA_BROKERS
# yourself to use another broker (then none is started, and the tests of the secured
# listener say that they skip unless the two SASL variables are set too).
set -euo pipefail
cd "$(dirname "$0")/.."

# librdkafka (built from source by rdkafka-sys) needs a C compiler and make; a
# fresh Debian/Ubuntu machine with Rust has them, but install what is missing.
missing=()
for tool in cc make; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
    echo "== installing build tools for librdkafka: ${missing[*]} =="
    SUDO=()
    [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null && SUDO=(sudo)
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential >/dev/null
fi

# Another Kafka client for tests/kafka_foreign_clients.rs: confluent-kafka in a venv.
if [[ -z "${FLOWBOOST_PYTHON:-}" ]]; then
    echo "== confluent-kafka (scripts/kafka/requirements.txt) in .venv-kafka =="
    [[ -x .venv-kafka/bin/python ]] || python3 -m venv .venv-kafka
    .venv-kafka/bin/python -m pip install --quiet --disable-pip-version-check -r scripts/kafka/requirements.txt
    export FLOWBOOST_PYTHON="$PWD/.venv-kafka/bin/python"
fi

if [[ -z "${FLOWBOOST_KAFKA_BROKERS:-}" ]]; then
    echo "== starting the Kafka broker (scripts/kafka.sh) =="
    trap 'scripts/kafka.sh stop || true' EXIT
    started="$(scripts/kafka.sh start)"
    FLOWBOOST_KAFKA_BROKERS="$(tail -n 1 <<<"$started")"
    read -r _ FLOWBOOST_KAFKA_SASL_BROKERS FLOWBOOST_KAFKA_SASL_CONFIG < <(grep '^sasl_ssl ' <<<"$started")
    export FLOWBOOST_KAFKA_BROKERS FLOWBOOST_KAFKA_SASL_BROKERS FLOWBOOST_KAFKA_SASL_CONFIG
    echo "Apache Kafka at $FLOWBOOST_KAFKA_BROKERS (SASL_SSL at $FLOWBOOST_KAFKA_SASL_BROKERS)"
fi

echo "== cargo test (workspace, profile ci: optimized, no LTO) =="
# The fuzz targets' short run on stable (tests/fuzz_smoke.rs): 30 s per target here;
# the long runs use libFuzzer (fuzz/, nightly; docs/hardening.md).
export FLOWBOOST_FUZZ_SECONDS="${FLOWBOOST_FUZZ_SECONDS:-30}"
cargo test --workspace --profile ci --no-fail-fast

echo "== the Python package (python/): pip install ./python in target/python-venv, pytest =="
# The package builds its own Rust core (python/ is not a workspace member); its tests
# compare it with the command line built above (target/ci/flowboost).
[[ -x target/python-venv/bin/python ]] || python3 -m venv target/python-venv
target/python-venv/bin/python -m pip install --quiet --disable-pip-version-check "./python[test]"
# From the root: in python/, `python -m` would put the source folder (without the built
# extension) ahead of the installed package.
FLOWBOOST_BIN="$PWD/target/ci/flowboost" target/python-venv/bin/python -m pytest -q -rxs python/tests

echo "== cargo fmt --check =="
cargo fmt --all --check
(cd python && cargo fmt --check)

echo "== cargo clippy --all-targets -D warnings =="
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
cargo clippy --workspace --all-targets --profile ci -- -D warnings

(cd python && cargo clippy --all-targets --profile ci -- -D warnings)

echo "== cargo doc (warnings are errors) =="
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --profile ci --quiet
echo "== all tests passed =="
