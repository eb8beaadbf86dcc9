#!/usr/bin/env bash
# Apache Kafka on loopback, for the tests, the demo, the benchmarks and users trying
# flowboost on Kafka.
#
#   scripts/kafka.sh start    install (once) and start the broker; prints, on stdout,
#                             `sasl_ssl HOST:PORT CONFIG` (the secured listener and a
#                             librdkafka properties file with its credentials and CA),
#                             then the plaintext bootstrap address 127.0.0.1:PORT last
#   scripts/kafka.sh status   the same lines if the broker answers, else exit 1
#   scripts/kafka.sh stop     stops the broker and deletes its data
#   scripts/kafka.sh tool CLASS ARGS...
#                             runs one of Kafka's own command-line tools on the broker's
#                             jars, e.g. `tool org.apache.kafka.tools.consumer.group.ConsumerGroupCommand
#                             --bootstrap-server 127.0.0.1:9092 --describe --group G`
#   scripts/kafka.sh codecs TOPIC
#                             the compression codecs of the data batches (transaction
#                             markers left out) that the running broker of this script
#                             stores for TOPIC (Kafka's DumpLogSegments on its log folders),
#                             one per line, sorted
#
# The broker is Apache Kafka (version pinned in scripts/kafka/pom.xml), fetched with its
# runtime dependencies from Maven Central by Maven into $FLOWBOOST_KAFKA_DIR/lib-VERSION
# once, and run as one KRaft node (broker and controller in one JVM) with:
#   - a PLAINTEXT listener on 127.0.0.1:PORT (what the tests use by default);
#   - a SASL_SSL listener (SCRAM-SHA-512 and PLAIN, user `flowboost` with a password made
#     at each start) whose certificate is signed by a throwaway CA made at each start with
#     openssl; the client properties file names the CA (`ssl.ca.location`);
#   - single-node settings: replication factors and the transaction state log's min ISR 1.
# Java 17+ and Maven are installed with apt-get when missing. Every start formats a fresh
# data folder; `stop` deletes it.
#
# Environment:
#   FLOWBOOST_KAFKA_PORT       preferred plaintext port (default 9092); busy: a free one
#   FLOWBOOST_KAFKA_SASL_PORT  preferred SASL_SSL port (default PORT+1); busy: a free one
#   FLOWBOOST_KAFKA_DIR        install + state folder (default: <repo>/.kafka)
#   FLOWBOOST_KAFKA_DATA       the folder in which each start makes its data folder
#                              (default: FLOWBOOST_KAFKA_DIR)
#   FLOWBOOST_KAFKA_WAIT       seconds to wait for readiness (default 90)
#   FLOWBOOST_KAFKA_HEAP       the broker's heap (default 1g)
#   PYTHON                     the Python interpreter of the readiness probe (default python3)
#
# `start` is idempotent: when the broker already runs and answers, it prints its addresses.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
DIR="${FLOWBOOST_KAFKA_DIR:-$REPO/.kafka}"
PYTHON="${PYTHON:-python3}"
POM="$HERE/kafka/pom.xml"
VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM")"
LIB="$DIR/lib-$VERSION"
PIDFILE="$DIR/broker.pid"
PORTFILE="$DIR/broker.port"
SASLPORTFILE="$DIR/broker.sasl-port"
DATAFILE="$DIR/broker.data"
CLIENT_CONFIG="$DIR/client-sasl-ssl.properties"
DATA_ROOT="${FLOWBOOST_KAFKA_DATA:-$DIR}"
LOG="$DIR/broker.log"
PROBE="$HERE/kafka/probe.py"
WAIT="${FLOWBOOST_KAFKA_WAIT:-90}"
HEAP="${FLOWBOOST_KAFKA_HEAP:-1g}"
USER_NAME="flowboost"

log() { echo "kafka.sh: $*" >&2; }

