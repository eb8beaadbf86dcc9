//! The Kafka sink and the dead-letter writer against a real broker: deliveries
//! confirmed, failures counted, dead letters carrying the reason and the original bytes.
#![cfg(feature = "kafka")]

mod kafka_common;

use flowboost_connectors::kafka::testing::unique_name;
use flowboost_connectors::kafka::{
    DeadLetter, DeadLetterRecord, DeadLetterTopic, DeadLetterWriter, KafkaConfig, KafkaError,
    KafkaSink, OffsetCommitter, PartitionedSource, RecordDecoder, RecordFormat, StartFrom,
};
use kafka_common::{config, read, schema, topic};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

#[test]
fn sink_deliveries_are_confirmed_and_readable() {
    let config = config();
    let topic = topic(&config, "fb-sink", 4);
    let mut sink = KafkaSink::new(&config, &topic)
        .unwrap()
        .track_deliveries(true);
    let n = 500u64;
    for i in 0..n {
        let payload = format!("{{\"id\": {i}, \"prediction\": \"a\"}}");
        sink.send(Some(i.to_string().as_bytes()), payload.as_bytes())
            .unwrap();
    }
    let stats = sink.flush(Duration::from_secs(30)).unwrap();
    assert_eq!((stats.produced, stats.delivered, stats.failed), (n, n, 0));
    assert_eq!(stats.pending(), 0);
    let deliveries = sink.take_deliveries();
    assert_eq!(deliveries.len() as u64, n);
    let places: BTreeSet<(i32, i64)> = deliveries.iter().map(|d| (d.partition, d.offset)).collect();
    assert_eq!(places.len() as u64, n, "two records at one place");
    // A record to an explicit partition lands there.
    sink.send_to(Some(3), Some(b"x"), b"to partition 3")
        .unwrap();
    sink.flush(Duration::from_secs(30)).unwrap();
    assert_eq!(sink.take_deliveries()[0].partition, 3);

    // Everything delivered can be read back, each record once, where it was delivered.
    let mut sources = vec![
        PartitionedSource::new(
            &config,
            &topic,
            &unique_name("g"),
            0,
            1,
            StartFrom::Earliest,
        )
        .unwrap(),
    ];
    let records = read(&mut sources, n as usize + 1);
    assert_eq!(records.len() as u64, n + 1);
    let read_places: BTreeSet<(i32, i64)> = records
        .iter()
        .filter(|(_, r)| r.key.as_deref() != Some(b"x"))
        .map(|(_, r)| (r.partition, r.offset))
        .collect();
    assert_eq!(read_places, places);
}

