use crate::topk::PairFeedback;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Feedback that arrives from outside the evaluation, keyed by event id: a log's clicks
/// for each impression ([`Oracle::Logged`](super::Oracle::Logged)).
///
/// The source posts an event's feedback when it reads the event; the
/// [`FeedbackLoop`](super::FeedbackLoop) takes it when the event's feedback is due (the
/// entry is removed then, joined or not, so the inbox holds at most the events in the delay
/// window). Clones share the same inbox, so a source and a loop built on different closures
/// can meet.
#[derive(Clone, Debug, Default)]
pub struct FeedbackInbox(Arc<Mutex<HashMap<u64, Arc<PairFeedback>>>>);

impl FeedbackInbox {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<PairFeedback>>> {
        // A panic elsewhere cannot leave the map half-updated: use it as it is.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Posts the feedback of event `id` (replacing any earlier one).
    pub fn post(&self, id: u64, feedback: PairFeedback) {
        self.lock().insert(id, Arc::new(feedback));
    }

    /// Takes the feedback of event `id`, if posted.
    pub fn take(&self, id: u64) -> Option<Arc<PairFeedback>> {
        self.lock().remove(&id)
    }

    /// The number of events whose feedback waits.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no feedback waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
