//! The join's keeper: a worker's share of the join's outcomes and counts, epoch by
//! epoch, from which its part of the join's state after an epoch is read.

use super::JoinPart;
use super::held::Held;
use crate::data::Feedback;
use crate::engine::feedback::{FormedPair, JoinCounts, JoinFact, JoinState, Outcome, Pairing};
use std::collections::BTreeMap;

/// What a keeper follows.
#[derive(Clone, Debug)]
pub(super) enum KeeperInput {
    /// A change of an id's outcomes.
    Outcome(u64, Held<Outcome>, i64),
    /// An event admitted by this worker's feeder.
    Admitted,
    /// A feedback record received by this worker's feeder.
    Received,
    /// A snapshot of the state after this epoch is wanted.
    Request,
}

impl KeeperInput {
    /// What a feeder admitted: an event (`field` 0) or a feedback record.
    pub(super) fn admitted(field: u8) -> Self {
        if field == 0 {
            KeeperInput::Admitted
        } else {
            KeeperInput::Received
        }
    }
}

/// What a keeper keeps: the outcomes of its share of the ids, the pairs formed in the last
/// `lag` epochs (worker 0 also those of a restored state) and the counts, so that its part
/// of the join's state after any epoch can be read ([`JoinKeeper::epoch`]).
#[derive(Debug)]
pub(super) struct JoinKeeper {
    /// The worker.
    worker: usize,
    /// The join's loop delay (at least 1).
    lag: u64,
    counts: JoinCounts,
    /// The pairs formed in the last `lag` epochs, by the epoch they formed in.
    pairs: BTreeMap<u64, Vec<Pairing>>,
    /// The outcomes of every id now, with their multiplicities.
    outcomes: BTreeMap<u64, BTreeMap<Held<Outcome>, i64>>,
}

impl JoinKeeper {
    /// The keeper of `worker`; worker 0's carries on the counts and pairs of `restored`.
    pub(super) fn new(worker: usize, lag: u64, restored: Option<&JoinState>) -> Self {
        let mut keeper = JoinKeeper {
            worker,
            lag: lag.max(1),
            counts: JoinCounts::default(),
            pairs: BTreeMap::new(),
            outcomes: BTreeMap::new(),
        };
        if let (Some(state), 0) = (restored, worker) {
            for fp in &state.pairs {
                keeper
                    .pairs
                    .entry(fp.formed)
                    .or_default()
                    .push(fp.pair.clone());
            }
            // The gauges count again as the restored facts come back in.
            keeper.counts = state.counts;
            keeper.counts.waiting = 0;
            keeper.counts.held = 0;
        }
        keeper
    }

    /// Takes what epoch `t` brought; returns the keeper's part of the state after `t`
    /// when it was requested.
    pub(super) fn epoch(
        &mut self,
        t: u64,
        items: impl IntoIterator<Item = KeeperInput>,
    ) -> Option<JoinPart> {
        let mut requested = false;
        for x in items {
            match x {
                KeeperInput::Outcome(id, o, diff) => self.outcome(t, id, o, diff),
                KeeperInput::Admitted => self.counts.admitted += 1,
                KeeperInput::Received => self.counts.feedback += 1,
                KeeperInput::Request => requested = true,
            }
        }
        while let Some(old) = self.pairs.first_entry() {
            if *old.key() + self.lag > t {
                break;
            }
            old.remove();
        }
        requested.then(|| JoinPart {
            worker: self.worker,
            state: self.state(t),
        })
    }

    /// A change of an id's outcomes at epoch `t`.
    fn outcome(&mut self, t: u64, id: u64, o: Held<Outcome>, diff: i64) {
        let value = o.get();
        self.counts.count(&value, t, diff);
        if let (Outcome::Pair(p), true) = (value.as_ref(), diff > 0) {
            self.pairs.entry(t).or_default().push((**p).clone());
        }
        let m = self.outcomes.entry(id).or_default();
        *m.entry(o).or_insert(0) += diff;
        m.retain(|_, d| *d != 0);
        if m.is_empty() {
            self.outcomes.remove(&id);
        }
    }

    /// The keeper's part of the join's state after epoch `t`.
    pub(super) fn state(&self, t: u64) -> JoinState {
        let facts = self
            .outcomes
            .iter()
            .map(|(id, os)| (*id, facts_of(os.keys())))
            .collect();
        let pairs = self
            .pairs
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
            counts: self.counts,
        }
    }
}

