use super::ordered_stash::TimeStash;
use crate::engine::InFlight;
use crate::engine::feedback::{
    FactUpdate, FeedbackItem, FeedbackKind, FormedPair, JoinConfig, JoinCounts, JoinFact,
    JoinState, Outcome, Pairing, WaitingEvent, admit_event, admit_feedback, classify,
    count_changes, learning_pass, pair_updates, timers,
};
use crate::rng::splitmix64;
use crate::topk::TopKConfig;
use differential_dataflow::AsCollection;
use differential_dataflow::operators::CountTotal;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::generic::{Operator, OutputBuilder};
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Capability, ConnectLoop, Feedback, InputCapability};

/// A change of the join's live counts, in differential-dataflow's update form: `((count
/// field, total), epoch, diff)` (the count field indexes
/// [`COUNT_NAMES`](crate::engine::feedback::COUNT_NAMES)).
pub type CountUpdate = ((u8, isize), u64, isize);

/// What the join hands back to the pipeline.
pub struct JoinStreams<'scope> {
    /// The learning passes, at the epoch their pair formed (the caller delays them by
    /// `lag` epochs on the loop into the chain).
    pub learning: Stream<'scope, u64, Vec<InFlight>>,
    /// The join's live counts, a differential aggregate: changes `((index into
    /// [`COUNT_NAMES`](crate::engine::feedback::COUNT_NAMES), total), epoch, diff)`.
    pub counts: Stream<'scope, u64, Vec<CountUpdate>>,
    /// Every worker's part of the join's state after each requested epoch, on worker 0.
    pub parts: Stream<'scope, u64, Vec<JoinPart>>,
}

/// One worker's part of the join's state after an epoch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JoinPart {
    /// The worker.
    pub worker: usize,
    /// Its part.
    pub state: JoinState,
}

/// Adds [`feedback_join`](FeedbackJoinExt::feedback_join) to streams of events waiting for
/// their feedback.
pub trait FeedbackJoinExt<'scope> {
    /// Joins the waiting events (predicted, with their predictions, at their epochs) with
    /// the feedback records (at theirs) by event id, on differential-dataflow: both are
    /// facts of one collection keyed by id, sharded across the workers by id; a `reduce`
    /// applies [`classify`] to each id's facts; expiries are timed retractions scheduled
    /// when a fact enters; a pair's members leave one epoch after it formed, through a loop
    /// of the join's own. Returns the learning passes of the pairs and the live counts
    /// (`count_total`). A keeper on every worker follows the outcomes of its share of the
    /// ids, so that its part of the join's state after an epoch named on `requests` goes
    /// to worker 0 ([`JoinStreams::parts`]). `restored` is the state a run resumes from
    /// (every worker is given it and keeps its own ids).
    #[allow(clippy::too_many_arguments)]
    fn feedback_join(
        self,
        feedback: Stream<'scope, u64, Vec<FeedbackItem>>,
        requests: Stream<'scope, u64, Vec<u64>>,
        config: JoinConfig,
        topk: TopKConfig,
        labels: usize,
        score_dim: usize,
        restored: Option<Arc<JoinState>>,
    ) -> JoinStreams<'scope>;
}

/// A change of the join's input collection: `((id, fact), epoch, diff)`.
type FactChange = ((u64, Held<JoinFact>), u64, isize);

/// A change of the join's outcomes: `((id, outcome), epoch, diff)`.
type OutcomeChange = ((u64, Held<Outcome>), u64, isize);

/// A timed update as a change of the collection, at `at` (its epoch, or later for a
/// restored one).
fn change(u: FactUpdate, at: u64) -> FactChange {
    ((u.id, Held::new(u.fact)), at, u.diff as isize)
}

/// A fact or an outcome as the join's arrangements hold it: a `Joined` or `Gone` marker
/// inline, anything else (events, feedback records, with their predictions and payloads)
/// behind an `Arc`. The arrangements clone and drop their values at every merge of their
/// batches, and the markers are most of them: without a time-to-live every joined id keeps
/// its `Joined` marker for the rest of the run. Ordered (and equal) as the value it holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Held<T> {
    /// A marker: `Joined` (`joined`) or `Gone`, at `seq`, of `epoch`.
    Marker { joined: bool, seq: u64, epoch: u64 },
    /// Any other value.
    Shared(Arc<T>),
}

/// The values [`Held`] keeps: those with a marker form.
trait Markable: Clone {
    /// The marker, if the value is one: (`Joined`, its position, its epoch).
    fn marker(&self) -> Option<(bool, u64, u64)>;
    /// The value of a marker.
    fn from_marker(joined: bool, seq: u64, epoch: u64) -> Self;
}

