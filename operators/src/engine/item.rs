use crate::data::{Example, Feedback};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;

/// An input of the merged sequence, before it is stamped.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Input {
    /// An event. With `wait`: predicted with no label seen (its label, if it has one, is
    /// held back), and kept in the feedback join, when the run has one, until its
    /// feedback comes. Without: predicted, then learned from at once if it has a label;
    /// an event without a label then learns nothing and waits for nothing (no feedback
    /// can come for it, as for the unlabeled events an evaluation's oracle gives).
    Event {
        /// The event.
        example: Arc<Example>,
        /// Whether it waits in the feedback join for its feedback (sources of labeled
        /// and unlabeled records, such as Kafka, set it for the unlabeled ones; an
        /// evaluation's oracle for the events whose label it gives later).
        wait: bool,
        /// Which of the job's models it belongs to (the index of its key with one model
        /// per key; 0 otherwise).
        model: u32,
    },
    /// Feedback for an event.
    Feedback {
        /// The event.
        id: u64,
        /// What it says.
        kind: Feedback,
    },
    /// A record that holds its place in the sequence and does nothing else: an event of a
    /// key that no model of the job serves (dead-lettered), so that each key's model sees
    /// the same positions and epochs whatever keys the job serves.
    Skipped,
    /// A snapshot of the run is taken after this point (the epoch ends here), with the
    /// source's state at that point.
    Snapshot(Box<SourceState>),
}

/// A stamped input: its position in the merged sequence and its epoch.
#[derive(Clone, Debug)]
pub struct Item {
    /// The position (0, 1, 2, ...; a snapshot marker takes the position of the next).
    pub seq: u64,
    /// The epoch (the timestamp of the dataflow).
    pub epoch: u64,
    /// The input.
    pub input: Input,
}

/// When an epoch ends: after `size` inputs, and (for an evaluation's exact positions)
/// after every feedback record, so that its learning pass comes right after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpochRule {
    /// Inputs per epoch (at least 1).
    pub size: usize,
    /// Whether a feedback record ends its epoch.
    pub feedback_closes: bool,
}

impl Default for EpochRule {
    fn default() -> Self {
        EpochRule {
            size: 256,
            feedback_closes: false,
        }
    }
}

/// Where a source stands: what a resumed run continues from (besides the model).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SourceState {
    /// The next position.
    pub seq: u64,
    /// The current epoch (the next input's).
    pub epoch: u64,
    /// Inputs in the current epoch.
    pub in_epoch: usize,
    /// Events stamped.
    pub events: u64,
    /// An evaluation's oracle: the feedback not yet given.
    pub oracle: Option<OracleState>,
}

/// The one place that assigns positions and epochs to the merged sequence.
#[derive(Clone, Debug)]
pub struct Sequencer {
    rule: EpochRule,
    state: SourceState,
}

impl Sequencer {
    /// A sequencer from the start (or from a snapshot's state).
    pub fn new(rule: EpochRule, state: SourceState) -> Self {
        Sequencer { rule, state }
    }

    /// Stamps the next input; ends the epoch after it when the rule says so.
    pub fn stamp(&mut self, input: Input) -> Item {
        let s = &mut self.state;
        let item = Item {
            seq: s.seq,
            epoch: s.epoch,
            input,
        };
        match &item.input {
            Input::Snapshot(_) => {
                s.epoch += 1;
                s.in_epoch = 0;
                return item;
            }
            Input::Event { .. } => s.events += 1,
            Input::Feedback { .. } | Input::Skipped => {}
        }
        s.seq += 1;
        s.in_epoch += 1;
        let feedback = matches!(item.input, Input::Feedback { .. });
        if s.in_epoch >= self.rule.size.max(1) || (feedback && self.rule.feedback_closes) {
            self.close();
        }
        item
    }

    /// A snapshot marker: it ends the current epoch (even an empty one) and carries the
    /// state the next epoch starts from.
    pub fn snapshot(&mut self, oracle: Option<OracleState>) -> Item {
        let epoch = self.state.epoch;
        self.state.epoch += 1;
        self.state.in_epoch = 0;
        Item {
            seq: self.state.seq,
            epoch,
            input: Input::Snapshot(Box::new(self.state(oracle))),
        }
    }

    /// A checkpoint marker at the end of epoch `closed`, the epoch that just ended (call it
    /// right after the epoch closed, before any input of the next): unlike
    /// [`snapshot`](Self::snapshot) it takes no epoch of its own, so the epochs, and with
    /// them everything that counts in epochs (the join's time-to-live, the feedback loop's
    /// lag), are those of a run without the marker. It carries the state the next epoch
    /// starts from. `None` if an input was stamped since `closed` ended.
    pub fn checkpoint(&self, closed: u64) -> Option<Item> {
        (self.state.in_epoch == 0 && self.state.epoch == closed + 1).then(|| Item {
            seq: self.state.seq,
            epoch: closed,
            input: Input::Snapshot(Box::new(self.state(None))),
        })
    }

