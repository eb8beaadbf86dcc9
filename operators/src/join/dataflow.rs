use super::fact::{FeedbackItem, FeedbackKind, JoinFact, Outcome, Pairing, WaitingEvent};
use super::logic::{
    FactUpdate, JoinConfig, JoinCounts, admit_event, admit_feedback, classify, count_changes,
    learning_pass, pair_updates, timers,
};
use super::state::{FormedPair, JoinState};
use crate::dataflow::ordered_stash::TimeStash;
use crate::engine::InFlight;
use crate::rng::splitmix64;
use crate::topk::TopKConfig;
use differential_dataflow::AsCollection;
use differential_dataflow::operators::CountTotal;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Broadcast;
use timely::dataflow::operators::{Concat, ConnectLoop, Feedback};

/// A change of the join's live counts, in differential-dataflow's update form: `((count
/// field, total), epoch, diff)` (the count field indexes
/// [`COUNT_NAMES`](super::COUNT_NAMES)).
pub type CountUpdate = ((u8, isize), u64, isize);

/// What the join hands back to the pipeline.
pub struct JoinStreams<'scope> {
    /// The learning passes, at the epoch their pair formed (the caller delays them by
    /// `lag` epochs on the loop into the chain).
    pub learning: Stream<'scope, u64, Vec<InFlight>>,
    /// The join's live counts, a differential aggregate: changes `((index into
    /// [`COUNT_NAMES`](super::COUNT_NAMES), total), epoch, diff)`.
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

/// What feeds the collection: a new fact, or a pair whose members leave.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum FeederInput {
    Event(WaitingEvent),
    Feedback(FeedbackItem),
    Paired(Pairing),
}

impl FeederInput {
    fn id(&self) -> u64 {
        match self {
            FeederInput::Event(e) => e.example.id,
            FeederInput::Feedback(f) => f.id,
            FeederInput::Paired(p) => p.event.example.id,
        }
    }
}

/// What the feeder makes: updates of the collection, and the admissions it counted.
#[derive(Clone, Debug)]
enum FeederOutput {
    Update(FactUpdate),
    Admitted,
    Received,
}