#[test]
fn a_paced_sink_hands_over_a_burst_at_a_time_in_order() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let config = config().set("batch.num.messages", "50");
    let other = topic(&config, "fb-paced-other", 1);
    let topic = topic(&config, "fb-paced", 1);
    let drained = Arc::new(AtomicUsize::new(0));
    let calls = Arc::clone(&drained);
    let mut sink = KafkaSink::paced(&config, &topic, move || {
        calls.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    let n = 500usize;
    for i in 0..n {
        let payload = format!("{{\"id\": {i}}}");
        sink.send(Some(i.to_string().as_bytes()), payload.as_bytes())
            .unwrap();
    }
    sink.send_to_topic(&other, Some(b"k"), b"elsewhere")
        .unwrap();
    // Everything is held until pumped, and counted as produced.
    assert_eq!(sink.held(), n + 1);
    let stats = sink.stats();
    assert_eq!((stats.produced, stats.delivered), (n as u64 + 1, 0));
    // One burst of batch.num.messages; nothing more while 5 or more records are in flight.
    sink.pump().unwrap();
    assert_eq!(sink.held(), n + 1 - 50);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while drained.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    // Called back once, as fewer than 5 of the burst were left in flight.
    assert_eq!(drained.load(Ordering::SeqCst), 1);
    assert!(sink.stats().delivered >= 46, "{:?}", sink.stats());
    sink.pump().unwrap();
    assert_eq!(sink.held(), n + 1 - 100);
    // A flush pumps the rest, a burst per round trip.
    let stats = sink.flush(Duration::from_secs(60)).unwrap();
    assert_eq!(sink.held(), 0);
    assert_eq!(
        (stats.produced, stats.delivered, stats.failed),
        (n as u64 + 1, n as u64 + 1, 0)
    );
    assert!(drained.load(Ordering::SeqCst) >= n / 50);
    // In the order sent (one partition), each record once.
    let payloads = read_all(&config, &topic, "read_uncommitted", n);
    let sent: Vec<Vec<u8>> = (0..n)
        .map(|i| format!("{{\"id\": {i}}}").into_bytes())
        .collect();
    assert_eq!(payloads, sent);
    assert_eq!(
        read_all(&config, &other, "read_uncommitted", 1),
        vec![b"elsewhere".to_vec()]
    );

    // A burst also stays within batch.size (less a tenth, 64 bytes a record of framing):
    // 1,800 bytes hold 6 records of 200 bytes and a 1-byte key.
    let small = config.clone().set("batch.size", "2000");
    let mut sink = KafkaSink::paced(&small, &topic, || {}).unwrap();
    for i in 0..20u8 {
        sink.send(Some(&[i]), &[b'x'; 200]).unwrap();
    }
    sink.pump().unwrap();
    assert_eq!(sink.held(), 14);
    sink.flush(Duration::from_secs(60)).unwrap();
    assert_eq!(sink.stats().delivered, 20);
}

#[test]
fn undeliverable_records_are_counted_and_fail_the_flush() {
    // Nothing listens on port 1: every record expires after message.timeout.ms.
    let config = KafkaConfig::new("127.0.0.1:1")
        .set("message.timeout.ms", "1000")
        .set("enable.idempotence", "false");
    let mut sink = KafkaSink::new(&config, "fb-nowhere").unwrap();
    for i in 0..5u8 {
        sink.send(None, &[i]).unwrap();
    }
    match sink.flush(Duration::from_secs(20)) {
        Err(KafkaError::Undelivered {
            failed,
            first_error,
            ..
        }) => {
            assert_eq!(failed, 5);
            assert!(!first_error.is_empty());
        }
        other => panic!("expected Undelivered, got {other:?}"),
    }
    let stats = sink.stats();
    assert_eq!(
        (
            stats.produced,
            stats.delivered,
            stats.failed,
            stats.pending()
        ),
        (5, 0, 5, 0)
    );
    // The failures were reported once; an empty flush is fine again.
    assert!(sink.flush(Duration::from_secs(1)).is_ok());
}

#[test]
fn a_flush_times_out_while_records_are_pending() {
    let config = KafkaConfig::new("127.0.0.1:1").set("message.timeout.ms", "10000");
    let mut sink = KafkaSink::new(&config, "fb-nowhere").unwrap();
    sink.send(None, b"x").unwrap();
    assert!(matches!(
        sink.flush(Duration::from_millis(300)),
        Err(KafkaError::Timeout { .. })
    ));
    assert_eq!(sink.stats().pending(), 1);
}

#[test]
fn bad_records_become_dead_letters_with_reason_and_original_bytes() {
    let config = config();
    let input = topic(&config, "fb-dl-in", 2);
    let dead = topic(&config, "fb-dl-out", 1);

    // A stream of good and bad records.
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("unparseable", b"{\"id\": 1, \"features\": [".to_vec()),
        ("unparseable", vec![0xff, 0x00, 0xfe, b'\n']),
        (
            "missing_id",
            b"{\"features\": {\"x\": 1}, \"label\": \"a\"}".to_vec(),
        ),
        (
            "wrong_dimension",
            b"{\"id\": 4, \"features\": [1, 2]}".to_vec(),
        ),
        (
            "unknown_feature",
            b"{\"id\": 5, \"features\": {\"w\": 1}}".to_vec(),
        ),
        (
            "non_finite",
            b"{\"id\": 6, \"features\": {\"x\": NaN}}".to_vec(),
        ),
        (
            "non_finite",
            b"{\"id\": 7, \"features\": [Infinity, 0, 0]}".to_vec(),
        ),
        (
            "unknown_label",
            b"{\"id\": 8, \"features\": [0, 0, 0], \"label\": \"q\"}".to_vec(),
        ),
    ];
    let good = 40u64;
    let mut sink = KafkaSink::new(&config, &input).unwrap();
    for id in 0..good {
        sink.send(
            Some(id.to_string().as_bytes()),
            &kafka_common::event(1000 + id),
        )
        .unwrap();
        if let Some((_, bytes)) = bad.get(id as usize) {
            sink.send(Some(format!("bad{id}").as_bytes()), bytes)
                .unwrap();
        }
    }
    sink.flush(Duration::from_secs(30)).unwrap();
    let total = good as usize + bad.len();

    // The job: decode, dead-letter what does not fit.
    let decoder = RecordDecoder::new(&schema(), RecordFormat::Json);
    let mut source = vec![
        PartitionedSource::new(
            &config,
            &input,
            &unique_name("g"),
            0,
            1,
            StartFrom::Earliest,
        )
        .unwrap(),
    ];
    let records = read(&mut source, total);
    assert_eq!(records.len(), total);
    let mut writer = DeadLetterWriter::new(&config, &dead).unwrap();
    let mut decoded = 0;
    let mut rejected: BTreeMap<(i32, i64), (String, Vec<u8>)> = BTreeMap::new();
    for (_, r) in &records {
        match decoder.decode(r.key.as_deref(), &r.payload) {
            Ok(_) => decoded += 1,
            Err(e) => {
                let reason = e.to_string();
                writer
                    .write(&DeadLetter {
                        reason: &reason,
                        topic: &input,
                        partition: r.partition,
                        offset: r.offset,
                        key: r.key.as_deref(),
                        payload: &r.payload,
                    })
                    .unwrap();
                rejected.insert((r.partition, r.offset), (reason, r.payload.clone()));
            }
        }
    }
    let stats = writer.flush(Duration::from_secs(30)).unwrap();
    assert_eq!(decoded, good);
    assert_eq!(writer.count(), bad.len() as u64);
    assert_eq!(stats.delivered, bad.len() as u64);
    // Nothing lost: every consumed record decoded or dead-lettered.
    assert_eq!(decoded as usize + rejected.len(), records.len());

    // The dead-letter topic holds each rejected record with its reason, origin and bytes.
    let mut dl_source = vec![
        PartitionedSource::new(&config, &dead, &unique_name("g"), 0, 1, StartFrom::Earliest)
            .unwrap(),
    ];
    let letters = read(&mut dl_source, bad.len());
    assert_eq!(letters.len(), bad.len());
    let mut kinds = Vec::new();
    for (_, l) in &letters {
        let record = DeadLetterRecord::parse(&l.payload).unwrap();
        assert_eq!(record.topic, input);
        let (reason, payload) = &rejected[&(record.partition, record.offset)];
        assert_eq!(&record.reason, reason);
        assert_eq!(&record.payload().unwrap(), payload);
        assert_eq!(record.key().unwrap().as_deref(), l.key.as_deref());
        assert!(record.key().unwrap().unwrap().starts_with(b"bad"));
        kinds.push(record.reason.split(':').next().unwrap().to_string());
    }
    kinds.sort();
    let mut expected: Vec<String> = bad.iter().map(|(k, _)| k.to_string()).collect();
    expected.sort();
    assert_eq!(kinds, expected);
}

