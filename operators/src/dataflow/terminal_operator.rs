use super::ordered_stash::OrderedStash;
use crate::engine::{ChainOutput, Emitted, InFlight, Prediction, Terminal};
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;

/// Adds [`terminal`](TerminalExt::terminal) to streams of records in flight.
pub trait TerminalExt<'scope> {
    /// Routes every record to worker `worker`, where `terminal` (give it `Some` there only)
    /// chooses the expert, emits the prediction and updates Hedge, per completed timestamp
    /// in order. The output pairs each prediction with its event (and whether the event
    /// waits for its feedback). A snapshot marker gets a copy of the terminal added and
    /// leaves as [`ChainOutput::Snapshot`].
    ///
    /// ```
    /// use flowboost_operators::data::{Example, Features, Task};
    /// use flowboost_operators::dataflow::TerminalExt;
    /// use flowboost_operators::engine::{ChainOutput, ExpertSelection, InFlight, ScoreKind, Terminal};
    /// use std::sync::Arc;
    /// use timely::dataflow::operators::vec::Map;
    /// use timely::dataflow::operators::{Capture, ToStream, capture::Extract};
    ///
    /// let terminal = Terminal::new(Task::Binary, ScoreKind::Margin, 1, 1, ExpertSelection::Last, 1);
    /// let records: Vec<InFlight> = [0.5, -0.5]
    ///     .iter()
    ///     .enumerate()
    ///     .map(|(i, &s)| {
    ///         let ex = Example { id: i as u64, features: Features::Dense(vec![]), label: None };
    ///         let mut rec = InFlight::new(i as u64, Arc::new(ex), 1);
    ///         rec.scores[0] = s;
    ///         rec
    ///     })
    ///     .collect();
    /// let out = timely::example(move |scope| {
    ///     records
    ///         .to_stream(scope)
    ///         .terminal(0, Some(terminal))
    ///         .map(|o| match o {
    ///             ChainOutput::Prediction(e) => (e.prediction.id, e.prediction.class),
    ///             ChainOutput::Snapshot(_) => unreachable!(),
    ///         })
    ///         .capture()
    /// });
    /// assert_eq!(out.extract()[0].1, vec![(0, 1), (1, 0)]);
    /// ```
    fn terminal(
        self,
        worker: usize,
        terminal: Option<Terminal>,
    ) -> Stream<'scope, u64, Vec<ChainOutput>>;
}

impl<'scope> TerminalExt<'scope> for Stream<'scope, u64, Vec<InFlight>> {
    fn terminal(
        self,
        worker: usize,
        mut terminal: Option<Terminal>,
    ) -> Stream<'scope, u64, Vec<ChainOutput>> {
        let pact = Exchange::new(move |_: &InFlight| worker as u64);
        let scope = self.scope();
        self.unary_frontier(pact, "Terminal", move |_capability, info| {
            let activator = scope.activator_for(info.address);
            let mut stash = OrderedStash::default();
            move |(input, frontier), output| {
                stash.absorb(input, output.output_index());
                // One epoch per activation, as the stage blocks (see there).
                if let Some((capability, records)) = stash.next_complete(frontier) {
                    activator.activate();
                    let Some(terminal) = terminal.as_mut() else {
                        return;
                    };
                    let mut session = output.session(&capability);
                    for mut rec in records {
                        if let Some(mut parts) = rec.snapshot.take() {
                            parts.terminal = Some(terminal.clone());
                            parts.model = rec.model;
                            session.give(ChainOutput::Snapshot(parts));
                            continue;
                        }
                        let mut prediction = Prediction::default();
                        if terminal.finish(&rec, &mut prediction) {
                            session.give(ChainOutput::Prediction(Emitted {
                                prediction,
                                waits: rec.hide_label && rec.pairs.is_none(),
                                model: rec.model,
                                example: rec.example,
                            }));
                        }
                    }
                }
            }
        })
    }
}