    /// Ends the current epoch (if anything is in it), then lets `epochs` empty epochs pass:
    /// what the dataflow has due in them (learning passes delayed by the feedback loop)
    /// happens before anything stamped next.
    pub fn skip(&mut self, epochs: u64) {
        self.close();
        self.state.epoch += epochs;
    }

    /// Ends the current epoch (if anything is in it).
    pub fn close(&mut self) {
        if self.state.in_epoch > 0 {
            self.state.in_epoch = 0;
            self.state.epoch += 1;
        }
    }

    /// The current epoch (the next input's).
    pub fn epoch(&self) -> u64 {
        self.state.epoch
    }

    /// Inputs in the current epoch.
    pub fn in_epoch(&self) -> usize {
        self.state.in_epoch
    }

    /// Events stamped so far.
    pub fn events(&self) -> u64 {
        self.state.events
    }

    /// The state (with an oracle's, given by the caller).
    pub fn state(&self, oracle: Option<OracleState>) -> SourceState {
        SourceState {
            oracle,
            ..self.state.clone()
        }
    }
}

/// How an evaluation turns an event's true label into the feedback a user would give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OracleKind {
    /// The whole label, delayed.
    Labels,
    /// The relevance of the shown top-k labels only: the feedback is the relevant labels,
    /// and the join keeps those that were shown.
    TopK,
    /// Feedback logged elsewhere (a replay of logged clicks): the pairs posted to the
    /// [`FeedbackInbox`](super::FeedbackInbox) for the event.
    Logged,
}

/// The feedback an oracle still owes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OracleState {
    /// Events given so far.
    pub events: u64,
    /// (due once this many events were given, event id, its feedback).
    pub due: VecDeque<DueFeedback>,
}

/// Feedback an oracle gives once enough events went by.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DueFeedback {
    /// Given after this many events.
    pub after: u64,
    /// The event.
    pub id: u64,
    /// What it says (none for logged feedback, taken from the inbox when due).
    pub kind: Option<Feedback>,
}

/// An evaluation's oracle: every labeled event is given with its label held back, and its
/// feedback `delay` events later (0: right after it).
#[derive(Clone, Debug)]
pub struct Oracle {
    kind: OracleKind,
    delay: u64,
    state: OracleState,
    inbox: Option<super::FeedbackInbox>,
}

impl Oracle {
    /// An oracle of `kind` with `delay` (and its state, when resuming).
    pub fn new(kind: OracleKind, delay: u64, state: OracleState) -> Self {
        Oracle {
            kind,
            delay,
            state,
            inbox: None,
        }
    }

    /// The inbox logged feedback is taken from.
    pub fn with_inbox(mut self, inbox: super::FeedbackInbox) -> Self {
        self.inbox = Some(inbox);
        self
    }

    /// The state.
    pub fn state(&self) -> &OracleState {
        &self.state
    }

    /// The inputs an event makes: the event (its label held back when feedback will come),
    /// then the feedback due by then.
    pub fn event(&mut self, example: Arc<Example>, out: &mut Vec<Input>) {
        let n = self.state.events;
        self.state.events += 1;
        let feedback = example.label.as_ref().map(|label| match self.kind {
            OracleKind::Labels => Some(Feedback::Label(label.clone())),
            OracleKind::TopK => Some(Feedback::Clicks(label.relevant().to_vec())),
            OracleKind::Logged => None,
        });
        let wait = feedback.is_some();
        let id = example.id;
        out.push(Input::Event {
            example,
            wait,
            model: 0,
        });
        if let Some(kind) = feedback {
            self.state.due.push_back(DueFeedback {
                after: n + self.delay + 1,
                id,
                kind,
            });
        }
        self.due(false, out);
    }

    /// The feedback due now (all of it at the end of the stream, with `flush`).
    pub fn due(&mut self, flush: bool, out: &mut Vec<Input>) {
        while let Some(d) = self.state.due.front() {
            if !flush && d.after > self.state.events {
                break;
            }
            let d = self.state.due.pop_front().expect("front");
            let kind = match d.kind {
                Some(k) => Some(k),
                None => self
                    .inbox
                    .as_ref()
                    .and_then(|i| i.take(d.id))
                    .map(Feedback::Pairs),
            };
            if let Some(kind) = kind {
                out.push(Input::Feedback { id: d.id, kind });
            }
        }
    }
}