/// The facts behind an id's outcomes, in order.
fn facts_of<'a>(outcomes: impl Iterator<Item = &'a Held<Outcome>>) -> Vec<JoinFact> {
    let mut fs: Vec<JoinFact> = Vec::new();
    for o in outcomes {
        match o.get().as_ref() {
            Outcome::Pair(p) => {
                fs.push(JoinFact::Event(p.event.clone()));
                match &p.feedback.kind {
                    // The click window's records: the first here, the others are
                    // `Merged` outcomes; a "no click" is no fact of the join.
                    Feedback::Window(records) => {
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
    fs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::FeedbackItem;
    use crate::data::{Example, Features, Label};
    use crate::engine::Prediction;
    use crate::engine::feedback::WaitingEvent;
    use std::sync::Arc;

    fn event(id: u64, epoch: u64) -> WaitingEvent {
        WaitingEvent {
            seq: id,
            epoch,
            example: Arc::new(Example {
                id,
                features: Features::Dense(vec![0.0]),
                label: None,
            }),
            prediction: Prediction::default(),
            model: 0,
        }
    }

    fn pair(id: u64) -> Pairing {
        Pairing {
            event: event(id, 1),
            feedback: FeedbackItem {
                seq: id + 10,
                epoch: 2,
                id,
                kind: Feedback::Label(Label::Class(1)),
            },
        }
    }

    fn outcome(id: u64, o: Outcome, diff: i64) -> KeeperInput {
        KeeperInput::Outcome(id, Held::new(o), diff)
    }

    #[test]
    fn a_keeper_reports_its_share_only_when_asked() {
        let mut keeper = JoinKeeper::new(1, 2, None);
        let first = [
            outcome(7, Outcome::Waiting(event(7, 1)), 1),
            KeeperInput::Admitted,
        ];
        assert!(keeper.epoch(1, first).is_none());
        let part = keeper
            .epoch(1, [KeeperInput::Request])
            .expect("a requested part");
        assert_eq!(part.worker, 1);
        assert_eq!(part.state.epoch, 1);
        assert_eq!(part.state.counts.admitted, 1);
        assert_eq!(part.state.counts.waiting, 1);
        assert!(matches!(part.state.facts[&7][..], [JoinFact::Event(_)]));
    }

    #[test]
    fn pairs_are_kept_for_lag_epochs_and_outcomes_until_retracted() {
        let mut keeper = JoinKeeper::new(0, 2, None);
        let joined = [
            outcome(7, Outcome::Waiting(event(7, 1)), -1),
            outcome(7, Outcome::Pair(Box::new(pair(7))), 1),
            KeeperInput::Received,
        ];
        keeper.epoch(2, [outcome(7, Outcome::Waiting(event(7, 1)), 1)]);
        let part = keeper
            .epoch(3, joined.into_iter().chain([KeeperInput::Request]))
            .expect("a requested part");
        assert_eq!(part.state.pairs.len(), 1);
        assert_eq!(part.state.pairs[0].formed, 3);
        assert_eq!(part.state.counts.joined, 1);
        // The pair's event and its feedback.
        assert_eq!(part.state.facts[&7].len(), 2);
        let retracted = [outcome(7, Outcome::Pair(Box::new(pair(7))), -1)];
        assert!(keeper.epoch(4, retracted).is_none());
        let later = keeper.epoch(5, [KeeperInput::Request]).expect("a part");
        assert!(later.state.pairs.is_empty());
        assert!(later.state.facts.is_empty());
    }

    #[test]
    fn worker_0_carries_on_a_restored_state() {
        let mut restored = JoinState {
            epoch: 4,
            ..JoinState::default()
        };
        restored.counts.admitted = 5;
        restored.counts.waiting = 3;
        restored.pairs.push(FormedPair {
            formed: 4,
            pair: pair(9),
        });
        let on_0 = JoinKeeper::new(0, 1, Some(&restored)).state(4);
        assert_eq!(on_0.counts.admitted, 5);
        assert_eq!(on_0.counts.waiting, 0);
        assert_eq!(on_0.pairs.len(), 1);
        let on_1 = JoinKeeper::new(1, 1, Some(&restored)).state(4);
        assert_eq!(on_1.counts.admitted, 0);
        assert!(on_1.pairs.is_empty());
    }
}
