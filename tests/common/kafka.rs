//! Helpers of the Kafka tests: the broker of `scripts/kafka.sh` and fresh topics.

use flowboost::connectors::kafka::testing::{test_brokers, unique_name};
use flowboost::connectors::kafka::{KafkaConfig, admin};

/// The test broker's address; fails the test with the reason if there is none.
pub fn brokers() -> String {
    test_brokers().unwrap_or_else(|e| panic!("no Kafka broker for the tests: {e}"))
}

/// A fresh topic named `PREFIX-...` with `partitions` partitions.
pub fn create(brokers: &str, prefix: &str, partitions: i32) -> String {
    let name = unique_name(prefix);
    admin::create_topic(&KafkaConfig::new(brokers), &name, partitions).expect("create topic");
    name
}

/// Every value of a topic, in topic order: `expect` records read with `flowboost kafka
/// read` (which fails after 60 s without them); its summary must count as many.
pub fn read_lines(brokers: &str, topic: &str, expect: u64) -> Vec<String> {
    let dir = super::temp_dir(&unique_name("read"));
    let file = dir.join("values.jsonl");
    let summary = super::last_json(&super::flowboost(&[
        "kafka",
        "read",
        "--brokers",
        brokers,
        "--topic",
        topic,
        "--expect",
        &expect.to_string(),
        "--timeout",
        "60",
        "--output",
        file.to_str().unwrap(),
    ]));
    let lines: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len() as u64, summary["records"].as_u64().unwrap());
    let _ = std::fs::remove_dir_all(dir);
    lines
}
