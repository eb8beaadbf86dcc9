use super::{StageBlock, StageBlockExt, TerminalExt};
use crate::data::FeedbackItem;
use crate::dataflow::{CountUpdate, FeedbackJoinExt, JoinPart};
use crate::engine::feedback::{WaitingEvent, learning_pass};
use crate::engine::{Chain, ChainOutput, FeedbackSetup, InFlight, Input, Item, Stage};
use serde::Serialize;
use std::ops::Range;
use timely::dataflow::Stream;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Partition;
use timely::dataflow::operators::{Concat, Concatenate, ConnectLoop, Exchange, Feedback};

/// The stages of block `b` when `n` stages are split into `workers` contiguous blocks of
/// nearly equal size (the first blocks are the smaller ones when `n` is not a multiple).
pub fn block_range(n: usize, workers: usize, b: usize) -> Range<usize> {
    (b * n / workers)..((b + 1) * n / workers)
}

/// What a pipeline hands back.
pub struct PipelineStreams<'scope> {
    /// Every prediction with its event, and the chain's state at every snapshot marker, at
    /// their epochs, on worker 0.
    pub outputs: Stream<'scope, u64, Vec<ChainOutput>>,
    /// With feedback: the join's live counts (see
    /// [`JoinStreams::counts`](crate::dataflow::JoinStreams)) and its parts of the snapshots,
    /// on worker 0.
    pub join: Option<JoinOutputs<'scope>>,
}

/// What the feedback join hands the sink.
pub struct JoinOutputs<'scope> {
    /// The live counts, a differential aggregate, on worker 0.
    pub counts: Stream<'scope, u64, Vec<CountUpdate>>,
    /// Every worker's part of the join's state at each snapshot epoch, on worker 0.
    pub parts: Stream<'scope, u64, Vec<JoinPart>>,
}

/// Builds the model's dataflow on a stream of stamped items (at their epochs): the events
/// become records that pass through the stages of `chains[0]` in contiguous blocks, block
/// `b` on worker `b`, then the terminal on the last worker (the last block's), whose
/// outputs go to worker 0. With several chains (one model per key), an event goes to the
/// chain of its model ([`Input::Event`]'s `model`): chain `m` runs whole (all its stages
/// and its terminal) on worker `m % peers`, and the predictions of every chain come
/// together on worker 0. With `feedback`, the events that wait for their feedback and the
/// feedback records meet in the feedback join (on differential-dataflow, sharded by event
/// id), whose learning passes come back, `lag` epochs later, through a loop into the first
/// block, first in their epoch. A snapshot marker gathers every block's and the terminal's
/// state on its way, and the join's keepers send their parts of its state after the
/// marker's epoch. Every worker calls this with the same arguments (`worker` is its own
/// index, `peers` the number of workers); each keeps only its own block and, on the last
/// worker, the terminal.
#[allow(clippy::too_many_arguments)]
pub fn pipeline<'scope, S: Stage + Serialize + 'static>(
    items: Stream<'scope, u64, Vec<Item>>,
    worker: usize,
    peers: usize,
    mut chains: Vec<Chain<S>>,
    feedback: Option<FeedbackSetup>,
) -> PipelineStreams<'scope> {
    let scope = items.scope();
    let models = chains.len().max(1) as u32;
    let score_dim = chains.first().map_or(0, |c| c.score_dim);
    let records = records(items.clone(), models, score_dim);
    let loop_in = feedback
        .as_ref()
        .map(|f| scope.feedback::<Vec<InFlight>>(f.join.lag.max(1)));
    let stream = match &loop_in {
        Some((_, learning)) => records.concat(learning.clone()),
        None => records,
    };
    let outputs = if chains.len() > 1 {
        keyed_chains(stream, worker, peers, chains)
    } else {
        let chain = chains.pop().expect("a pipeline needs a chain");
        blocked_chain(stream, worker, peers, chain)
    };
    let (Some(setup), Some((handle, _))) = (feedback, loop_in) else {
        return PipelineStreams {
            outputs,
            join: None,
        };
    };
    // The join: the events that wait, the feedback records, the snapshot epochs.
    let joined = waiting_events(outputs.clone()).feedback_join(
        feedback_records(items.clone()),
        snapshot_epochs(items),
        setup.join,
        setup.topk,
        setup.labels,
        score_dim,
        setup.restored.clone(),
    );
    // The learning passes of a restored join's pairs still in flight enter too (on
    // worker 0, at the epochs their pairs formed).
    let restored_learning = restored_learning(scope, worker, &setup, score_dim);
    joined
        .learning
        .concat(restored_learning)
        .connect_loop(handle);
    PipelineStreams {
        outputs,
        join: Some(JoinOutputs {
            counts: on_worker_0(joined.counts, "JoinCounts"),
            parts: joined.parts,
        }),
    }
}

