//! The connection settings shared by sources, sinks and the admin helper.

use rdkafka::ClientConfig;
use std::time::Duration;

/// Where the brokers are, and librdkafka settings to add or override.
///
/// Every client the connector makes starts from its own defaults (documented on each
/// constructor), then applies [`settings`](Self::settings) in order, so any librdkafka
/// property can be overridden.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KafkaConfig {
    /// The bootstrap servers, `HOST:PORT[,HOST:PORT...]` (use `127.0.0.1`, not
    /// `localhost`, for the broker of `scripts/kafka.sh`).
    pub brokers: String,
    /// librdkafka properties (`key`, `value`) applied after the connector's defaults.
    pub settings: Vec<(String, String)>,
    /// The time limit of blocking calls: metadata, watermarks, commits, topic creation.
    pub timeout: Duration,
}

impl KafkaConfig {
    /// Settings for the given bootstrap servers, with a 10 s time limit.
    pub fn new(brokers: impl Into<String>) -> Self {
        KafkaConfig {
            brokers: brokers.into(),
            settings: Vec::new(),
            timeout: Duration::from_secs(10),
        }
    }

    /// Adds (or overrides) one librdkafka property.
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((key.into(), value.into()));
        self
    }

    /// Sets the time limit of blocking calls.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// A librdkafka configuration: the brokers, then `defaults`, then the user's settings.
    pub(crate) fn client_config(&self, defaults: &[(&str, &str)]) -> ClientConfig {
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", &self.brokers);
        for (key, value) in defaults {
            config.set(*key, *value);
        }
        for (key, value) in &self.settings {
            config.set(key, value);
        }
        config
    }
}
