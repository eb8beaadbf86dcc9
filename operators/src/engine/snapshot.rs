use super::{SourceState, Terminal};
use crate::engine::feedback::JoinState;
use serde::{Deserialize, Serialize};

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
    /// stage block do), and stamps it with the model's version (records learned from so
    /// far).
    pub fn count(&mut self, rec: &mut super::InFlight) {
        rec.version = self.learned;
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
    /// With one model per key: the chains of the models after the first, in model order
    /// (the first model's chain is the fields above); empty otherwise.
    pub keyed: Vec<KeyChainState>,
}

/// The state of one more model's chain in a snapshot of a run with one model per key.
#[derive(Clone, Debug)]
pub struct KeyChainState {
    /// Each stage, in chain order, serialized with [`encode`].
    pub stages: Vec<Vec<u8>>,
    /// The terminal.
    pub terminal: Terminal,
    /// Where this model's chain stands.
    pub position: Position,
}

/// Why a state could not be written or read ([`encode`], [`decode`]).
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The state could not be serialized.
    #[error("cannot serialize the state: {0}")]
    Encode(postcard::Error),
    /// The bytes are not a state of the expected type.
    #[error("cannot read the state: {0}")]
    Decode(postcard::Error),
}

/// Serializes a value in the format of model files (postcard: compact, bit-exact floats).
///
/// ```
/// use flowboost_operators::engine::{decode, encode};
///
/// let bytes = encode(&(1u32, 2.5f64)).unwrap();
/// assert_eq!(decode::<(u32, f64)>(&bytes).unwrap(), (1, 2.5));
/// let err = decode::<(u32, f64)>(&bytes[..2]).unwrap_err();
/// assert!(err.to_string().starts_with("cannot read the state: "));
/// ```
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    postcard::to_allocvec(value).map_err(CodecError::Encode)
}

/// Reads a value written by [`encode`].
pub fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, CodecError> {
    postcard::from_bytes(bytes).map_err(CodecError::Decode)
}
