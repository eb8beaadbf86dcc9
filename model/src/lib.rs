//! Durable models: a versioned file format for every algorithm, and the River-like
//! [`Model`] API over it.
//!
//! A model file is the magic bytes `FLOWBOOST MODEL\n`, the format version, a JSON
//! [`ModelHeader`] (the algorithm and every option that shapes it, the schema, the stream
//! position; readable with `head`), its CRC-32, then the body: every stage, the terminal,
//! the pending feedback and the progressive metrics, in postcard (a compact, maintained
//! serde format with bit-exact floats), optionally DEFLATE-compressed, and its CRC-32.
//! Files are written atomically (a temporary file, fsync, rename).
//!
//! Loading a model and continuing its stream gives predictions and a final model
//! bit-identical to a run that never stopped, on both engines and for any worker count.
//!
//! This crate is the model layer of flowboost (`flowboost::model` re-exports it): it uses
//! only `flowboost-operators`, no Kafka client, so that `flowboost serve` and the Python
//! package use it without librdkafka.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod api;
mod body;
mod columns;
mod error;
mod file;
mod header;
mod inspect;
mod legacy;
mod plan;
mod saved;
mod schema_map;
mod scorer;
mod start_chains;
mod writer;

pub use api::{DEFAULT_PENDING_TTL, FeedbackOutcome, Model};
pub use body::{FeedbackRun, KeyModel, ModelBody, Progress, StageBytes};
pub use columns::{Columns, ColumnsError, FREE_PREFIX, free_name, is_free_name};
pub use error::{EncodeError, ModelError};
pub use file::{
    MAX_MODEL_FILE_BYTES, check_save_path, read_all, read_bytes, read_header, read_limited,
};
pub use flowboost_operators::data::Feedback;
pub use header::{Compression, FORMAT_VERSION, MAGIC, ModelHeader, SourceOffset};
pub use inspect::{Inspection, inspect, set_heap_probe};
pub use plan::ModelPlan;
pub use saved::{SavedModel, schema_difference};
pub use schema_map::{Misfit, SchemaMap, SchemaMapError};
pub use scorer::Scorer;
pub use start_chains::{StartChains, WorkerChainError, worker_chains};
pub use writer::ModelWriter;
