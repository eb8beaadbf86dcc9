use super::fact::{JoinFact, Outcome, Pairing, WaitingEvent};
use crate::data::{Feedback, FeedbackItem};
use crate::engine::InFlight;
use crate::topk::{TopKConfig, logged_pairs, observe};
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
    /// The click window (logged clicks; needs a `ttl`): an event does not pair with its
    /// first feedback record but waits its whole window (`ttl` epochs) gathering its
    /// records; at the window's end (the epoch `ttl` after its own) it is learned from all
    /// of them, merged, or, when none came, from an explicit "no shown item clicked". A
    /// feedback record waits up to `2 ttl` epochs (one window for its event to come, one
    /// for the event's window to close); records after the window are late.
    #[serde(default)]
    pub window: bool,
}

impl Default for JoinConfig {
    fn default() -> Self {
        JoinConfig {
            ttl: None,
            lag: 1,
            window: false,
        }
    }
}

impl JoinConfig {
    /// A configuration without the click window.
    pub fn new(ttl: Option<u64>, lag: u64) -> Self {
        JoinConfig {
            ttl,
            lag,
            window: false,
        }
    }

    /// How long a feedback record waits for its event, in epochs.
    fn feedback_life(&self, ttl: u64) -> u64 {
        if self.window { 2 * ttl } else { ttl }
    }

