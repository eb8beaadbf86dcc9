//! What flows through the Kafka job's dataflow besides the model's own records.

use super::merge::{Raw, StreamId};
use flowboost_operators::data::Example;
use flowboost_operators::engine::feedback::FeedbackKind;
use serde::{Deserialize, Serialize};

/// A record read from Kafka, decoded on the worker that read it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RecordBody {
    /// An event.
    Event {
        /// The event.
        example: Example,
        /// Which of the job's models it belongs to (the index of its key with one model
        /// per key; 0 otherwise).
        model: u32,
    },
    /// Feedback for an event.
    Feedback {
        /// The event.
        id: u64,
        /// What it says.
        kind: FeedbackKind,
    },
    /// A record that could not be decoded: it goes to the dead-letter topic.
    Dead(DeadBody),
    /// An event whose key no model of the job serves (`--keys`): it goes to the
    /// dead-letter topic, and holds its place in the merged sequence, so that each key's
    /// model sees the same epochs whatever keys the job serves.
    Unserved(DeadBody),
}

/// A bad record, as it goes to the dead-letter topic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadBody {
    /// The kind of problem (a metric label).
    pub kind: String,
    /// The reason, in words.
    pub reason: String,
    /// The record's key.
    pub key: Option<Vec<u8>>,
    /// The record's bytes.
    pub payload: Vec<u8>,
}

/// What a worker's sources send to the merge.
pub type SourceMessage = Raw<RecordBody>;

/// What the merge hands the sink besides the predictions, at the epoch it belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SideRecord {
    /// A bad record to dead-letter.
    Dead {
        /// Its topic.
        stream: StreamId,
        /// Its partition.
        partition: i32,
        /// Its offset.
        offset: i64,
        /// What it was.
        body: DeadBody,
    },
    /// Everything before these offsets was released by the end of this epoch: they can be
    /// committed once the epoch's outputs are delivered.
    Commit(Vec<(StreamId, i32, i64)>),
    /// With `--merge-order timestamps`, right after each [`SideRecord::Commit`]: per
    /// partition, the order key of the last record before its commit mark (where the
    /// merge's clamp goes on after a restore from that cut).
    OrderKeys(Vec<(StreamId, i32, i64)>),
    /// The snapshot of this epoch is the run's last, at its stream's end
    /// ([`ModelHeader::at_end`](crate::model::ModelHeader::at_end)).
    End,
    /// The run resumed from the snapshot of a run's end and read nothing: that snapshot is
    /// its end too, unchanged (the sink saves it again; no snapshot is taken).
    EndAgain,
}

/// A message of the job's control stream (broadcast to every worker).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Control {
    /// Stop reading: the job ends (idle, a signal), or failed (`error`).
    Stop {
        /// Why it failed, if it did.
        error: Option<String>,
    },
    /// From worker 0's merge: per (topic, partition), the offset at which its source stops
    /// reading for now (what the merge has taken plus the read-ahead): backpressure that
    /// bounds what the job holds when one partition lags the others.
    Limits(Vec<(StreamId, i32, i64)>),
}
