use super::fact::{JoinFact, Pairing};
use super::logic::JoinCounts;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A pair whose learning pass has not entered the chain yet.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FormedPair {
    /// The epoch it formed in (its learning pass enters `lag` epochs later).
    pub formed: u64,
    /// The pair.
    pub pair: Pairing,
}

/// The join's state after an epoch, in a canonical form (the same bytes from either
/// engine and any number of workers): the facts present by id, the pairs whose learning
/// passes are still to come, and the counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct JoinState {
    /// The epoch it is the state after.
    pub epoch: u64,
    /// The facts present, by id, in order.
    pub facts: BTreeMap<u64, Vec<JoinFact>>,
    /// The pairs formed in the last `lag` epochs, by (epoch formed, position).
    pub pairs: Vec<FormedPair>,
    /// The counts.
    pub counts: JoinCounts,
}

impl JoinState {
    /// The number of events and feedback records waiting.
    pub fn waiting(&self) -> usize {
        self.facts
            .values()
            .flatten()
            .filter(|f| matches!(f, JoinFact::Event(_) | JoinFact::Feedback(_)))
            .count()
    }

    /// Merges the parts of several shards (disjoint ids) into one state.
    pub fn merge(epoch: u64, parts: impl IntoIterator<Item = JoinState>) -> JoinState {
        let mut out = JoinState {
            epoch,
            ..JoinState::default()
        };
        for p in parts {
            out.facts.extend(p.facts);
            out.pairs.extend(p.pairs);
            out.counts.add(&p.counts);
        }
        out.pairs.sort_by_key(|p| (p.formed, p.pair.seq()));
        out
    }
}