    /// Whether the click window is on (it needs a time-to-live).
    fn windowed(&self) -> Option<u64> {
        self.ttl.filter(|_| self.window)
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
/// With the click window, the `Gone` marker comes at `t + ttl` while the event stays one
/// epoch more: their meeting is the window's close (see [`classify`]).
pub fn admit_event(event: WaitingEvent, config: &JoinConfig) -> Vec<FactUpdate> {
    let id = event.example.id;
    let t = event.epoch;
    let seq = event.seq;
    let mut out = vec![at(id, JoinFact::Event(event.clone()), t, 1)];
    if let Some(ttl) = config.windowed() {
        out.extend(window_timers(id, &event, ttl, t));
        return out;
    }
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

/// The scheduled updates of a waiting event with the click window, those after epoch
/// `after`: the `Gone` marker in at `t + ttl` (the close) and out `ttl` later, the event
/// out at `t + ttl + 1`. When the close is not after `after`, the marker is already
/// present and schedules its own removal.
fn window_timers(id: u64, e: &WaitingEvent, ttl: u64, after: u64) -> Vec<FactUpdate> {
    let close = e.epoch + ttl;
    let mut out = vec![at(id, JoinFact::Event(e.clone()), close + 1, -1)];
    if close > after {
        let gone = JoinFact::Gone {
            seq: e.seq,
            epoch: close,
        };
        out.push(at(id, gone.clone(), close, 1));
        out.push(at(id, gone, close + ttl, -1));
    }
    out
}

/// The updates a fact still present after epoch `after` has scheduled (those after it):
/// what a join restored from a snapshot schedules again. A fact of a pair has none left
/// (the pair's removal cancelled them).
///
/// Without the click window, every timer of a fact present after `after` falls after it
/// under the configuration the fact was admitted with. Under a shorter time-to-live (a
/// library `Model` given another one), the timers already due fall due in the next
/// epoch: what waited longer than the new limit expires then.
pub fn timers(id: u64, fact: &JoinFact, config: &JoinConfig, after: u64) -> Vec<FactUpdate> {
    let Some(ttl) = config.ttl else {
        return Vec::new();
    };
    let mut out = timers_of(id, fact, config, ttl, after);
    if config.window {
        out.retain(|u| u.epoch > after);
    } else {
        for u in &mut out {
            u.epoch = u.epoch.max(after + 1);
        }
    }
    out
}

fn timers_of(
    id: u64,
    fact: &JoinFact,
    config: &JoinConfig,
    ttl: u64,
    after: u64,
) -> Vec<FactUpdate> {
    if config.window {
        match fact {
            JoinFact::Event(e) => return window_timers(id, e, ttl, after),
            JoinFact::Feedback(f) => {
                return vec![at(
                    id,
                    fact.clone(),
                    f.epoch + config.feedback_life(ttl),
                    -1,
                )];
            }
            _ => {}
        }
    }
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
        let life = config.feedback_life(ttl);
        out.push(at(id, JoinFact::Feedback(feedback), t + life, -1));
    }
    out
}

/// The updates that a pair formed in epoch `t` makes, from epoch `t + 1`: both members
/// leave (their scheduled expiries are cancelled) and a `Joined` marker stays for `ttl`
/// epochs (while it stays, more feedback or events for the id are repeats).
///
/// With the click window the event and the `Gone` marker follow their own schedule (the
/// event leaves at `t + 1`, the marker stays: later records are late); the pair's
/// feedback records (the merged ones too) leave at `t + 1`, their expiries cancelled. A
/// "no click" pair has no record to take out.
pub fn pair_updates(pair: &Pairing, t: u64, config: &JoinConfig) -> Vec<FactUpdate> {
    let id = pair.event.example.id;
    let next = t + 1;
    if let Some(ttl) = config.windowed() {
        let mut out = Vec::new();
        let records: Vec<(u64, u64)> = match &pair.feedback.kind {
            Feedback::Window(records) => records.iter().map(|f| (f.seq, f.epoch)).collect(),
            _ => vec![(pair.feedback.seq, pair.feedback.epoch)],
        };
        for (seq, epoch) in records {
            // Facts are equal by kind and position: the payload does not matter here.
            let fact = JoinFact::Feedback(FeedbackItem {
                seq,
                epoch,
                id,
                kind: Feedback::Clicks(Vec::new()),
            });
            out.push(at(id, fact.clone(), next, -1));
            out.push(at(id, fact, epoch + config.feedback_life(ttl), 1));
        }
        return out;
    }
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
///
/// With the click window ([`JoinConfig::window`]) an event does not pair with its first
/// feedback record: the event waits and its records are held until the `Gone` marker of
/// its own position arrives (the window's close, `ttl` epochs after the event's); then it
/// pairs with its records merged into one (`window_feedback`), or, with none, with a "no
/// click" made at the close ([`Pairing::no_click`]). Records with a `Gone` marker and no
/// event are late; more events with the id are duplicates.
pub fn classify(facts: &[&JoinFact], config: &JoinConfig, out: &mut Vec<Outcome>) {
    if config.windowed().is_some() {
        classify_window(facts, out);
        return;
    }
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

/// [`classify`] with the click window.
fn classify_window(facts: &[&JoinFact], out: &mut Vec<Outcome>) {
    let mut events: Vec<&WaitingEvent> = Vec::new();
    let mut feedback: Vec<&FeedbackItem> = Vec::new();
    let mut first_gone: Option<(u64, u64)> = None;
    for f in facts {
        match f {
            JoinFact::Event(e) => events.push(e),
            JoinFact::Feedback(fb) => feedback.push(fb),
            JoinFact::Gone { seq, epoch } => {
                // Facts come sorted: the first marker is the earliest event's.
                first_gone.get_or_insert((*seq, *epoch));
                out.push(Outcome::Marker((*f).clone()));
            }
            JoinFact::Joined { .. } => out.push(Outcome::Marker((*f).clone())),
        }
    }
    let mut events = events.into_iter();
    match (events.next(), first_gone) {
        (Some(e), Some((seq, epoch))) if seq == e.seq => {
            out.push(Outcome::Pair(Box::new(Pairing {
                event: e.clone(),
                feedback: window_feedback(e, epoch, &feedback),
            })));
            out.extend(
                feedback
                    .iter()
                    .skip(1)
                    .map(|f| Outcome::Merged((*f).clone())),
            );
        }
        (Some(e), _) => {
            out.push(Outcome::Waiting(e.clone()));
            out.extend(feedback.iter().map(|f| Outcome::Held((*f).clone())));
        }
        (None, gone) => out.extend(feedback.iter().map(|f| {
            if gone.is_some() {
                Outcome::Late((*f).clone())
            } else {
                Outcome::Held((*f).clone())
            }
        })),
    }
    out.extend(events.map(|e| Outcome::Duplicate(e.clone())));
}

/// The feedback of an event whose click window closed in `epoch`: its records (in
/// sequence order) as one [`Feedback::Window`] at the first record's position, or,
/// with none, "no shown item clicked" (an empty window at the event's own position, which
/// no record can have: [`Pairing::no_click`]).
pub fn window_feedback(
    event: &WaitingEvent,
    epoch: u64,
    records: &[&FeedbackItem],
) -> FeedbackItem {
    let (seq, epoch) = records
        .first()
        .map_or((event.seq, epoch), |f| (f.seq, f.epoch));
    FeedbackItem {
        seq,
        epoch,
        id: event.example.id,
        kind: Feedback::Window(records.iter().map(|f| (*f).clone()).collect()),
    }
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

/// The join's counts as reports show them: every count, and the `expired` events and
/// `unmatched` feedback records that follow from them (admitted = joined + waiting +
/// expired; feedback = joined + held + unmatched).
///
/// ```
/// use flowboost_operators::engine::feedback::{JoinCounts, JoinReport};
///
/// let counts = JoinCounts { admitted: 10, feedback: 9, joined: 7, waiting: 1, held: 1, ..Default::default() };
/// let report = JoinReport::from(counts);
/// assert_eq!((report.expired, report.unmatched), (2, 1));
/// let json = serde_json::to_value(report).unwrap();
/// assert_eq!((json["joined"].as_u64(), json["expired"].as_u64()), (Some(7), Some(2)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinReport {
    /// The counts (flattened into the report).
    #[serde(flatten)]
    pub counts: JoinCounts,
    /// Events that expired without their feedback ([`JoinCounts::expired`]).
    pub expired: u64,
    /// Feedback records that expired without their event ([`JoinCounts::unmatched`]).
    pub unmatched: u64,
}

impl From<JoinCounts> for JoinReport {
    fn from(counts: JoinCounts) -> Self {
        JoinReport {
            counts,
            expired: counts.expired(),
            unmatched: counts.unmatched(),
        }
    }
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
        // A window closed without a click is not joined: it counts as expired (the
        // "no click" of the click window).
        Outcome::Pair(p) if diff > 0 && !p.no_click() => out.push((2, diff)),
        Outcome::Pair(_) | Outcome::Marker(_) => {}
        // A further record merged into its event's pair: a repeat, counted at the close.
        Outcome::Merged(_) => {
            if diff > 0 {
                out.push((4, 1));
            }
        }
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
    let mut pass = pass_of(pair, topk, labels, score_dim);
    pass.model = pair.event.model;
    pass
}

/// The learning pass of `pair`, for the model of its event.
fn pass_of(pair: &Pairing, topk: &TopKConfig, labels: usize, score_dim: usize) -> InFlight {
    let seq = pair.seq();
    let e = &pair.event;
    match &pair.feedback.kind {
        Feedback::Label(label) => {
            let mut example = (*e.example).clone();
            example.label = Some(label.clone());
            InFlight::learn(seq, Arc::new(example), None, score_dim)
        }
        Feedback::Clicks(clicked) => {
            let p = &e.prediction;
            let pairs = observe(topk, labels, &p.top, &p.shown, |l| clicked.contains(&l));
            InFlight::learn(seq, e.example.clone(), Some(Arc::new(pairs)), score_dim)
        }
        Feedback::Pairs(pairs) => {
            InFlight::learn(seq, e.example.clone(), Some(pairs.clone()), score_dim)
        }
        Feedback::Logged(clicks) => {
            let pairs = logged_pairs(labels, clicks, topk.clip_probability);
            InFlight::learn(seq, e.example.clone(), Some(Arc::new(pairs)), score_dim)
        }
        Feedback::Window(records) => {
            // Logged click records merge (an item clicked in several records counts once,
            // with its first propensity); a window whose first record is a label or plain
            // clicks learns that record (the others are not learned); no record: no click.
            let logged = records
                .first()
                .is_none_or(|f| matches!(f.kind, Feedback::Logged(_)));
            if !logged {
                let first = Pairing {
                    event: e.clone(),
                    feedback: records[0].clone(),
                };
                let mut pass = learning_pass(&first, topk, labels, score_dim);
                pass.seq = seq;
                return pass;
            }
            let mut clicks: Vec<(u32, f64)> = Vec::new();
            for f in records {
                if let Feedback::Logged(c) = &f.kind {
                    for &(a, p) in c {
                        if !clicks.iter().any(|&(b, _)| b == a) {
                            clicks.push((a, p));
                        }
                    }
                }
            }
            let pairs = logged_pairs(labels, &clicks, topk.clip_probability);
            InFlight::learn(seq, e.example.clone(), Some(Arc::new(pairs)), score_dim)
        }
    }
}
