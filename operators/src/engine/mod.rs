//! The stage engine, independent of any runtime.
//!
//! Each weak learner lives in a [`Stage`]; a record ([`InFlight`]) visits the stages in
//! order, each one predicting with its state *before* the record, then (when the label is
//! known) learning from it, then adding its vote to the running score vector. The
//! [`Terminal`] picks the expert (the last one, or by Hedge), emits the [`Prediction`], and
//! updates Hedge. [`SequentialRunner`] runs the chain in a plain loop; the timely operators
//! run the very same stages, so both give bit-identical results.
//!
//! Feedback that comes after the prediction (delayed labels, top-k clicks) goes through a
//! [`FeedbackLoop`]: the event is predicted with its label hidden and kept in a bounded
//! [`PendingEvents`] cache; when its feedback arrives, a learning pass of the same event
//! runs through the chain at that position of the record sequence.

mod chain;
mod feedback_inbox;
mod feedback_loop;
mod hedge;
mod label_set;
mod pending;
mod prediction;
mod record;
mod sequential;
mod sink;
mod snapshot;
mod stage;
mod terminal;

pub use chain::Chain;
pub use feedback_inbox::FeedbackInbox;
pub use feedback_loop::{FeedbackLoop, FeedbackOptions, Oracle};
pub use hedge::Hedge;
pub use label_set::{LabelSetKind, LabelSetRule};
pub use pending::{FeedbackCounters, Miss, PendingEvent, PendingEvents};
pub use prediction::Prediction;
pub use record::InFlight;
pub use sequential::SequentialRunner;
pub use sink::PredictionSink;
pub use snapshot::{
    ChainSnapshot, JoinBoard, Position, SnapshotBoard, SnapshotPolicy, decode, encode,
};
pub use stage::Stage;
pub use terminal::{ExpertSelection, ScoreKind, Terminal};
