//! `flowboost serve`: a model answering prediction requests over HTTP/1.1 (axum on tokio),
//! ranking for top-k models with exact exploration propensities (`/v1/rank`),
//! learning from labeled events and feedback by id (`--learn`), and following the model
//! a streaming job rewrites (`--follow`). See `docs/serving.md`.
//!
//! Requests are decoded as the Kafka job decodes its records (the same JSON event format,
//! against the model's schema), and answered with the Kafka job's prediction records.

mod accept;
mod api_error;
mod exploration;
mod follow;
mod metrics;
mod model_slot;
mod rank;
mod request;
mod routes;
mod served_model;
mod server;

pub use api_error::{ApiError, ErrorBody};
pub use exploration::{Exploration, MAX_SOFTMAX_PREFIXES, SOFTMAX_FLOOR, Slate};
pub use follow::{FileStamp, Follower};
pub use metrics::ServeMetrics;
pub use model_slot::ModelSlot;
pub use rank::{RankPolicy, rank};
pub use request::{BodyShape, MAX_BATCH_RECORDS, SplitBody, join_answers, split_body};
pub use routes::{ServeState, router};
pub use served_model::{LearnAnswer, RankScores, ServedModel};
pub use server::{DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT, ServeOptions, run};
