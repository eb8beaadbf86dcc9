use crate::dataflow::JoinPart;
use crate::engine::feedback::{COUNT_NAMES, JoinCounts, JoinState};
use crate::engine::{
    ChainParts, ChainSnapshot, Input, Item, KeyChainState, SnapshotError, SourceState,
};
use std::collections::BTreeMap;
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::generic::operator::source;

/// Gathers the pieces of each snapshot as they reach worker 0 (the chain's state from the
/// terminal, one per model with one model per key; every worker's part of the join's
/// state; the source's state) and makes the snapshot once an epoch is complete.
#[derive(Default)]
pub struct SnapshotAssembler {
    chain: BTreeMap<u64, Vec<ChainParts>>,
    join: BTreeMap<u64, Vec<JoinPart>>,
    source: BTreeMap<u64, SourceState>,
}

impl SnapshotAssembler {
    /// A chain's state at `epoch` (its model is [`ChainParts::model`]).
    pub fn chain(&mut self, epoch: u64, parts: Box<ChainParts>) {
        self.chain.entry(epoch).or_default().push(*parts);
    }

    /// A worker's part of the join's state at `epoch`.
    pub fn join(&mut self, epoch: u64, part: JoinPart) {
        self.join.entry(epoch).or_default().push(part);
    }

    /// The source's state at `epoch`.
    pub fn source(&mut self, epoch: u64, state: SourceState) {
        self.source.insert(epoch, state);
    }

    /// The snapshot of `epoch` (once every input has passed it), if one was taken there:
    /// the chains of `models` models (one per key; 1 without keys) of `stages` stages each,
    /// `score_dim`, and, with a join, its parts merged.
    pub fn take(
        &mut self,
        epoch: u64,
        stages: usize,
        score_dim: usize,
        join: bool,
        models: usize,
    ) -> Option<Result<ChainSnapshot, SnapshotError>> {
        let source = self.source.remove(&epoch)?;
        let parts = self.join.remove(&epoch);
        let mut chains = self.chain.remove(&epoch).unwrap_or_default();
        chains.sort_by_key(|c| c.model);
        let found: Vec<u32> = chains.iter().map(|c| c.model).collect();
        if found.iter().copied().ne(0..models as u32) {
            return Some(Err(SnapshotError::Models {
                epoch,
                found,
                models,
            }));
        }
        let mut chains = chains.into_iter();
        let first = chains.next()?;
        let keyed = chains
            .map(|c| {
                c.complete(stages)
                    .map(|(stages, terminal, position)| KeyChainState {
                        stages,
                        terminal,
                        position,
                    })
            })
            .collect::<Result<Vec<_>, _>>();
        Some(
            first
                .complete(stages)
                .and_then(|(stages, terminal, position)| {
                    let join = join.then(|| {
                        let mut parts = parts.unwrap_or_default();
                        parts.sort_by_key(|p| p.worker);
                        JoinState::merge(epoch, parts.into_iter().map(|p| p.state))
                    });
                    Ok(ChainSnapshot {
                        stages,
                        terminal,
                        score_dim,
                        position,
                        join,
                        source: Some(source),
                        keyed: keyed?,
                    })
                }),
        )
    }
}

/// The join's counts as the differential aggregate reports them (the latest total of each
/// count), plus those of a restored run.
#[derive(Clone, Debug, Default)]
pub struct CountsTracker {
    totals: [i64; 8],
    base: JoinCounts,
}

impl CountsTracker {
    /// A tracker that adds `base` (a restored run's counts).
    pub fn new(base: JoinCounts) -> Self {
        CountsTracker {
            totals: [0; 8],
            base,
        }
    }

    /// One change of the aggregate: count `field` has total `total` (diff +1) or no longer
    /// (diff -1).
    pub fn update(&mut self, field: u8, total: isize, diff: isize) {
        if let Some(t) = self.totals.get_mut(field as usize) {
            if diff > 0 {
                *t = total as i64;
            } else if *t == total as i64 {
                *t = 0;
            }
        }
    }

    /// The counts now.
    pub fn counts(&self) -> JoinCounts {
        let mut c = self.base;
        let g = |i: usize| self.totals[i].max(0) as u64;
        c.admitted += g(0);
        c.feedback += g(1);
        c.joined += g(2);
        c.duplicate += g(3);
        c.repeated += g(4);
        c.late += g(5);
        // The gauges are what the join holds now, restored facts included.
        c.waiting = g(6);
        c.held = g(7);
        c
    }

    /// The names of the counts, in field order.
    pub fn names() -> [&'static str; 8] {
        COUNT_NAMES
    }
}

/// What a sink on worker 0 reads beside the chain's outputs: the source's state at each
/// snapshot (taken from the stamped items), and the join's live counts and snapshot parts
/// (empty streams without a join).
pub struct SinkSideInputs<'scope> {
    /// The source's state at each snapshot epoch.
    pub states: Stream<'scope, u64, Vec<SourceState>>,
    /// The join's live counts.
    pub counts: Stream<'scope, u64, Vec<crate::dataflow::CountUpdate>>,
    /// Every worker's part of the join's state at each snapshot epoch.
    pub parts: Stream<'scope, u64, Vec<JoinPart>>,
    /// Whether there is a join.
    pub has_join: bool,
}

impl<'scope> SinkSideInputs<'scope> {
    /// Splits the snapshot states off `items` and unpacks `join`.
    pub fn new(
        items: Stream<'scope, u64, Vec<Item>>,
        join: Option<super::JoinOutputs<'scope>>,
    ) -> Self {
        let scope = items.scope();
        let has_join = join.is_some();
        let (counts, parts) = match join {
            Some(j) => (j.counts, j.parts),
            None => (empty(scope), empty(scope)),
        };
        let states = items.unary(Pipeline, "SnapshotStates", |_, _| {
            move |input, output| {
                input.for_each(|time, data: &mut Vec<Item>| {
                    output
                        .session(&time)
                        .give_iterator(data.drain(..).filter_map(|i| match i.input {
                            Input::Snapshot(state) => Some(*state),
                            _ => None,
                        }));
                })
            }
        });
        SinkSideInputs {
            states,
            counts,
            parts,
            has_join,
        }
    }
}

/// A stream with nothing in it (and a frontier that is empty at once).
pub fn empty<'scope, D: Clone + 'static>(
    scope: timely::dataflow::Scope<'scope, u64>,
) -> Stream<'scope, u64, Vec<D>> {
    source::<_, timely::container::CapacityContainerBuilder<Vec<D>>, _, _>(
        scope,
        "Empty",
        |capability, _| {
            drop(capability);
            |_output| {}
        },
    )
}