/// The records of the items: an event becomes its record (predict only when it waits
/// for its feedback), a snapshot marker one marker per model; feedback records and
/// skipped items none.
fn records<'scope>(
    items: Stream<'scope, u64, Vec<Item>>,
    models: u32,
    score_dim: usize,
) -> Stream<'scope, u64, Vec<InFlight>> {
    items.unary(Pipeline, "Records", move |_, _| {
        move |input, output| {
            input.for_each(|time, data: &mut Vec<Item>| {
                let mut session = output.session(&time);
                for item in data.drain(..) {
                    match item.input {
                        Input::Event {
                            example,
                            wait,
                            model,
                        } => {
                            let mut rec = if wait {
                                InFlight::predict_only(item.seq, example, score_dim)
                            } else {
                                InFlight::new(item.seq, example, score_dim)
                            };
                            rec.model = model;
                            session.give(rec)
                        }
                        // Every model's chain adds its state to a marker of its own.
                        Input::Snapshot(_) => {
                            session.give_iterator((0..models).map(|m| InFlight {
                                model: m,
                                ..InFlight::marker(item.seq)
                            }))
                        }
                        Input::Feedback { .. } | Input::Skipped => {}
                    }
                }
            })
        }
    })
}

/// One chain in contiguous blocks, block `b` on worker `b`, then the terminal on the
/// last worker, whose outputs go to worker 0.
fn blocked_chain<'scope, S: Stage + Serialize + 'static>(
    mut stream: Stream<'scope, u64, Vec<InFlight>>,
    worker: usize,
    peers: usize,
    chain: Chain<S>,
) -> Stream<'scope, u64, Vec<ChainOutput>> {
    let Chain {
        stages,
        terminal,
        position,
        ..
    } = chain;
    let n = stages.len();
    let mut all: Vec<Option<S>> = stages.into_iter().map(Some).collect();
    for b in 0..peers {
        let range = block_range(n, peers, b);
        let first = range.start;
        let stages: Vec<S> = if b == worker {
            range.filter_map(|i| all[i].take()).collect()
        } else {
            Vec::new()
        };
        let block = StageBlock {
            first,
            stages,
            position: (b == 0 && worker == 0).then_some(position),
        };
        stream = stream.stage_block(b, block);
    }
    // The terminal on the last block's worker (the chain's cheapest block: the boosters
    // measured put more work in their first stages; docs/kafka.md), its outputs to worker
    // 0 (with one worker, already there).
    let home = peers - 1;
    let outputs = stream.terminal(home, (worker == home).then_some(terminal));
    if home == 0 {
        outputs
    } else {
        outputs.exchange(|_: &ChainOutput| 0u64)
    }
}

/// The events that wait for their feedback, from the chain's outputs.
fn waiting_events<'scope>(
    outputs: Stream<'scope, u64, Vec<ChainOutput>>,
) -> Stream<'scope, u64, Vec<WaitingEvent>> {
    outputs.unary(Pipeline, "Waiting", |_, _| {
        move |input, output| {
            input.for_each(|time, data: &mut Vec<ChainOutput>| {
                let t = *time.time();
                output
                    .session(&time)
                    .give_iterator(data.iter().filter_map(|o| match o {
                        ChainOutput::Prediction(e) if e.waits => Some(WaitingEvent {
                            seq: e.prediction.seq,
                            epoch: t,
                            example: e.example.clone(),
                            prediction: e.prediction.clone(),
                            model: e.model,
                        }),
                        _ => None,
                    }));
            })
        }
    })
}

