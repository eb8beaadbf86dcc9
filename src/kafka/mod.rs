//! flowboost on Kafka: `flowboost run --source kafka:TOPIC --sink kafka:TOPIC ...`.
//!
//! - [`job`]: the job, one timely dataflow on every worker of every process: every worker
//!   reads and decodes its share of the partitions ([`source_operator`]); worker 0 merges
//!   them in an order given by the data and stamps them into epochs ([`merge_operator`]
//!   over [`merge_state::MergeState`] and [`merge::Merger`]); the boosting pipeline's
//!   stage blocks run across all workers, and delayed feedback meets its events in the
//!   differential join; worker 0's sink writes the predictions and dead letters and
//!   commits offsets once the outputs they cover are acknowledged ([`sink_operator`] over
//!   [`sink_state::SinkState`] and [`commit_marks::CommitMarks`]); [`control`] stops
//!   every worker together, and sends the merge's [`read_limits`] to the sources.
//!   The merge's and the sink's rules are plain state machines, tested without a broker
//!   or timely; the operators are short adapters (`MergeExt`, `KafkaSinkExt`,
//!   `KafkaSourceExt`). Positions in partitions are [`partition_offset::PartitionOffset`]s.
//! - [`checkpoint`]: checkpoints of the whole state, and the one a restarted job resumes
//!   from.
//! - [`cluster`]: several processes (`--processes`, `--process`, `--hostfile`).
//! - [`metrics`]: the counters, printed and served in the Prometheus text format.
//! - [`job_config`]: the job's configuration, validated once ([`JobConfig`]).
//! - `flowboost run --config job.toml`: [`crate::cli::job_file`].
//! - [`client_args`]: the Kafka client settings of a command: `--brokers`,
//!   `--kafka-config FILE`, `FLOWBOOST_KAFKA_SET_<KEY>`, `--kafka-set`.
//! - [`keys`]: one model per key (`--keys`), the keys spread over the workers (the model
//!   a job starts from is decoded once per process: [`crate::model::StartChains`]).
//! - [`backlog`]: the closed loop (`--follow-group`) of `flowboost kafka produce`
//!   ([`crate::cli::kafka_tools`], the producer and reader of the demo and benchmark
//!   scripts).

pub mod backlog;
pub mod checkpoint;
pub mod client_args;
pub mod cluster;
pub mod commit_marks;
pub mod control;
pub mod job;
pub mod job_config;
pub mod keys;
pub mod lag;
pub mod latency;
pub mod merge;
pub mod merge_operator;
pub mod merge_state;
pub mod metrics;
pub mod partition_offset;
pub mod read_limits;
pub mod record;
pub mod sink_operator;
pub mod sink_state;
pub mod source_operator;
pub mod worker_state;

pub use backlog::FollowGroup;
pub use job::{JobSummary, run_job};
pub use job_config::JobConfig;
pub use keys::ModelKeys;
