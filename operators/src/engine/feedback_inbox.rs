use crate::topk::PairFeedback;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Feedback that arrives from outside the evaluation, keyed by event id: a log's clicks
/// for each impression ([`OracleKind::Logged`](super::OracleKind::Logged)).
///
/// The source posts an event's feedback when it reads the event; the
/// [`Oracle`](super::Oracle) takes it when the event's feedback is due (the entry is
/// removed then, so the inbox holds at most the events in the delay window). Clones share
/// the same inbox, so a source and an oracle built on different closures can meet.
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
    use crate::engine::feedback::FeedbackKind;
    use crate::engine::{Input, Oracle, OracleKind, OracleState};
    use crate::topk::logged_pairs;

    fn event(id: u64) -> Arc<Example> {
        Arc::new(Example {
            id,
            features: Features::Dense(vec![0.0]),
            label: Some(Label::set(vec![1])),
        })
    }

    #[test]
    fn the_logged_oracle_gives_the_posted_pairs_when_due_and_the_inbox_forgets_them() {
        let inbox = FeedbackInbox::default();
        let mut oracle =
            Oracle::new(OracleKind::Logged, 1, OracleState::default()).with_inbox(inbox.clone());
        let mut out = Vec::new();
        inbox.post(0, logged_pairs(4, &[(1, 0.25)], 0.0));
        oracle.event(event(0), &mut out);
        // Delay 1: nothing due after the first event.
        assert_eq!(out.len(), 1);
        assert!(matches!(&out[0], Input::Event { wait: true, .. }));
        inbox.post(1, logged_pairs(4, &[(1, 0.5)], 0.0));
        oracle.event(event(1), &mut out);
        // Event 0's feedback is due after event 1: the posted pairs, taken from the inbox.
        assert_eq!(out.len(), 3);
        let Input::Feedback {
            id: 0,
            kind: FeedbackKind::Pairs(pairs),
        } = &out[2]
        else {
            panic!("{:?}", out[2]);
        };
        assert_eq!(pairs.pairs.len(), 3);
        assert!(pairs.pairs.iter().all(|p| p.a == 1 && p.weight == 4.0));
        assert_eq!(inbox.len(), 1);
        // At the end, the rest.
        oracle.due(true, &mut out);
        assert_eq!(out.len(), 4);
        assert!(inbox.is_empty());
    }
}
