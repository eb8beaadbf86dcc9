//! The join's feeder operator: every input becomes its timed updates (see
//! [`Schedule`]), sent with capabilities at their epochs.

use super::keeper::KeeperInput;
use super::schedule::Admission;
use super::schedule::{Arrivals, FactChange, Schedule, Sorted, restored_changes};
use super::shard;
use crate::data::FeedbackItem;
use crate::engine::feedback::{FactUpdate, JoinConfig, JoinState, Pairing, WaitingEvent};
use std::sync::Arc;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::OutputBuilder;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::{Capability, InputCapability};

/// What the feeder sends on.
pub(super) struct Fed<'scope> {
    /// The changes of the join's collection.
    pub updates: Stream<'scope, u64, Vec<FactChange>>,
    /// What it admitted, to the counts.
    pub admitted: Stream<'scope, u64, Vec<Admission>>,
    /// What it admitted, to the keeper.
    pub kept: Stream<'scope, u64, Vec<KeeperInput>>,
}

/// The feeder: events, feedback records and leaving pairs (sharded by event id) become
/// their timed updates, now and scheduled; a restored state enters after its epoch (this
/// worker's share of its ids). One operator with three inputs and three outputs: with an
/// epoch per feedback record, every operator costs progress tracking and scheduling at
/// every epoch.
pub(super) fn feeder<'scope>(
    events: Stream<'scope, u64, Vec<WaitingEvent>>,
    feedback: Stream<'scope, u64, Vec<FeedbackItem>>,
    leaving: Stream<'scope, u64, Vec<Pairing>>,
    config: JoinConfig,
    restored: Option<Arc<JoinState>>,
) -> Fed<'scope> {
    let scope = events.scope();
    let (index, peers) = (scope.index() as u64, scope.peers() as u64);
    let mut feeder = OperatorBuilder::new("JoinFeeder".to_string(), scope);
    let shard_event = |e: &WaitingEvent| shard(&e.example.id);
    let mut events_in = feeder.new_input(events, Exchange::new(shard_event));
    let mut feedback_in =
        feeder.new_input(feedback, Exchange::new(|f: &FeedbackItem| shard(&f.id)));
    let shard_pair = |p: &Pairing| shard(&p.event.example.id);
    let mut leaving_in = feeder.new_input(leaving, Exchange::new(shard_pair));
    let (updates_out, updates) = feeder.new_output::<Vec<FactChange>>();
    let (admitted_out, admitted) = feeder.new_output::<Vec<Admission>>();
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
        let mut held = HeldUpdates::default();
        move |frontiers| {
            let mut updates_out = updates_out.activate();
            let mut admitted_out = admitted_out.activate();
            let mut kept_out = kept_out.activate();
            if let Some((capability, state)) = restore.take() {
                let mine = |id: &u64| shard(id) % peers == index;
                for (cap, c) in restored_at(&capability, &state, &config, mine) {
                    updates_out.session(&cap).give(c);
                }
            }
            // Each input's updates, by the epoch they apply at; what was admitted, at the
            // input's epoch.
            let mut send = |time: &InputCapability<u64>, arrivals: Arrivals| {
                let output = updates_out.output_index();
                for (cap, changes) in held.sort(time, output, arrivals.updates) {
                    updates_out.session(&cap).give_iterator(changes.into_iter());
                }
                let (mut counted, mut kept) = arrivals.admitted.at(*time.time());
                if !counted.is_empty() {
                    admitted_out.session(time).give_container(&mut counted);
                    kept_out.session(time).give_container(&mut kept);
                }
            };
            events_in.for_each(|time, data| send(&time, Arrivals::events(data, &config)));
            feedback_in.for_each(|time, data| send(&time, Arrivals::feedback(data, &config)));
            leaving_in.for_each(|time, data| {
                let t = *time.time();
                send(&time, Arrivals::leaving(data, t, &config))
            });
            // Release the held updates whose epoch every input has reached.
            let reached = |at: u64| !frontiers.iter().any(|f| f.less_than(&at));
            for (cap, changes) in held.release(reached) {
                updates_out.session(&cap).give_iterator(changes.into_iter());
            }
        }
    });
    Fed {
        updates,
        admitted,
        kept,
    }
}

/// The feeder's held updates ([`Schedule`]) with the one capability they need, for the
/// earliest of them (one per epoch would cost progress tracking at every epoch).
#[derive(Default)]
struct HeldUpdates {
    schedule: Schedule,
    cap: Option<Capability<u64>>,
}

impl HeldUpdates {
    /// The updates that came at `time`: those due now, with their capabilities (on
    /// `output`); the later ones are held.
    fn sort(
        &mut self,
        time: &InputCapability<u64>,
        output: usize,
        updates: Vec<FactUpdate>,
    ) -> Vec<(Capability<u64>, Vec<FactChange>)> {
        let Sorted { due, earliest_held } = self.schedule.sort(*time.time(), updates);
        if let Some(at) = earliest_held
            && self.cap.as_ref().is_none_or(|c| *c.time() > at)
        {
            self.cap = Some(time.delayed(&at, output));
        }
        due.into_iter()
            .map(|(at, changes)| (time.delayed(&at, output), changes))
            .collect()
    }

    /// The held updates of the epochs every input has reached, with their capabilities;
    /// the capability then moves on to the next held epoch (or is dropped).
    fn release(
        &mut self,
        reached: impl Fn(u64) -> bool,
    ) -> Vec<(Capability<u64>, Vec<FactChange>)> {
        let mut out = Vec::new();
        for (at, changes) in self.schedule.release(reached) {
            if let Some(cap) = self.cap.as_ref() {
                out.push((cap.delayed(&at), changes));
            }
        }
        match (self.schedule.next(), self.cap.as_mut()) {
            (Some(next), Some(cap)) if *cap.time() < next => cap.downgrade(&next),
            (None, _) => self.cap = None,
            _ => {}
        }
        out
    }
}

/// The changes that bring a restored state back, each with its capability (after the
/// state's epoch).
fn restored_at(
    capability: &Capability<u64>,
    state: &JoinState,
    config: &JoinConfig,
    mine: impl Fn(&u64) -> bool,
) -> Vec<(Capability<u64>, FactChange)> {
    let start = capability.delayed(&(state.epoch + 1));
    restored_changes(state, config, mine)
        .into_iter()
        .map(|c| (start.delayed(&c.1), c))
        .collect()
}
