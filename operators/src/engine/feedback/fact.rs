use crate::data::{Example, FeedbackItem};
use crate::engine::Prediction;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::sync::Arc;

/// An event predicted with its label unknown (or hidden), waiting for its feedback.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WaitingEvent {
    /// Its position in the merged sequence.
    pub seq: u64,
    /// The epoch it was predicted in.
    pub epoch: u64,
    /// The event.
    pub example: Arc<Example>,
    /// Its prediction (top-k feedback needs what was shown).
    pub prediction: Prediction,
    /// Which of the job's models predicted it (its learning pass goes to that model).
    pub model: u32,
}

/// One fact of the join's input collection, keyed by event id.
///
/// Facts are ordered (and equal) by kind and sequence position only, so the payloads
/// (examples, predictions, floats) need no order of their own: two facts with the same
/// kind and position are the same fact.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum JoinFact {
    /// An event waiting for its feedback.
    Event(WaitingEvent),
    /// Feedback waiting for its event.
    Feedback(FeedbackItem),
    /// The id joined in `epoch` (for a while, more feedback or events for it are repeats).
    Joined {
        /// The pair's later position.
        seq: u64,
        /// When the pair's members left the join.
        epoch: u64,
    },
    /// The id's event expired unjoined in `epoch` (for a while, its feedback is late).
    Gone {
        /// The event's position.
        seq: u64,
        /// When it expired.
        epoch: u64,
    },
}

impl JoinFact {
    fn key(&self) -> (u8, u64) {
        match self {
            JoinFact::Event(e) => (0, e.seq),
            JoinFact::Feedback(f) => (1, f.seq),
            JoinFact::Joined { seq, .. } => (2, *seq),
            JoinFact::Gone { seq, .. } => (3, *seq),
        }
    }

    /// The fact's position in the merged sequence.
    pub fn seq(&self) -> u64 {
        self.key().1
    }
}

impl PartialEq for JoinFact {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for JoinFact {}
impl PartialOrd for JoinFact {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for JoinFact {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// What the join says about the facts of one id, at one epoch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Outcome {
    /// The event and its feedback met: a learning pass follows.
    Pair(Box<Pairing>),
    /// The first event of the id, waiting for its feedback.
    Waiting(WaitingEvent),
    /// Another event with the id while one is waiting (or the id just joined).
    Duplicate(WaitingEvent),
    /// The first feedback of the id, waiting for its event.
    Held(FeedbackItem),
    /// More feedback for the id (while other feedback waits, or the id just joined).
    Repeated(FeedbackItem),
    /// Feedback for an event that expired unjoined.
    Late(FeedbackItem),
    /// A marker fact, passed through (so the outcomes hold the whole join state).
    Marker(JoinFact),
    /// With the click window: a further click record of an event whose window closed,
    /// merged into its pair's learning pass (counted as repeated).
    Merged(FeedbackItem),
}

/// An event and its feedback, joined.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Pairing {
    /// The event.
    pub event: WaitingEvent,
    /// Its feedback.
    pub feedback: FeedbackItem,
}

impl Pairing {
    /// The position of the later of the two: where the learning pass is ordered.
    pub fn seq(&self) -> u64 {
        self.event.seq.max(self.feedback.seq)
    }

    /// With the click window: whether the event's window closed without any feedback
    /// record (its feedback is then the "no click" made at the close, at the event's own
    /// position, which no record can have).
    pub fn no_click(&self) -> bool {
        self.feedback.seq == self.event.seq
    }
}

impl Outcome {
    fn key(&self) -> (u8, u64) {
        match self {
            Outcome::Pair(p) => (0, p.seq()),
            Outcome::Waiting(e) => (1, e.seq),
            Outcome::Duplicate(e) => (2, e.seq),
            Outcome::Held(f) => (3, f.seq),
            Outcome::Repeated(f) => (4, f.seq),
            Outcome::Late(f) => (5, f.seq),
            Outcome::Marker(m) => (6 + m.key().0, m.seq()),
            Outcome::Merged(f) => (10, f.seq),
        }
    }
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Outcome {}
impl PartialOrd for Outcome {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Outcome {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}
