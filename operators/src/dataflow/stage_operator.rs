use super::ordered_stash::OrderedStash;
use crate::engine::{InFlight, Stage};
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;

/// Adds [`stage_block`](StageBlockExt::stage_block) to streams of records in flight.
pub trait StageBlockExt<'scope> {
    /// Routes every record to worker `worker` and passes it, there, through `stages` in
    /// order. Records are processed per completed timestamp, sorted by sequence number, so
    /// the result does not depend on the arrival order. On every other worker the operator
    /// exists (all workers build the same graph) but receives nothing; give it no stages.
    fn stage_block<S: Stage + 'static>(
        self,
        worker: usize,
        stages: Vec<S>,
    ) -> Stream<'scope, u64, Vec<InFlight>>;
}

impl<'scope> StageBlockExt<'scope> for Stream<'scope, u64, Vec<InFlight>> {
    fn stage_block<S: Stage + 'static>(
        self,
        worker: usize,
        mut stages: Vec<S>,
    ) -> Stream<'scope, u64, Vec<InFlight>> {
        let name = format!("StageBlock{worker}");
        let pact = Exchange::new(move |_: &InFlight| worker as u64);
        self.unary_frontier(pact, &name, move |_capability, _info| {
            let mut stash = OrderedStash::default();
            move |(input, frontier), output| {
                stash.absorb(input, output.output_index());
                while let Some((capability, mut records)) = stash.next_complete(frontier) {
                    for rec in records.iter_mut() {
                        for stage in stages.iter_mut() {
                            stage.process(rec);
                        }
                    }
                    output.session(&capability).give_container(&mut records);
                }
            }
        })
    }
}
