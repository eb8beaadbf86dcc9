use super::Prediction;
use crate::data::Example;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// What the delayed-feedback join counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackCounters {
    /// Events admitted (predicted and waiting for feedback).
    pub admitted: u64,
    /// Feedback joined to its pending event (a learning pass followed).
    pub joined: u64,
    /// Pending events dropped because the cache was full (oldest first).
    pub evicted: u64,
    /// Pending events dropped because their time-to-live ran out.
    pub expired: u64,
    /// Feedback for an event already dropped (evicted or expired): not learned.
    pub late: u64,
    /// Feedback for an event id never seen (or forgotten long ago): not learned.
    pub unmatched: u64,
    /// Events whose id was already pending (the older one is replaced and counted here).
    pub duplicate: u64,
    /// Feedback events discarded because a join for the id had already happened.
    pub repeated: u64,
}

/// A pending event: the example and, once emitted, its prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingEvent {
    /// The example (features, and its label in evaluations).
    pub example: Arc<Example>,
    /// The prediction, when the terminal has emitted it.
    pub prediction: Option<Prediction>,
    /// The event's admission number (its age is measured in admitted events).
    pub born: u64,
}

/// Why feedback did not join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// The event was dropped (evicted or expired) before its feedback came.
    Late,
    /// No such event id.
    Unmatched,
    /// The event was joined already.
    Repeated,
}

/// The events waiting for feedback, bounded by a capacity and a time-to-live (in admitted
/// events, so that runs are reproducible), keyed by event id.
///
/// What a stage needs to learn later is the example itself: the learning pass recomputes
/// every stage's vote, so nothing per stage is kept (memory is `capacity` examples and
/// predictions, not `capacity x N` score vectors). The prediction is kept for top-k
/// feedback, whose estimator needs the booster's own top-k and the shown labels.
///
/// Serialized with its maps in key order, so equal caches give equal bytes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PendingEvents {
    capacity: usize,
    ttl: u64,
    clock: u64,
    #[serde(with = "sorted::map")]
    events: HashMap<u64, PendingEvent>,
    order: VecDeque<(u64, u64)>,
    #[serde(with = "sorted::set")]
    dropped: HashSet<u64>,
    dropped_order: VecDeque<u64>,
    #[serde(with = "sorted::set")]
    joined: HashSet<u64>,
    joined_order: VecDeque<u64>,
    counters: FeedbackCounters,
}

/// Hash maps and sets written in key order (read back into hash maps and sets).
mod sorted {
    pub mod map {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};
        use std::collections::{BTreeMap, HashMap};

        pub fn serialize<V: Serialize, S: Serializer>(
            map: &HashMap<u64, V>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            map.iter().collect::<BTreeMap<_, _>>().serialize(s)
        }

        pub fn deserialize<'de, V: Deserialize<'de>, D: Deserializer<'de>>(
            d: D,
        ) -> Result<HashMap<u64, V>, D::Error> {
            Ok(BTreeMap::<u64, V>::deserialize(d)?.into_iter().collect())
        }
    }

    pub mod set {
        use serde::{Deserialize, Deserializer, Serialize, Serializer};
        use std::collections::{BTreeSet, HashSet};

        pub fn serialize<S: Serializer>(set: &HashSet<u64>, s: S) -> Result<S::Ok, S::Error> {
            set.iter().collect::<BTreeSet<_>>().serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<HashSet<u64>, D::Error> {
            Ok(BTreeSet::<u64>::deserialize(d)?.into_iter().collect())
        }
    }
}

impl PendingEvents {
    /// A cache of at most `capacity` events, each kept for at most `ttl` admitted events.
    pub fn new(capacity: usize, ttl: u64) -> Self {
        PendingEvents {
            capacity: capacity.max(1),
            ttl: ttl.max(1),
            clock: 0,
            events: HashMap::new(),
            order: VecDeque::new(),
            dropped: HashSet::new(),
            dropped_order: VecDeque::new(),
            joined: HashSet::new(),
            joined_order: VecDeque::new(),
            counters: FeedbackCounters::default(),
        }
    }

    /// The counters so far.
    pub fn counters(&self) -> FeedbackCounters {
        self.counters
    }

    /// The number of events pending.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// How many dropped and joined ids are remembered (to tell late and repeated feedback
    /// from unmatched): the capacity, and at least 2^20.
    fn memory(&self) -> usize {
        self.capacity.max(1 << 20)
    }

    /// Remembers a bounded number of ids in `set` (the oldest are forgotten).
    fn remember(set: &mut HashSet<u64>, order: &mut VecDeque<u64>, id: u64, cap: usize) {
        if set.insert(id) {
            order.push_back(id);
            if order.len() > cap
                && let Some(old) = order.pop_front()
            {
                set.remove(&old);
            }
        }
    }

    /// Drops the oldest pending event (if the entry in `order` is still current).
    fn drop_front(&mut self, expired: bool) -> bool {
        let Some((born, id)) = self.order.pop_front() else {
            return false;
        };
        if self.events.get(&id).is_some_and(|e| e.born == born) {
            self.events.remove(&id);
            if expired {
                self.counters.expired += 1;
            } else {
                self.counters.evicted += 1;
            }
            let cap = self.memory();
            Self::remember(&mut self.dropped, &mut self.dropped_order, id, cap);
        }
        true
    }

