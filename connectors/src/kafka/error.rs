//! The one error type of the Kafka connector.

use std::time::Duration;

/// What went wrong talking to Kafka.
///
/// Bad records are not errors of this kind: decoding returns a
/// [`DecodeError`](super::DecodeError) and the record goes to the dead-letter topic.
#[derive(Debug, thiserror::Error)]
pub enum KafkaError {
    /// A librdkafka call failed; `context` says which one, for which topic.
    #[error("{context}: {source}")]
    Client {
        /// What the connector was doing.
        context: String,
        /// The client's error.
        #[source]
        source: rdkafka::error::KafkaError,
    },
    /// The topic does not exist (or has no partitions).
    #[error("topic `{0}` does not exist on the broker")]
    UnknownTopic(String),
    /// A call did not finish in time.
    #[error("{context}: timed out after {timeout:?}")]
    Timeout {
        /// What the connector was waiting for.
        context: String,
        /// How long it waited.
        timeout: Duration,
    },
    /// Some records sent since the last flush were not delivered (the broker rejected
    /// them, or they expired in the producer's queue). They are lost unless sent again:
    /// do not commit the source offsets they cover.
    #[error("{failed} record(s) to topic `{topic}` not delivered; first error: {first_error}")]
    Undelivered {
        /// The topic written to.
        topic: String,
        /// How many records failed since the last flush.
        failed: u64,
        /// The first failure's message.
        first_error: String,
    },
    /// The broker refused `failed` offset commits of `group`.
    #[error(
        "committing offsets of group `{group}`: {failed} commit(s) failed; first error: {first_error}"
    )]
    CommitFailed {
        /// The consumer group.
        group: String,
        /// How many commits failed.
        failed: u64,
        /// The first refusal's message.
        first_error: String,
    },
    /// A client could not talk to the cluster: a refused login, a certificate not trusted,
    /// no broker answering. Blocking calls end with it within seconds.
    #[error("kafka: {brokers}: {cause}")]
    Connection {
        /// The bootstrap servers.
        brokers: String,
        /// Why.
        cause: super::ConnectionCause,
    },
    /// A request that makes no sense (a partition this source does not own, a bad
    /// worker index, ...).
    #[error("{0}")]
    Invalid(String),
}

impl KafkaError {
    /// A client error with its context.
    pub(crate) fn client(context: impl Into<String>, source: rdkafka::error::KafkaError) -> Self {
        KafkaError::Client {
            context: context.into(),
            source,
        }
    }
}
