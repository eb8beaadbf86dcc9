use super::fact::{FeedbackItem, JoinFact, Outcome, Pairing, WaitingEvent};
use super::logic::{
    FactUpdate, JoinConfig, JoinCounts, admit_event, admit_feedback, classify, pair_updates,
    timers,
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
            join.pairs.entry(fp.formed).or_default().push(fp.pair.clone());
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
