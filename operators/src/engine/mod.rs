//! The stage engine, independent of any runtime.
//!
//! Each weak learner lives in a [`Stage`]; a record ([`InFlight`]) visits the stages in
//! order, each one predicting with its state *before* the record, then (when the label is
//! known) learning from it, then adding its vote to the running score vector. The
//! [`Terminal`] picks the expert (the last one, or by Hedge), emits the [`Prediction`], and
//! updates Hedge. [`SequentialRunner`] runs the chain in a plain loop; the timely operators
//! run the very same stages, so both give bit-identical results. Both take a run of
//! records through a block of stages stage by stage ([`process_stage_major`]), which gives
//! what one record at a time through every stage gives, with each stage's state in the
//! cache over the run.
//!
//! The inputs are stamped by the [`Sequencer`] (positions and epochs); feedback that
//! comes after the prediction (delayed labels, top-k clicks, logged clicks) meets its
//! event in the feedback join ([`feedback`]), and a learning pass of the event runs
//! through the chain at the start of a later epoch. An evaluation's [`Oracle`] makes that
//! feedback from the true labels.

mod chain;
pub mod feedback;
mod feedback_inbox;
mod item;
mod label_set;
mod prediction;
mod record;
mod run_error;
mod sequential;
mod sink;
mod snapshot;
mod stage;
mod terminal;
mod wavefront;

pub use chain::Chain;
pub use feedback_inbox::FeedbackInbox;
pub use item::{
    DueFeedback, EpochRule, Input, Item, ItemStream, Oracle, OracleKind, OracleState, Sequencer,
    SourceState,
};
pub use label_set::{LabelSetKind, LabelSetRule};
pub use prediction::{ChainOutput, Emitted, Prediction};
pub use record::{ChainParts, InFlight, SnapshotError};
pub use run_error::{BoxError, RunError, SinkError, SourceError};
pub use sequential::{FeedbackSetup, SequentialRunner};
pub use sink::PredictionSink;
pub use snapshot::{
    ChainSnapshot, CodecError, KeyChainState, Position, SnapshotPolicy, decode, encode,
};
pub use stage::Stage;
pub use terminal::{ExpertSelection, ScoreKind, Terminal};
pub use wavefront::{WAVEFRONT, process_stage_major};
