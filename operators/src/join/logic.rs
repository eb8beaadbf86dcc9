use super::fact::{FeedbackItem, FeedbackKind, JoinFact, Outcome, Pairing, WaitingEvent};
use crate::engine::InFlight;
use crate::topk::{TopKConfig, observe};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How the join keeps and pairs its facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinConfig {
    /// An event or a feedback record waits at most this many epochs (`None`: until the
    /// end). After it expires, its id is remembered for as long again (its feedback is
    /// then late).
    pub ttl: Option<u64>,
    /// A learning pass enters the chain this many epochs after its pair formed (at least
    /// 1): the loop's delay, what lets the stage blocks work on later epochs meanwhile.
    pub lag: u64,
}

impl Default for JoinConfig {
    fn default() -> Self {
        JoinConfig { ttl: None, lag: 1 }
    }
}

/// One timed change of the join's input collection: a fact of an id, at an epoch, with a
/// multiplicity change.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FactUpdate {
    /// The event id.
    pub id: u64,
    /// The fact.
    pub fact: JoinFact,
    /// When it applies.
    pub epoch: u64,
    /// +1 or -1.
    pub diff: i64,
}

fn at(id: u64, fact: JoinFact, epoch: u64, diff: i64) -> FactUpdate {
    FactUpdate {
        id,
        fact,
        epoch,
        diff,
    }
}

/// The updates a new event makes in the join: it is in from its epoch; with a
/// time-to-live, out `ttl` epochs later, when a `Gone` marker replaces it for `ttl` more.
pub fn admit_event(event: WaitingEvent, config: &JoinConfig) -> Vec<FactUpdate> {
    let id = event.example.id;
    let t = event.epoch;
    let seq = event.seq;
    let mut out = vec![at(id, JoinFact::Event(event.clone()), t, 1)];
    if let Some(ttl) = config.ttl {
        let gone = JoinFact::Gone {
            seq,
            epoch: t + ttl,
        };
        out.push(at(id, JoinFact::Event(event), t + ttl, -1));
        out.push(at(id, gone.clone(), t + ttl, 1));
        out.push(at(id, gone, t + 2 * ttl, -1));
    }
    out
}

/// The updates a fact still present has scheduled (those after its epoch of arrival): what
/// a join restored from a snapshot schedules again. A fact of a pair has none left (the
/// pair's removal cancelled them).
pub fn timers(id: u64, fact: &JoinFact, config: &JoinConfig) -> Vec<FactUpdate> {
    let Some(ttl) = config.ttl else {
        return Vec::new();
    };
    match fact {
        JoinFact::Event(e) => {
            let gone = JoinFact::Gone {
                seq: e.seq,
                epoch: e.epoch + ttl,
            };
            vec![
                at(id, fact.clone(), e.epoch + ttl, -1),
                at(id, gone.clone(), e.epoch + ttl, 1),
                at(id, gone, e.epoch + 2 * ttl, -1),
            ]
        }
        JoinFact::Feedback(f) => vec![at(id, fact.clone(), f.epoch + ttl, -1)],
        JoinFact::Joined { epoch, .. } | JoinFact::Gone { epoch, .. } => {
            vec![at(id, fact.clone(), epoch + ttl, -1)]
        }
    }
}

/// The updates a new feedback record makes: in from its epoch, out `ttl` epochs later.
pub fn admit_feedback(feedback: FeedbackItem, config: &JoinConfig) -> Vec<FactUpdate> {
    let id = feedback.id;
    let t = feedback.epoch;
    let mut out = vec![at(id, JoinFact::Feedback(feedback.clone()), t, 1)];
    if let Some(ttl) = config.ttl {
        out.push(at(id, JoinFact::Feedback(feedback), t + ttl, -1));
    }
    out
}

