//! The connection settings shared by sources, sinks and the admin helper.

use super::client_properties::{is_secret, redacted_settings};
use rdkafka::ClientConfig;
use std::fmt;
use std::time::Duration;

/// Where the brokers are, and librdkafka settings to add or override.
///
/// Every client the connector makes starts from its own defaults (documented on each
/// constructor), then applies [`settings`](Self::settings) in order, so any librdkafka
/// property can be overridden.
///
/// `Debug` shows every setting but the secrets ([`is_secret`]), which read `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
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

    /// The values of the secret settings ([`is_secret`]: passwords, keys, JAAS configs).
    pub fn secret_values(&self) -> Vec<String> {
        super::context::secret_values(&self.settings)
    }

    /// `text` with every secret value of the settings replaced by `[redacted]` (for
    /// messages that may quote a setting: librdkafka's errors, logs).
    pub fn redact(&self, text: &str) -> String {
        super::client_properties::redact_values(text, &self.secret_values())
    }

    /// Whether a setting of `key` holds a secret.
    pub fn is_secret(key: &str) -> bool {
        is_secret(key)
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

impl fmt::Debug for KafkaConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KafkaConfig")
            .field("brokers", &self.brokers)
            .field("settings", &redacted_settings(&self.settings))
            .field("timeout", &self.timeout)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_secret() {
        let c = KafkaConfig::new("b:9093")
            .set("sasl.username", "flowboost")
            .set("sasl.password", "pw-123456")
            .set("ssl.key.password", "kp-123456")
            .set("sasl.oauthbearer.client.secret", "cs-123456")
            .set("ssl.key.pem", "-----BEGIN PRIVATE KEY-----xyz")
            .set("sasl.jaas.config", "x required password=\"jp-123456\";")
            .set("my.custom.secret.thing", "zz-123456");
        let debug = format!("{c:?}");
        for secret in [
            "pw-123456",
            "kp-123456",
            "cs-123456",
            "PRIVATE KEY",
            "jp-123456",
            "zz-123456",
        ] {
            assert!(!debug.contains(secret), "{debug}");
        }
        assert!(
            debug.contains("flowboost") && debug.contains("[redacted]"),
            "{debug}"
        );
        assert_eq!(
            c.redact("login pw-123456 failed"),
            "login [redacted] failed"
        );
    }
}
