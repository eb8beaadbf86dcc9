use super::FeedbackInbox;
use super::pending::{FeedbackCounters, PendingEvents};
use super::{InFlight, Prediction};
use crate::data::Example;
use crate::topk::{TopKConfig, observe};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;

/// How an evaluation turns an event's true label into the feedback a user would give.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Oracle {
    /// The whole label, delayed.
    Labels,
    /// The relevance of the shown top-k labels only (the prediction's `shown`).
    TopK(TopKConfig),
    /// Feedback logged elsewhere (a replay of logged clicks): the pairs posted to the
    /// loop's [`FeedbackInbox`] for the event (see [`FeedbackLoop::with_inbox`]); the
    /// example's label (the clicked items) only schedules the feedback.
    Logged,
}

/// The delay and the bounds of the pending-event cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackOptions {
    /// Feedback for an event arrives after the prediction pass of the event `delay`
    /// events later (0: right after its own prediction).
    pub delay: u64,
    /// At most this many events wait for feedback (the oldest is evicted first).
    pub capacity: usize,
    /// An event waits at most this many events for its feedback.
    pub ttl: u64,
}

impl Default for FeedbackOptions {
    /// No delay, 100,000 pending events, no time-to-live to speak of.
    fn default() -> Self {
        FeedbackOptions {
            delay: 0,
            capacity: 100_000,
            ttl: u64::MAX / 2,
        }
    }
}

/// Feedback after predictions, at the head of the chain: every event is first predicted
/// with its label hidden, then, `delay` events later, its feedback (from the [`Oracle`])
/// joins the pending event and a learning pass ([`InFlight::learn`]) follows at that
/// exact position of the record sequence, so both engines learn in the same order.
///
/// Both engines drive it the same way: [`admit`](Self::admit) each event and send the
/// record it returns; pass every emitted prediction to
/// [`on_prediction`](Self::on_prediction); then, while [`next_due`](Self::next_due) names
/// an event, wait until [`ready`](Self::ready) (the dataflow engine steps its workers) and
/// send the record of [`pop_learn`](Self::pop_learn). At the end of the stream, the same
/// with `flush`.
///
/// The loop is part of a model's state (its pending events, what is due when); a
/// [`FeedbackInbox`] is not: it belongs to the source that posts into it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FeedbackLoop {
    options: FeedbackOptions,
    oracle: Oracle,
    labels: usize,
    pending: PendingEvents,
    due: VecDeque<DueFeedback>,
    events: u64,
    #[serde(skip)]
    inbox: Option<FeedbackInbox>,
}

/// An event whose feedback is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct DueFeedback {
    /// Due once this many events have been admitted.
    at: u64,
    /// The event.
    id: u64,
}

impl FeedbackLoop {
    /// A loop for streams of `labels` labels.
    pub fn new(options: FeedbackOptions, oracle: Oracle, labels: usize) -> Self {
        FeedbackLoop {
            options,
            oracle,
            labels,
            pending: PendingEvents::new(options.capacity, options.ttl),
            due: VecDeque::new(),
            events: 0,
            inbox: None,
        }
    }

    /// The inbox that [`Oracle::Logged`] takes each event's feedback from.
    pub fn with_inbox(mut self, inbox: FeedbackInbox) -> Self {
        self.inbox = Some(inbox);
        self
    }

    /// The options the loop was built with.
    pub fn options(&self) -> FeedbackOptions {
        self.options
    }

    /// The oracle.
    pub fn oracle(&self) -> Oracle {
        self.oracle
    }

    /// The number of events waiting for their feedback.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The join's counters.
    pub fn counters(&self) -> FeedbackCounters {
        self.pending.counters()
    }

    /// A new event: remembers it and returns its prediction pass (label hidden; the
    /// runner sets `seq`). A labeled event's feedback is scheduled `delay` events later.
    pub fn admit(&mut self, example: Arc<Example>, score_dim: usize) -> InFlight {
        self.pending.admit(example.clone());
        if example.label.is_some() {
            self.due.push_back(DueFeedback {
                at: self.events + self.options.delay,
                id: example.id,
            });
        }
        self.events += 1;
        InFlight::predict_only(0, example, score_dim)
    }

    /// Records an emitted prediction (top-k feedback needs the shown labels).
    pub fn on_prediction(&mut self, prediction: &Prediction) {
        self.pending.predicted(prediction);
    }

    /// The event whose feedback is due now (all of them with `flush`).
    pub fn next_due(&self, flush: bool) -> Option<u64> {
        match self.due.front() {
            Some(d) if flush || d.at < self.events => Some(d.id),
            _ => None,
        }
    }

    /// Whether the due event `id` can be joined now: its prediction is known, or it is no
    /// longer pending (the join then counts a miss).
    pub fn ready(&self, id: u64) -> bool {
        self.pending.get(id).is_none_or(|e| e.prediction.is_some())
    }

    /// Joins the first due event with its feedback: its learning pass (the runner sets
    /// `seq`), or `None` when the event was dropped (counted).
    pub fn pop_learn(&mut self, score_dim: usize) -> Option<InFlight> {
        let id = self.due.pop_front()?.id;
        // Taken first, so the inbox forgets it even when the event was dropped.
        let logged = match self.oracle {
            Oracle::Logged => self.inbox.as_ref().and_then(|i| i.take(id)),
            _ => None,
        };
        let event = self.pending.join(id).ok()?;
        let label = event.example.label.as_ref()?;
        match self.oracle {
            Oracle::Labels => Some(InFlight::learn(0, event.example, None, score_dim)),
            Oracle::TopK(config) => {
                let p = event.prediction.as_ref()?;
                let fb = observe(&config, self.labels, &p.top, &p.shown, |l| {
                    label.contains(l)
                });
                Some(InFlight::learn(
                    0,
                    event.example.clone(),
                    Some(Arc::new(fb)),
                    score_dim,
                ))
            }
            Oracle::Logged => Some(InFlight::learn(0, event.example, Some(logged?), score_dim)),
        }
    }
}