/// The updates that a pair formed in epoch `t` makes, from epoch `t + 1`: both members
/// leave (their scheduled expiries are cancelled) and a `Joined` marker stays for `ttl`
/// epochs (while it stays, more feedback or events for the id are repeats).
pub fn pair_updates(pair: &Pairing, t: u64, config: &JoinConfig) -> Vec<FactUpdate> {
    let id = pair.event.example.id;
    let next = t + 1;
    let e = &pair.event;
    let f = &pair.feedback;
    let mut out = vec![
        at(id, JoinFact::Event(e.clone()), next, -1),
        at(id, JoinFact::Feedback(f.clone()), next, -1),
    ];
    let joined = JoinFact::Joined {
        seq: pair.seq(),
        epoch: next,
    };
    out.push(at(id, joined.clone(), next, 1));
    if let Some(ttl) = config.ttl {
        let gone = JoinFact::Gone {
            seq: e.seq,
            epoch: e.epoch + ttl,
        };
        out.push(at(id, JoinFact::Event(e.clone()), e.epoch + ttl, 1));
        out.push(at(id, gone.clone(), e.epoch + ttl, -1));
        out.push(at(id, gone, e.epoch + 2 * ttl, 1));
        out.push(at(id, JoinFact::Feedback(f.clone()), f.epoch + ttl, 1));
        out.push(at(id, joined, next + ttl, -1));
    }
    out
}

/// The join of one id: what its facts (present now, in their order) say.
///
/// - The id joined recently (a `Joined` marker): every event is a duplicate and every
///   feedback a repeat.
/// - Else an event and a feedback record: the first of each pair (a learning pass
///   follows); the others are duplicates and repeats.
/// - Else the first event waits and the others are duplicates; feedback for an event that
///   expired is late; else the first feedback waits (held) and the others are repeats.
///
/// Markers are passed through, so the outcomes are the whole state of the join.
pub fn classify(facts: &[&JoinFact], out: &mut Vec<Outcome>) {
    let mut events: Vec<&WaitingEvent> = Vec::new();
    let mut feedback: Vec<&FeedbackItem> = Vec::new();
    let mut joined = false;
    let mut gone = false;
    for f in facts {
        match f {
            JoinFact::Event(e) => events.push(e),
            JoinFact::Feedback(fb) => feedback.push(fb),
            JoinFact::Joined { .. } => {
                joined = true;
                out.push(Outcome::Marker((*f).clone()));
            }
            JoinFact::Gone { .. } => {
                gone = true;
                out.push(Outcome::Marker((*f).clone()));
            }
        }
    }
    // Facts come sorted by kind, then position: each list is in sequence order.
    if joined {
        out.extend(events.into_iter().map(|e| Outcome::Duplicate(e.clone())));
        out.extend(feedback.into_iter().map(|f| Outcome::Repeated(f.clone())));
        return;
    }
    let mut events = events.into_iter();
    let mut feedback = feedback.into_iter();
    match (events.next(), feedback.next()) {
        (Some(e), Some(f)) => out.push(Outcome::Pair(Box::new(Pairing {
            event: e.clone(),
            feedback: f.clone(),
        }))),
        (Some(e), None) => out.push(Outcome::Waiting(e.clone())),
        (None, Some(f)) if gone => out.push(Outcome::Late(f.clone())),
        (None, Some(f)) => out.push(Outcome::Held(f.clone())),
        (None, None) => {}
    }
    out.extend(events.map(|e| Outcome::Duplicate(e.clone())));
    out.extend(feedback.map(|f| {
        if gone {
            Outcome::Late(f.clone())
        } else {
            Outcome::Repeated(f.clone())
        }
    }));
}

/// The join's counts. The running totals count facts when they arrive; the gauges are
/// what the join holds now. Every event admitted is joined, waiting, or expired; every
/// feedback record is joined, held, or unmatched (expired): `expired` and `unmatched`
/// follow from that identity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinCounts {
    /// Events admitted (predicted, waiting for feedback).
    pub admitted: u64,
    /// Feedback records received.
    pub feedback: u64,
    /// Pairs joined (each a learning pass).
    pub joined: u64,
    /// Events that arrived while another with their id waited (or just after it joined).
    pub duplicate: u64,
    /// Feedback records that arrived while another for their id waited, or after it
    /// joined.
    pub repeated: u64,
    /// Feedback records that arrived after their event expired.
    pub late: u64,
    /// Events waiting now.
    pub waiting: u64,
    /// Feedback records waiting now.
    pub held: u64,
}

impl JoinCounts {
    /// Events that expired without their feedback.
    pub fn expired(&self) -> u64 {
        self.admitted.saturating_sub(self.joined + self.waiting)
    }

