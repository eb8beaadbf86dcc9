//! Kafka: a partitioned source, a sink with delivery confirmation, a dead-letter writer,
//! topic administration, and the record codec (JSON lines and LIBSVM lines in, JSON
//! predictions out). Behind the cargo feature `kafka`.
//!
//! No async runtime: a timely worker calls [`PartitionedSource::poll_with`] (or
//! [`PartitionedSource::poll_batch`]) from its source operator, without blocking, and
//! [`KafkaSink::send`] / [`KafkaSink::flush`] from its sink operator; the sink's delivery
//! reports are served on its producer's own polling thread (rdkafka's `ThreadedProducer`),
//! and a [`CommitThread`] commits offsets from a thread of its own, so that no worker
//! waits on the broker in the steady state.
//!
//! - [`PartitionedSource`]: one per worker. It assigns itself the partitions `p` of a topic
//!   with `p % workers == index` (manual assignment, no group rebalancing), starts from
//!   the earliest, latest or committed offsets ([`StartFrom`]), yields batches of
//!   [`SourceRecord`]s `(partition, offset, key, payload)`, commits offsets only when told
//!   (synchronously), reports lag per partition and how long it has been idle.
//! - [`KafkaSink`]: keyed records to a topic; [`KafkaSink::flush`] returns once every
//!   record sent so far is acknowledged by the broker, or fails if any was not.
//! - [`OffsetCommitter`]: commits offsets of any partitions for a group from one place
//!   (the job commits for the partitions every worker reads, through a [`CommitThread`]
//!   that worker 0's sink hands them to).
//! - [`DeadLetterWriter`]: rejected records as JSON ([`DeadLetter`]): the reason, where
//!   the record came from, and its original bytes in base64.
//! - [`RecordDecoder`]: one record's bytes to an
//!   [`Example`](flowboost_operators::data::Example) against the job's declared
//!   [`Schema`](flowboost_operators::data::Schema); a record that does not fit is a
//!   [`DecodeError`] (a reason), never a panic. [`PredictionEncoder`]: predictions to JSON.
//! - [`client_properties`]: `client.properties` files (Java syntax, librdkafka and
//!   Java-client keys), environment overrides, secrets by name.
//! - Every client logs through `tracing` (librdkafka's own lines under the target
//!   `librdkafka`, secrets cut out); the first blocking call of a client that cannot reach
//!   the cluster fails within seconds naming the cause ([`KafkaError::Connection`]).
//! - [`registry`]: a Confluent-compatible schema registry's client (fetch schemas by
//!   id, register them), for Confluent-framed Avro ([`confluent`]).
//! - [`admin`]: create topics with `N` partitions, list a topic's partitions.
//! - [`testing`]: the broker of `scripts/kafka.sh` for tests and demos, unique topic names.
//!
//! Records of one partition keep their order; records of different partitions interleave
//! in any order, so a deterministic job orders them by `(partition, offset)`.

pub mod admin;
pub mod client_properties;
mod codec;
mod commit_thread;
mod committer;
mod config;
mod context;
mod dead_letter;
mod error;
pub mod registry;
mod settle;
mod sink;
mod source;
pub mod testing;

pub use codec::{
    DecodeError, DecodeErrorKind, DecodedEvent, FeedbackRecord, PREDICTION_SCHEMA,
    PredictionEncoder, PredictionFormat, PredictionOutput, RecordDecoder, RecordFormat,
    SchemaError,
};
pub use codec::{avro, confluent};
pub use commit_thread::{CommitStats, CommitThread};
pub use committer::OffsetCommitter;
pub use config::KafkaConfig;
pub use context::ConnectionCause;
pub use dead_letter::{
    DeadLetter, DeadLetterError, DeadLetterRecord, DeadLetterTopic, DeadLetterWriter,
};
pub use error::KafkaError;
pub use sink::{Delivery, KafkaSink, SinkStats};
pub use source::{GroupLag, PartitionLag, PartitionedSource, RecordView, SourceRecord, StartFrom};
