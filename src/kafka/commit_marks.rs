//! The commit marks of the epochs whose outputs are handed to the producer, waiting for
//! their delivery.

use super::partition_offset::PartitionOffset;
use std::collections::VecDeque;

/// The commit marks of the epochs whose outputs are all handed to the producer, oldest
/// first, each committable once the producer delivered that many records. Keeping them all
/// (not only the latest) matters under a steady stream: when the latest epoch's outputs
/// are delivered, the next epoch's are already in flight, so a sink that only remembered
/// the latest mark would commit only when the stream pauses.
#[derive(Debug, Default)]
pub struct CommitMarks {
    marks: VecDeque<PendingCommit>,
}

/// Offsets that can be committed once the producer has delivered so many records.
#[derive(Debug)]
struct PendingCommit {
    offsets: Vec<PartitionOffset>,
    produced: u64,
}

impl CommitMarks {
    /// The marks of an epoch whose outputs make `produced` records in all.
    pub fn push(&mut self, offsets: Vec<PartitionOffset>, produced: u64) {
        // A later mark at the same count covers an earlier one.
        if self.marks.back().is_some_and(|m| m.produced == produced) {
            self.marks.pop_back();
        }
        self.marks.push_back(PendingCommit { offsets, produced });
    }

    /// The newest marks whose outputs are all delivered (`delivered` records), and the
    /// older ones dropped.
    pub fn ready(&mut self, delivered: u64) -> Option<Vec<PartitionOffset>> {
        let mut ready = None;
        while self.marks.front().is_some_and(|m| delivered >= m.produced) {
            ready = self.marks.pop_front().map(|m| m.offsets);
        }
        ready
    }

    /// Forgets every mark.
    pub fn clear(&mut self) {
        self.marks.clear();
    }

    /// Whether no mark waits.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: i64) -> Vec<PartitionOffset> {
        vec![PartitionOffset::new(0, 0, offset)]
    }

    #[test]
    fn the_newest_delivered_mark_is_committed_while_later_ones_are_in_flight() {
        let mut marks = CommitMarks::default();
        marks.push(at(10), 10);
        marks.push(at(20), 20);
        marks.push(at(25), 20);
        marks.push(at(30), 30);
        // Epoch 30's outputs are in flight: the mark of 10 is committable.
        assert_eq!(marks.ready(15), Some(at(10)));
        assert_eq!(marks.ready(15), None);
        // The later mark at the same count (25) covers the one at 20.
        assert_eq!(marks.ready(29), Some(at(25)));
        assert!(!marks.is_empty());
        assert_eq!(marks.ready(30), Some(at(30)));
        assert!(marks.is_empty());
    }
}
