//! The connector's librdkafka client context: librdkafka's log lines and errors become
//! `tracing` events (target `librdkafka`), and the errors that say why a client cannot
//! reach the cluster (a refused login, a certificate not trusted, no broker answering) are
//! kept, so that the first blocking call of a client fails within seconds naming the cause
//! ([`KafkaError::Connection`]) instead of waiting out its time limit.
//!
//! librdkafka hands its logs and errors over as events on the client's main queue, served
//! only while someone polls it: consumers serve it in their `poll`, the threaded producer on
//! its thread. The admin client of rdkafka never serves it, so the connector asks metadata
//! through a consumer ([`fetch_metadata`]) whose queue it serves while it waits.

use super::client_properties::{is_secret, redact_values};
use super::{KafkaConfig, KafkaError};
use rdkafka::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError as RdKafkaError;
use rdkafka::metadata::Metadata;
use rdkafka::types::RDKafkaErrorCode;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Why a client could not talk to the cluster (see [`KafkaError::Connection`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectionCause {
    /// The broker refused the SASL login.
    Authentication {
        /// The SASL user (`sasl.username`), if set.
        user: Option<String>,
        /// librdkafka's words.
        detail: String,
    },
    /// The TLS handshake failed (most often: the broker's certificate is not signed by a CA
    /// the client trusts).
    Tls {
        /// librdkafka's words.
        detail: String,
    },
    /// No broker answered.
    Unreachable {
        /// librdkafka's last words about it (connection refused, name not resolved, ...),
        /// if any.
        detail: Option<String>,
        /// How long the client tried.
        waited: Duration,
    },
}

impl fmt::Display for ConnectionCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectionCause::Authentication { user, detail } => {
                write!(f, "SASL authentication failed")?;
                if let Some(user) = user {
                    write!(f, " for user {user:?}")?;
                }
                write!(f, " (wrong user or password?) [{detail}]")
            }
            ConnectionCause::Tls { detail } if detail.contains("certificate verify failed") => {
                write!(
                    f,
                    "TLS handshake failed: certificate verify failed (is ssl.ca.location the CA that signed the broker's certificate?) [{detail}]"
                )
            }
            ConnectionCause::Tls { detail } => write!(
                f,
                "TLS handshake failed (is the listener TLS, security.protocol right, ssl.ca.location the broker's CA?) [{detail}]"
            ),
            ConnectionCause::Unreachable { detail, waited } => {
                write!(f, "cannot connect to any broker")?;
                match detail {
                    Some(d) => write!(f, " [{d}]"),
                    None => write!(f, " (no answer within {:.1} s)", waited.as_secs_f64()),
                }
            }
        }
    }
}

/// What the client's error events said so far.
#[derive(Default)]
struct Seen {
    authentication: Option<String>,
    tls: Option<String>,
    all_down: bool,
    /// The last transport error (connection refused, resolve failure, ...).
    transport: Option<String>,
    /// Error codes already logged at `warn` (repeats go to `debug`).
    logged: Vec<RDKafkaErrorCode>,
}

/// The context of every client the connector makes (see the [module](self)).
pub struct ConnectorContext {
    /// What the logs call this client (`consumer`, `producer to \`topic\``, ...).
    client: String,
    brokers: String,
    user: Option<String>,
    /// The values of the secret settings, cut out of every log line and error.
    secrets: Vec<String>,
    seen: Mutex<Seen>,
}

impl ConnectorContext {
    /// The context of a client of `config`, named `client` in the logs.
    pub(crate) fn new(config: &KafkaConfig, client: impl Into<String>) -> Self {
        ConnectorContext {
            client: client.into(),
            brokers: config.brokers.clone(),
            user: config
                .settings
                .iter()
                .rev()
                .find(|(k, _)| k == "sasl.username")
                .map(|(_, v)| v.clone()),
            secrets: config.secret_values(),
            seen: Mutex::new(Seen::default()),
        }
    }

