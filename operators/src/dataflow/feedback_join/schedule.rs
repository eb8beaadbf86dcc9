//! When the join's timed updates enter its collection: the feeder's plain rules (see
//! [`Schedule`]).

use super::held::Held;
use super::keeper::KeeperInput;
use crate::data::FeedbackItem;
use crate::engine::feedback::{
    FactUpdate, JoinConfig, JoinFact, JoinState, Pairing, WaitingEvent, admit_event,
    admit_feedback, pair_updates, timers,
};
use std::collections::BTreeMap;

/// A change of the join's input collection: `((id, fact), epoch, diff)`.
pub(super) type FactChange = ((u64, Held<JoinFact>), u64, isize);

/// A timed update as a change of the collection, at `at` (its epoch, or later for a
/// restored one).
pub(super) fn change(u: FactUpdate, at: u64) -> FactChange {
    ((u.id, Held::new(u.fact)), at, u.diff as isize)
}

/// A count admitted by a feeder: `(count field, epoch, diff)` (0: an event, 1: a feedback
/// record).
pub(super) type Admission = (u8, u64, isize);

/// What came to a feeder on one input at one epoch: its timed updates and what it
/// admitted.
#[derive(Debug)]
pub(super) struct Arrivals {
    /// The updates, at their epochs.
    pub updates: Vec<FactUpdate>,
    /// What was admitted.
    pub admitted: Admitted,
}

/// What a feeder admitted at one epoch: events, feedback records or nothing (leaving
/// pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Admitted {
    /// This many events.
    Events(usize),
    /// This many feedback records.
    Feedback(usize),
    /// Nothing.
    Nothing,
}

impl Arrivals {
    /// Events that wait for their feedback (taken out of `data`).
    pub(super) fn events(data: &mut Vec<WaitingEvent>, config: &JoinConfig) -> Self {
        Arrivals {
            admitted: Admitted::Events(data.len()),
            updates: data
                .drain(..)
                .flat_map(|e| admit_event(e, config))
                .collect(),
        }
    }

    /// Feedback records (taken out of `data`).
    pub(super) fn feedback(data: &mut Vec<FeedbackItem>, config: &JoinConfig) -> Self {
        Arrivals {
            admitted: Admitted::Feedback(data.len()),
            updates: data
                .drain(..)
                .flat_map(|f| admit_feedback(f, config))
                .collect(),
        }
    }

    /// Pairs leaving the join at epoch `t`, one epoch after they formed (taken out of
    /// `data`).
    pub(super) fn leaving(data: &mut Vec<Pairing>, t: u64, config: &JoinConfig) -> Self {
        let formed = t.saturating_sub(1);
        Arrivals {
            admitted: Admitted::Nothing,
            updates: data
                .drain(..)
                .flat_map(|p| pair_updates(&p, formed, config))
                .collect(),
        }
    }
}

impl Admitted {
    /// What was admitted at epoch `t`, for the counts and for the keeper.
    pub(super) fn at(self, t: u64) -> (Vec<Admission>, Vec<KeeperInput>) {
        let (field, n) = match self {
            Admitted::Events(n) => (0, n),
            Admitted::Feedback(n) => (1, n),
            Admitted::Nothing => (0, 0),
        };
        let counted = (0..n).map(|_| (field, t, 1isize)).collect();
        let kept = (0..n).map(|_| KeeperInput::admitted(field)).collect();
        (counted, kept)
    }
}

/// The updates for later epochs (expiries, markers) that a feeder holds until every input
/// has reached their epoch: sent at once, they would wait in the arrangements' batchers,
/// which merge and scan what waits at every epoch.
#[derive(Debug, Default)]
pub(super) struct Schedule {
    held: BTreeMap<u64, Vec<FactChange>>,
}

/// The updates of one input, sorted by [`Schedule::sort`].
#[derive(Debug, Default)]
pub(super) struct Sorted {
    /// The changes due now, by the epoch they apply at (the input's), in order.
    pub due: Vec<(u64, Vec<FactChange>)>,
    /// The earliest epoch of those held for later, if any.
    pub earliest_held: Option<u64>,
}

impl Schedule {
    /// Sorts `updates`, which came at epoch `now`, by the epoch they apply at: those of
    /// `now` (or before) are due, the later ones are held.
    pub(super) fn sort(&mut self, now: u64, updates: Vec<FactUpdate>) -> Sorted {
        let mut by_time: BTreeMap<u64, Vec<FactUpdate>> = BTreeMap::new();
        for u in updates {
            by_time.entry(u.epoch).or_default().push(u);
        }
        let mut sorted = Sorted::default();
        for (at, us) in by_time {
            let changes = us.into_iter().map(|u| change(u, at));
            if at > now {
                sorted.earliest_held.get_or_insert(at);
                self.held.entry(at).or_default().extend(changes);
            } else {
                sorted.due.push((at, changes.collect()));
            }
        }
        sorted
    }

