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
