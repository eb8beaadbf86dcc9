//! The real broker for tests and demos: the Apache Kafka that `scripts/kafka.sh` starts.

use std::path::PathBuf;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// The test broker (Apache Kafka, as `scripts/kafka.sh` runs it): its plaintext bootstrap
/// address and, when known, its SASL_SSL listener.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestBroker {
    /// The plaintext bootstrap address, `HOST:PORT`.
    pub brokers: String,
    /// The SASL_SSL listener, if the broker has one that the tests know of.
    pub secured: Option<SecuredListener>,
}

/// A SASL_SSL listener of the test broker and the librdkafka properties file that reaches
/// it (mechanism, user, password, CA).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecuredListener {
    /// Its bootstrap address, `HOST:PORT`.
    pub brokers: String,
    /// A librdkafka properties file: `security.protocol`, `sasl.*`, `ssl.ca.location`.
    pub config: PathBuf,
}

/// The bootstrap address of a running test broker, started once per process.
///
/// `FLOWBOOST_KAFKA_BROKERS` if it is set; else the last line printed by
/// `scripts/kafka.sh start` (the script at `FLOWBOOST_KAFKA_SCRIPT`, or the repository's,
/// found from this crate's source folder), which installs and starts the broker if it is
/// not running. An error says what failed: tests must fail, not pass silently, without a
/// broker.
pub fn test_brokers() -> Result<String, TestBrokerError> {
    test_broker().map(|b| b.brokers)
}

/// The running test broker, with its secured listener: the one named by
/// `FLOWBOOST_KAFKA_SASL_BROKERS` and `FLOWBOOST_KAFKA_SASL_CONFIG` when
/// `FLOWBOOST_KAFKA_BROKERS` is set (none if they are not), else the `sasl_ssl HOST:PORT
/// FILE` line that `scripts/kafka.sh start` prints.
pub fn test_broker() -> Result<TestBroker, TestBrokerError> {
    static BROKER: OnceLock<Result<TestBroker, TestBrokerError>> = OnceLock::new();
    BROKER.get_or_init(start_broker).clone()
}

fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Why no test broker is running.
#[derive(Clone, Debug, thiserror::Error)]
pub enum TestBrokerError {
    /// The script could not be run.
    #[error("cannot run {}: {source}", .script.display())]
    Run {
        /// `scripts/kafka.sh`.
        script: PathBuf,
        /// Why.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The script failed.
    #[error(
        "`{} start` failed ({status}); set FLOWBOOST_KAFKA_BROKERS to use another broker.\nstdout:\n{stdout}\nstderr:\n{stderr}",
        .script.display()
    )]
    Failed {
        /// `scripts/kafka.sh`.
        script: PathBuf,
        /// How it ended.
        status: ExitStatus,
        /// What it printed.
        stdout: String,
        /// What it printed on its standard error.
        stderr: String,
    },
    /// The script printed no address.
    #[error("`{} start` printed no broker address:\n{stdout}", .script.display())]
    NoAddress {
        /// `scripts/kafka.sh`.
        script: PathBuf,
        /// What it printed.
        stdout: String,
    },
}

fn start_broker() -> Result<TestBroker, TestBrokerError> {
    if let Some(brokers) = env("FLOWBOOST_KAFKA_BROKERS") {
        let secured = match (
            env("FLOWBOOST_KAFKA_SASL_BROKERS"),
            env("FLOWBOOST_KAFKA_SASL_CONFIG"),
        ) {
            (Some(brokers), Some(config)) => Some(SecuredListener {
                brokers,
                config: PathBuf::from(config),
            }),
            _ => None,
        };
        return Ok(TestBroker { brokers, secured });
    }
    let script = match std::env::var_os("FLOWBOOST_KAFKA_SCRIPT") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka.sh"),
    };
    let output = Command::new("bash")
        .arg(&script)
        .arg("start")
        .output()
        .map_err(|e| TestBrokerError::Run {
            script: script.clone(),
            source: Arc::new(e),
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(TestBrokerError::Failed {
            script,
            status: output.status,
            stdout: stdout.into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    parse_start_output(&stdout).ok_or_else(|| TestBrokerError::NoAddress {
        script,
        stdout: stdout.into_owned(),
    })
}

/// The broker that `scripts/kafka.sh start` printed: the plaintext address on the last
/// line, the secured listener on a `sasl_ssl HOST:PORT FILE` line before it.
fn parse_start_output(stdout: &str) -> Option<TestBroker> {
    let brokers = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(str::trim)
        .filter(|l| l.contains(':') && !l.contains(' '))?
        .to_string();
    let secured = stdout.lines().find_map(|l| {
        let mut words = l.split_whitespace();
        (words.next() == Some("sasl_ssl")).then_some(())?;
        let brokers = words.next()?.to_string();
        let config = PathBuf::from(words.next()?);
        Some(SecuredListener { brokers, config })
    });
    Some(TestBroker { brokers, secured })
}

/// A topic or group name unique to this call: `PREFIX-PID-NANOS-COUNTER`.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!(
        "{prefix}-{}-{nanos}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_output_names_both_listeners() {
        let out = "sasl_ssl 127.0.0.1:9093 /x/.kafka/client-sasl-ssl.properties\n127.0.0.1:9092\n";
        let b = parse_start_output(out).unwrap();
        assert_eq!(b.brokers, "127.0.0.1:9092");
        let s = b.secured.unwrap();
        assert_eq!(s.brokers, "127.0.0.1:9093");
        assert_eq!(
            s.config,
            PathBuf::from("/x/.kafka/client-sasl-ssl.properties")
        );
        // An older script's single line: no secured listener.
        let b = parse_start_output("127.0.0.1:9092\n").unwrap();
        assert_eq!(b.secured, None);
        // No address at all.
        assert_eq!(parse_start_output("kafka.sh: failed\n"), None);
    }
}
