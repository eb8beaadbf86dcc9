use super::pipeline;
use crate::data::Example;
use crate::engine::{InFlight, Prediction, PredictionSink, Stage, Terminal};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::{Input, Probe};

/// How to run a pipeline on timely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataflowOptions {
    /// The number of timely worker threads in this process.
    pub workers: usize,
    /// Records per timestamp (timestamps are coarse: one per batch, not one per record).
    pub batch: usize,
    /// How many timestamps the source may run ahead of the sink (bounds the memory in flight).
    pub max_batches_in_flight: u64,
}

impl Default for DataflowOptions {
    fn default() -> Self {
        DataflowOptions {
            workers: 1,
            batch: 256,
            max_batches_in_flight: 8,
        }
    }
}

/// A prediction with its example, as the terminal emits it.
type Emitted = (Prediction, Arc<Example>);

/// The built pieces every worker needs: all the stages, the terminal and the score size.
pub type Built<S> = (Vec<S>, Terminal, usize);

/// Runs a pipeline on `options.workers` timely worker threads.
///
/// Every worker calls `build` (it must return the same stages on every worker: build them
/// from seeds, as the boosters do) and keeps its block. Worker 0 pulls examples from
/// `source()`, stamps them with sequence numbers and timestamps, and hands every prediction,
/// with its example, in sequence order, to the sink that `sink()` creates there. Returns
/// what the sink's `finish` returns.
pub fn run_dataflow<S, B, Src, I, KF, K>(
    options: &DataflowOptions,
    build: B,
    source: Src,
    sink: KF,
) -> Result<K::Output, String>
where
    S: Stage + 'static,
    B: Fn() -> Result<Built<S>, String> + Send + Sync + 'static,
    Src: Fn() -> Result<I, String> + Send + Sync + 'static,
    I: Iterator<Item = Result<Example, String>>,
    KF: Fn() -> K + Send + Sync + 'static,
    K: PredictionSink,
    K::Output: Send + 'static,
{
    if options.workers == 0 {
        return Err("the number of workers must be at least 1".into());
    }
    let batch = options.batch.max(1);
    let lag = options.max_batches_in_flight.max(1);
    let config = timely::Config::process(options.workers);
    let guards = timely::execute(config, move |worker| -> Option<Result<K::Output, String>> {
        let index = worker.index();
        let peers = worker.peers();
        let (stages, terminal, score_dim) = match build() {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        let outputs: Rc<RefCell<Vec<Emitted>>> = Rc::default();
        let (mut input, probe) = worker.dataflow::<u64, _, _>(|scope| {
            let (input, stream) = scope.new_input::<Vec<InFlight>>();
            let predictions = pipeline(stream, index, peers, stages, terminal);
            let (probe, predictions) = predictions.probe();
            let outputs = outputs.clone();
            predictions.sink(Pipeline, "Predictions", move |(input, _frontier)| {
                input.for_each(|_time, data| outputs.borrow_mut().append(data));
            });
            (input, probe)
        });
        if index != 0 {
            drop(input);
            return None;
        }
        let mut sink = sink();
        let drain = |sink: &mut K| -> Result<(), String> {
            for (p, ex) in outputs.borrow_mut().drain(..) {
                sink.accept(p, ex)?;
            }
            Ok(())
        };
        let result = (|| -> Result<(), String> {
            let mut seq: u64 = 0;
            for ex in source()? {
                let ex = Arc::new(ex?);
                input.send(InFlight::new(seq, ex, score_dim));
                seq += 1;
                if seq.is_multiple_of(batch as u64) {
                    let time = seq / batch as u64;
                    input.advance_to(time);
                    while probe.less_than(&time.saturating_sub(lag)) {
                        worker.step();
                    }
                    drain(&mut sink)?;
                }
            }
            Ok(())
        })();
        drop(input);
        while worker.step_or_park(None) {}
        let result = result.and_then(|()| drain(&mut sink));
        Some(result.map(|()| sink.finish()))
    })?;
    let mut out = None;
    for r in guards.join() {
        match r {
            Ok(Some(v)) => out = Some(v),
            Ok(None) => {}
            Err(e) => return Err(format!("a worker failed: {e}")),
        }
    }
    out.unwrap_or_else(|| Err("worker 0 returned nothing".into()))
}