/// Reads every record of `topic` (all partitions) with the given isolation level.
fn read_all(config: &KafkaConfig, topic: &str, isolation: &str, expected: usize) -> Vec<Vec<u8>> {
    let config = config.clone().set("isolation.level", isolation);
    let mut sources = vec![
        PartitionedSource::new(&config, topic, &unique_name("g"), 0, 1, StartFrom::Earliest)
            .unwrap(),
    ];
    read(&mut sources, expected)
        .into_iter()
        .map(|(_, r)| r.payload)
        .collect()
}

#[test]
fn a_transaction_commits_records_and_offsets_together_and_a_crash_aborts_its_open_one() {
    let config = config();
    let out = topic(&config, "fb-tx-out", 2);
    let dead = topic(&config, "fb-tx-dead", 1);
    let input = topic(&config, "fb-tx-in", 2);
    let other = topic(&config, "fb-tx-in2", 2);
    let group = unique_name("fb-tx-group");
    let id = unique_name("fb-tx-id");
    let committer = OffsetCommitter::new(&config, &group).unwrap();
    let letters = DeadLetterTopic::new(&config, &dead);
    let letter = |offset: i64| DeadLetter {
        reason: "not_json: x",
        topic: &input,
        partition: 1,
        offset,
        key: None,
        payload: b"garbage",
    };

    let mut sink = KafkaSink::transactional(&config, &out, &id).unwrap();
    assert!(sink.is_transactional());
    for i in 0..10 {
        sink.send(Some(b"k"), format!("first {i}").as_bytes())
            .unwrap();
    }
    letters.send(&mut sink, &letter(3)).unwrap();
    sink.commit_transaction(
        &[
            (&input, 0, 5),
            (&input, 1, 4),
            (&other, 0, 2),
            (&other, 1, 3),
        ],
        &committer,
    )
    .unwrap();
    assert_eq!(
        committer
            .committed(&[(&input, 0), (&input, 1), (&other, 0), (&other, 1)])
            .unwrap(),
        vec![Some(5), Some(4), Some(2), Some(3)],
        "the offsets are committed with the transaction"
    );
    // The commit delivered everything; the dead letter is counted apart.
    assert_eq!(sink.stats().delivered, 11);
    assert_eq!(sink.delivered_to_topic(), 10);
    // A crash with a transaction open: its records are sent (and even delivered) but
    // never committed.
    for i in 0..7 {
        sink.send(Some(b"k"), format!("lost {i}").as_bytes())
            .unwrap();
    }
    letters.send(&mut sink, &letter(9)).unwrap();
    sink.flush(Duration::from_secs(30)).unwrap();
    drop(sink);
    // The next incarnation, with the same id, fences the old one and aborts what it left.
    let mut sink = KafkaSink::transactional(&config, &out, &id).unwrap();
    for i in 0..3 {
        sink.send(Some(b"k"), format!("second {i}").as_bytes())
            .unwrap();
    }
    sink.commit_transaction(&[(&input, 0, 9), (&other, 1, 8)], &committer)
        .unwrap();
    assert_eq!(
        committer
            .committed(&[(&input, 0), (&input, 1), (&other, 0), (&other, 1)])
            .unwrap(),
        vec![Some(9), Some(4), Some(2), Some(8)],
        "both topics' offsets move with the second transaction"
    );

    let committed: Vec<String> = read_all(&config, &out, "read_committed", 13)
        .into_iter()
        .map(|p| String::from_utf8(p).unwrap())
        .collect();
    let expected: Vec<String> = (0..10)
        .map(|i| format!("first {i}"))
        .chain((0..3).map(|i| format!("second {i}")))
        .collect();
    assert_eq!(
        committed, expected,
        "read_committed sees the committed records only"
    );
    let all = read_all(&config, &out, "read_uncommitted", 20);
    assert_eq!(
        all.len(),
        20,
        "read_uncommitted sees the aborted records too"
    );
    let dead_letters = read_all(&config, &dead, "read_committed", 1);
    assert_eq!(dead_letters.len(), 1);
    let r = DeadLetterRecord::parse(&dead_letters[0]).unwrap();
    assert_eq!(
        r.offset, 3,
        "the dead letter of the aborted transaction is hidden"
    );
    assert_eq!(read_all(&config, &dead, "read_uncommitted", 2).len(), 2);
}

