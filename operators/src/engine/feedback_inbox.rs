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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Example, Features, Label};
    use crate::engine::{FeedbackLoop, FeedbackOptions, Oracle, Prediction};
    use crate::topk::logged_pairs;

    fn event(id: u64) -> Arc<Example> {
        Arc::new(Example {
            id,
            features: Features::Dense(vec![0.0]),
            label: Some(Label::set(vec![1])),
        })
    }

    #[test]
    fn the_loop_joins_the_posted_feedback_and_the_inbox_forgets_it() {
        let inbox = FeedbackInbox::default();
        let options = FeedbackOptions {
            delay: 1,
            capacity: 1,
            ..FeedbackOptions::default()
        };
        let mut fl = FeedbackLoop::new(options, Oracle::Logged, 4).with_inbox(inbox.clone());
        let predicted = |fl: &mut FeedbackLoop, id| {
            fl.on_prediction(&Prediction {
                id,
                ..Prediction::default()
            })
        };
        inbox.post(0, logged_pairs(4, &[(1, 0.25)], 0.0));
        let _ = fl.admit(event(0), 4);
        predicted(&mut fl, 0);
        assert_eq!(fl.next_due(false), None);
        inbox.post(1, logged_pairs(4, &[(1, 0.5)], 0.0));
        let _ = fl.admit(event(1), 4);
        predicted(&mut fl, 1);
        // Event 0 was evicted by event 1 (capacity 1): its feedback is late, and the inbox
        // forgets it anyway.
        assert_eq!(fl.next_due(false), Some(0));
        assert!(fl.pop_learn(4).is_none());
        assert_eq!(inbox.len(), 1);
        assert_eq!(fl.counters().late, 1);
        // Event 1 joins with exactly the posted pairs.
        let rec = fl
            .pop_learn(4)
            .expect("flushed anyway: the due queue pops in order");
        let pairs = rec.pairs.expect("logged pairs");
        assert_eq!(pairs.pairs.len(), 3);
        assert!(pairs.pairs.iter().all(|p| p.a == 1 && p.weight == 2.0));
        assert!(rec.hide_label && !rec.emit);
        assert!(inbox.is_empty());
    }
}
