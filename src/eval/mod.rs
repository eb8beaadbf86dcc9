//! Evaluation protocols and reports.
//!
//! - `prequential`: test-then-train over the whole stream (every part in order).
//! - `holdout`: stream the training part (learning only), then the test part, still
//!   learning; metrics over the test part only (the multi-label ranking paper's protocol).
//! - `last20`: one stream (all parts in order); metrics over its final 20% (the multiclass
//!   paper's protocol).
//!
//! With a shuffle seed each part is shuffled (in memory) with that fixed seed first.
//!
//! With feedback (`--feedback-delay`, or a top-k booster), every event is predicted with
//! its label hidden and learned from when its feedback (the label, or the top-k oracle's
//! clicks) arrives; `--loops K` streams the training part K times (holdout).
//!
//! `replay-clicks` replays a log of clicks (the Open Bandit Dataset, or the click
//! simulator) instead: see [`replay_clicks`], its estimators in [`off_policy`], and
//! [`write_simulated_log`] for `simulate-clicks`.

mod click_events;
mod curve;
mod engine;
mod impression_features;
mod logged_clicks;
pub mod off_policy;
mod protocol;
mod report;
mod scaling;
mod simulated_log;
pub mod stop;

pub use crate::model::Scorer;
pub use click_events::{CLICK_CATEGORIES, ClickEncoder, ClickRecord, click_schema};
pub use curve::{Curve, Series, write_svg};
pub use engine::{Engine, FeedbackOptions, default_pending_ttl, epoch_rule};
pub use impression_features::ImpressionFeatures;
pub use logged_clicks::{
    ClickLog, ReplayReport, ReplaySpec, SIMULATOR_FILE, SimulatorFile, TrueCtr, replay_clicks,
    simulator_beside,
};
pub use off_policy::Estimate;
pub use protocol::{EvalSpec, Feedback, Protocol, evaluate};
pub use report::{EvalReport, GridPoint};
pub use scaling::MinMaxScaling;
pub use simulated_log::{SimulatedLogSummary, write_simulated_log};