/// Commits handed to a `CommitThread` are committed in the order given (the last one
/// stands), counted, and awaited by `wait`; a commit that fails (here one the committer
/// refuses: a negative offset) makes `stats` and `wait` an error that names the group.
#[test]
fn a_commit_thread_commits_in_order_and_reports_failures() {
    use flowboost_connectors::kafka::{CommitThread, OffsetCommitter};
    use std::sync::Arc;
    let config = config();
    let input = topic(&config, "fb-commits", 2);
    let group = unique_name("fb-commits-group");
    let committer = Arc::new(OffsetCommitter::new(&config, &group).unwrap());
    let mut commits = CommitThread::start(Arc::clone(&committer)).unwrap();
    commits.commit(&[]).unwrap();
    for offset in 1..=5 {
        commits
            .commit(&[(&input, 0, offset), (&input, 1, 10 * offset)])
            .unwrap();
    }
    let stats = commits.wait(Duration::from_secs(60)).unwrap();
    assert_eq!((stats.sent, stats.succeeded, stats.failed), (5, 5, 0));
    assert_eq!(stats.pending(), 0);
    assert_eq!(
        committer.committed(&[(&input, 0), (&input, 1)]).unwrap(),
        vec![Some(5), Some(50)]
    );

    commits.commit(&[(&input, 0, -3)]).unwrap();
    match commits.wait(Duration::from_secs(60)) {
        Err(KafkaError::CommitFailed {
            group: g,
            failed,
            first_error,
        }) => {
            assert_eq!((g.as_str(), failed), (group.as_str(), 1));
            assert!(first_error.contains("-3"), "{first_error}");
        }
        other => panic!("expected a failed commit, got {other:?}"),
    }
    assert!(commits.stats().is_err());
    // The offsets of the last accepted commit stand.
    assert_eq!(committer.committed(&[(&input, 0)]).unwrap(), vec![Some(5)]);
}