    /// `text` with every secret value replaced by `[redacted]`.
    pub(crate) fn redact(&self, text: &str) -> String {
        redact_values(text, &self.secrets)
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cause that makes this client's connection hopeless, if its errors showed one: a
    /// refused login or a failed TLS handshake (librdkafka would retry them forever), or
    /// every broker down.
    pub(crate) fn connection_problem(&self, waited: Duration) -> Option<ConnectionCause> {
        let seen = self.seen();
        if let Some(detail) = &seen.authentication {
            return Some(ConnectionCause::Authentication {
                user: self.user.clone(),
                detail: detail.clone(),
            });
        }
        if let Some(detail) = &seen.tls {
            return Some(ConnectionCause::Tls {
                detail: detail.clone(),
            });
        }
        seen.all_down.then(|| ConnectionCause::Unreachable {
            detail: seen.transport.clone(),
            waited,
        })
    }

    /// The error for `cause`.
    pub(crate) fn connection_error(&self, cause: ConnectionCause) -> KafkaError {
        KafkaError::Connection {
            brokers: self.brokers.clone(),
            cause,
        }
    }

    /// The last transport error seen, if any.
    fn last_transport(&self) -> Option<String> {
        self.seen().transport.clone()
    }

    /// Notes one error event (shared by every context of the connector).
    pub(crate) fn note_error(&self, error: &RdKafkaError, reason: &str) {
        let reason = self.redact(reason);
        let code = error.rdkafka_error_code();
        // The end of a partition is an event, not an error (the source notes it).
        if code == Some(RDKafkaErrorCode::PartitionEOF) {
            tracing::trace!(target: "librdkafka", client = %self.client, "{reason}");
            return;
        }
        let first = {
            let mut seen = self.seen();
            match code {
                Some(
                    RDKafkaErrorCode::Authentication | RDKafkaErrorCode::SaslAuthenticationFailed,
                ) => {
                    seen.authentication.get_or_insert_with(|| reason.clone());
                }
                Some(RDKafkaErrorCode::SSL) => {
                    seen.tls.get_or_insert_with(|| reason.clone());
                }
                Some(RDKafkaErrorCode::BrokerTransportFailure | RDKafkaErrorCode::Resolve)
                    if is_tls_failure(&reason) =>
                {
                    seen.tls.get_or_insert_with(|| reason.clone());
                }
                Some(RDKafkaErrorCode::BrokerTransportFailure | RDKafkaErrorCode::Resolve) => {
                    seen.transport = Some(reason.clone());
                }
                Some(RDKafkaErrorCode::AllBrokersDown) => seen.all_down = true,
                _ => {}
            }
            let key = code.unwrap_or(RDKafkaErrorCode::Unknown);
            let first = !seen.logged.contains(&key);
            if first {
                seen.logged.push(key);
            }
            first
        };
        if first {
            tracing::warn!(target: "librdkafka", client = %self.client, error = %error, "{reason}");
        } else {
            tracing::debug!(target: "librdkafka", client = %self.client, error = %error, "{reason}");
        }
    }

    /// Forwards one librdkafka log line to `tracing` (target `librdkafka`), secrets cut out.
    pub(crate) fn note_log(&self, level: RDKafkaLogLevel, facility: &str, message: &str) {
        let message = self.redact(message);
        if matches!(
            level,
            RDKafkaLogLevel::Emerg
                | RDKafkaLogLevel::Alert
                | RDKafkaLogLevel::Critical
                | RDKafkaLogLevel::Error
        ) && is_tls_failure(&message)
        {
            // Without librdkafka's thread tag (`[thrd:...]: `).
            let detail = match message
                .strip_prefix("[thrd:")
                .and_then(|m| m.split_once("]: "))
            {
                Some((_, rest)) => rest.to_string(),
                None => message.clone(),
            };
            self.seen().tls.get_or_insert(detail);
        }
        let client = self.client.as_str();
        match level {
            RDKafkaLogLevel::Emerg
            | RDKafkaLogLevel::Alert
            | RDKafkaLogLevel::Critical
            | RDKafkaLogLevel::Error => {
                tracing::error!(target: "librdkafka", client, facility, "{message}")
            }
            RDKafkaLogLevel::Warning => {
                tracing::warn!(target: "librdkafka", client, facility, "{message}")
            }
            RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
                tracing::info!(target: "librdkafka", client, facility, "{message}")
            }
            RDKafkaLogLevel::Debug => {
                tracing::debug!(target: "librdkafka", client, facility, "{message}")
            }
        }
    }
}

/// Whether librdkafka's words describe a failed TLS handshake.
fn is_tls_failure(text: &str) -> bool {
    text.contains("SSL handshake failed") || text.contains("certificate verify failed")
}

impl ClientContext for ConnectorContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        self.note_log(level, fac, log_message);
    }

    fn error(&self, error: RdKafkaError, reason: &str) {
        self.note_error(&error, reason);
    }
}

impl ConsumerContext for ConnectorContext {}

/// A client context that carries a [`ConnectorContext`].
pub(crate) trait Watched {
    /// The connector's context.
    fn connector(&self) -> &ConnectorContext;
}

impl Watched for ConnectorContext {
    fn connector(&self) -> &ConnectorContext {
        self
    }
}

/// The values of `settings` whose keys are secrets ([`is_secret`]).
pub(crate) fn secret_values(settings: &[(String, String)]) -> Vec<String> {
    settings
        .iter()
        .filter(|(k, v)| is_secret(k) && !v.is_empty())
        .map(|(_, v)| v.clone())
        .collect()
}

