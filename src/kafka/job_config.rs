//! The Kafka job's configuration, validated once: the connection (the client settings and
//! the group), the topics, and what the sources, the merge, the feedback join, the sink and
//! the run take, each its own part ([`SourceConfig`], [`MergeConfig`], [`FeedbackConfig`],
//! [`SinkConfig`], [`RunConfig`]). `flowboost run` builds it from its arguments (a job
//! file's keys are its options: see [`job_file`](crate::cli::job_file)) with `TryFrom`; the
//! limits of single values are checked by the options' parsers (`src/cli/limits.rs`), the
//! checks across options by [`JobConfig::validate`].

use super::checkpoint::Checkpoints;
use super::cluster::Cluster;
use super::keys::ModelKeys;
use super::merge::MergeOrder;
use crate::model::{ModelWriter, SavedModel};
use flowboost_connectors::kafka::confluent::WriterSchemas;
use flowboost_connectors::kafka::{KafkaConfig, RecordFormat, StartFrom};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The defaults of the Kafka job's options (the command line's and the job file's).
pub mod defaults {
    /// `--group`.
    pub const GROUP: &str = "flowboost";
    /// `--start`.
    pub const START: &str = "committed";
    /// `--report-interval` (seconds).
    pub const REPORT_INTERVAL_S: f64 = 10.0;
    /// `--commit-interval-ms`.
    pub const COMMIT_INTERVAL_MS: u64 = 1000;
    /// `--record-format` and `--prediction-format`.
    pub const FORMAT: &str = "json";
    /// `--merge-block` (offsets).
    pub const MERGE_BLOCK: i64 = 64;
    /// `--merge-order`.
    pub const MERGE_ORDER: &str = "offsets";
    /// `--merge-block-ms`: records are ordered by their timestamp in blocks of 100 ms (a
    /// block's records are released together, once every partition is read past it;
    /// within a block, each topic's and partition's records come together).
    pub const MERGE_BLOCK_MS: i64 = 100;
    /// `--max-read-ahead` (records).
    pub const MAX_READ_AHEAD: i64 = 4096;
    /// `--idle-pause-ms` (0: never pause).
    pub const IDLE_PAUSE_MS: u64 = 0;
    /// `--checkpoint-every` (seconds).
    pub const CHECKPOINT_EVERY_S: f64 = 10.0;
    /// `--checkpoints-kept`.
    pub const CHECKPOINTS_KEPT: usize = 3;
    /// The Kafka job's `--pending-ttl` (events).
    pub const PENDING_TTL: u64 = 1_000_000;
    /// The Kafka job's `--feedback-lag` (epochs).
    pub const FEEDBACK_LAG: u64 = 4;
    /// `--max-merge-wait-ms`.
    pub const MAX_MERGE_WAIT_MS: u64 = 100;
    /// `--max-epochs-in-flight`.
    pub const MAX_EPOCHS_IN_FLIGHT: u64 = 8;
    /// `--processes`.
    pub const PROCESSES: usize = 1;
    /// `--process`.
    pub const PROCESS: usize = 0;
    /// `--local-base-port`.
    pub const LOCAL_BASE_PORT: u16 = 2101;
}

/// The whole job.
#[derive(Clone, Debug)]
pub struct JobConfig {
    /// Where and as whom the job connects.
    pub connection: ConnectionConfig,
    /// The job's topics.
    pub topics: JobTopics,
    /// One model per key (`--keys`): the keys; `None`: one model for every event.
    pub keys: Option<ModelKeys>,
    /// The sources'.
    pub source: SourceConfig,
    /// The merge's.
    pub merge: MergeConfig,
    /// The feedback join's.
    pub feedback: FeedbackConfig,
    /// The sink's.
    pub sink: SinkConfig,
    /// The run's: its threads and processes, its reports, what it starts from.
    pub run: RunConfig,
}

/// Where and as whom the job connects.
#[derive(Clone, Debug)]
pub struct ConnectionConfig {
    /// The Kafka client settings: the bootstrap servers and librdkafka properties
    /// (security included) for every client (`Debug` shows no secret).
    pub client: KafkaConfig,
    /// The consumer group offsets are committed to.
    pub group: String,
}

/// The job's topics (each has one role).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobTopics {
    /// The events topic.
    pub source: String,
    /// The predictions topic.
    pub sink: String,
    /// The feedback topic (labels or clicks for earlier events), if any.
    pub feedback: Option<String>,
    /// The dead-letter topic; without it, bad records are counted and logged only.
    pub dead_letter: Option<String>,
}