/// A crash between adding offsets to a transaction and committing it leaves them pending:
/// a `read_committed` reader of the group's offsets (a restarted job choosing its
/// checkpoint) waits for them until the transaction times out. `KafkaSink::fence`, with
/// the crashed producer's id, aborts the transaction at once: the offsets are final
/// again (here: none, as nothing was committed before).
#[test]
fn fencing_aborts_offsets_a_crash_left_pending_in_a_transaction() {
    use rdkafka::ClientConfig;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::producer::{BaseProducer, Producer};
    use rdkafka::topic_partition_list::{Offset, TopicPartitionList};

    let config = config();
    let input = topic(&config, "fb-fence-in", 1);
    let group = unique_name("fb-fence-group");
    let id = unique_name("fb-fence-id");
    // The crashed incarnation: offsets added to its transaction, never committed.
    let client = |key: &str, value: &str| {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &config.brokers).set(key, value);
        for (k, v) in &config.settings {
            c.set(k, v);
        }
        c
    };
    let member: BaseConsumer = client("group.id", &group).create().unwrap();
    let crashed: BaseProducer = client("transactional.id", &id)
        .set("transaction.timeout.ms", "300000")
        .create()
        .unwrap();
    crashed.init_transactions(Duration::from_secs(30)).unwrap();
    crashed.begin_transaction().unwrap();
    let mut offsets = TopicPartitionList::new();
    offsets
        .add_partition_offset(&input, 0, Offset::Offset(5))
        .unwrap();
    crashed
        .send_offsets_to_transaction(
            &offsets,
            &member.group_metadata().unwrap(),
            Duration::from_secs(30),
        )
        .unwrap();
    std::mem::forget(crashed);

    let patient = config.clone().with_timeout(Duration::from_secs(3));
    let committer = OffsetCommitter::new(&patient, &group).unwrap();
    let waited = committer.committed(&[(&input, 0)]);
    assert!(
        waited.is_err(),
        "pending offsets are not readable before the fence: {waited:?}"
    );

    let start = std::time::Instant::now();
    KafkaSink::fence(&config, &id).unwrap();
    assert_eq!(
        committer.committed(&[(&input, 0)]).unwrap(),
        vec![None],
        "the fence aborted the pending offsets"
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "fencing and reading took {:?}",
        start.elapsed()
    );
}
