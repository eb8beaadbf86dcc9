#!/usr/bin/env bash
# A real Kafka broker on loopback, for the tests and for users trying flowboost on Kafka.
#
#   scripts/kafka.sh start    install (once) and start the broker; prints 127.0.0.1:PORT last
#   scripts/kafka.sh status   prints the bootstrap address if the broker answers, else exit 1
#   scripts/kafka.sh stop     stops the broker and deletes its data
#
# The broker is noida-db 0.2.3 (a PyPI wheel with a prebuilt single-node broker that speaks
# the Kafka protocol; see docs in ../shared/KAFKA.md): no Java, no Docker, only Python 3 and pip.
# It is installed with `pip --target` into $FLOWBOOST_KAFKA_DIR (default: .kafka/ in the
# repository, gitignored) and runs in the background; every start gets a fresh data folder.
#
# Environment:
#   FLOWBOOST_KAFKA_PORT   preferred port (default 9092); if it is busy, a free port is used
#   FLOWBOOST_KAFKA_DIR    install + state folder (default: <repo>/.kafka)
#   FLOWBOOST_KAFKA_DATA   the folder in which each start makes its data folder (default:
#                          FLOWBOOST_KAFKA_DIR). The emulator rewrites its whole state as
#                          one file every second or two (300 MB after 330,000 small
#                          events); on a disk each rewrite stalls it for up to a second, so
#                          the benchmarks put it in memory (/dev/shm).
#   FLOWBOOST_KAFKA_WAIT   seconds to wait for readiness (default 20)
#   PYTHON                 the Python interpreter (default python3)
#
# `start` is idempotent: when the broker already runs and answers, it prints its address.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
DIR="${FLOWBOOST_KAFKA_DIR:-$REPO/.kafka}"
PYTHON="${PYTHON:-python3}"
VERSION="0.2.3"
BIN="$DIR/noida_db/noida-db"
PIDFILE="$DIR/broker.pid"
PORTFILE="$DIR/broker.port"
DATAFILE="$DIR/broker.data"
DATA_ROOT="${FLOWBOOST_KAFKA_DATA:-$DIR}"
LOG="$DIR/broker.log"
PROBE="$HERE/kafka/probe.py"
WAIT="${FLOWBOOST_KAFKA_WAIT:-20}"

log() { echo "kafka.sh: $*" >&2; }

# The pid of the running broker, if its pid file names a live noida-db process.
running_pid() {
    [[ -f "$PIDFILE" ]] || return 1
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    grep -q noida-db "/proc/$pid/cmdline" 2>/dev/null || return 1
    echo "$pid"
}

address() { echo "127.0.0.1:$(cat "$PORTFILE")"; }

ready() { "$PYTHON" "$PROBE" "$1" --wait "${2:-0}"; }

install() {
    if [[ -x "$BIN" ]] && grep -qs "Version: $VERSION" "$DIR"/noida_db-"$VERSION".dist-info/METADATA; then
        return 0
    fi
    log "installing noida-db $VERSION into $DIR"
    mkdir -p "$DIR"
    PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
        --target "$DIR" "noida-db==$VERSION" >&2
    [[ -x "$BIN" ]] || { log "install failed: $BIN missing"; exit 1; }
}

# Whether nothing listens on 127.0.0.1:$1 (we can bind it).
port_free() {
    "$PYTHON" - "$1" <<'EOF'
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
finally:
    s.close()
EOF
}

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Deletes every data folder of ours (called only when no broker of ours runs).
remove_data() {
    [[ -n "$DIR" && -d "$DIR" ]] || return 0
    # The data folder of the last start (it may lie outside $DIR), then any other of ours.
    if [[ -f "$DATAFILE" ]]; then
        local last
        last="$(cat "$DATAFILE")"
        if [[ "$(basename -- "$last")" == data-* ]]; then
            rm -rf -- "$last"
        fi
    fi
    rm -rf -- "$DIR"/data-*
    rm -f "$DATAFILE"
}

stop_broker() {
    local pid
    if pid="$(running_pid)"; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$PIDFILE" "$PORTFILE"
    remove_data
}

start() {
    local pid
    if pid="$(running_pid)" && [[ -f "$PORTFILE" ]] && ready "$(address)" 2 >/dev/null 2>&1; then
        address
        return 0
    fi
    # A stale pid file, or a broker that does not answer: start afresh.
    stop_broker
    install

    local port="${FLOWBOOST_KAFKA_PORT:-9092}"
    if ! port_free "$port"; then
        local other
        other="$(free_port)"
        log "port $port is busy, using $other"
        port="$other"
    fi
    local data
    data="$DATA_ROOT/data-$(date +%s)-$$"
    mkdir -p "$data"
    echo "$data" >"$DATAFILE"
    echo "$port" >"$PORTFILE"
    # setsid (when there is one): its own session, so the broker outlives the shell (and
    # the test harness) that started it, and a Ctrl-C in that terminal does not reach it.
    # fd 9 (the lock) is closed for the broker, or it would hold the lock forever.
    local setsid=()
    command -v setsid >/dev/null && setsid=(setsid)
    nohup "${setsid[@]}" "$BIN" start --data-dir "$data" --host 127.0.0.1 --only kafka \
        --kafka-port "$port" >"$LOG" 2>&1 </dev/null 9>&- &
    echo $! >"$PIDFILE"
    if ! ready "127.0.0.1:$port" "$WAIT"; then
        log "the broker did not become ready within ${WAIT}s; its log ($LOG):"
        tail -n 20 "$LOG" >&2 || true
        stop_broker
        exit 1
    fi
    if ! running_pid >/dev/null; then
        log "the broker answers on port $port but its pid file is wrong; log: $LOG"
        stop_broker
        exit 1
    fi
    log "broker running (pid $(cat "$PIDFILE"), data $data, log $LOG)"
    echo "127.0.0.1:$port"
}

status() {
    if running_pid >/dev/null && [[ -f "$PORTFILE" ]] && ready "$(address)" 0 2>/dev/null; then
        address
    else
        log "not running"
        exit 1
    fi
}

with_lock() {
    mkdir -p "$DIR"
    if command -v flock >/dev/null; then
        # Serialize concurrent calls (parallel test binaries) on one state folder.
        exec 9>"$DIR/lock"
        flock -w 60 9 || { log "could not lock $DIR/lock"; exit 1; }
    fi
    "$@"
}

case "${1:-}" in
    start) with_lock start ;;
    stop) with_lock stop_broker; log "stopped" ;;
    status) status ;;
    *)
        echo "usage: $0 start|stop|status" >&2
        exit 2
        ;;
esac
