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

/// GETs the job's metrics page at `addr` (reading to the end: the request asks the server
/// to close the connection after its answer, as an HTTP/1.1 client must when it reads to
/// the end).
pub fn scrape(addr: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

/// The value of the series `name` (without labels) on a metrics page.
pub fn metric(page: &str, name: &str) -> u64 {
    page.lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} not in:\n{page}"))
}