/// The feedback records among the items.
fn feedback_records<'scope>(
    items: Stream<'scope, u64, Vec<Item>>,
) -> Stream<'scope, u64, Vec<FeedbackItem>> {
    items.unary(Pipeline, "FeedbackRecords", |_, _| {
        move |input, output| {
            input.for_each(|time, data: &mut Vec<Item>| {
                let t = *time.time();
                output.session(&time).give_iterator(data.iter().filter_map(
                    |item| match &item.input {
                        Input::Feedback { id, kind } => Some(FeedbackItem {
                            seq: item.seq,
                            epoch: t,
                            id: *id,
                            kind: kind.clone(),
                        }),
                        _ => None,
                    },
                ));
            })
        }
    })
}

/// The epochs with a snapshot marker (the join's state after them is wanted).
fn snapshot_epochs<'scope>(items: Stream<'scope, u64, Vec<Item>>) -> Stream<'scope, u64, Vec<u64>> {
    items.unary(Pipeline, "SnapshotEpochs", |_, _| {
        move |input, output| {
            input.for_each(|time, data: &mut Vec<Item>| {
                let t = *time.time();
                if data.iter().any(|i| matches!(i.input, Input::Snapshot(_))) {
                    output.session(&time).give(t);
                }
            })
        }
    })
}

/// The join's count changes, all on worker 0.
fn on_worker_0<'scope>(
    counts: Stream<'scope, u64, Vec<CountUpdate>>,
    name: &str,
) -> Stream<'scope, u64, Vec<CountUpdate>> {
    counts.unary(
        timely::dataflow::channels::pact::Exchange::new(|_: &CountUpdate| 0u64),
        name,
        |_, _| {
            move |input, output| {
                input.for_each(|time, data: &mut Vec<CountUpdate>| {
                    output.session(&time).give_container(data);
                })
            }
        },
    )
}

/// One model per key: chain `m` whole on worker `m % peers` (one stage block and its
/// terminal), fed the records of model `m`; every chain's outputs go to worker 0.
fn keyed_chains<'scope, S: Stage + Serialize + 'static>(
    records: Stream<'scope, u64, Vec<InFlight>>,
    worker: usize,
    peers: usize,
    chains: Vec<Chain<S>>,
) -> Stream<'scope, u64, Vec<ChainOutput>> {
    let scope = records.scope();
    let parts = records.partition(chains.len() as u64, |r: InFlight| (u64::from(r.model), r));
    let outputs: Vec<_> = parts
        .into_iter()
        .zip(chains)
        .enumerate()
        .map(|(m, (part, chain))| {
            let home = m % peers;
            let mine = home == worker;
            let Chain {
                stages,
                terminal,
                position,
                ..
            } = chain;
            let block = StageBlock {
                first: 0,
                stages: if mine { stages } else { Vec::new() },
                position: mine.then_some(position),
            };
            part.stage_block(home, block)
                .terminal(home, mine.then_some(terminal))
        })
        .collect();
    scope.concatenate(outputs).exchange(|_: &ChainOutput| 0u64)
}

/// The learning passes a restored join still owes, at the epochs their pairs formed
/// (the loop delays them by `lag`).
fn restored_learning<'scope>(
    scope: timely::dataflow::Scope<'scope, u64>,
    worker: usize,
    setup: &FeedbackSetup,
    score_dim: usize,
) -> Stream<'scope, u64, Vec<InFlight>> {
    let owed: Vec<(u64, InFlight)> = match (&setup.restored, worker) {
        (Some(state), 0) => state
            .pairs
            .iter()
            .map(|fp| {
                (
                    fp.formed,
                    learning_pass(&fp.pair, &setup.topk, setup.labels, score_dim),
                )
            })
            .collect(),
        _ => Vec::new(),
    };
    timely::dataflow::operators::generic::operator::source(
        scope,
        "RestoredLearning",
        move |capability, _info| {
            let mut pending = Some((capability, owed));
            move |output| {
                if let Some((capability, owed)) = pending.take() {
                    for (formed, rec) in owed {
                        let cap = capability.delayed(&formed);
                        output.session(&cap).give(rec);
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::block_range;

    #[test]
    fn blocks_cover_every_stage_once_in_order() {
        for n in 0..12 {
            for w in 1..6 {
                let all: Vec<usize> = (0..w).flat_map(|b| block_range(n, w, b)).collect();
                assert_eq!(all, (0..n).collect::<Vec<_>>(), "n={n} w={w}");
            }
        }
    }
}
