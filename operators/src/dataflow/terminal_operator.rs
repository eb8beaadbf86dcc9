use super::ordered_stash::OrderedStash;
use crate::data::Example;
use crate::engine::{InFlight, Prediction, Terminal};
use std::sync::Arc;
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;

/// Adds [`terminal`](TerminalExt::terminal) to streams of records in flight.
pub trait TerminalExt<'scope> {
    /// Routes every record to worker `worker`, where `terminal` (give it `Some` there only)
    /// chooses the expert, emits the prediction and updates Hedge, per completed timestamp
    /// in sequence order. The output pairs each prediction with its example.
    fn terminal(
        self,
        worker: usize,
        terminal: Option<Terminal>,
    ) -> Stream<'scope, u64, Vec<(Prediction, Arc<Example>)>>;
}

impl<'scope> TerminalExt<'scope> for Stream<'scope, u64, Vec<InFlight>> {
    fn terminal(
        self,
        worker: usize,
        mut terminal: Option<Terminal>,
    ) -> Stream<'scope, u64, Vec<(Prediction, Arc<Example>)>> {
        let pact = Exchange::new(move |_: &InFlight| worker as u64);
        self.unary_frontier(pact, "Terminal", move |_capability, _info| {
            let mut stash = OrderedStash::default();
            move |(input, frontier), output| {
                stash.absorb(input, output.output_index());
                while let Some((capability, records)) = stash.next_complete(frontier) {
                    let Some(terminal) = terminal.as_mut() else {
                        continue;
                    };
                    let mut session = output.session(&capability);
                    for rec in records {
                        let mut prediction = Prediction::default();
                        if terminal.finish(&rec, &mut prediction) {
                            session.give((prediction, rec.example));
                        }
                    }
                }
            }
        })
    }
}