impl Markable for JoinFact {
    fn marker(&self) -> Option<(bool, u64, u64)> {
        match self {
            JoinFact::Joined { seq, epoch } => Some((true, *seq, *epoch)),
            JoinFact::Gone { seq, epoch } => Some((false, *seq, *epoch)),
            _ => None,
        }
    }
    fn from_marker(joined: bool, seq: u64, epoch: u64) -> Self {
        if joined {
            JoinFact::Joined { seq, epoch }
        } else {
            JoinFact::Gone { seq, epoch }
        }
    }
}

impl Markable for Outcome {
    fn marker(&self) -> Option<(bool, u64, u64)> {
        match self {
            Outcome::Marker(m) => m.marker(),
            _ => None,
        }
    }
    fn from_marker(joined: bool, seq: u64, epoch: u64) -> Self {
        Outcome::Marker(JoinFact::from_marker(joined, seq, epoch))
    }
}

impl<T: Markable> Held<T> {
    fn new(value: T) -> Self {
        match value.marker() {
            Some((joined, seq, epoch)) => Held::Marker { joined, seq, epoch },
            None => Held::Shared(Arc::new(value)),
        }
    }

    /// The value.
    fn get(&self) -> Cow<'_, T> {
        match self {
            Held::Marker { joined, seq, epoch } => {
                Cow::Owned(T::from_marker(*joined, *seq, *epoch))
            }
            Held::Shared(value) => Cow::Borrowed(value),
        }
    }
}

impl<T: Markable + Ord> Ord for Held<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.get().as_ref().cmp(other.get().as_ref())
    }
}
impl<T: Markable + Ord> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T: Markable + Ord> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<T: Markable + Ord> Eq for Held<T> {}

/// What a keeper follows.
#[derive(Clone, Debug)]
enum KeeperInput {
    /// A change of an id's outcomes.
    Outcome(u64, Held<Outcome>, i64),
    /// An event admitted by this worker's feeder.
    Admitted,
    /// A feedback record received by this worker's feeder.
    Received,
    /// A snapshot of the state after this epoch is wanted.
    Request,
}

/// The worker a fact of `id` is fed on.
fn shard(id: &u64) -> u64 {
    splitmix64(*id)
}