    /// Feedback records that expired without their event.
    pub fn unmatched(&self) -> u64 {
        self.feedback.saturating_sub(self.joined + self.held)
    }

    /// Adds what one change of the outcomes at `epoch` counts (see [`count_changes`]).
    pub fn count(&mut self, outcome: &Outcome, epoch: u64, diff: i64) {
        for (field, d) in count_changes(outcome, epoch, diff) {
            let f = self.field_mut(field);
            *f = f.saturating_add_signed(d);
        }
    }

    /// The field `i` (in the order of [`COUNT_NAMES`]).
    pub fn field(&self, i: usize) -> u64 {
        [
            self.admitted,
            self.feedback,
            self.joined,
            self.duplicate,
            self.repeated,
            self.late,
            self.waiting,
            self.held,
        ][i]
    }

    fn field_mut(&mut self, i: usize) -> &mut u64 {
        match i {
            0 => &mut self.admitted,
            1 => &mut self.feedback,
            2 => &mut self.joined,
            3 => &mut self.duplicate,
            4 => &mut self.repeated,
            5 => &mut self.late,
            6 => &mut self.waiting,
            _ => &mut self.held,
        }
    }

    /// Adds another shard's (or a restored run's) counts.
    pub fn add(&mut self, other: &JoinCounts) {
        self.admitted += other.admitted;
        self.feedback += other.feedback;
        self.joined += other.joined;
        self.duplicate += other.duplicate;
        self.repeated += other.repeated;
        self.late += other.late;
        self.waiting += other.waiting;
        self.held += other.held;
    }
}

/// The names of the join's counts, in field order.
pub const COUNT_NAMES: [&str; 8] = [
    "admitted",
    "feedback",
    "joined",
    "duplicate",
    "repeated",
    "late",
    "waiting",
    "held",
];

/// What one change of an id's outcomes at `epoch` counts, as (field of [`COUNT_NAMES`],
/// change): a pair that forms is joined; a duplicate, a repeat or late feedback counts
/// in the epoch it arrived; the gauges (waiting events, held feedback) follow the outcomes
/// up and down.
pub fn count_changes(outcome: &Outcome, epoch: u64, diff: i64) -> Vec<(usize, i64)> {
    let arrived = |item_epoch: u64| diff > 0 && item_epoch == epoch;
    let mut out = Vec::new();
    match outcome {
        Outcome::Pair(_) if diff > 0 => out.push((2, diff)),
        Outcome::Pair(_) | Outcome::Marker(_) => {}
        Outcome::Waiting(_) => out.push((6, diff)),
        Outcome::Duplicate(e) => {
            out.push((6, diff));
            if arrived(e.epoch) {
                out.push((3, 1));
            }
        }
        Outcome::Held(_) => out.push((7, diff)),
        Outcome::Repeated(f) => {
            out.push((7, diff));
            if arrived(f.epoch) {
                out.push((4, 1));
            }
        }
        Outcome::Late(f) => {
            out.push((7, diff));
            if arrived(f.epoch) {
                out.push((5, 1));
            }
        }
    }
    out
}

/// The learning pass of a pair: the event with its label, or with the top-k pairs made
/// from its shown labels and the clicks, or with pairs made elsewhere. It is ordered in its
/// epoch by the later of the two positions.
pub fn learning_pass(
    pair: &Pairing,
    topk: &TopKConfig,
    labels: usize,
    score_dim: usize,
) -> InFlight {
    let seq = pair.seq();
    let e = &pair.event;
    match &pair.feedback.kind {
        FeedbackKind::Label(label) => {
            let mut example = (*e.example).clone();
            example.label = Some(label.clone());
            InFlight::learn(seq, Arc::new(example), None, score_dim)
        }
        FeedbackKind::Clicks(clicked) => {
            let p = &e.prediction;
            let pairs = observe(topk, labels, &p.top, &p.shown, |l| clicked.contains(&l));
            InFlight::learn(seq, e.example.clone(), Some(Arc::new(pairs)), score_dim)
        }
        FeedbackKind::Pairs(pairs) => {
            InFlight::learn(seq, e.example.clone(), Some(pairs.clone()), score_dim)
        }
    }
}
