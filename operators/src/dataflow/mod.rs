//! The timely dataflow side: the same stages as the sequential engine, as operators.
//!
//! - [`StageBlockExt::stage_block`]: a stateful operator holding a contiguous block of stages;
//!   it stashes records per timestamp and, once the frontier has passed a timestamp,
//!   processes its records in sequence order through its stages.
//! - [`TerminalExt::terminal`]: the terminal operator (expert choice, Hedge, prediction).
//! - [`pipeline`]: chains `N` stages as `W` blocks, block `b` on worker `b` (routed there by an
//!   exchange pact), and the terminal on the last worker (its outputs to worker 0).
//! - [`run_dataflow`]: drives a pipeline from a source of examples on worker 0 and hands the
//!   predictions, in sequence order, to a sink.
//!
//! Every worker builds the same graph; with `W` workers the predictions equal those of the
//! sequential runner bit for bit.

mod feedback_join;
pub(crate) mod ordered_stash;
mod pipeline;
mod runner;
mod sink_parts;
mod stage_operator;
mod terminal_operator;

pub use feedback_join::{CountUpdate, FeedbackJoinExt, JoinPart, JoinStreams};
pub use pipeline::{JoinOutputs, PipelineStreams, block_range, pipeline};
pub use runner::{DataflowOptions, run_dataflow};
pub use sink_parts::{CountsTracker, SinkSideInputs, SnapshotAssembler, empty};
pub use stage_operator::{StageBlock, StageBlockExt};
pub use terminal_operator::TerminalExt;
