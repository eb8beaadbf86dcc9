use super::fact::{FeedbackItem, JoinFact, Outcome, Pairing, WaitingEvent};
use super::logic::{
    FactUpdate, JoinConfig, JoinCounts, admit_event, admit_feedback, classify, pair_updates, timers,
};
use super::state::{FormedPair, JoinState};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The feedback join, in memory, one epoch at a time: the reference the differential
/// dataflow join must equal (the sequential runner uses it).
///
/// It keeps the facts of every id and the updates scheduled for later epochs (expiries,
/// markers), and recomputes [`classify`] for every id whose facts changed in an epoch,
/// exactly where differential's `reduce` does; the changes of the outcomes are counted as
/// the dataflow counts them, and the new pairs are returned.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JoinReference {
    config: JoinConfig,
    /// The facts of every id now.
    facts: BTreeMap<u64, BTreeMap<JoinFact, i64>>,
    /// The outcomes of every id now.
    outcomes: BTreeMap<u64, Vec<Outcome>>,
    /// Updates scheduled for later epochs.
    scheduled: BTreeMap<u64, Vec<FactUpdate>>,
    /// Pairs formed in the last `lag` epochs whose learning passes are still to come, by
    /// the epoch they formed in.
    pairs: BTreeMap<u64, Vec<Pairing>>,
    counts: JoinCounts,
}