    /// Admits a predicted event (expiring and evicting older ones as needed).
    pub fn admit(&mut self, example: Arc<Example>) {
        self.clock += 1;
        while let Some(&(born, _)) = self.order.front() {
            if born + self.ttl < self.clock {
                self.drop_front(true);
            } else {
                break;
            }
        }
        let id = example.id;
        if self.events.contains_key(&id) {
            self.counters.duplicate += 1;
        } else {
            while self.events.len() >= self.capacity {
                if !self.drop_front(false) {
                    break;
                }
            }
        }
        self.dropped.remove(&id);
        self.joined.remove(&id);
        self.events.insert(
            id,
            PendingEvent {
                example,
                prediction: None,
                born: self.clock,
            },
        );
        self.order.push_back((self.clock, id));
        self.counters.admitted += 1;
    }

    /// Records the prediction of a pending event (ignored if it is no longer pending).
    pub fn predicted(&mut self, prediction: &Prediction) {
        if let Some(e) = self.events.get_mut(&prediction.id) {
            e.prediction = Some(prediction.clone());
        }
    }

    /// The pending event `id`, if any (without removing it).
    pub fn get(&self, id: u64) -> Option<&PendingEvent> {
        self.events.get(&id)
    }

    /// Forgets the entries at the front of `order` whose event is no longer pending: they
    /// would only be skipped later, and when every event is joined before it could be
    /// evicted or expire they would pile up (16 bytes per event, for ever).
    fn trim_order(&mut self) {
        while let Some(&(born, id)) = self.order.front() {
            if self.events.get(&id).is_some_and(|e| e.born == born) {
                break;
            }
            self.order.pop_front();
        }
    }

    /// Removes and returns pending event `id` for its feedback; counts the join or the miss.
    pub fn join(&mut self, id: u64) -> Result<PendingEvent, Miss> {
        match self.events.remove(&id) {
            Some(e) => {
                self.trim_order();
                self.counters.joined += 1;
                let cap = self.memory();
                Self::remember(&mut self.joined, &mut self.joined_order, id, cap);
                Ok(e)
            }
            None if self.joined.contains(&id) => {
                self.counters.repeated += 1;
                Err(Miss::Repeated)
            }
            None if self.dropped.contains(&id) => {
                self.counters.late += 1;
                Err(Miss::Late)
            }
            None => {
                self.counters.unmatched += 1;
                Err(Miss::Unmatched)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Features;

    fn ex(id: u64) -> Arc<Example> {
        Arc::new(Example {
            id,
            features: Features::Dense(vec![id as f64]),
            label: None,
        })
    }

    /// Joined events leave nothing behind: the memory is that of the events pending.
    #[test]
    fn joined_events_do_not_accumulate() {
        let mut p = PendingEvents::new(100, u64::MAX / 2);
        for id in 0..10_000 {
            p.admit(ex(id));
            if id >= 5 {
                p.join(id - 5).unwrap();
            }
        }
        assert_eq!(p.len(), 5);
        assert_eq!(p.order.len(), 5);
        // Joined out of order: the stale entries go once they reach the front.
        p.join(9_998).unwrap();
        assert_eq!(p.order.len(), 5);
        for id in 9_995..9_998 {
            p.join(id).unwrap();
        }
        assert_eq!(p.order.len(), 1);
        assert_eq!(p.counters().joined, 10_000 - 1);
    }

    #[test]
    fn capacity_and_every_kind_of_miss_are_counted() {
        let mut p = PendingEvents::new(3, 1000);
        for id in 0..3 {
            p.admit(ex(id));
        }
        // Full: admitting 3 evicts 0.
        p.admit(ex(3));
        assert_eq!(p.counters().evicted, 1);
        assert_eq!(p.join(0).unwrap_err(), Miss::Late);
        assert_eq!(p.join(1).unwrap().example.id, 1);
        assert_eq!(p.join(1).unwrap_err(), Miss::Repeated);
        assert_eq!(p.join(99).unwrap_err(), Miss::Unmatched);
        // A duplicate id replaces the pending one.
        p.admit(ex(3));
        let c = p.counters();
        assert_eq!(
            (
                c.admitted,
                c.joined,
                c.evicted,
                c.late,
                c.unmatched,
                c.repeated,
                c.duplicate
            ),
            (5, 1, 1, 1, 1, 1, 1)
        );
        // Every admitted event is joined, dropped, replaced or still pending.
        assert_eq!(
            c.admitted,
            c.joined + c.evicted + c.expired + c.duplicate + p.len() as u64
        );
    }

    #[test]
    fn events_expire_after_their_time_to_live() {
        let mut p = PendingEvents::new(100, 4);
        p.admit(ex(0)); // clock 1
        for id in 1..5 {
            p.admit(ex(id)); // clocks 2..5: event 0 is 4 events old, still kept
        }
        assert!(p.get(0).is_some());
        p.admit(ex(5)); // clock 6: 1 + 4 < 6, expired
        assert!(p.get(0).is_none());
        assert_eq!(p.counters().expired, 1);
        assert_eq!(p.join(0).unwrap_err(), Miss::Late);
        assert_eq!(p.join(1).unwrap().example.id, 1);
        assert_eq!(p.counters().evicted, 0);
    }
}
