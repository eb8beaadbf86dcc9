//! How the join's arrangements hold its facts and outcomes (see [`Held`]).

use crate::engine::feedback::{JoinFact, Outcome};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

/// A fact or an outcome as the join's arrangements hold it: a `Joined` or `Gone` marker
/// inline, anything else (events, feedback records, with their predictions and payloads)
/// behind an `Arc`. The arrangements clone and drop their values at every merge of their
/// batches, and the markers are most of them: without a time-to-live every joined id keeps
/// its `Joined` marker for the rest of the run. Ordered (and equal) as the value it holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) enum Held<T> {
    /// A marker: `Joined` (`joined`) or `Gone`, at `seq`, of `epoch`.
    Marker { joined: bool, seq: u64, epoch: u64 },
    /// Any other value.
    Shared(Arc<T>),
}

/// The values [`Held`] keeps: those with a marker form.
pub(super) trait Markable: Clone {
    /// The marker, if the value is one: (`Joined`, its position, its epoch).
    fn marker(&self) -> Option<(bool, u64, u64)>;
    /// The value of a marker.
    fn from_marker(joined: bool, seq: u64, epoch: u64) -> Self;
}

impl Markable for JoinFact {
    fn marker(&self) -> Option<(bool, u64, u64)> {
        match self {
            JoinFact::Joined { seq, epoch } => Some((true, *seq, *epoch)),
            JoinFact::Gone { seq, epoch } => Some((false, *seq, *epoch)),
            _ => None,
        }
    }
    fn from_marker(joined: bool, seq: u64, epoch: u64) -> Self {
        if joined {
            JoinFact::Joined { seq, epoch }
        } else {
            JoinFact::Gone { seq, epoch }
        }
    }
}

impl Markable for Outcome {
    fn marker(&self) -> Option<(bool, u64, u64)> {
        match self {
            Outcome::Marker(m) => m.marker(),
            _ => None,
        }
    }
    fn from_marker(joined: bool, seq: u64, epoch: u64) -> Self {
        Outcome::Marker(JoinFact::from_marker(joined, seq, epoch))
    }
}

impl<T: Markable> Held<T> {
    pub(super) fn new(value: T) -> Self {
        match value.marker() {
            Some((joined, seq, epoch)) => Held::Marker { joined, seq, epoch },
            None => Held::Shared(Arc::new(value)),
        }
    }

    /// The value.
    pub(super) fn get(&self) -> Cow<'_, T> {
        match self {
            Held::Marker { joined, seq, epoch } => {
                Cow::Owned(T::from_marker(*joined, *seq, *epoch))
            }
            Held::Shared(value) => Cow::Borrowed(value),
        }
    }
}

impl<T: Markable + Ord> Ord for Held<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.get().as_ref().cmp(other.get().as_ref())
    }
}
impl<T: Markable + Ord> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T: Markable + Ord> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<T: Markable + Ord> Eq for Held<T> {}