/// What the sources take.
#[derive(Clone, Debug)]
pub struct SourceConfig {
    /// Where to start reading.
    pub start: StartFrom,
    /// The event format.
    pub format: RecordFormat,
    /// Confluent Avro events: the writer schemas (the registry's, cached; shared by the
    /// workers).
    pub writer_schemas: Option<Arc<WriterSchemas>>,
    /// A worker whose partitions are all read to their end and quiet this long pauses
    /// fetching and asks the broker for news every
    /// [`IDLE_PROBE`](super::source_operator::IDLE_PROBE) instead (`None`: never pause).
    pub idle_pause: Option<Duration>,
}

/// What the merge takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MergeConfig {
    /// Records per dataflow timestamp (an epoch).
    pub batch: usize,
    /// What the merge orders records by (`--merge-order`).
    pub order: MergeOrder,
    /// The merge block, in offsets per partition (see [`Merger`](super::merge::Merger)).
    pub block: i64,
    /// The merge block in milliseconds, with [`MergeOrder::Timestamps`].
    pub block_ms: i64,
    /// A record held this long for other partitions is released anyway (live streams).
    pub max_wait: Duration,
    /// Each partition is read at most this many records ahead of what the merge has
    /// stamped (backpressure when partitions lag each other; at least twice the merge
    /// block).
    pub max_read_ahead: i64,
    /// At most this many epochs between the merge and the model's output (backpressure).
    pub max_epochs_in_flight: u64,
    /// Stop after this long without a record (bounded runs); `None`: run until killed.
    pub exit_when_idle: Option<Duration>,
}

impl MergeConfig {
    /// The block of the merge's order: offsets, or milliseconds with timestamps.
    pub fn order_block(&self) -> i64 {
        match self.order {
            MergeOrder::Offsets => self.block,
            MergeOrder::Timestamps => self.block_ms,
        }
    }
}

/// What the feedback join takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeedbackConfig {
    /// An unlabeled event (or feedback without its event) waits at most about this many
    /// later events (counted in epochs of `batch` events, rounded up).
    pub pending_ttl: u64,
    /// A learning pass enters the model this many epochs after its feedback met its event
    /// (at least 1; more lets the stage blocks work on later epochs meanwhile).
    pub lag: u64,
    /// The click window (`--click-window`, logged clicks): every unlabeled event waits its
    /// whole `pending_ttl` window gathering its click records, then is learned from them,
    /// or, without any, as "no shown item clicked" (see
    /// [`JoinConfig::window`](flowboost_operators::engine::feedback::JoinConfig::window)).
    pub click_window: bool,
}

/// What the sink takes.
#[derive(Clone, Debug)]
pub struct SinkConfig {
    /// Confluent Avro predictions: the registry's id of the prediction schema (`None`:
    /// JSON predictions).
    pub prediction_schema_id: Option<u32>,
    /// How often outputs are flushed and offsets committed.
    pub commit_interval: Duration,
    /// Write checkpoints to this directory (`--checkpoint-dir`).
    pub checkpoint_dir: Option<PathBuf>,
    /// Keep this many of the newest checkpoints.
    pub checkpoints_kept: usize,
    /// How often (`--checkpoint-every`).
    pub checkpoint_every: Duration,
    /// With checkpoints, write the outputs of each checkpoint's epochs in one Kafka
    /// transaction, committed with the checkpoint's offsets once it is durable
    /// (exactly-once for read_committed consumers); off (`--no-transactions`):
    /// at-least-once.
    pub transactions: bool,
    /// The checkpoints' directory, opened (with `checkpoint_dir`).
    pub checkpoints: Option<Checkpoints>,
    /// Save the model here when the job stops gracefully (idle, SIGTERM or SIGINT).
    pub save_model: Option<ModelWriter>,
}

impl SinkConfig {
    /// Whether the outputs are written in transactions (checkpoints with transactions).
    pub fn transactional(&self) -> bool {
        self.transactions && self.checkpoint_dir.is_some()
    }
}

/// What the run takes.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Timely worker threads of this process: each reads its share of the partitions and
    /// holds a block of the stages.
    pub workers: usize,
    /// The processes of the cluster (one, by default).
    pub cluster: Cluster,
    /// Serve the metrics here (Prometheus text over HTTP).
    pub metrics_addr: Option<String>,
    /// Print the metrics to stderr this often (`None`: never).
    pub report_interval: Option<Duration>,
    /// Start from this model (a warm start; its pending events, if any, wait for their
    /// feedback again).
    pub start_model: Option<Arc<SavedModel>>,
    /// The start model is a checkpoint of this job: continue its stream exactly (its
    /// sequence and epochs, its feedback join, its metrics, and every source partition
    /// from the checkpoint's offsets).
    pub resume: bool,
    /// Set by SIGTERM or SIGINT (or by the caller): stop reading, finish what is in
    /// flight, deliver, commit, save, exit.
    pub stop: Arc<AtomicBool>,
}