impl JoinReference {
    /// An empty join.
    pub fn new(config: JoinConfig) -> Self {
        JoinReference {
            config,
            facts: BTreeMap::new(),
            outcomes: BTreeMap::new(),
            scheduled: BTreeMap::new(),
            pairs: BTreeMap::new(),
            counts: JoinCounts::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &JoinConfig {
        &self.config
    }

    /// The next epoch with a scheduled change (an expiry, a marker, a pair leaving).
    pub fn next_scheduled(&self) -> Option<u64> {
        self.scheduled.keys().next().copied()
    }

    /// The counts so far.
    pub fn counts(&self) -> JoinCounts {
        self.counts
    }

    /// Runs epoch `t`: the facts scheduled for it, the events predicted and the feedback
    /// received in it; returns the pairs formed in it (in position order), whose learning
    /// passes enter the chain `lag` epochs later.
    pub fn epoch(
        &mut self,
        t: u64,
        events: Vec<WaitingEvent>,
        feedback: Vec<FeedbackItem>,
    ) -> Vec<Pairing> {
        let mut updates: Vec<FactUpdate> = Vec::new();
        // Everything scheduled up to `t` (nothing is scheduled before the current epoch,
        // but a restored join may start later than its schedule).
        while let Some(entry) = self.scheduled.first_entry() {
            if *entry.key() > t {
                break;
            }
            updates.extend(entry.remove());
        }
        for e in events {
            self.counts.admitted += 1;
            updates.extend(admit_event(e, &self.config));
        }
        for f in feedback {
            self.counts.feedback += 1;
            updates.extend(admit_feedback(f, &self.config));
        }
        let formed = self.apply(t, updates);
        // Pairs leave the join in the next epoch.
        for p in &formed {
            for u in pair_updates(p, t, &self.config) {
                self.schedule(u, t);
            }
        }
        // Forget pairs whose learning passes have entered the chain.
        let lag = self.config.lag.max(1);
        while let Some(entry) = self.pairs.first_entry() {
            if *entry.key() + lag > t {
                break;
            }
            entry.remove();
        }
        if !formed.is_empty() {
            self.pairs.insert(t, formed.clone());
        }
        formed
    }

    fn schedule(&mut self, u: FactUpdate, now: u64) {
        debug_assert!(u.epoch > now);
        self.scheduled.entry(u.epoch).or_default().push(u);
    }

    /// Applies the updates of epoch `t` (later ones are scheduled), reclassifies the ids
    /// they touch, counts the changes and returns the new pairs.
    fn apply(&mut self, t: u64, updates: Vec<FactUpdate>) -> Vec<Pairing> {
        let mut touched = BTreeSet::new();
        for u in updates {
            if u.epoch > t {
                self.schedule(u, t);
                continue;
            }
            let facts = self.facts.entry(u.id).or_default();
            let m = facts.entry(u.fact).or_insert(0);
            *m += u.diff;
            touched.insert(u.id);
        }
        let mut formed = Vec::new();
        for id in touched {
            let facts = self.facts.get_mut(&id).expect("touched");
            facts.retain(|_, m| *m != 0);
            let mut new = Vec::new();
            let present: Vec<&JoinFact> = facts
                .iter()
                .filter(|(_, m)| **m > 0)
                .map(|(f, _)| f)
                .collect();
            if !present.is_empty() {
                classify(&present, &mut new);
            }
            new.sort();
            if facts.is_empty() {
                self.facts.remove(&id);
            }
            let old = self.outcomes.remove(&id).unwrap_or_default();
            // The changes, as differential sees them: old outcomes out, new ones in
            // (consolidated: unchanged outcomes make no change).
            for o in &old {
                if new.binary_search(o).is_err() {
                    self.counts.count(o, t, -1);
                }
            }
            for o in &new {
                if old.binary_search(o).is_err() {
                    self.counts.count(o, t, 1);
                    if let Outcome::Pair(p) = o {
                        formed.push((**p).clone());
                    }
                }
            }
            if !new.is_empty() {
                self.outcomes.insert(id, new);
            }
        }
        formed.sort_by_key(Pairing::seq);
        formed
    }

    /// The join's state after epoch `t`, in its canonical form (what a snapshot holds).
    pub fn state(&self, t: u64) -> JoinState {
        let facts = self
            .facts
            .iter()
            .map(|(id, fs)| {
                let present: Vec<JoinFact> = fs
                    .iter()
                    .filter(|(_, m)| **m > 0)
                    .map(|(f, _)| f.clone())
                    .collect();
                (*id, present)
            })
            .filter(|(_, fs)| !fs.is_empty())
            .collect();
        let lag = self.config.lag.max(1);
        let pairs = self
            .pairs
            .iter()
            .filter(|(formed, _)| **formed + lag > t)
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

    /// The join a snapshot's state describes, ready to run the epochs after it.
    pub fn restore(config: JoinConfig, state: &JoinState) -> Self {
        let mut join = JoinReference::new(config);
        let t = state.epoch;
        join.counts = state.counts;
        for (id, facts) in &state.facts {
            let mut present = BTreeMap::new();
            for f in facts {
                present.insert(f.clone(), 1);
                for u in timers(*id, f, &config) {
                    if u.epoch > t {
                        join.schedule(u, t);
                    }
                }
            }
            let mut outcomes = Vec::new();
            let refs: Vec<&JoinFact> = present.keys().collect();
            classify(&refs, &mut outcomes);
            outcomes.sort();
            join.facts.insert(*id, present);
            if !outcomes.is_empty() {
                join.outcomes.insert(*id, outcomes);
            }
        }
        for fp in &state.pairs {
            if fp.formed == t {
                for u in pair_updates(&fp.pair, t, &config) {
                    join.schedule(u, t);
                }
            }
            join.pairs
                .entry(fp.formed)
                .or_default()
                .push(fp.pair.clone());
        }
        join
    }

    /// The pairs formed in the `lag` epochs up to `t` whose learning passes enter the
    /// chain after `t`, by the epoch they enter in.
    pub fn learning_due_after(&self, t: u64) -> Vec<(u64, Pairing)> {
        let lag = self.config.lag.max(1);
        self.pairs
            .iter()
            .filter(|(formed, _)| *formed + lag > t)
            .flat_map(|(formed, ps)| ps.iter().map(move |p| (formed + lag, p.clone())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Example, Features, Label};
    use crate::engine::Prediction;
    use crate::join::FeedbackKind;
    use std::sync::Arc;

    fn waiting(id: u64, seq: u64, epoch: u64) -> WaitingEvent {
        WaitingEvent {
            seq,
            epoch,
            example: Arc::new(Example {
                id,
                features: Features::Dense(vec![]),
                label: None,
            }),
            prediction: Prediction::default(),
        }
    }

    fn fb(id: u64, seq: u64, epoch: u64) -> FeedbackItem {
        FeedbackItem {
            seq,
            epoch,
            id,
            kind: FeedbackKind::Label(Label::Class(1)),
        }
    }

    #[test]
    fn feedback_before_after_never_and_twice() {
        let mut j = JoinReference::new(JoinConfig {
            ttl: Some(3),
            lag: 1,
        });
        // Epoch 0: event 1 waits; feedback for 2 comes before its event.
        assert!(
            j.epoch(0, vec![waiting(1, 0, 0)], vec![fb(2, 1, 0)])
                .is_empty()
        );
        let c = j.counts();
        assert_eq!((c.admitted, c.feedback, c.waiting, c.held), (1, 1, 1, 1));
        // Epoch 1: feedback for 1 (after its event), and event 2 (after its feedback).
        let pairs = j.epoch(1, vec![waiting(2, 3, 1)], vec![fb(1, 2, 1)]);
        assert_eq!(
            pairs.iter().map(Pairing::seq).collect::<Vec<_>>(),
            vec![2, 3]
        );
        // Epoch 2: the pairs leave; a second feedback for 1 is a repeat.
        assert!(j.epoch(2, vec![], vec![fb(1, 4, 2)]).is_empty());
        let c = j.counts();
        assert_eq!((c.joined, c.repeated, c.waiting), (2, 1, 0));
        // Event 3 never gets feedback: it expires at epoch 3 + 3; late feedback after that.
        j.epoch(3, vec![waiting(3, 5, 3)], vec![]);
        for t in 4..6 {
            j.epoch(t, vec![], vec![]);
        }
        assert_eq!(j.counts().waiting, 1);
        j.epoch(6, vec![], vec![]);
        assert_eq!(j.counts().waiting, 0);
        assert!(j.epoch(7, vec![], vec![fb(3, 6, 7)]).is_empty());
        let c = j.counts();
        assert_eq!((c.late, c.expired()), (1, 1));
        // Every count adds up: admitted = joined + waiting + expired.
        assert_eq!(c.admitted, c.joined + c.waiting + c.expired());
    }

    #[test]
    fn a_restored_join_continues_exactly() {
        let config = JoinConfig {
            ttl: Some(4),
            lag: 2,
        };
        let run = |j: &mut JoinReference, from: u64, to: u64| -> Vec<(u64, u64)> {
            let mut out = Vec::new();
            for t in from..to {
                let events = if t % 2 == 0 {
                    vec![waiting(t, 2 * t, t)]
                } else {
                    vec![]
                };
                let feedback = if t >= 1 {
                    vec![fb(t - 1, 2 * t + 1, t)]
                } else {
                    vec![]
                };
                out.extend(j.epoch(t, events, feedback).iter().map(|p| (t, p.seq())));
            }
            out
        };
        let mut full = JoinReference::new(config);
        let all = run(&mut full, 0, 12);
        let mut first = JoinReference::new(config);
        let mut cut = run(&mut first, 0, 5);
        let state = first.state(4);
        let bytes = postcard::to_allocvec(&state).unwrap();
        let state: JoinState = postcard::from_bytes(&bytes).unwrap();
        let mut second = JoinReference::restore(config, &state);
        cut.extend(run(&mut second, 5, 12));
        assert_eq!(cut, all);
        assert_eq!(second.counts(), full.counts());
        assert_eq!(
            postcard::to_allocvec(&second.state(11)).unwrap(),
            postcard::to_allocvec(&full.state(11)).unwrap()
        );
    }
}