SUDO=()
[[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null && SUDO=(sudo)
apt_install() {
    log "installing $* with apt-get"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

# The major version of `java` on the PATH, or 0.
java_major() {
    command -v java >/dev/null || { echo 0; return; }
    java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

# Java 17+, Maven and openssl, installed through the system's package manager if missing.
tools() {
    local need=()
    (($(java_major) >= 17)) || need+=(openjdk-17-jre-headless)
    command -v mvn >/dev/null || need+=(maven)
    command -v openssl >/dev/null || need+=(openssl)
    ((${#need[@]} == 0)) || apt_install "${need[@]}"
    (($(java_major) >= 17)) || { log "Java 17 or newer is needed (java -version: $(java -version 2>&1 | head -n 1))"; exit 1; }
}

# The pid of the running broker, if its pid file names a live Kafka process of ours.
running_pid() {
    [[ -f "$PIDFILE" ]] || return 1
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka" || return 1
    echo "$pid"
}

address() { echo "127.0.0.1:$(cat "$PORTFILE")"; }

ready() { "$PYTHON" "$PROBE" "$1" --wait "${2:-0}"; }

# Fetches the broker's jars with Maven (once per version of the pom).
install() {
    local stamp="$LIB/.pom.sha256" sum
    sum="$(sha256sum "$POM" | cut -d' ' -f1)"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$sum" ]]; then
        return 0
    fi
    log "fetching Apache Kafka $VERSION from Maven Central into $LIB"
    rm -rf "$LIB"
    mkdir -p "$LIB"
    mvn -q -B -f "$POM" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$LIB" >&2 || { log "mvn failed"; rm -rf "$LIB"; exit 1; }
    [[ -f "$LIB/kafka_2.13-$VERSION.jar" ]] || { log "install failed: kafka_2.13-$VERSION.jar missing"; exit 1; }
    echo "$sum" >"$stamp"
}

# Whether nothing listens on 127.0.0.1:$1 (we can bind it; SO_REUSEADDR as the broker
# sets it, so that a port a stopped broker left in TIME_WAIT counts as free).
port_free() {
    "$PYTHON" - "$1" <<'EOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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

# $1 if it is free, else a free port.
pick_port() {
    if port_free "$1"; then
        echo "$1"
    else
        local other
        other="$(free_port)"
        log "port $1 is busy, using $other"
        echo "$other"
    fi
}

# Deletes every data folder of ours (called only when no broker of ours runs).
remove_data() {
    [[ -n "$DIR" && -d "$DIR" ]] || return 0
    if [[ -f "$DATAFILE" ]]; then
        local last
        last="$(cat "$DATAFILE")"
        if [[ "$(basename -- "$last")" == data-* ]]; then
            rm -rf -- "$last"
        fi
    fi
    rm -rf -- "$DIR"/data-* "$DIR/tls"
    rm -f "$DATAFILE" "$CLIENT_CONFIG"
}

stop_broker() {
    local pid
    if pid="$(running_pid)"; then
        # SIGTERM: a controlled shutdown (seconds); then SIGKILL.
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 150); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$PIDFILE" "$PORTFILE" "$SASLPORTFILE"
    remove_data
}

# A throwaway CA and a broker certificate for 127.0.0.1 and localhost, in $1.
make_tls() {
    local tls="$1" pass="$2"
    mkdir -p "$tls"
    (
        cd "$tls"
        openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=flowboost test CA" \
            -keyout ca.key -out ca.pem 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
            -keyout broker.key -out broker.csr 2>/dev/null
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >san.ext
        openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
            -extfile san.ext -out broker.pem 2>/dev/null
        openssl pkcs12 -export -in broker.pem -inkey broker.key -certfile ca.pem \
            -name broker -passout "pass:$pass" -out broker.p12
        rm -f broker.csr ca.srl san.ext ca.key
        chmod 600 broker.key broker.p12
    )
}

random_secret() { openssl rand -hex 16; }

# A KRaft cluster id: 16 random bytes in URL-safe base64 without padding (it may start
# with `-`, so it is passed as --cluster-id=ID).
cluster_id() { openssl rand 16 | base64 | tr '+/' '-_' | tr -d '=\n'; }

start() {
    if running_pid >/dev/null && [[ -f "$PORTFILE" ]] && ready "$(address)" 2 >/dev/null 2>&1; then
        print_addresses
        return 0
    fi
    # A stale pid file, or a broker that does not answer: start afresh.
    stop_broker
    tools
    install

    local port sasl_port controller_port
    port="$(pick_port "${FLOWBOOST_KAFKA_PORT:-9092}")"
    sasl_port="$(pick_port "${FLOWBOOST_KAFKA_SASL_PORT:-$((port + 1))}")"
    [[ "$sasl_port" != "$port" ]] || sasl_port="$(free_port)"
    controller_port="$(free_port)"
    while [[ "$controller_port" == "$port" || "$controller_port" == "$sasl_port" ]]; do
        controller_port="$(free_port)"
    done

    local data tls store_pass user_pass
    data="$DATA_ROOT/data-$(date +%s)-$$"
    mkdir -p "$data"
    echo "$data" >"$DATAFILE"
    tls="$DIR/tls"
    rm -rf "$tls"
    store_pass="$(random_secret)"
    user_pass="$(random_secret)"
    make_tls "$tls" "$store_pass"

    local props="$data/server.properties"
    umask 077
    cat >"$props" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sasl_port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sasl_port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT
sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$USER_NAME="$user_pass";
ssl.keystore.type=PKCS12
ssl.keystore.location=$tls/broker.p12
ssl.keystore.password=$store_pass
ssl.key.password=$store_pass
log.dirs=$data/logs
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
EOF
    cat >"$data/log4j2.properties" <<EOF
rootLogger.level=INFO
rootLogger.appenderRef.file.ref=file
appender.file.type=File
appender.file.name=file
appender.file.fileName=$LOG
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
logger.kafka.name=kafka
logger.kafka.level=WARN
logger.apache.name=org.apache.kafka
logger.apache.level=WARN
logger.controller.name=kafka.controller
logger.controller.level=WARN
logger.server.name=kafka.server.KafkaServer
logger.server.level=INFO
logger.broker.name=kafka.server.BrokerServer
logger.broker.level=INFO
EOF
    {
        echo "# The SASL_SSL listener of scripts/kafka.sh (librdkafka properties: flowboost --kafka-config)."
        echo "bootstrap.servers=127.0.0.1:$sasl_port"
        echo "security.protocol=SASL_SSL"
        echo "sasl.mechanism=SCRAM-SHA-512"
        echo "sasl.username=$USER_NAME"
        echo "sasl.password=$user_pass"
        echo "ssl.ca.location=$tls/ca.pem"
    } >"$CLIENT_CONFIG"
    umask 022
    : >"$LOG"

    local java=(java "-Xmx$HEAP" "-Xms256m" -XX:+UseG1GC -Djava.awt.headless=true
        "-Dlog4j2.configurationFile=$data/log4j2.properties" "-Dkafka.logs.dir=$data"
        -cp "$LIB/*")
    "${java[@]}" kafka.tools.StorageTool format --standalone --cluster-id="$(cluster_id)" -c "$props" \
        --add-scram "SCRAM-SHA-512=[name=$USER_NAME,password=$user_pass]" >>"$LOG" 2>&1 ||
        { log "formatting the storage failed; its log ($LOG):"; tail -n 20 "$LOG" >&2; exit 1; }

    echo "$port" >"$PORTFILE"
    echo "$sasl_port" >"$SASLPORTFILE"
    # setsid (when there is one): its own session, so the broker outlives the shell (and
    # the test harness) that started it, and a Ctrl-C in that terminal does not reach it.
    # fd 9 (the lock) is closed for the broker, or it would hold the lock forever.
    local setsid=()
    command -v setsid >/dev/null && setsid=(setsid)
    nohup "${setsid[@]}" "${java[@]}" kafka.Kafka "$props" >>"$LOG" 2>&1 </dev/null 9>&- &
    echo $! >"$PIDFILE"
    if ! ready "127.0.0.1:$port" "$WAIT" 2>>"$LOG"; then
        log "the broker did not answer within ${WAIT}s; its log ($LOG):"
        tail -n 30 "$LOG" >&2 || true
        stop_broker
        exit 1
    fi
    # Ready when a client can create a topic (the controller has elected itself and the
    # broker is unfenced).
    if ! "${java[@]}" org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$port" \
        --create --if-not-exists --topic flowboost-ready --partitions 1 \
        --replication-factor 1 >>"$LOG" 2>&1; then
        log "the broker could not create a topic; its log ($LOG):"
        tail -n 30 "$LOG" >&2 || true
        stop_broker
        exit 1
    fi
    if ! running_pid >/dev/null; then
        log "the broker answers on port $port but its pid file is wrong; log: $LOG"
        stop_broker
        exit 1
    fi
    log "Apache Kafka $VERSION running (pid $(cat "$PIDFILE"), data $data, log $LOG)"
    print_addresses
}

print_addresses() {
    echo "sasl_ssl 127.0.0.1:$(cat "$SASLPORTFILE") $CLIENT_CONFIG"
    address
}

status() {
    if running_pid >/dev/null && [[ -f "$PORTFILE" ]] && ready "$(address)" 0 2>/dev/null; then
        print_addresses
    else
        log "not running"
        exit 1
    fi
}

tool() {
    install >/dev/null
    exec java -Xmx512m -Dlog4j2.level=WARN -cp "$LIB/*" "$@"
}

codecs() {
    local topic="$1" data
    running_pid >/dev/null && [[ -f "$DATAFILE" ]] || { log "no broker of this script runs"; exit 3; }
    data="$(cat "$DATAFILE")"
    local segments=("$data"/logs/"$topic"-[0-9]*/*.log)
    [[ -e "${segments[0]}" ]] || { log "no log segment of topic $topic in $data/logs"; exit 1; }
    install >/dev/null
    java -Xmx512m -Dlog4j2.level=WARN -cp "$LIB/*" org.apache.kafka.tools.DumpLogSegments --files \
        "$(IFS=,; echo "${segments[*]}")" 2>/dev/null |
        sed -n 's/.* isControl: false .* compresscodec: \([A-Za-z0-9]*\).*/\1/p' | sort -u
}

with_lock() {
    mkdir -p "$DIR"
    if command -v flock >/dev/null; then
        # Serialize concurrent calls (parallel test binaries) on one state folder.
        exec 9>"$DIR/lock"
        flock -w 180 9 || { log "could not lock $DIR/lock"; exit 1; }
    fi
    "$@"
}

case "${1:-}" in
    start) with_lock start ;;
    stop) with_lock stop_broker; log "stopped" ;;
    status) status ;;
    tool) shift; tool "$@" ;;
    codecs) [[ $# -eq 2 ]] || { echo "usage: $0 codecs TOPIC" >&2; exit 2; }; codecs "$2" ;;
    *)
        echo "usage: $0 start|stop|status|tool CLASS ARGS...|codecs TOPIC" >&2
        exit 2
        ;;
esac