impl<'scope> FeedbackJoinExt<'scope> for Stream<'scope, u64, Vec<WaitingEvent>> {
    fn feedback_join(
        self,
        feedback: Stream<'scope, u64, Vec<FeedbackItem>>,
        requests: Stream<'scope, u64, Vec<u64>>,
        config: JoinConfig,
        topk: TopKConfig,
        labels: usize,
        score_dim: usize,
        restored: Option<Arc<JoinState>>,
    ) -> JoinStreams<'scope> {
        let scope = self.scope();
        let index = scope.index();
        let peers = scope.peers();
        let restored_keeper = restored.clone();
        // Pairs come back one epoch later to take their members out.
        let (leave_handle, leaving) = scope.feedback::<Vec<Pairing>>(1);

        // The feeder: every input becomes its timed updates (now and scheduled), sent with
        // capabilities delayed to their epochs; a restored state enters after its epoch
        // (this worker's share of its ids). It also sends what it admitted to the counts
        // and to the keeper. One operator with three inputs and three outputs: with an
        // epoch per feedback record, every operator costs progress tracking and
        // scheduling at every epoch.
        let mut feeder = OperatorBuilder::new("JoinFeeder".to_string(), scope);
        let mut events_in =
            feeder.new_input(self, Exchange::new(|e: &WaitingEvent| shard(&e.example.id)));
        let mut feedback_in =
            feeder.new_input(feedback, Exchange::new(|f: &FeedbackItem| shard(&f.id)));
        let mut leaving_in = feeder.new_input(
            leaving,
            Exchange::new(|p: &Pairing| shard(&p.event.example.id)),
        );
        let (updates_out, updates) = feeder.new_output::<Vec<FactChange>>();
        let (admitted_out, admitted) = feeder.new_output::<Vec<(u8, u64, isize)>>();
        let (kept_out, kept) = feeder.new_output::<Vec<KeeperInput>>();
        let mut updates_out = OutputBuilder::<_, CapacityContainerBuilder<_>>::from(updates_out);
        let mut admitted_out = OutputBuilder::<_, CapacityContainerBuilder<_>>::from(admitted_out);
        let mut kept_out = OutputBuilder::<_, CapacityContainerBuilder<_>>::from(kept_out);
        feeder.build(move |capabilities| {
            // The updates' capability, kept only to restore (the others are dropped here).
            let mut restore = match (restored, capabilities.into_iter().next()) {
                (Some(state), Some(capability)) => Some((capability, state)),
                _ => None,
            };
            // Updates for later epochs (expiries, markers), held here with a capability
            // for their epoch until every input has reached it: sent at once, they would
            // wait in the arrangements' batchers, which merge and scan what waits at
            // every epoch.
            // One capability, for the earliest of them (one per epoch would cost progress
            // tracking at every epoch).
            let mut held: BTreeMap<u64, Vec<FactChange>> = BTreeMap::new();
            let mut held_cap: Option<Capability<u64>> = None;
            move |frontiers| {
                let mut updates_out = updates_out.activate();
                let mut admitted_out = admitted_out.activate();
                let mut kept_out = kept_out.activate();
                if let Some((capability, state)) = restore.take() {
                    let t = state.epoch;
                    let start = capability.delayed(&(t + 1));
                    let mine = |id: &u64| shard(id) % peers as u64 == index as u64;
                    let mut updates = Vec::new();
                    for (id, facts) in state.facts.iter().filter(|(id, _)| mine(id)) {
                        for fact in facts {
                            updates.push(FactUpdate {
                                id: *id,
                                fact: fact.clone(),
                                epoch: t + 1,
                                diff: 1,
                            });
                            updates.extend(timers(*id, fact, &config, t));
                        }
                    }
                    for fp in &state.pairs {
                        if fp.formed == t && mine(&fp.pair.event.example.id) {
                            updates.extend(pair_updates(&fp.pair, t, &config));
                        }
                    }
                    for u in updates {
                        let at = u.epoch.max(t + 1);
                        let cap = start.delayed(&at);
                        updates_out.session(&cap).give(change(u, at));
                    }
                }
                // Each input's updates, by the epoch they apply at; what was admitted, at
                // the input's epoch (0: an event, 1: a feedback record).
                let mut send = |time: &InputCapability<u64>,
                                updates: Vec<FactUpdate>,
                                admitted: Option<(u8, usize)>| {
                    let mut by_time: BTreeMap<u64, Vec<FactUpdate>> = BTreeMap::new();
                    for u in updates {
                        by_time.entry(u.epoch).or_default().push(u);
                    }
                    for (at, us) in by_time {
                        let changes = us.into_iter().map(|u| change(u, at));
                        if at > *time.time() {
                            if held_cap.as_ref().is_none_or(|c| *c.time() > at) {
                                held_cap = Some(time.delayed(&at, updates_out.output_index()));
                            }
                            held.entry(at).or_default().extend(changes);
                        } else {
                            let cap = time.delayed(&at, updates_out.output_index());
                            updates_out.session(&cap).give_iterator(changes);
                        }
                    }
                    if let Some((field, n)) = admitted.filter(|(_, n)| *n > 0) {
                        let t = *time.time();
                        admitted_out
                            .session(time)
                            .give_iterator((0..n).map(|_| (field, t, 1isize)));
                        let k = if field == 0 {
                            KeeperInput::Admitted
                        } else {
                            KeeperInput::Received
                        };
                        kept_out
                            .session(time)
                            .give_iterator((0..n).map(|_| k.clone()));
                    }
                };
                events_in.for_each(|time, data| {
                    let n = data.len();
                    let updates = data
                        .drain(..)
                        .flat_map(|e| admit_event(e, &config))
                        .collect();
                    send(&time, updates, Some((0, n)));
                });
                feedback_in.for_each(|time, data| {
                    let n = data.len();
                    let updates = data
                        .drain(..)
                        .flat_map(|f| admit_feedback(f, &config))
                        .collect();
                    send(&time, updates, Some((1, n)));
                });
                leaving_in.for_each(|time, data| {
                    // Arrives one epoch after the pair formed.
                    let t = *time.time();
                    let updates = data
                        .iter()
                        .flat_map(|p| pair_updates(p, t - 1, &config))
                        .collect();
                    data.clear();
                    send(&time, updates, None);
                });
                // Release the held updates whose epoch every input has reached.
                while let Some(entry) = held.first_entry() {
                    let at = *entry.key();
                    if frontiers.iter().any(|f| f.less_than(&at)) {
                        break;
                    }
                    let changes = entry.remove();
                    if let Some(cap) = held_cap.as_ref() {
                        updates_out
                            .session(&cap.delayed(&at))
                            .give_iterator(changes.into_iter());
                    }
                }
                match (held.keys().next(), held_cap.as_mut()) {
                    (Some(&next), Some(cap)) if *cap.time() < next => cap.downgrade(&next),
                    (None, _) => held_cap = None,
                    _ => {}
                }
            }
        });
        let updates = updates.as_collection();
        // The join itself: each id's facts, classified. Facts and outcomes are [`Held`]:
        // the arrangements clone and drop them at every merge of their batches, which
        // would otherwise copy each event's prediction.
        let outcomes = updates.reduce_named(
            "FeedbackJoin",
            move |_id,
                  input: &[(&Held<JoinFact>, isize)],
                  output: &mut Vec<(Held<Outcome>, isize)>| {
                let present: Vec<Cow<'_, JoinFact>> = input
                    .iter()
                    .filter(|(_, r)| *r > 0)
                    .map(|(f, _)| f.get())
                    .collect();
                if present.is_empty() {
                    return;
                }
                let present: Vec<&JoinFact> = present.iter().map(|f| f.as_ref()).collect();
                let mut out = Vec::new();
                classify(&present, &config, &mut out);
                output.extend(out.into_iter().map(|o| (Held::new(o), 1isize)));
            },
        );
        // The outcomes' changes, in one operator: new pairs (their members leave next
        // epoch; their learning passes go to the chain), the changes of the live counts
        // (with the feeder's admissions) and the keeper's inputs (the outcomes, the
        // feeder's admissions, the snapshot requests).
        let mut split = OperatorBuilder::new("JoinOutcomes".to_string(), scope);
        let mut changes_in = split.new_input(outcomes.inner, Pipeline);
        let mut admitted_in = split.new_input(admitted, Pipeline);
        let mut kept_in = split.new_input(kept, Pipeline);
        let mut requests_in = split.new_input(requests.broadcast(), Pipeline);
        let (pairs_out, pairs) = split.new_output::<Vec<Pairing>>();
        let (learning_out, learning) = split.new_output::<Vec<InFlight>>();
        let (counted_out, counted) = split.new_output::<Vec<(u8, u64, isize)>>();
        let (outcomes_out, outcomes) = split.new_output::<Vec<KeeperInput>>();
        let mut pairs_out = OutputBuilder::<_, CapacityContainerBuilder<_>>::from(pairs_out);
        let mut learning_out = OutputBuilder::<_, CapacityContainerBuilder<_>>::from(learning_out);
        let mut counted_out = OutputBuilder::<_, CapacityContainerBuilder<_>>::from(counted_out);
        let mut outcomes_out = OutputBuilder::<_, CapacityContainerBuilder<_>>::from(outcomes_out);
        split.build(move |_capabilities| {
            move |_frontiers| {
                let mut pairs_out = pairs_out.activate();
                let mut learning_out = learning_out.activate();
                let mut counted_out = counted_out.activate();
                let mut outcomes_out = outcomes_out.activate();
                changes_in.for_each(|time, data: &mut Vec<OutcomeChange>| {
                    let t = *time.time();
                    let mut pairs = pairs_out.session(&time);
                    let mut learning = learning_out.session(&time);
                    let mut counted = counted_out.session(&time);
                    let mut kept = outcomes_out.session(&time);
                    for ((id, o), _, diff) in data.drain(..) {
                        let value = o.get();
                        if let (Outcome::Pair(p), true) = (value.as_ref(), diff > 0) {
                            learning.give(learning_pass(p, &topk, labels, score_dim));
                            pairs.give((**p).clone());
                        }
                        for (field, d) in count_changes(&value, t, diff as i64) {
                            counted.give((field as u8, t, d as isize));
                        }
                        kept.give(KeeperInput::Outcome(id, o, diff as i64));
                    }
                });
                admitted_in.for_each(|time, data| {
                    counted_out.session(&time).give_container(data);
                });
                kept_in.for_each(|time, data| {
                    outcomes_out.session(&time).give_container(data);
                });
                requests_in.for_each(|time, data: &mut Vec<u64>| {
                    let n = data.len();
                    data.clear();
                    outcomes_out
                        .session(&time)
                        .give_iterator((0..n).map(|_| KeeperInput::Request));
                });
            }
        });
        pairs.connect_loop(leave_handle);
        // Live counts, a differential aggregate over the outcomes' changes and the
        // admissions.
        let count_changes = counted.as_collection().count_total().inner;

        // The keeper: this worker's share of the outcomes, and its counts, per epoch.
        let keeper_inputs = outcomes;
        let lag = config.lag.max(1);
        // Worker 0's keeper carries on the restored counts and pairs.
        let (mut counts, mut pairs) = match (&restored_keeper, index) {
            (Some(state), 0) => {
                let mut pairs: BTreeMap<u64, Vec<Pairing>> = BTreeMap::new();
                for fp in &state.pairs {
                    pairs.entry(fp.formed).or_default().push(fp.pair.clone());
                }
                // The gauges count again as the restored facts come back in.
                let mut counts = state.counts;
                counts.waiting = 0;
                counts.held = 0;
                (counts, pairs)
            }
            _ => (JoinCounts::default(), BTreeMap::new()),
        };
        let parts = keeper_inputs.unary_frontier(Pipeline, "JoinKeeper", move |_, _| {
            let mut stash: TimeStash<KeeperInput> = TimeStash::default();
            let mut outcomes: BTreeMap<u64, BTreeMap<Held<Outcome>, i64>> = BTreeMap::new();
            move |(input, frontier), output| {
                stash.absorb(input, output.output_index());
                while let Some((capability, items)) = stash.next_complete(frontier) {
                    let t = *capability.time();
                    let mut requested = false;
                    for x in items {
                        match x {
                            KeeperInput::Outcome(id, o, diff) => {
                                let value = o.get();
                                counts.count(&value, t, diff);
                                if let (Outcome::Pair(p), true) = (value.as_ref(), diff > 0) {
                                    pairs.entry(t).or_default().push((**p).clone());
                                }
                                let m = outcomes.entry(id).or_default();
                                *m.entry(o).or_insert(0) += diff;
                                m.retain(|_, d| *d != 0);
                                if m.is_empty() {
                                    outcomes.remove(&id);
                                }
                            }
                            KeeperInput::Admitted => counts.admitted += 1,
                            KeeperInput::Received => counts.feedback += 1,
                            KeeperInput::Request => requested = true,
                        }
                    }
                    while let Some(old) = pairs.first_entry() {
                        if *old.key() + lag > t {
                            break;
                        }
                        old.remove();
                    }
                    if requested {
                        output.session(&capability).give(JoinPart {
                            worker: index,
                            state: keeper_state(t, &outcomes, &pairs, counts),
                        });
                    }
                }
            }
        });
        let parts = parts.unary(Exchange::new(|_: &JoinPart| 0u64), "JoinParts", |_, _| {
            move |input, output| {
                input.for_each(|time, data: &mut Vec<JoinPart>| {
                    output.session(&time).give_container(data);
                })
            }
        });
        JoinStreams {
            learning,
            counts: count_changes,
            parts,
        }
    }
}