    /// Takes out the held changes of the epochs, from the earliest, that `reached` says
    /// every input has reached, in order.
    pub(super) fn release(&mut self, reached: impl Fn(u64) -> bool) -> Vec<(u64, Vec<FactChange>)> {
        let mut out = Vec::new();
        while let Some(entry) = self.held.first_entry() {
            if !reached(*entry.key()) {
                break;
            }
            let at = *entry.key();
            out.push((at, entry.remove()));
        }
        out
    }

    /// The earliest epoch held, if any.
    pub(super) fn next(&self) -> Option<u64> {
        self.held.keys().next().copied()
    }
}

/// The changes that bring `state` (the join's state after its epoch) back into the
/// collection, for the ids that `mine` says are this worker's: each fact present with its
/// timers, and the updates of the pairs formed in its last epoch; each at its epoch, or
/// just after the state's if that is later.
pub(super) fn restored_changes(
    state: &JoinState,
    config: &JoinConfig,
    mine: impl Fn(&u64) -> bool,
) -> Vec<FactChange> {
    let t = state.epoch;
    let mut updates = Vec::new();
    for (id, facts) in state.facts.iter().filter(|(id, _)| mine(id)) {
        for fact in facts {
            updates.push(FactUpdate {
                id: *id,
                fact: fact.clone(),
                epoch: t + 1,
                diff: 1,
            });
            updates.extend(timers(*id, fact, config, t));
        }
    }
    for fp in &state.pairs {
        if fp.formed == t && mine(&fp.pair.event.example.id) {
            updates.extend(pair_updates(&fp.pair, t, config));
        }
    }
    updates
        .into_iter()
        .map(|u| {
            let at = u.epoch.max(t + 1);
            change(u, at)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(id: u64, epoch: u64) -> FactUpdate {
        FactUpdate {
            id,
            fact: JoinFact::Gone { seq: id, epoch },
            epoch,
            diff: 1,
        }
    }

    #[test]
    fn sort_sends_the_present_and_holds_the_future() {
        let mut schedule = Schedule::default();
        let sorted = schedule.sort(5, vec![marker(1, 7), marker(2, 5), marker(3, 6)]);
        let due: Vec<(u64, usize)> = sorted.due.iter().map(|(t, c)| (*t, c.len())).collect();
        assert_eq!(due, [(5, 1)]);
        assert_eq!(sorted.earliest_held, Some(6));
        assert_eq!(schedule.next(), Some(6));
        // Nothing is released before every input reached the epoch.
        assert!(schedule.release(|t| t < 6).is_empty());
        let released: Vec<u64> = schedule
            .release(|t| t <= 6)
            .iter()
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(released, [6]);
        assert_eq!(schedule.next(), Some(7));
        let rest = schedule.release(|_| true);
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].1[0].0.0, 1);
        assert_eq!(schedule.next(), None);
    }

    #[test]
    fn a_restored_state_enters_after_its_epoch() {
        let mut state = JoinState {
            epoch: 4,
            ..JoinState::default()
        };
        for id in [1, 2] {
            state
                .facts
                .insert(id, vec![JoinFact::Joined { seq: id, epoch: 2 }]);
        }
        let config = JoinConfig::default();
        let changes = restored_changes(&state, &config, |id| *id == 2);
        assert!(!changes.is_empty());
        assert!(changes.iter().all(|((id, _), at, _)| *id == 2 && *at >= 5));
    }

    #[test]
    fn arrivals_admit_and_leaving_pairs_admit_nothing() {
        assert_eq!(Admitted::Nothing.at(3).0.len(), 0);
        let (counted, kept) = Admitted::Feedback(2).at(3);
        assert_eq!(counted, [(1, 3, 1), (1, 3, 1)]);
        assert!(matches!(
            kept[..],
            [KeeperInput::Received, KeeperInput::Received]
        ));
        let (counted, kept) = Admitted::Events(1).at(4);
        assert_eq!(counted, [(0, 4, 1)]);
        assert!(matches!(kept[..], [KeeperInput::Admitted]));
        let arrivals = Arrivals::leaving(&mut Vec::new(), 5, &JoinConfig::default());
        assert!(arrivals.updates.is_empty());
        assert_eq!(arrivals.admitted, Admitted::Nothing);
    }
}
