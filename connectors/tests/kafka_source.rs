//! The partitioned Kafka source against a real broker: every record read exactly once
//! with 1 and 2 workers, commit and resume with no record skipped, start positions, lag,
//! idleness.
#![cfg(feature = "kafka")]

mod kafka_common;

use flowboost_connectors::kafka::testing::unique_name;
use flowboost_connectors::kafka::{
    KafkaError, PartitionedSource, RecordDecoder, RecordFormat, StartFrom,
};
use flowboost_operators::data::Label;
use kafka_common::{config, produce, read, schema, topic};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Checks that `records` hold every produced id exactly once, at the (partition, offset)
/// where it was delivered, in offset order per partition, and decode to the right event.
fn check_exactly_once(
    produced: &BTreeMap<u64, (i32, i64)>,
    records: &[(usize, flowboost_connectors::kafka::SourceRecord)],
) {
    let decoder = RecordDecoder::new(&schema(), RecordFormat::Json);
    let mut seen: BTreeMap<u64, (i32, i64)> = BTreeMap::new();
    let mut last: BTreeMap<i32, i64> = BTreeMap::new();
    for (_, r) in records {
        let ex = decoder.decode(r.key.as_deref(), &r.payload).unwrap();
        assert_eq!(r.key.as_deref(), Some(ex.id.to_string().as_bytes()));
        assert_eq!(ex.label, Some(Label::Class((ex.id % 3) as u32)));
        assert!(
            seen.insert(ex.id, (r.partition, r.offset)).is_none(),
            "id {} read twice",
            ex.id
        );
        if let Some(&before) = last.get(&r.partition) {
            assert!(r.offset > before, "partition {} out of order", r.partition);
        }
        last.insert(r.partition, r.offset);
    }
    assert_eq!(seen.len(), produced.len(), "records missing");
    assert_eq!(&seen, produced);
}

#[test]
fn every_record_is_read_exactly_once_with_one_and_two_workers() {
    let config = config();
    let topic = topic(&config, "fb-source-once", 4);
    let n = 200u64;

    // One worker, created before the records exist: it sees them all, and its lag too.
    let one = PartitionedSource::new(
        &config,
        &topic,
        &unique_name("g1"),
        0,
        1,
        StartFrom::Earliest,
    )
    .unwrap();
    assert_eq!(one.partitions(), &[0, 1, 2, 3]);
    assert_eq!(one.positions(), vec![(0, 0), (1, 0), (2, 0), (3, 0)]);
    let produced = produce(&config, &topic, 0..n);
    let used: BTreeSet<i32> = produced.values().map(|&(p, _)| p).collect();
    assert_eq!(used.len(), 4, "keys should spread over the 4 partitions");
    let lag: i64 = one.lag().unwrap().iter().map(|l| l.lag).sum();
    assert_eq!(lag, n as i64);

    let mut sources = vec![one];
    let records = read(&mut sources, n as usize);
    check_exactly_once(&produced, &records);
    let lag = sources[0].lag().unwrap();
    assert!(lag.iter().all(|l| l.lag == 0), "{lag:?}");
    let mut expected_positions: BTreeMap<i32, i64> = (0..4).map(|p| (p, 0)).collect();
    for &(p, o) in produced.values() {
        let e = expected_positions.get_mut(&p).unwrap();
        *e = (*e).max(o + 1);
    }
    assert_eq!(
        sources[0].positions(),
        expected_positions.into_iter().collect::<Vec<_>>()
    );

    // Two workers: partitions 0, 2 and 1, 3; together every record once.
    let group = unique_name("g2");
    let mut two = vec![
        PartitionedSource::new(&config, &topic, &group, 0, 2, StartFrom::Earliest).unwrap(),
        PartitionedSource::new(&config, &topic, &group, 1, 2, StartFrom::Earliest).unwrap(),
    ];
    assert_eq!(two[0].partitions(), &[0, 2]);
    assert_eq!(two[1].partitions(), &[1, 3]);
    let records = read(&mut two, n as usize);
    for (w, r) in &records {
        assert_eq!(
            r.partition as usize % 2,
            *w,
            "worker {w} read partition {}",
            r.partition
        );
    }
    check_exactly_once(&produced, &records);

    // Idle once drained.
    let start = Instant::now();
    while !two[0].is_idle(Duration::from_millis(300)) {
        assert!(
            two[0]
                .poll_batch(10, Duration::from_millis(50))
                .unwrap()
                .is_empty()
        );
        assert!(start.elapsed() < Duration::from_secs(5));
    }
    assert_eq!(two[0].errors(), 0, "{:?}", two[0].last_error());
}

