//! The Kafka client settings of a command, from four layers (later ones win per key):
//! the connector's defaults, `--kafka-config FILE` (a `client.properties` file), the
//! environment (`FLOWBOOST_KAFKA_SET_<KEY>`, e.g. `FLOWBOOST_KAFKA_SET_SASL_PASSWORD`), and
//! `--kafka-set KEY=VALUE`. The brokers are `--brokers`, else the `bootstrap.servers` of
//! those layers. See [`flowboost_connectors::kafka::client_properties`] for the syntax and
//! the translation of Java-client keys.
//!
//! Every secret value of the settings is also remembered for [`redact`], which the binary
//! applies to its final error line.

use clap::Args;
use flowboost_connectors::kafka::client_properties::{
    Origin, Property, env_overrides, read_properties, redact_values, translate,
};
use flowboost_connectors::kafka::{KafkaConfig, KafkaError};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The Kafka client options of `flowboost kafka create-topic|produce|read`.
#[derive(Clone, Debug, Default, Args)]
pub struct ClientArgs {
    /// The bootstrap servers (default: `bootstrap.servers` of --kafka-config or of
    /// FLOWBOOST_KAFKA_SET_BOOTSTRAP_SERVERS).
    #[arg(long, value_name = "HOST:PORT")]
    pub brokers: Option<String>,
    /// A Kafka client properties file (`client.properties`: Java properties syntax,
    /// librdkafka or Java-client property names, e.g. security.protocol, sasl.mechanism,
    /// sasl.username, sasl.password or sasl.jaas.config, ssl.ca.location). Overridden by
    /// `FLOWBOOST_KAFKA_SET_<KEY>` environment variables (KEY: the property with `_` for `.`,
    /// e.g. FLOWBOOST_KAFKA_SET_SASL_PASSWORD), then by --kafka-set.
    #[arg(long, value_name = "FILE")]
    pub kafka_config: Option<PathBuf>,
    /// A librdkafka property for every client, KEY=VALUE (repeatable; overrides
    /// --kafka-config and the environment).
    #[arg(long = "kafka-set", value_name = "KEY=VALUE")]
    pub kafka_set: Vec<String>,
}

impl ClientArgs {
    /// The client settings (see the [module](self)).
    pub fn config(&self) -> Result<KafkaConfig, String> {
        client_config(
            self.brokers.as_deref(),
            self.kafka_config.as_deref(),
            &self.kafka_set,
        )
    }
}

/// The client settings of `--brokers`, `--kafka-config`, the environment and
/// `--kafka-set` (see the [module](self)).
pub fn client_config(
    brokers: Option<&str>,
    file: Option<&Path>,
    sets: &[String],
) -> Result<KafkaConfig, String> {
    client_config_with(brokers, file, sets, std::env::vars())
}

/// [`client_config`] with the environment given.
pub fn client_config_with(
    brokers: Option<&str>,
    file: Option<&Path>,
    sets: &[String],
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<KafkaConfig, String> {
    let mut layers: Vec<Property> = match file {
        Some(path) => read_properties(path).map_err(|e| format!("--kafka-config {e}"))?,
        None => Vec::new(),
    };
    layers.extend(env_overrides(env).map_err(|e| e.to_string())?);
    for kv in sets {
        let (key, value) = kv
            .split_once('=')
            .filter(|(k, _)| !k.trim().is_empty())
            .ok_or("--kafka-set: expected KEY=VALUE (no `=` after a key)")?;
        layers.push(Property {
            key: key.trim().to_string(),
            value: value.to_string(),
            origin: Origin::CommandLine,
        });
    }
    let settings = translate(layers).map_err(|e| e.to_string())?;
    for (key, origin) in &settings.dropped {
        tracing::info!(key = %key, origin = %origin, "flowboost: kafka: {key} ({origin}) is a Java client's setting without a meaning here: left out");
    }
    let brokers = brokers
        .map(str::to_string)
        .or(settings.bootstrap_servers)
        .ok_or("the Kafka brokers: --brokers HOST:PORT, or bootstrap.servers in --kafka-config")?;
    let mut config = KafkaConfig::new(brokers);
    config.settings = settings.settings;
    remember_secrets(&config.secret_values());
    Ok(config)
}

/// An error of the Kafka connector in `context` as one line: a connection error
/// ([`KafkaError::Connection`]: a refused login, an untrusted certificate, no broker) is
/// about the cluster, not the topic, and stands alone.
pub fn kafka_error(context: impl std::fmt::Display, e: KafkaError) -> String {
    match e {
        KafkaError::Connection { .. } => e.to_string(),
        e => format!("{context}: {e}"),
    }
}

fn secrets() -> &'static Mutex<Vec<String>> {
    static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());
    &SECRETS
}

fn remember_secrets(values: &[String]) {
    let mut known = secrets().lock().unwrap_or_else(|e| e.into_inner());
    for v in values {
        if !known.contains(v) {
            known.push(v.clone());
        }
    }
}

/// `text` with every secret of the Kafka settings made so far replaced by `[redacted]`.
pub fn redact(text: &str) -> String {
    let known = secrets().lock().unwrap_or_else(|e| e.into_inner());
    redact_values(text, &known)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|&(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn file_then_environment_then_the_command_line() {
        let dir =
            std::env::temp_dir().join(format!("flowboost-client-args-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("client.properties");
        std::fs::write(
            &file,
            "bootstrap.servers=f:9093\nsecurity.protocol=SASL_SSL\nsasl.username=u\nsasl.password=file-pw\nlinger.ms=7\n",
        )
        .unwrap();
        let c = client_config_with(None, Some(&file), &[], env(&[])).unwrap();
        assert_eq!(c.brokers, "f:9093");
        assert!(
            c.settings
                .contains(&("sasl.password".into(), "file-pw".into()))
        );
        let c = client_config_with(
            Some("cli:1"),
            Some(&file),
            &["linger.ms=9".to_string()],
            env(&[
                ("FLOWBOOST_KAFKA_SET_SASL_PASSWORD", "env-pw"),
                ("FLOWBOOST_KAFKA_SET_LINGER_MS", "8"),
            ]),
        )
        .unwrap();
        assert_eq!(c.brokers, "cli:1");
        let get = |k: &str| {
            c.settings
                .iter()
                .rev()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("sasl.password"), Some("env-pw"));
        assert_eq!(get("linger.ms"), Some("9"));
        assert_eq!(redact("a env-pw b"), "a [redacted] b");
        let e = client_config_with(None, None, &[], env(&[])).unwrap_err();
        assert!(e.contains("--brokers"), "{e}");
        let e = client_config_with(Some("b:1"), None, &["novalue".into()], env(&[])).unwrap_err();
        assert!(e.contains("expected KEY=VALUE"), "{e}");
        let e =
            client_config_with(Some("b:1"), Some(&dir.join("nope")), &[], env(&[])).unwrap_err();
        assert!(
            e.starts_with("--kafka-config ") && e.contains("nope"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