/// What a keeper follows.
#[derive(Clone, Debug)]
enum KeeperInput {
    /// A change of an id's outcomes.
    Outcome(u64, Arc<Outcome>, i64),
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

fn wrap<'scope, D: Clone + 'static, E: Clone + 'static>(
    stream: Stream<'scope, u64, Vec<D>>,
    name: &str,
    f: impl Fn(D) -> E + 'static,
) -> Stream<'scope, u64, Vec<E>> {
    stream.unary(Pipeline, name, move |_, _| {
        move |input, output| {
            input.for_each(|time, data| {
                output.session(&time).give_iterator(data.drain(..).map(&f));
            })
        }
    })
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
        let inputs = wrap(self, "JoinEvents", FeederInput::Event)
            .concat(wrap(feedback, "JoinFeedback", FeederInput::Feedback))
            .concat(wrap(leaving, "JoinLeaving", FeederInput::Paired));

        // The feeder: every input becomes its timed updates (now and scheduled), sent with
        // capabilities delayed to their epochs; a restored state enters after its epoch
        // (this worker's share of its ids).
        let fed = inputs.unary(
            Exchange::new(|x: &FeederInput| shard(&x.id())),
            "JoinFeeder",
            move |capability, _info| {
                let mut restore = restored.map(|state| (capability, state));
                move |input, output| {
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
                            let cap = start.delayed(&u.epoch.max(t + 1));
                            output.session(&cap).give(FeederOutput::Update(u));
                        }
                    }
                    input.for_each(|time, data| {
                        let t = *time.time();
                        let mut by_time: BTreeMap<u64, Vec<FeederOutput>> = BTreeMap::new();
                        for x in data.drain(..) {
                            let updates = match x {
                                FeederInput::Event(e) => {
                                    by_time.entry(t).or_default().push(FeederOutput::Admitted);
                                    admit_event(e, &config)
                                }
                                FeederInput::Feedback(f) => {
                                    by_time.entry(t).or_default().push(FeederOutput::Received);
                                    admit_feedback(f, &config)
                                }
                                // Arrives one epoch after the pair formed.
                                FeederInput::Paired(p) => pair_updates(&p, t - 1, &config),
                            };
                            for u in updates {
                                by_time
                                    .entry(u.epoch)
                                    .or_default()
                                    .push(FeederOutput::Update(u));
                            }
                        }
                        for (at, outs) in by_time {
                            let cap = time.delayed(&at, output.output_index());
                            output.session(&cap).give_iterator(outs.into_iter());
                        }
                    });
                }
            },
        );
        let updates = fed
            .clone()
            .unary(Pipeline, "JoinUpdates", |_, _| {
                move |input, output| {
                    input.for_each(|time, data: &mut Vec<FeederOutput>| {
                        let t = *time.time();
                        output
                            .session(&time)
                            .give_iterator(data.drain(..).filter_map(|x| match x {
                                FeederOutput::Update(u) => {
                                    Some(((u.id, Arc::new(u.fact)), t, u.diff as isize))
                                }
                                _ => None,
                            }));
                    })
                }
            })
            .as_collection();
        // The join itself: each id's facts, classified. Facts and outcomes travel behind
        // `Arc`s (ordered as what they point to): the arrangements clone and drop them at
        // every merge of their batches, which would otherwise copy each event's prediction.
        let outcomes = updates.reduce_named(
            "FeedbackJoin",
            move |_id,
                  input: &[(&Arc<JoinFact>, isize)],
                  output: &mut Vec<(Arc<Outcome>, isize)>| {
                let present: Vec<&JoinFact> = input
                    .iter()
                    .filter(|(_, r)| *r > 0)
                    .map(|(f, _)| &***f)
                    .collect();
                if present.is_empty() {
                    return;
                }
                let mut out = Vec::new();
                classify(&present, &config, &mut out);
                output.extend(out.into_iter().map(|o| (Arc::new(o), 1isize)));
            },
        );
        let changes = outcomes.inner;
        // New pairs: their members leave next epoch; their learning passes go to the chain.
        let pairs = changes.clone().unary(Pipeline, "JoinPairs", |_, _| {
            move |input, output| {
                input.for_each(|time, data| {
                    output
                        .session(&time)
                        .give_iterator(data.drain(..).filter_map(|((_, o), _, diff)| match &*o {
                            Outcome::Pair(p) if diff > 0 => Some((**p).clone()),
                            _ => None,
                        }));
                })
            }
        });
        pairs.clone().connect_loop(leave_handle);
        let learning = pairs.unary(Pipeline, "JoinLearning", move |_, _| {
            move |input, output| {
                input.for_each(|time, data| {
                    output.session(&time).give_iterator(
                        data.drain(..)
                            .map(|p| learning_pass(&p, &topk, labels, score_dim)),
                    );
                })
            }
        });
        // Live counts, a differential aggregate over the outcomes' changes and the
        // admissions.
        let count_changes = changes
            .clone()
            .unary(Pipeline, "JoinCountChanges", |_, _| {
                move |input, output| {
                    input.for_each(|time, data| {
                        let t = *time.time();
                        let mut session = output.session(&time);
                        for ((_, o), _, diff) in data.drain(..) {
                            for (field, d) in count_changes(&o, t, diff as i64) {
                                session.give((field as u8, t, d as isize));
                            }
                        }
                    })
                }
            })
            .concat(fed.clone().unary(Pipeline, "JoinAdmissions", |_, _| {
                move |input, output| {
                    input.for_each(|time, data: &mut Vec<FeederOutput>| {
                        let t = *time.time();
                        output
                            .session(&time)
                            .give_iterator(data.drain(..).filter_map(move |x| match x {
                                FeederOutput::Admitted => Some((0u8, t, 1isize)),
                                FeederOutput::Received => Some((1u8, t, 1isize)),
                                FeederOutput::Update(_) => None,
                            }));
                    })
                }
            }))
            .as_collection()
            .count_total()
            .inner;

        // The keeper: this worker's share of the outcomes, and its counts, per epoch.
        let keeper_inputs = wrap(
            changes,
            "KeeperOutcomes",
            |((id, o), _, diff): ((u64, Arc<Outcome>), u64, isize)| {
                KeeperInput::Outcome(id, o, diff as i64)
            },
        )
        .concat(fed.unary(Pipeline, "KeeperAdmissions", |_, _| {
            move |input, output| {
                input.for_each(|time, data: &mut Vec<FeederOutput>| {
                    output
                        .session(&time)
                        .give_iterator(data.drain(..).filter_map(|x| match x {
                            FeederOutput::Admitted => Some(KeeperInput::Admitted),
                            FeederOutput::Received => Some(KeeperInput::Received),
                            FeederOutput::Update(_) => None,
                        }));
                })
            }
        }))
        .concat(wrap(requests.broadcast(), "KeeperRequests", |_: u64| {
            KeeperInput::Request
        }));
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
            let mut outcomes: BTreeMap<u64, BTreeMap<Arc<Outcome>, i64>> = BTreeMap::new();
            move |(input, frontier), output| {
                stash.absorb(input, output.output_index());
                while let Some((capability, items)) = stash.next_complete(frontier) {
                    let t = *capability.time();
                    let mut requested = false;
                    for x in items {
                        match x {
                            KeeperInput::Outcome(id, o, diff) => {
                                counts.count(&o, t, diff);
                                if let (Outcome::Pair(p), true) = (&*o, diff > 0) {
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
    outcomes: &BTreeMap<u64, BTreeMap<Arc<Outcome>, i64>>,
    pairs: &BTreeMap<u64, Vec<Pairing>>,
    counts: JoinCounts,
) -> JoinState {
    let mut facts = BTreeMap::new();
    for (id, os) in outcomes {
        let mut fs: Vec<JoinFact> = Vec::new();
        for o in os.keys() {
            match &**o {
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