#[test]
fn committed_offsets_resume_with_no_record_skipped() {
    let config = config();
    let topic = topic(&config, "fb-source-resume", 4);
    let group = unique_name("g-resume");
    let first = produce(&config, &topic, 0..120);

    // A job reads everything, but only the first half of each partition is "processed"
    // (outputs delivered) when it stops: it commits just that.
    let mut a =
        vec![PartitionedSource::new(&config, &topic, &group, 0, 1, StartFrom::Committed).unwrap()];
    assert_eq!(
        a[0].committed().unwrap(),
        vec![(0, None), (1, None), (2, None), (3, None)]
    );
    let records = read(&mut a, 120);
    assert_eq!(records.len(), 120);
    let mut per_partition: BTreeMap<i32, i64> = BTreeMap::new();
    for (_, r) in &records {
        *per_partition.entry(r.partition).or_default() += 1;
    }
    let commit: Vec<(i32, i64)> = per_partition
        .iter()
        .map(|(&p, &count)| (p, count / 2))
        .collect();
    a[0].commit(&commit).unwrap();
    let committed: Vec<(i32, Option<i64>)> = commit.iter().map(|&(p, o)| (p, Some(o))).collect();
    assert_eq!(a[0].committed().unwrap(), committed);
    // A commit for a partition it does not own is refused.
    let one_of_two =
        PartitionedSource::new(&config, &topic, &group, 1, 2, StartFrom::Committed).unwrap();
    assert!(matches!(
        one_of_two.commit(&[(0, 1)]),
        Err(KafkaError::Invalid(_))
    ));
    drop(one_of_two);
    drop(a);

    // More records arrive while the job is down.
    let second = produce(&config, &topic, 120..160);

    // Restart with two workers from the committed offsets: exactly the records at or
    // after the committed offsets, none before, none twice.
    let mut b = vec![
        PartitionedSource::new(&config, &topic, &group, 0, 2, StartFrom::Committed).unwrap(),
        PartitionedSource::new(&config, &topic, &group, 1, 2, StartFrom::Committed).unwrap(),
    ];
    let committed: BTreeMap<i32, i64> = commit.iter().copied().collect();
    for s in &b {
        for (p, o) in s.positions() {
            assert_eq!(
                o, committed[&p],
                "partition {p} starts at the committed offset"
            );
        }
    }
    let expected: BTreeMap<u64, (i32, i64)> = first
        .iter()
        .chain(second.iter())
        .filter(|(_, (p, o))| *o >= committed[p])
        .map(|(&id, &at)| (id, at))
        .collect();
    let records = read(&mut b, expected.len());
    check_exactly_once(&expected, &records);
    for s in &b {
        s.commit_positions().unwrap();
    }

    // After committing everything, a restart reads nothing and has no lag.
    let mut c =
        vec![PartitionedSource::new(&config, &topic, &group, 0, 1, StartFrom::Committed).unwrap()];
    assert!(c[0].lag().unwrap().iter().all(|l| l.lag == 0));
    assert!(read(&mut c, 0).is_empty());
}

#[test]
fn latest_reads_only_newer_records() {
    let config = config();
    let topic = topic(&config, "fb-source-latest", 2);
    produce(&config, &topic, 0..30);
    let mut s = vec![
        PartitionedSource::new(&config, &topic, &unique_name("g"), 0, 1, StartFrom::Latest)
            .unwrap(),
    ];
    let newer = produce(&config, &topic, 100..110);
    let records = read(&mut s, 10);
    check_exactly_once(&newer, &records);
}

#[test]
fn more_workers_than_partitions_and_bad_arguments() {
    let config = config();
    let topic = topic(&config, "fb-source-few", 2);
    produce(&config, &topic, 0..20);
    let group = unique_name("g");
    let mut three: Vec<PartitionedSource> = (0..3)
        .map(|i| {
            PartitionedSource::new(&config, &topic, &group, i, 3, StartFrom::Earliest).unwrap()
        })
        .collect();
    assert_eq!(three[2].partitions(), &[] as &[i32]);
    assert!(three[2].positions().is_empty());
    assert!(three[2].lag().unwrap().is_empty());
    let records = read(&mut three, 20);
    assert_eq!(records.len(), 20);
    assert!(records.iter().all(|(w, _)| *w < 2));
    assert!(three[2].is_idle(Duration::from_millis(500)));

    assert!(matches!(
        PartitionedSource::new(&config, &topic, &group, 3, 3, StartFrom::Earliest),
        Err(KafkaError::Invalid(_))
    ));
    let missing = unique_name("fb-no-such-topic");
    match PartitionedSource::new(&config, &missing, &group, 0, 1, StartFrom::Earliest) {
        Err(KafkaError::UnknownTopic(t)) => assert_eq!(t, missing),
        other => panic!("expected UnknownTopic, got {other:?}"),
    }
}
