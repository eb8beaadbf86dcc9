//! The feedback join: events predicted before their feedback is known (delayed labels,
//! clicks on shown labels, logged clicks) meet that feedback by event id, and a learning
//! pass of the event re-enters the stage chain.
//!
//! The semantics are per epoch (the coarse timestamps of the merged sequence): an event or
//! a feedback record enters the join in its epoch and, with a time-to-live, leaves it
//! `ttl` epochs later; in every epoch, [`classify`] says for each id what its facts are (a
//! pair, a waiting event, held feedback, a duplicate, a repeat, late feedback); a pair
//! leaves the join in the next epoch and its learning pass enters the chain `lag` epochs
//! after it formed, first in its epoch (by position). The dataflow runs this on
//! differential-dataflow, sharded by event id
//! ([`FeedbackJoinExt`](crate::dataflow::FeedbackJoinExt)); [`JoinReference`]
//! runs it in memory for the sequential runner; both share every rule and agree bit for
//! bit.

mod fact;
mod logic;
mod reference;
mod state;

pub use fact::{JoinFact, Outcome, Pairing, WaitingEvent};
pub use logic::{
    COUNT_NAMES, FactUpdate, JoinConfig, JoinCounts, JoinReport, admit_event, admit_feedback,
    classify, count_changes, learning_pass, pair_updates, timers,
};
pub use reference::JoinReference;
pub use state::{FormedPair, JoinState};
