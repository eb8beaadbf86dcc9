//! Shared helpers of the Kafka integration tests (a real broker, see `scripts/kafka.sh`).
#![allow(dead_code)]

use flowboost_connectors::kafka::testing::{test_brokers, unique_name};
use flowboost_connectors::kafka::{
    Delivery, KafkaConfig, KafkaSink, PartitionedSource, SourceRecord, admin,
};
use flowboost_operators::data::{Attribute, Schema, Task};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The test broker's settings; panics (fails the test) with the reason if there is none.
pub fn config() -> KafkaConfig {
    let brokers = test_brokers().unwrap_or_else(|e| {
        panic!(
            "no Kafka broker for the integration tests: {e}\n\
             run `scripts/kafka.sh start` and set FLOWBOOST_KAFKA_BROKERS=127.0.0.1:PORT"
        )
    });
    KafkaConfig::new(brokers)
}

/// A fresh topic with `partitions` partitions.
pub fn topic(config: &KafkaConfig, prefix: &str, partitions: i32) -> String {
    let name = unique_name(prefix);
    assert!(admin::create_topic(config, &name, partitions).expect("create topic"));
    assert_eq!(
        admin::topic_partitions(config, &name).unwrap(),
        (0..partitions).collect::<Vec<_>>()
    );
    name
}

/// The schema of the test events: three numeric features, three classes.
pub fn schema() -> Schema {
    Schema {
        attributes: vec![
            Attribute::numeric("x"),
            Attribute::numeric("y"),
            Attribute::numeric("z"),
        ],
        labels: vec!["a".into(), "b".into(), "c".into()],
        task: Task::Multiclass,
    }
}

/// A labeled JSON event with id `id`.
pub fn event(id: u64) -> Vec<u8> {
    let label = ["a", "b", "c"][(id % 3) as usize];
    format!(
        r#"{{"id": {id}, "features": {{"x": {}, "y": {}}}, "label": "{label}"}}"#,
        id as f64 * 0.5,
        -(id as f64)
    )
    .into_bytes()
}

/// Produces events `ids` keyed by id, waits for every delivery, and returns where each
/// landed, by id.
pub fn produce(
    config: &KafkaConfig,
    topic: &str,
    ids: impl IntoIterator<Item = u64>,
) -> BTreeMap<u64, (i32, i64)> {
    let mut sink = KafkaSink::new(config, topic)
        .unwrap()
        .track_deliveries(true);
    let mut sent = 0u64;
    for id in ids {
        sink.send(Some(id.to_string().as_bytes()), &event(id))
            .unwrap();
        sent += 1;
    }
    let stats = sink
        .flush(Duration::from_secs(30))
        .expect("every record delivered");
    assert_eq!(
        (stats.delivered, stats.failed, stats.pending()),
        (sent, 0, 0)
    );
    let deliveries: Vec<Delivery> = sink.take_deliveries();
    assert_eq!(deliveries.len() as u64, sent);
    deliveries
        .into_iter()
        .map(|d| {
            let id: u64 = String::from_utf8(d.key.unwrap()).unwrap().parse().unwrap();
            (id, (d.partition, d.offset))
        })
        .collect()
}

/// Polls every source in turn until `expected` records came in all, then a little more
/// (to catch duplicates); gives up after 30 s. Returns (worker, record) pairs.
pub fn read(sources: &mut [PartitionedSource], expected: usize) -> Vec<(usize, SourceRecord)> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while out.len() < expected && Instant::now() < deadline {
        for (w, source) in sources.iter_mut().enumerate() {
            for r in source.poll_batch(64, Duration::from_millis(50)).unwrap() {
                out.push((w, r));
            }
        }
    }
    let extra = Instant::now() + Duration::from_millis(700);
    while Instant::now() < extra {
        for (w, source) in sources.iter_mut().enumerate() {
            for r in source.poll_batch(64, Duration::from_millis(50)).unwrap() {
                out.push((w, r));
            }
        }
    }
    out
}
