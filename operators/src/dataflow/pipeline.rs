use super::{StageBlock, StageBlockExt, TerminalExt};
use crate::data::Example;
use crate::engine::{InFlight, Prediction, SnapshotBoard, Stage, Terminal};
use serde::Serialize;
use std::ops::Range;
use std::sync::Arc;
use timely::dataflow::Stream;

/// The stages of block `b` when `n` stages are split into `workers` contiguous blocks of
/// nearly equal size (the first blocks are the smaller ones when `n` is not a multiple).
pub fn block_range(n: usize, workers: usize, b: usize) -> Range<usize> {
    (b * n / workers)..((b + 1) * n / workers)
}

/// Chains `stages` across the workers: block `b` (see [`block_range`]) runs on worker `b`,
/// then the terminal runs on worker 0. Every worker calls this with the same arguments
/// (`worker` is its own index, `peers` the number of workers); each keeps only its own block
/// and, on worker 0, the terminal. Snapshot markers make every block and the terminal
/// deposit their state on `board` (one board shared by the workers of the process).
pub fn pipeline<'scope, S: Stage + Serialize + 'static>(
    input: Stream<'scope, u64, Vec<InFlight>>,
    worker: usize,
    peers: usize,
    stages: Vec<S>,
    terminal: Terminal,
    board: SnapshotBoard,
) -> Stream<'scope, u64, Vec<(Prediction, Arc<Example>)>> {
    let n = stages.len();
    let mut all: Vec<Option<S>> = stages.into_iter().map(Some).collect();
    let mut stream = input;
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
            board: board.clone(),
        };
        stream = stream.stage_block(b, block);
    }
    stream.terminal(0, (worker == 0).then_some(terminal), board)
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
