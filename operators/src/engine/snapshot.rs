use super::{SourceState, Terminal};
use crate::join::{JoinCounts, JoinState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Where a run stands in its stream: what a resumed run continues from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// The next record's sequence number.
    pub seq: u64,
    /// Events taken from the source (each predicted once).
    pub events: u64,
    /// Records the chain learned from (a label, or top-k feedback).
    pub learned: u64,
}

/// When a runner takes snapshots of its chain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapshotPolicy {
    /// After every this many events (counted from the start of the stream, so a resumed
    /// run keeps the same schedule), once the feedback due by then has been learned.
    pub every: Option<u64>,
    /// After the last event (and the last feedback).
    pub at_end: bool,
}

impl Position {
    /// Counts one record processed by the chain (as the sequential runner and the first
    /// stage block do).
    pub fn count(&mut self, rec: &super::InFlight) {
        self.seq = self.seq.max(rec.seq + 1);
        self.events += u64::from(rec.emit);
        self.learned += u64::from(rec.learns());
    }
}

impl SnapshotPolicy {
    /// Whether a snapshot is due once `events` events have been taken.
    pub fn due(&self, events: u64) -> bool {
        self.every
            .is_some_and(|n| n > 0 && events > 0 && events.is_multiple_of(n))
    }
}

/// The whole state of a run at the end of an epoch: every stage (each serialized where it
/// lives, in the compact format of model files), the terminal, the feedback join's state,
/// the source's state (positions, an oracle's feedback still owed) and the position.
///
/// Runners hand it to [`PredictionSink::snapshot`](super::PredictionSink::snapshot) after
/// every prediction up to that point has been accepted, so a sink can add its own state
/// (progressive metrics) and write a consistent model file.
#[derive(Clone, Debug)]
pub struct ChainSnapshot {
    /// Each stage, in chain order, serialized with [`encode`].
    pub stages: Vec<Vec<u8>>,
    /// The terminal.
    pub terminal: Terminal,
    /// The number of values in a record's score vector.
    pub score_dim: usize,
    /// Where the stream stands.
    pub position: Position,
    /// The feedback join's state, if the run has one.
    pub join: Option<JoinState>,
    /// The source's state at the snapshot.
    pub source: Option<SourceState>,
}

/// Serializes a value in the format of model files (postcard: compact, bit-exact floats).
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    postcard::to_allocvec(value).map_err(|e| format!("cannot serialize the state: {e}"))
}

/// Reads a value written by [`encode`].
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, String> {
    postcard::from_bytes(bytes).map_err(|e| format!("cannot read the state: {e}"))
}

/// Where the operators of one process put their parts of a snapshot: each stage block its
/// stages (by global stage index), the terminal itself; the driver collects them once the
/// snapshot's marker has passed the terminal.
#[derive(Clone, Debug, Default)]
pub struct SnapshotBoard(Arc<Mutex<BoardParts>>);

#[derive(Debug, Default)]
struct BoardParts {
    stages: BTreeMap<usize, Vec<u8>>,
    terminal: Option<Terminal>,
    position: Option<Position>,
    error: Option<String>,
    /// The feedback join's parts, by (epoch, worker).
    join: BTreeMap<(u64, usize), JoinState>,
    /// The join's final counts, by worker.
    join_final: BTreeMap<usize, JoinCounts>,
}

/// Where the feedback join's keepers put their parts of a snapshot (the same board as the
/// stages'; see [`SnapshotBoard`]).
pub type JoinBoard = SnapshotBoard;

impl SnapshotBoard {
    fn lock(&self) -> std::sync::MutexGuard<'_, BoardParts> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stage `index` (global, in chain order) serialized.
    pub fn put_stage(&self, index: usize, bytes: Result<Vec<u8>, String>) {
        let mut parts = self.lock();
        match bytes {
            Ok(b) => {
                parts.stages.insert(index, b);
            }
            Err(e) => {
                parts.error.get_or_insert(e);
            }
        }
    }

    /// The chain's position (from its first block).
    pub fn put_position(&self, position: Position) {
        self.lock().position = Some(position);
    }

    /// The terminal.
    pub fn put_terminal(&self, terminal: Terminal) {
        self.lock().terminal = Some(terminal);
    }

    /// Worker `worker`'s part of the join's state after `epoch`.
    pub fn put_join(&self, epoch: u64, worker: usize, state: JoinState) {
        self.lock().join.insert((epoch, worker), state);
    }

    /// The join's state after `epoch`, merged from the parts of `workers` workers, once
    /// all of them are in (`None` before).
    pub fn take_join(&self, epoch: u64, workers: usize) -> Option<JoinState> {
        let mut parts = self.lock();
        let have = parts.join.range((epoch, 0)..(epoch, workers)).count();
        if have < workers {
            return None;
        }
        let taken: Vec<JoinState> = (0..workers)
            .filter_map(|w| parts.join.remove(&(epoch, w)))
            .collect();
        Some(JoinState::merge(epoch, taken))
    }

    /// Worker `worker`'s final join counts (at the end of the stream).
    pub fn put_join_final(&self, worker: usize, counts: JoinCounts) {
        self.lock().join_final.insert(worker, counts);
    }

    /// The join's final counts, summed over the workers that put theirs.
    pub fn join_final(&self) -> Option<JoinCounts> {
        let parts = self.lock();
        if parts.join_final.is_empty() {
            return None;
        }
        let mut total = JoinCounts::default();
        for c in parts.join_final.values() {
            total.add(c);
        }
        Some(total)
    }

    /// Takes the parts deposited since the last call: the `n` stages in order, the
    /// terminal and the position, or an error naming what is missing.
    pub fn take(&self, n: usize) -> Result<(Vec<Vec<u8>>, Terminal, Position), String> {
        let mut parts = self.lock();
        if let Some(e) = parts.error.take() {
            return Err(e);
        }
        let stages = std::mem::take(&mut parts.stages);
        let terminal = parts.terminal.take();
        if stages.len() != n || stages.keys().copied().ne(0..n) {
            return Err(format!(
                "a snapshot is incomplete: {} of {n} stages",
                stages.len()
            ));
        }
        let terminal = terminal.ok_or("a snapshot is incomplete: no terminal")?;
        let position = parts
            .position
            .take()
            .ok_or("a snapshot is incomplete: no position")?;
        Ok((stages.into_values().collect(), terminal, position))
    }
}