/// The cluster's metadata (every topic: asking for one topic by name makes a broker with
/// `auto.create.topics.enable` create it), asked through `consumer` in short slices while
/// its events are served: a refused login, a failed TLS handshake or every broker down ends
/// the wait at once with [`KafkaError::Connection`]; after `timeout`, the error names the
/// last transport error seen, if any. `context` says what it was for.
///
/// Call it before the consumer is assigned partitions (serving its queue would take their
/// records).
pub(crate) fn fetch_metadata<C: ConsumerContext + Watched>(
    consumer: &BaseConsumer<C>,
    timeout: Duration,
    context: &str,
) -> Result<Metadata, KafkaError> {
    let start = Instant::now();
    let deadline = start + timeout;
    let mut slice = Duration::from_millis(100);
    loop {
        let now = Instant::now();
        let left = deadline.saturating_duration_since(now);
        let result = consumer.fetch_metadata(None, slice.min(left).max(Duration::from_millis(1)));
        // Serve the client's events (its logs and errors), whatever the result.
        while consumer.poll(Duration::ZERO).is_some() {}
        let watch = consumer.context().connector();
        match result {
            Ok(metadata) => return Ok(metadata),
            Err(e) => {
                if let Some(cause) = watch.connection_problem(start.elapsed()) {
                    return Err(watch.connection_error(cause));
                }
                if Instant::now() >= deadline {
                    if let Some(detail) = watch.last_transport() {
                        return Err(watch.connection_error(ConnectionCause::Unreachable {
                            detail: Some(detail),
                            waited: start.elapsed(),
                        }));
                    }
                    return Err(match e.rdkafka_error_code() {
                        Some(RDKafkaErrorCode::OperationTimedOut)
                        | Some(RDKafkaErrorCode::BrokerTransportFailure) => {
                            watch.connection_error(ConnectionCause::Unreachable {
                                detail: None,
                                waited: start.elapsed(),
                            })
                        }
                        _ => KafkaError::client(context.to_string(), e),
                    });
                }
            }
        }
        slice = (slice * 2).min(Duration::from_millis(500));
    }
}

/// A consumer for metadata and watermarks only (no group, never assigned): its events are
/// served by [`fetch_metadata`].
pub(crate) fn metadata_client(
    config: &KafkaConfig,
    name: &str,
) -> Result<BaseConsumer<ConnectorContext>, KafkaError> {
    config
        .client_config(&[("client.id", name)])
        .create_with_context(ConnectorContext::new(config, name))
        .map_err(|e| KafkaError::client("creating a metadata client", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_causes_read_as_one_clear_line() {
        let auth = ConnectionCause::Authentication {
            user: Some("flowboost".into()),
            detail: "SASL authentication error".into(),
        };
        assert!(auth.to_string().starts_with(
            "SASL authentication failed for user \"flowboost\" (wrong user or password?)"
        ));
        let tls = ConnectionCause::Tls {
            detail: "SSL handshake failed: error:0A000086:SSL routines::certificate verify failed"
                .into(),
        };
        assert!(tls.to_string().starts_with(
            "TLS handshake failed: certificate verify failed (is ssl.ca.location the CA"
        ));
        let down = ConnectionCause::Unreachable {
            detail: None,
            waited: Duration::from_secs(10),
        };
        assert_eq!(
            down.to_string(),
            "cannot connect to any broker (no answer within 10.0 s)"
        );
    }

    #[test]
    fn errors_are_sorted_into_causes_with_secrets_cut_out() {
        let config = KafkaConfig::new("b:1")
            .set("sasl.username", "u")
            .set("sasl.password", "s3cret-pw");
        let c = ConnectorContext::new(&config, "test");
        assert_eq!(c.connection_problem(Duration::ZERO), None);
        c.note_error(
            &RdKafkaError::Global(RDKafkaErrorCode::BrokerTransportFailure),
            "Connect to ipv4#127.0.0.1:1 failed: Connection refused",
        );
        assert_eq!(c.connection_problem(Duration::ZERO), None);
        c.note_error(
            &RdKafkaError::Global(RDKafkaErrorCode::AllBrokersDown),
            "1/1 brokers are down",
        );
        assert!(matches!(
            c.connection_problem(Duration::ZERO),
            Some(ConnectionCause::Unreachable { detail: Some(d), .. }) if d.contains("Connection refused")
        ));
        c.note_error(
            &RdKafkaError::Global(RDKafkaErrorCode::Authentication),
            "SASL authentication error: bad password s3cret-pw",
        );
        let Some(ConnectionCause::Authentication { user, detail }) =
            c.connection_problem(Duration::ZERO)
        else {
            panic!("an authentication failure comes first");
        };
        assert_eq!(user.as_deref(), Some("u"));
        assert!(
            !detail.contains("s3cret-pw") && detail.contains("[redacted]"),
            "{detail}"
        );
        let c = ConnectorContext::new(&config, "test");
        c.note_error(
            &RdKafkaError::Global(RDKafkaErrorCode::BrokerTransportFailure),
            "ssl://b:1/bootstrap: SSL handshake failed: certificate verify failed",
        );
        assert!(matches!(
            c.connection_problem(Duration::ZERO),
            Some(ConnectionCause::Tls { .. })
        ));
    }
}
