use super::Label;
use crate::topk::PairFeedback;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Feedback for an event predicted earlier: what a feedback record says, wherever it
/// comes from (a Kafka feedback topic, flowboost's `Model::learn_feedback`, an evaluation's
/// oracle) and wherever it goes (the feedback join, its learning pass).
///
/// Its serialized form (postcard, in model files and checkpoints) is the variant's index
/// and its payload: the variants keep their order.
///
/// ```
/// use flowboost_operators::data::{Feedback, Label};
///
/// // A delayed label, and clicks on the labels shown for an event (top-k boosters).
/// let label = Feedback::Label(Label::Class(1));
/// let clicks = Feedback::Clicks(vec![2, 5]);
/// assert_ne!(label, clicks);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Feedback {
    /// Its label (a delayed label).
    Label(Label),
    /// The labels clicked (or found relevant) among those shown (top-k boosters); the
    /// join makes the weighted pairs from the event's prediction.
    Clicks(Vec<u32>),
    /// Pairs made elsewhere (a log's clicks with their propensities).
    Pairs(Arc<PairFeedback>),
    /// Logged clicks (`"clicks"` with `"propensities"`): each clicked item with the
    /// logging policy's propensity of showing it where it was clicked; learned as pairs
    /// weighted by the propensities ([`logged_pairs`](crate::topk::logged_pairs)).
    Logged(Vec<(u32, f64)>),
    /// With the feedback join's click window (`JoinConfig::window`): the records of an event gathered in its window, in sequence order, learned together
    /// at its close (none: "no shown item clicked"). The join makes it; a record never
    /// carries it.
    Window(Vec<FeedbackItem>),
}

/// A feedback record, in the merged sequence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeedbackItem {
    /// Its position in the merged sequence.
    pub seq: u64,
    /// The epoch it arrived in.
    pub epoch: u64,
    /// The event it is for.
    pub id: u64,
    /// What it says.
    pub kind: Feedback,
}
