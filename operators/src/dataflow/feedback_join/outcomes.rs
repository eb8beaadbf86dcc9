//! The join's outcomes operator: the changes of the outcomes become new pairs, learning
//! passes, count changes and the keeper's inputs.

use super::held::Held;
use super::keeper::KeeperInput;
use super::schedule::Admission;
use crate::engine::InFlight;
use crate::engine::feedback::{Outcome, Pairing, count_changes, learning_pass};
use crate::topk::TopKConfig;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::OutputBuilder;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::vec::Broadcast;

/// A change of the join's outcomes: `((id, outcome), epoch, diff)`.
pub(super) type OutcomeChange = ((u64, Held<Outcome>), u64, isize);

/// How a learning pass is made from a pair: the top-k setting (clicks become pairs with
/// it), the number of labels and the records' score dimension.
#[derive(Clone, Copy, Debug)]
pub(super) struct PassShape {
    pub topk: TopKConfig,
    pub labels: usize,
    pub score_dim: usize,
}

/// What the outcomes operator sends on.
pub(super) struct Routed<'scope> {
    /// The new pairs (their members leave the join next epoch).
    pub pairs: Stream<'scope, u64, Vec<Pairing>>,
    /// Their learning passes.
    pub learning: Stream<'scope, u64, Vec<InFlight>>,
    /// The changes of the live counts (with the feeder's admissions).
    pub counted: Stream<'scope, u64, Vec<Admission>>,
    /// The keeper's inputs (the outcomes, the feeder's admissions, the snapshot
    /// requests).
    pub keeper: Stream<'scope, u64, Vec<KeeperInput>>,
}

/// The outcomes' changes, in one operator, with the feeder's admissions and the snapshot
/// requests (broadcast to every worker's keeper).
pub(super) fn route_outcomes<'scope>(
    outcomes: Stream<'scope, u64, Vec<OutcomeChange>>,
    admitted: Stream<'scope, u64, Vec<Admission>>,
    kept: Stream<'scope, u64, Vec<KeeperInput>>,
    requests: Stream<'scope, u64, Vec<u64>>,
    shape: PassShape,
) -> Routed<'scope> {
    let mut split = OperatorBuilder::new("JoinOutcomes".to_string(), outcomes.scope());
    let mut changes_in = split.new_input(outcomes, Pipeline);
    let mut admitted_in = split.new_input(admitted, Pipeline);
    let mut kept_in = split.new_input(kept, Pipeline);
    let mut requests_in = split.new_input(requests.broadcast(), Pipeline);
    let (pairs_out, pairs) = split.new_output::<Vec<Pairing>>();
    let (learning_out, learning) = split.new_output::<Vec<InFlight>>();
    let (counted_out, counted) = split.new_output::<Vec<Admission>>();
    let (outcomes_out, keeper) = split.new_output::<Vec<KeeperInput>>();
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
                        let PassShape {
                            topk,
                            labels,
                            score_dim,
                        } = shape;
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
    Routed {
        pairs,
        learning,
        counted,
        keeper,
    }
}
