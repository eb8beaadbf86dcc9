use super::ordered_stash::OrderedStash;
use crate::engine::{InFlight, Position, Stage, encode, process_stage_major};
use serde::Serialize;
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;

/// A contiguous block of a chain's stages, as one operator holds it.
pub struct StageBlock<S> {
    /// The global (chain) index of the block's first stage.
    pub first: usize,
    /// The stages, in chain order.
    pub stages: Vec<S>,
    /// The first block counts the chain's position (and adds it to snapshot markers).
    pub position: Option<Position>,
}

/// Adds [`stage_block`](StageBlockExt::stage_block) to streams of records in flight.
pub trait StageBlockExt<'scope> {
    /// Routes every record to worker `worker` and passes it, there, through the block's
    /// stages in order. Records are processed per completed timestamp, sorted by sequence
    /// number, so the result does not depend on the arrival order; the records between
    /// two snapshot markers go through the stages stage by stage
    /// ([`process_stage_major`]: the same result as one record at a time, each stage's
    /// state kept in the cache). A snapshot marker ([`InFlight::marker`]) gets the block's
    /// serialized stages added, and goes on. On every other worker the operator exists
    /// (all workers build the same graph) but receives nothing; give it an empty block.
    ///
    /// ```
    /// use flowboost_operators::boosters::{Algorithm, BoosterConfig, build};
    /// use flowboost_operators::data::{Attribute, Example, Features, Label, Schema, Task};
    /// use flowboost_operators::dataflow::{StageBlock, StageBlockExt};
    /// use flowboost_operators::engine::InFlight;
    /// use flowboost_operators::learners::WeakKind;
    /// use std::sync::Arc;
    /// use timely::dataflow::operators::vec::Map;
    /// use timely::dataflow::operators::{Capture, ToStream, capture::Extract};
    ///
    /// let schema = Schema {
    ///     attributes: vec![Attribute::numeric("x")],
    ///     labels: vec!["no".into(), "yes".into()],
    ///     task: Task::Binary,
    /// };
    /// let config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Vfdt, 1);
    /// let out = timely::example(move |scope| {
    ///     // Every worker builds the same stages from the seed.
    ///     let booster = build(&schema, &config).unwrap();
    ///     let records: Vec<InFlight> = (0..4)
    ///         .map(|i| {
    ///             let x = Features::Dense(vec![i as f64]);
    ///             let ex = Example { id: i, features: x, label: Some(Label::Class((i % 2) as u32)) };
    ///             InFlight::new(i, Arc::new(ex), booster.score_dim)
    ///         })
    ///         .collect();
    ///     let block = StageBlock { first: 0, stages: booster.stages, position: None };
    ///     records
    ///         .to_stream(scope)
    ///         .stage_block(0, block)
    ///         .map(|r| r.seq)
    ///         .capture()
    /// });
    /// assert_eq!(out.extract()[0].1, vec![0, 1, 2, 3]);
    /// ```
    fn stage_block<S: Stage + Serialize + 'static>(
        self,
        worker: usize,
        block: StageBlock<S>,
    ) -> Stream<'scope, u64, Vec<InFlight>>;
}

impl<'scope> StageBlockExt<'scope> for Stream<'scope, u64, Vec<InFlight>> {
    fn stage_block<S: Stage + Serialize + 'static>(
        self,
        worker: usize,
        block: StageBlock<S>,
    ) -> Stream<'scope, u64, Vec<InFlight>> {
        let name = format!("StageBlock{worker}");
        let pact = Exchange::new(move |_: &InFlight| worker as u64);
        let StageBlock {
            first,
            mut stages,
            mut position,
        } = block;
        let scope = self.scope();
        self.unary_frontier(pact, &name, move |_capability, info| {
            let activator = scope.activator_for(info.address);
            let mut stash = OrderedStash::default();
            move |(input, frontier), output| {
                stash.absorb(input, output.output_index());
                // One epoch per activation, then a turn for the worker's other operators
                // (the operator is activated again for the next one). Processing every
                // complete epoch at once held the next block's worker back until all of
                // them were done (a worker sends its progress between activations) and kept
                // the sources and the merge of its worker from running meanwhile: with
                // ada-olmr N = 100 on 2 workers of a 16-core machine, the Kafka job went at
                // 1,600 to 1,700 events/s that way, and at 3,100 one epoch at a time.
                if let Some((capability, mut records)) = stash.next_complete(frontier) {
                    activator.activate();
                    // The records between snapshot markers go through the stages stage by
                    // stage; a marker takes the stages' state after the records before it.
                    let mut rest = &mut records[..];
                    while !rest.is_empty() {
                        let run = rest
                            .iter()
                            .position(|r| r.snapshot.is_some())
                            .unwrap_or(rest.len());
                        let (records, after) = rest.split_at_mut(run);
                        if let Some(p) = position.as_mut() {
                            for rec in records.iter_mut() {
                                p.count(rec);
                            }
                        }
                        process_stage_major(&mut stages, records);
                        let Some((marker, after)) = after.split_first_mut() else {
                            break;
                        };
                        if let Some(parts) = marker.snapshot.as_mut() {
                            for (i, stage) in stages.iter().enumerate() {
                                match encode(stage) {
                                    Ok(bytes) => {
                                        parts.stages.insert(first + i, bytes);
                                    }
                                    Err(e) => {
                                        parts.error.get_or_insert(e.to_string());
                                    }
                                }
                            }
                            if let Some(p) = position {
                                parts.position = Some(p);
                            }
                        }
                        rest = after;
                    }
                    output.session(&capability).give_container(&mut records);
                }
            }
        })
    }
}
