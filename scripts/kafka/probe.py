#!/usr/bin/env python3
"""Readiness probe for a Kafka broker, standard library only.

Usage: probe.py HOST:PORT [--wait SECONDS]

Sends ApiVersions (api key 18, v0) and Metadata (api key 3, v4, all topics) requests and
checks the answers: ApiVersions must succeed and list Produce, Fetch, Metadata and
ApiVersions; Metadata must list at least one broker, and the broker must advertise the
address we connected to (clients follow the advertised address). Exit 0 when ready, 1
otherwise (with the reason on stderr). With --wait, retries until ready or the deadline.
"""
import socket
import struct
import sys
import time


def _request(sock, api_key, api_version, correlation_id, body):
    client_id = b"flowboost-probe"
    header = struct.pack(">hhih", api_key, api_version, correlation_id, len(client_id)) + client_id
    payload = header + body
    sock.sendall(struct.pack(">i", len(payload)) + payload)
    size = struct.unpack(">i", _read_exact(sock, 4))[0]
    if size < 4 or size > 64 * 1024 * 1024:
        raise ValueError(f"implausible response size {size}")
    data = _read_exact(sock, size)
    (got_id,) = struct.unpack_from(">i", data, 0)
    if got_id != correlation_id:
        raise ValueError(f"correlation id {got_id}, expected {correlation_id}")
    return data, 4


def _read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed by the broker")
        buf += chunk
    return buf


def _string(data, pos):
    (n,) = struct.unpack_from(">h", data, pos)
    pos += 2
    if n < 0:
        return None, pos
    return data[pos:pos + n].decode("utf-8", "replace"), pos + n


def probe(host, port, timeout=2.0):
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        # ApiVersions v0: empty body.
        data, pos = _request(sock, 18, 0, 1, b"")
        (error,) = struct.unpack_from(">h", data, pos)
        pos += 2
        if error != 0:
            raise ValueError(f"ApiVersions error code {error}")
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
        keys = set()
        for _ in range(max(count, 0)):
            key, _lo, _hi = struct.unpack_from(">hhh", data, pos)
            pos += 6
            keys.add(key)
        missing = {0, 1, 3, 18} - keys
        if missing:
            raise ValueError(f"ApiVersions lacks api keys {sorted(missing)}")
        # Metadata v4 (Apache Kafka 4 dropped v0 to v3): topics = null (all topics),
        # allow_auto_topic_creation = false. The answer starts with throttle_time_ms.
        data, pos = _request(sock, 3, 4, 2, struct.pack(">ib", -1, 0))
        pos += 4
        (nbrokers,) = struct.unpack_from(">i", data, pos)
        pos += 4
        brokers = []
        for _ in range(max(nbrokers, 0)):
            (node,) = struct.unpack_from(">i", data, pos)
            pos += 4
            bhost, pos = _string(data, pos)
            (bport,) = struct.unpack_from(">i", data, pos)
            pos += 4
            _rack, pos = _string(data, pos)
            brokers.append((node, bhost, bport))
        if not brokers:
            raise ValueError("Metadata lists no broker")
        if not any(bport == port for _n, _h, bport in brokers):
            raise ValueError(f"no broker advertises port {port}: {brokers}")
        return brokers


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    host, _, port = argv[1].rpartition(":")
    port = int(port)
    wait = 0.0
    if len(argv) >= 4 and argv[2] == "--wait":
        wait = float(argv[3])
    deadline = time.monotonic() + wait
    while True:
        try:
            probe(host, port)
            return 0
        except (OSError, ValueError, struct.error) as e:
            if time.monotonic() >= deadline:
                print(f"kafka probe {host}:{port}: not ready: {e}", file=sys.stderr)
                return 1
            time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