/// A stream of examples as a stamped sequence: each example an event (through an
/// evaluation's oracle, with its feedback later, when there is one), stamped by a
/// [`Sequencer`], with snapshot markers after every `every` events (once the feedback due
/// by then is in) and at the end. An error of the examples (whatever their type) comes
/// through as it is, and ends the stream.
pub struct ItemStream<E> {
    examples: E,
    oracle: Option<Oracle>,
    sequencer: Sequencer,
    snapshots: super::SnapshotPolicy,
    queue: VecDeque<Item>,
    done: bool,
    /// Set by the stream when it yields the first example of a frozen test part (see
    /// [`with_frozen_part`](Self::with_frozen_part)); `None` without one.
    frozen_part: Option<Rc<Cell<bool>>>,
}

impl<E: Iterator<Item = Result<Example, X>>, X> ItemStream<E> {
    /// The stamped stream of `examples`.
    pub fn new(
        examples: E,
        oracle: Option<Oracle>,
        sequencer: Sequencer,
        snapshots: super::SnapshotPolicy,
    ) -> Self {
        ItemStream {
            examples,
            oracle,
            sequencer,
            snapshots,
            queue: VecDeque::new(),
            done: false,
            frozen_part: None,
        }
    }

    /// A stream whose examples end with a frozen test part (unlabeled events to predict,
    /// not to learn from), which begins when the stream sets `started` (as it yields the
    /// part's first example): the oracle gives the feedback still due for the events
    /// before it first, as at the end of a stream, so that the part is predicted by the
    /// model trained on everything before it, and nothing is learned during it.
    pub fn with_frozen_part(mut self, started: Rc<Cell<bool>>) -> Self {
        self.frozen_part = Some(started);
        self
    }

    /// The examples as events, `epoch_size` per epoch, no oracle, no snapshots.
    pub fn plain(examples: E, epoch_size: usize) -> Self {
        let rule = EpochRule {
            size: epoch_size.max(1),
            feedback_closes: false,
        };
        ItemStream::new(
            examples,
            None,
            Sequencer::new(rule, SourceState::default()),
            super::SnapshotPolicy::default(),
        )
    }

    fn oracle_state(&self) -> Option<OracleState> {
        self.oracle.as_ref().map(|o| o.state().clone())
    }
}

impl<E: Iterator<Item = Result<Example, X>>, X> Iterator for ItemStream<E> {
    type Item = Result<Item, X>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(Ok(item));
            }
            if self.done {
                return None;
            }
            let mut inputs = Vec::new();
            match self.examples.next() {
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Some(Ok(example)) => {
                    if self.frozen_part.as_ref().is_some_and(|f| f.get()) {
                        // The training part is over: its feedback still due comes first.
                        self.frozen_part = None;
                        if let Some(o) = self.oracle.as_mut() {
                            o.due(true, &mut inputs);
                        }
                    }
                    let example = Arc::new(example);
                    match self.oracle.as_mut() {
                        Some(o) => o.event(example, &mut inputs),
                        // Without an oracle, feedback may come from elsewhere: an
                        // unlabeled event waits for it.
                        None => inputs.push(Input::Event {
                            wait: example.label.is_none(),
                            example,
                            model: 0,
                        }),
                    }
                    for input in inputs {
                        let item = self.sequencer.stamp(input);
                        self.queue.push_back(item);
                    }
                    if self.snapshots.due(self.sequencer.events()) {
                        let marker = self.sequencer.snapshot(self.oracle_state());
                        self.queue.push_back(marker);
                    }
                }
                None => {
                    self.done = true;
                    if let Some(o) = self.oracle.as_mut() {
                        o.due(true, &mut inputs);
                    }
                    for input in inputs {
                        let item = self.sequencer.stamp(input);
                        self.queue.push_back(item);
                    }
                    if self.snapshots.at_end {
                        let marker = self.sequencer.snapshot(self.oracle_state());
                        self.queue.push_back(marker);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{EpochRule, Input, Sequencer, SourceState};

    /// Skipping closes a partial epoch first, then lets empty epochs pass; positions do not
    /// move.
    #[test]
    fn skip_closes_the_epoch_then_lets_empty_ones_pass() {
        let rule = EpochRule {
            size: 2,
            feedback_closes: false,
        };
        let mut s = Sequencer::new(rule, SourceState::default());
        let epochs: Vec<u64> = (0..3).map(|_| s.stamp(Input::Skipped).epoch).collect();
        assert_eq!(epochs, [0, 0, 1]);
        s.skip(3);
        assert_eq!((s.epoch(), s.in_epoch()), (5, 0));
        let next = s.stamp(Input::Skipped);
        assert_eq!((next.seq, next.epoch), (3, 5));
        // On a closed epoch, only the empty ones pass.
        s.close();
        s.skip(0);
        assert_eq!(s.epoch(), 6);
    }
}
