//! The feedback join on differential-dataflow ([`FeedbackJoinExt`]): a feeder, the join's
//! `reduce`, an outcomes operator and a keeper per worker.

mod feeder;
mod held;
mod keeper;
mod outcomes;
mod schedule;

use self::feeder::feeder;
use self::held::Held;
use self::keeper::{JoinKeeper, KeeperInput};
use self::outcomes::{PassShape, route_outcomes};
use super::ordered_stash::TimeStash;
use crate::data::FeedbackItem;
use crate::engine::InFlight;
use crate::engine::feedback::{
    JoinConfig, JoinFact, JoinState, Outcome, Pairing, WaitingEvent, classify,
};
use crate::rng::splitmix64;
use crate::topk::TopKConfig;
use differential_dataflow::operators::CountTotal;
use differential_dataflow::{AsCollection, VecCollection};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::{ConnectLoop, Feedback};
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

/// The worker a fact of `id` is fed on.
pub(super) fn shard(id: &u64) -> u64 {
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
        let keeper = JoinKeeper::new(scope.index(), config.lag, restored.as_deref());
        // Pairs come back one epoch later to take their members out.
        let (leave_handle, leaving) = scope.feedback::<Vec<Pairing>>(1);
        let fed = feeder(self, feedback, leaving, config, restored);
        let outcomes = classified(fed.updates.as_collection(), config);
        let shape = PassShape {
            topk,
            labels,
            score_dim,
        };
        let routed = route_outcomes(outcomes.inner, fed.admitted, fed.kept, requests, shape);
        routed.pairs.connect_loop(leave_handle);
        JoinStreams {
            learning: routed.learning,
            // Live counts, a differential aggregate over the outcomes' changes and the
            // admissions.
            counts: routed.counted.as_collection().count_total().inner,
            parts: keep(routed.keeper, keeper),
        }
    }
}

/// The join itself: each id's facts, classified. Facts and outcomes are [`Held`]: the
/// arrangements clone and drop them at every merge of their batches, which would
/// otherwise copy each event's prediction.
fn classified<'scope>(
    updates: VecCollection<'scope, u64, (u64, Held<JoinFact>), isize>,
    config: JoinConfig,
) -> VecCollection<'scope, u64, (u64, Held<Outcome>), isize> {
    updates.reduce_named(
        "FeedbackJoin",
        move |_id, input: &[(&Held<JoinFact>, isize)], output: &mut Vec<(Held<Outcome>, isize)>| {
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
    )
}

/// The keepers: each worker's share of the outcomes, and its counts, per epoch; its part
/// of the join's state after each requested epoch goes to worker 0.
fn keep<'scope>(
    inputs: Stream<'scope, u64, Vec<KeeperInput>>,
    mut keeper: JoinKeeper,
) -> Stream<'scope, u64, Vec<JoinPart>> {
    let parts = inputs.unary_frontier(Pipeline, "JoinKeeper", move |_, _| {
        let mut stash: TimeStash<KeeperInput> = TimeStash::default();
        move |(input, frontier), output| {
            stash.absorb(input, output.output_index());
            while let Some((capability, items)) = stash.next_complete(frontier) {
                if let Some(part) = keeper.epoch(*capability.time(), items) {
                    output.session(&capability).give(part);
                }
            }
        }
    });
    parts.unary(Exchange::new(|_: &JoinPart| 0u64), "JoinParts", |_, _| {
        move |input, output| {
            input.for_each(|time, data: &mut Vec<JoinPart>| {
                output.session(&time).give_container(data);
            })
        }
    })
}
