//! Running a run of records through a block of stages stage by stage: the loop "for each
//! record, for each stage" interchanged, which gives the same result and keeps each
//! stage's state in the cache.

use super::{InFlight, Stage};
use crate::learners::SharedViews;

/// The most records [`process_stage_major`] takes through the stages together: each
/// stage keeps its state in the cache over this many records, while the records' own
/// data (scores, trail, the example) stream through every stage (measured in
/// docs/notes/hoeffding-tree-speed.md, "Stage by stage").
pub const WAVEFRONT: usize = 1024;

/// Runs `records` (consecutive, in order; no snapshot marker among them) through
/// `stages`, stage by stage: each stage processes up to [`WAVEFRONT`] records before the
/// next stage takes the first of them.
///
/// Bit for bit what running each record through every stage in turn gives: a stage's
/// state depends only on the records it has processed, in their order, and what it reads
/// of a record only on the stages before it, which have all processed that record. (A
/// stage shares no state with another.) Record by record, the other stages of the block
/// evict a stage's state (for a Hoeffding tree, its nodes, leaves and their statistics)
/// between two records; stage by stage, it stays in the cache over the run. The trees
/// share the view of each record's example in the meantime (one [`SharedViews`] for the
/// call, with a place per record of a run).
///
/// ```
/// use flowboost_operators::data::{Example, Features};
/// use flowboost_operators::engine::{InFlight, Stage, process_stage_major};
/// use flowboost_operators::learners::SharedViews;
/// use std::sync::Arc;
///
/// /// Adds how many records it has seen to the first score.
/// struct Counter(f64);
/// impl Stage for Counter {
///     fn process(&mut self, rec: &mut InFlight, _views: &mut SharedViews) {
///         self.0 += 1.0;
///         rec.scores[0] = rec.scores[0] * 10.0 + self.0;
///     }
/// }
///
/// let records = || -> Vec<InFlight> {
///     (0..3)
///         .map(|i| {
///             let x = Example { id: i, features: Features::Dense(vec![0.0]), label: None };
///             InFlight::new(i, Arc::new(x), 1)
///         })
///         .collect()
/// };
/// // Record by record.
/// let (mut a, mut by_record) = (vec![Counter(0.0), Counter(0.0)], records());
/// let mut views = SharedViews::last();
/// for rec in &mut by_record {
///     for stage in &mut a {
///         stage.process(rec, &mut views);
///     }
/// }
/// // Stage by stage.
/// let (mut b, mut by_stage) = (vec![Counter(0.0), Counter(0.0)], records());
/// process_stage_major(&mut b, &mut by_stage);
/// let scores = |r: &[InFlight]| r.iter().map(|r| r.scores[0]).collect::<Vec<_>>();
/// assert_eq!(scores(&by_stage), [11.0, 22.0, 33.0]);
/// assert_eq!(scores(&by_stage), scores(&by_record));
/// ```
pub fn process_stage_major<S: Stage>(stages: &mut [S], records: &mut [InFlight]) {
    // The trees of the block share each record's view of its example.
    let mut views = SharedViews::run(WAVEFRONT);
    for chunk in records.chunks_mut(WAVEFRONT) {
        for stage in stages.iter_mut() {
            for (place, rec) in chunk.iter_mut().enumerate() {
                views.record(place);
                stage.process(rec, &mut views);
            }
        }
    }
}