impl JobConfig {
    /// Checks the options against each other (each option's own range is its parser's).
    pub fn validate(&self) -> Result<(), JobConfigError> {
        self.topics.validate()?;
        if self.run.workers == 0 {
            return Err(JobConfigError::NoWorkers);
        }
        let m = &self.merge;
        if m.max_read_ahead < 2 * m.block {
            return Err(JobConfigError::ReadAhead {
                read_ahead: m.max_read_ahead,
                block: m.block,
            });
        }
        let s = &self.sink;
        if s.checkpoint_every < Duration::from_millis(10) {
            return Err(JobConfigError::CheckpointEvery(
                s.checkpoint_every.as_secs_f64(),
            ));
        }
        if s.checkpoints_kept < 2 {
            return Err(JobConfigError::CheckpointsKept(s.checkpoints_kept));
        }
        if !s.transactions && s.checkpoint_dir.is_none() {
            return Err(JobConfigError::NoTransactionsWithoutCheckpoints);
        }
        Ok(())
    }

    /// The Kafka client settings.
    pub fn kafka(&self) -> KafkaConfig {
        self.connection.client.clone()
    }

    /// The job's `transactional.id`: the same for every incarnation of one job (its group
    /// and sink), so that a restarted job fences the one before and aborts what it left
    /// open.
    pub fn transactional_id(&self) -> String {
        format!("flowboost-{}-{}", self.connection.group, self.topics.sink)
    }

    /// The input topics: the events', then the feedback's.
    pub fn input_topics(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.topics.source).chain(self.topics.feedback.as_ref())
    }
}

impl JobTopics {
    /// Each topic has one role: a job that wrote to the topic it reads would read its own
    /// output (predictions or dead letters) as events or feedback.
    pub fn validate(&self) -> Result<(), JobConfigError> {
        let roles = [
            ("--source", Some(&self.source)),
            ("--sink", Some(&self.sink)),
            ("--feedback", self.feedback.as_ref()),
            ("--dead-letter", self.dead_letter.as_ref()),
        ];
        for (i, (a, ta)) in roles.iter().enumerate() {
            for (b, tb) in &roles[i + 1..] {
                if let (Some(ta), Some(tb)) = (ta, tb)
                    && ta == tb
                {
                    return Err(JobConfigError::SameTopic {
                        first: a,
                        second: b,
                        topic: ta.to_string(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Options that do not go together.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum JobConfigError {
    /// Two roles name one topic.
    #[error("{first} and {second} are the same topic kafka:{topic}: give each its own topic")]
    SameTopic {
        /// The first role's option.
        first: &'static str,
        /// The second role's option.
        second: &'static str,
        /// The topic.
        topic: String,
    },
    /// No worker thread.
    #[error("--workers must be at least 1")]
    NoWorkers,
    /// The read-ahead is less than twice the merge block.
    #[error("--max-read-ahead {read_ahead}: must be at least twice --merge-block ({block})")]
    ReadAhead {
        /// `--max-read-ahead`.
        read_ahead: i64,
        /// `--merge-block`.
        block: i64,
    },
    /// Checkpoints too often.
    #[error("--checkpoint-every {0}: at least 0.01 seconds")]
    CheckpointEvery(f64),
    /// Too few checkpoints kept.
    #[error("--checkpoints-kept {0}: at least 2 (the newest may not be committed yet)")]
    CheckpointsKept(usize),
    /// `--no-transactions` without checkpoints.
    #[error(
        "--no-transactions needs --checkpoint-dir (without checkpoints the job has no transactions)"
    )]
    NoTransactionsWithoutCheckpoints,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topics() -> JobTopics {
        JobTopics {
            source: "events".into(),
            sink: "predictions".into(),
            feedback: Some("feedback".into()),
            dead_letter: None,
        }
    }

    #[test]
    fn a_topic_has_one_role() {
        assert_eq!(topics().validate(), Ok(()));
        let mut t = topics();
        t.dead_letter = Some("feedback".into());
        assert_eq!(
            t.validate().map_err(|e| e.to_string()),
            Err(
                "--feedback and --dead-letter are the same topic kafka:feedback: give each its own topic"
                    .into()
            )
        );
    }

    #[test]
    fn the_order_block_follows_the_order() {
        let mut m = MergeConfig {
            batch: 256,
            order: MergeOrder::Offsets,
            block: defaults::MERGE_BLOCK,
            block_ms: defaults::MERGE_BLOCK_MS,
            max_wait: Duration::from_millis(defaults::MAX_MERGE_WAIT_MS),
            max_read_ahead: defaults::MAX_READ_AHEAD,
            max_epochs_in_flight: defaults::MAX_EPOCHS_IN_FLIGHT,
            exit_when_idle: None,
        };
        assert_eq!(m.order_block(), 64);
        m.order = MergeOrder::Timestamps;
        assert_eq!(m.order_block(), 100);
    }
}
