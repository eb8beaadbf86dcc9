#!/usr/bin/env python3
"""Another Kafka client beside flowboost's: confluent-kafka (Confluent's Python client).

Used by tests/kafka_foreign_clients.rs to check that flowboost reads what other clients
write and that other clients read what flowboost writes.

    foreign_client.py produce --brokers B --topic T --events N --compression C [--seed S]
                              [--malformed-every M]
        writes N binary JSON events (ids 0..N-1, 5 dense features, labels "neg"/"pos",
        deterministic in the seed) with the producer's compression C (none, gzip, snappy,
        lz4, zstd), keyed by id, round-robin over the topic's partitions, and after every
        M-th event a malformed record (cycling through: not JSON, a label the schema does
        not have, 4 features instead of 5); prints {"produced": N, "malformed": K,
        "compression": C}.

    foreign_client.py read --brokers B --topic T --expect N [--timeout S]
        reads the topic from the start with isolation.level=read_committed (only committed
        transactions) until N records came, or fails after S seconds (default 60) without
        them, then waits one more second for any record beyond N; prints one JSON line per
        record: {"partition", "offset", "key", "value"} (value: the record's text).

Install: python3 -m pip install confluent-kafka (scripts/test.sh installs it in a venv).
"""
import argparse
import json
import random
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition


def produce(args):
    rng = random.Random(args.seed)
    producer = Producer(
        {
            "bootstrap.servers": args.brokers,
            "compression.type": args.compression,
            # Several records a batch, so that the codec actually compresses batches.
            "linger.ms": 20,
            "enable.idempotence": True,
        }
    )
    errors = []

    def delivered(err, _msg):
        if err is not None:
            errors.append(str(err))

    meta = producer.list_topics(args.topic, timeout=30).topics[args.topic]
    if meta.error is not None:
        raise SystemExit(f"topic {args.topic}: {meta.error}")
    partitions = sorted(meta.partitions)
    malformed = [
        b"{not json",
        b'{"id": 1000000, "features": [0, 0, 0, 0, 0], "label": "maybe"}',
        b'{"id": 1000001, "features": [0, 0, 0, 0], "label": "pos"}',
    ]
    bad = 0
    for i in range(args.events):
        x = [round(rng.uniform(-1.0, 1.0), 6) for _ in range(5)]
        label = "pos" if x[0] + 0.5 * x[1] - x[2] > 0 else "neg"
        event = {"id": i, "features": x, "label": label}
        producer.produce(
            args.topic,
            key=str(i).encode(),
            value=json.dumps(event).encode(),
            partition=partitions[i % len(partitions)],
            on_delivery=delivered,
        )
        if args.malformed_every and (i + 1) % args.malformed_every == 0:
            producer.produce(
                args.topic,
                value=malformed[bad % len(malformed)],
                partition=partitions[i % len(partitions)],
                on_delivery=delivered,
            )
            bad += 1
        producer.poll(0)
    left = producer.flush(60)
    if left or errors:
        raise SystemExit(f"{left} records undelivered, errors: {errors[:3]}")
    print(json.dumps({"produced": args.events, "malformed": bad, "compression": args.compression}))


def read(args):
    consumer = Consumer(
        {
            "bootstrap.servers": args.brokers,
            "group.id": f"foreign-reader-{time.time_ns()}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
        }
    )
    meta = consumer.list_topics(args.topic, timeout=30).topics[args.topic]
    if meta.error is not None:
        raise SystemExit(f"topic {args.topic}: {meta.error}")
    consumer.assign([TopicPartition(args.topic, p, 0) for p in sorted(meta.partitions)])
    out = []
    deadline = time.monotonic() + args.timeout
    extra_until = None
    while True:
        now = time.monotonic()
        if extra_until is None and now > deadline:
            raise SystemExit(f"read {len(out)} of {args.expect} records in {args.timeout} s")
        if extra_until is not None and now > extra_until:
            break
        msg = consumer.poll(0.2)
        if msg is None:
            continue
        if msg.error():
            raise KafkaException(msg.error())
        out.append(
            {
                "partition": msg.partition(),
                "offset": msg.offset(),
                "key": msg.key().decode() if msg.key() is not None else None,
                "value": msg.value().decode(),
            }
        )
        if len(out) >= args.expect and extra_until is None:
            extra_until = time.monotonic() + 1.0
    consumer.close()
    for r in out:
        print(json.dumps(r))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("produce")
    pp.add_argument("--brokers", required=True)
    pp.add_argument("--topic", required=True)
    pp.add_argument("--events", type=int, required=True)
    pp.add_argument("--compression", default="none")
    pp.add_argument("--seed", type=int, default=1)
    pp.add_argument("--malformed-every", type=int, default=0)
    rp = sub.add_parser("read")
    rp.add_argument("--brokers", required=True)
    rp.add_argument("--topic", required=True)
    rp.add_argument("--expect", type=int, required=True)
    rp.add_argument("--timeout", type=float, default=60.0)
    args = p.parse_args()
    {"produce": produce, "read": read}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
