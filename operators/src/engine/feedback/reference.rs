use super::fact::{JoinFact, Outcome, Pairing, WaitingEvent};
use super::logic::{
    FactUpdate, JoinConfig, JoinCounts, admit_event, admit_feedback, classify, pair_updates, timers,
};
use super::state::{FormedPair, JoinState};
use crate::data::FeedbackItem;
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
                classify(&present, &self.config, &mut new);
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
                for u in timers(*id, f, &config, t) {
                    join.schedule(u, t);
                }
            }
            let mut outcomes = Vec::new();
            let refs: Vec<&JoinFact> = present.keys().collect();
            classify(&refs, &config, &mut outcomes);
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
    use crate::data::Feedback;
    use crate::data::{Example, Features, Label};
    use crate::engine::Prediction;
    use crate::engine::feedback::learning_pass;
    use std::sync::Arc;

    fn waiting(id: u64, seq: u64, epoch: u64) -> WaitingEvent {
        WaitingEvent {
            model: 0,
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
            kind: Feedback::Label(Label::Class(1)),
        }
    }

    #[test]
    fn feedback_before_after_never_and_twice() {
        let mut j = JoinReference::new(JoinConfig {
            ttl: Some(3),
            lag: 1,
            window: false,
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
            window: false,
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

    fn click(id: u64, seq: u64, epoch: u64, item: u32) -> FeedbackItem {
        FeedbackItem {
            seq,
            epoch,
            id,
            kind: Feedback::Logged(vec![(item, 0.5)]),
        }
    }

    fn window(ttl: u64) -> JoinConfig {
        JoinConfig {
            ttl: Some(ttl),
            lag: 1,
            window: true,
        }
    }

    #[test]
    fn the_click_window_gathers_clicks_until_it_closes_then_learns_them_or_no_click() {
        let mut j = JoinReference::new(window(3));
        // Epoch 0: impressions 1 and 2; a click for 3 before its impression.
        assert!(
            j.epoch(
                0,
                vec![waiting(1, 0, 0), waiting(2, 1, 0)],
                vec![click(3, 2, 0, 4)]
            )
            .is_empty()
        );
        // Epochs 1-2: two click records for 1 (no pair before the window closes).
        assert!(
            j.epoch(1, vec![waiting(3, 3, 1)], vec![click(1, 4, 1, 7)])
                .is_empty()
        );
        assert!(j.epoch(2, vec![], vec![click(1, 5, 2, 9)]).is_empty());
        assert_eq!((j.counts().waiting, j.counts().held), (3, 3));
        // Epoch 3 = 0 + ttl: the windows of 1 and 2 close: 1 with both records merged, 2
        // with none ("no click", at its own position).
        let pairs = j.epoch(3, vec![], vec![]);
        assert_eq!(pairs.len(), 2);
        let Feedback::Window(records) = &pairs[1].feedback.kind else {
            panic!("{:?}", pairs[1]);
        };
        assert_eq!(
            records.iter().map(|f| f.seq).collect::<Vec<_>>(),
            vec![4, 5]
        );
        assert!(!pairs[1].no_click());
        assert!(pairs[0].no_click());
        assert_eq!(pairs[0].seq(), 1);
        let c = j.counts();
        assert_eq!((c.joined, c.repeated, c.expired()), (1, 1, 1));
        // A click for 1 after its window: late; 3's window closes (epoch 1 + ttl) with the
        // click that came before its impression.
        assert_eq!(j.epoch(4, vec![], vec![click(1, 6, 4, 2)]).len(), 1);
        assert_eq!(j.counts().late, 1);
        let c = j.counts();
        assert_eq!((c.joined, c.waiting, c.held), (2, 0, 1));
        // The learning pass of a merged window: both clicks, weighted by 1 / 0.5.
        let topk = crate::topk::TopKConfig::default();
        let pass = learning_pass(&pairs[1], &topk, 10, 10);
        let fbk = pass.pairs.as_ref().unwrap();
        assert_eq!(fbk.relevant, vec![7, 9]);
        assert_eq!(fbk.pairs.len(), 2 * 8);
        assert!(fbk.pairs.iter().all(|p| p.weight == 2.0));
        // No click: a learning pass without pairs.
        let pass = learning_pass(&pairs[0], &topk, 10, 10);
        assert!(pass.pairs.as_ref().unwrap().pairs.is_empty());
    }

    #[test]
    fn a_restored_click_window_continues_exactly() {
        let config = window(3);
        let run = |j: &mut JoinReference, from: u64, to: u64| -> Vec<(u64, u64, bool)> {
            let mut out = Vec::new();
            for t in from..to {
                let events = vec![waiting(t, 3 * t, t)];
                let mut feedback = Vec::new();
                if t % 3 == 1 {
                    feedback.push(click(t - 1, 3 * t + 1, t, 1));
                    feedback.push(click(t + 1, 3 * t + 2, t, 2));
                }
                out.extend(
                    j.epoch(t, events, feedback)
                        .iter()
                        .map(|p| (t, p.seq(), p.no_click())),
                );
            }
            out
        };
        let mut full = JoinReference::new(config);
        let all = run(&mut full, 0, 14);
        for cut_at in [2, 3, 4, 5] {
            let mut first = JoinReference::new(config);
            let mut cut = run(&mut first, 0, cut_at + 1);
            let bytes = postcard::to_allocvec(&first.state(cut_at)).unwrap();
            let state: JoinState = postcard::from_bytes(&bytes).unwrap();
            let mut second = JoinReference::restore(config, &state);
            cut.extend(run(&mut second, cut_at + 1, 14));
            assert_eq!(cut, all, "cut after {cut_at}");
            assert_eq!(second.counts(), full.counts());
            assert_eq!(
                postcard::to_allocvec(&second.state(13)).unwrap(),
                postcard::to_allocvec(&full.state(13)).unwrap()
            );
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use std::collections::BTreeSet;

        /// What arrives in one epoch: event ids and feedback ids (from a few ids, so that
        /// duplicates, repeats, late and early feedback all happen).
        type Epoch = (Vec<u64>, Vec<u64>);

        fn stream() -> impl Strategy<Value = (Option<u64>, u64, Vec<Epoch>)> {
            let epoch = (
                prop::collection::vec(0u64..6, 0..3),
                prop::collection::vec(0u64..6, 0..3),
            );
            (
                prop::option::of(1u64..5),
                1u64..3,
                prop::collection::vec(epoch, 1..25),
            )
        }

        /// The event and feedback positions present in the join after an epoch.
        fn present(state: &JoinState) -> (BTreeSet<u64>, BTreeSet<u64>) {
            let (mut events, mut feedback) = (BTreeSet::new(), BTreeSet::new());
            for f in state.facts.values().flatten() {
                match f {
                    JoinFact::Event(e) => {
                        events.insert(e.seq);
                    }
                    JoinFact::Feedback(fb) => {
                        feedback.insert(fb.seq);
                    }
                    _ => {}
                }
            }
            (events, feedback)
        }

        proptest! {
            /// The accounting identity, checked against what the join's state shows after
            /// every epoch rather than against the counts' own formulas: every event
            /// admitted is joined (in exactly one pair), waiting now, or gone from the join
            /// unpaired (expired); every feedback record likewise (joined, held now, or
            /// unmatched); `expired()` and `unmatched()` equal what left unpaired; without a
            /// time-to-live nothing leaves unpaired, and with one nothing stays for ever.
            #[test]
            fn every_event_and_feedback_record_is_accounted_for(
                (ttl, lag, epochs) in stream()
            ) {
                let mut j = JoinReference::new(JoinConfig::new(ttl, lag));
                let mut seq = 0u64;
                let (mut events_in, mut feedback_in) = (BTreeSet::new(), BTreeSet::new());
                let (mut paired_events, mut paired_feedback) = (BTreeSet::new(), BTreeSet::new());
                let mut pairs = 0u64;
                // The epochs of the stream, then quiet ones until every timer has fired.
                let quiet = ttl.map_or(2, |t| 2 * t + lag + 2);
                let total = epochs.len() as u64 + quiet;
                for t in 0..total {
                    let (ev, fbs) = epochs.get(t as usize).cloned().unwrap_or_default();
                    let mut new_events = Vec::new();
                    for id in ev {
                        events_in.insert(seq);
                        new_events.push(waiting(id, seq, t));
                        seq += 1;
                    }
                    let mut new_feedback = Vec::new();
                    for id in fbs {
                        feedback_in.insert(seq);
                        new_feedback.push(fb(id, seq, t));
                        seq += 1;
                    }
                    let formed = j.epoch(t, new_events, new_feedback);
                    let mut formed_now = (BTreeSet::new(), BTreeSet::new());
                    for p in &formed {
                        prop_assert_eq!(p.event.example.id, p.feedback.id);
                        prop_assert!(p.event.epoch <= t && p.feedback.epoch <= t);
                        prop_assert!(paired_events.insert(p.event.seq), "an event paired twice");
                        prop_assert!(paired_feedback.insert(p.feedback.seq), "feedback paired twice");
                        formed_now.0.insert(p.event.seq);
                        formed_now.1.insert(p.feedback.seq);
                        pairs += 1;
                    }
                    let c = j.counts();
                    let (events, feedback) = present(&j.state(t));
                    // Pairs formed now leave the join in the next epoch.
                    let waiting = events.difference(&formed_now.0).count() as u64;
                    let held = feedback.difference(&formed_now.1).count() as u64;
                    let gone = |all: &BTreeSet<u64>, now: &BTreeSet<u64>, paired: &BTreeSet<u64>| {
                        all.iter().filter(|s| !now.contains(s) && !paired.contains(s)).count() as u64
                    };
                    let expired = gone(&events_in, &events, &paired_events);
                    let unmatched = gone(&feedback_in, &feedback, &paired_feedback);
                    prop_assert_eq!(c.admitted, events_in.len() as u64);
                    prop_assert_eq!(c.feedback, feedback_in.len() as u64);
                    prop_assert_eq!(c.joined, pairs);
                    prop_assert_eq!((c.waiting, c.held), (waiting, held), "epoch {}", t);
                    prop_assert_eq!(c.admitted, c.joined + c.waiting + expired);
                    prop_assert_eq!(c.feedback, c.joined + c.held + unmatched);
                    prop_assert_eq!((c.expired(), c.unmatched()), (expired, unmatched));
                    prop_assert!(c.duplicate <= c.admitted && c.repeated + c.late <= c.feedback);
                    if ttl.is_none() {
                        prop_assert_eq!((expired, unmatched), (0, 0));
                    }
                }
                if ttl.is_some() {
                    let c = j.counts();
                    prop_assert_eq!((c.waiting, c.held), (0, 0), "left waiting after every time-to-live");
                    prop_assert!(j.next_scheduled().is_none());
                }
            }
        }
    }
}