/// A keeper's part of the join's state after epoch `t`.
fn keeper_state(
    t: u64,
    outcomes: &BTreeMap<u64, BTreeMap<Held<Outcome>, i64>>,
    pairs: &BTreeMap<u64, Vec<Pairing>>,
    counts: JoinCounts,
) -> JoinState {
    let mut facts = BTreeMap::new();
    for (id, os) in outcomes {
        let mut fs: Vec<JoinFact> = Vec::new();
        for o in os.keys() {
            match o.get().as_ref() {
                Outcome::Pair(p) => {
                    fs.push(JoinFact::Event(p.event.clone()));
                    match &p.feedback.kind {
                        // The click window's records: the first here, the others are
                        // `Merged` outcomes; a "no click" is no fact of the join.
                        FeedbackKind::Window(records) => {
                            fs.extend(records.first().cloned().map(JoinFact::Feedback));
                        }
                        _ => fs.push(JoinFact::Feedback(p.feedback.clone())),
                    }
                }
                Outcome::Waiting(e) | Outcome::Duplicate(e) => fs.push(JoinFact::Event(e.clone())),
                Outcome::Held(f) | Outcome::Repeated(f) | Outcome::Late(f) | Outcome::Merged(f) => {
                    fs.push(JoinFact::Feedback(f.clone()))
                }
                Outcome::Marker(m) => fs.push(m.clone()),
            }
        }
        fs.sort();
        facts.insert(*id, fs);
    }
    let pairs = pairs
        .iter()
        .flat_map(|(formed, ps)| {
            ps.iter().map(move |p| FormedPair {
                formed: *formed,
                pair: p.clone(),
            })
        })
        .collect();
    JoinState {
        epoch: t,
        facts,
        pairs,
        counts,
    }
}
