//! flowboost on Kafka: `flowboost run --source kafka:TOPIC --sink kafka:TOPIC ...`.
//!
//! - [`job`]: the job. Every timely worker reads its share of the partitions (manual
//!   assignment, `partition % workers == index`) and sends the raw records to worker 0,
//!   where [`merge::Merger`] puts them in an order given by `(partition, offset)`; worker 0
//!   decodes them (bad records become dead letters), feeds the boosting pipeline (whose
//!   stages are split across the workers), joins delayed feedback by event id, writes the
//!   predictions, and commits offsets once the outputs they cover are acknowledged.
//! - [`metrics`]: the counters, printed and served in the Prometheus text format.
//! - [`job_file`]: `flowboost run --config job.toml`.
//! - [`tools`]: `flowboost kafka produce|read`, the producer and reader of the demo and
//!   benchmark scripts.

pub mod job;
pub mod job_file;
pub mod merge;
pub mod metrics;
pub mod tools;

pub use job::{JobOptions, JobSummary, run_job};
