//! Positions in the partitions of the job's input topics: commit marks, read limits and
//! the merge's order keys, each named by its topic (a [`StreamId`]) and partition.

use super::merge::StreamId;
use serde::{Deserialize, Serialize};

/// An offset in one partition of an input topic: a commit mark (every record before it
/// was stamped), or a read limit (its source reads no further for now).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PartitionOffset {
    /// The topic: [`EVENTS`](super::merge::EVENTS) or
    /// [`FEEDBACK`](super::merge::FEEDBACK).
    pub stream: StreamId,
    /// The partition.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
}

impl PartitionOffset {
    /// The offset `offset` of `partition` of `stream`.
    pub const fn new(stream: StreamId, partition: i32, offset: i64) -> Self {
        PartitionOffset {
            stream,
            partition,
            offset,
        }
    }

    /// The partition, as the merge keys it.
    pub const fn partition_id(&self) -> (StreamId, i32) {
        (self.stream, self.partition)
    }
}

/// The order key (a timestamp, with `--merge-order timestamps`) of the last record the
/// merge stamped from one partition: where its clamp goes on after a restore.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PartitionKey {
    /// The topic.
    pub stream: StreamId,
    /// The partition.
    pub partition: i32,
    /// The order key.
    pub key: i64,
}

impl PartitionKey {
    /// The key `key` of `partition` of `stream`.
    pub const fn new(stream: StreamId, partition: i32, key: i64) -> Self {
        PartitionKey {
            stream,
            partition,
            key,
        }
    }
}
