//! The chains a run starts from, decoded once per process, each worker taking its part
//! (the Kafka job's and the file engines' workers alike).
//!
//! A worker runs only some of the model: with one model, the stage block
//! [`block_range`] gives it (and the last worker the terminal); with one model per key,
//! the keys whose chains live on it (key `m` on worker `m % peers`). Decoding the whole model on
//! every worker would take the CPU and the memory of the whole model once per worker; here
//! a process decodes (and checks) it once, before its workers start, and each worker takes
//! its own stages and chains out of it. Where a worker runs no part of a chain it gets the
//! fresh build's (a placeholder the dataflow drops, never run), with the chain's position.

use super::{ModelError, SavedModel};
use flowboost_operators::boosters::{Booster, BoosterConfig, BuildError, build};
use flowboost_operators::data::Schema;
use flowboost_operators::dataflow::block_range;
use std::sync::Mutex;

/// A process's start chains, handed out to its workers.
pub struct StartChains(Mutex<Parts>);

/// What [`StartChains`] guards (the chains hold their own caches in cells: one worker at a
/// time).
struct Parts {
    /// The chains not yet taken (one per model).
    chains: Vec<Booster>,
    /// The workers of this process that have not taken theirs yet: the last one drops
    /// what is left (the parts of other processes' workers).
    takers: usize,
    /// A fresh build of the model: the placeholders.
    fresh: Booster,
}

impl StartChains {
    /// The chains `chains` (one per model, all of the same shape as `fresh`), for
    /// `takers` workers.
    pub fn new(chains: Vec<Booster>, fresh: Booster, takers: usize) -> Self {
        StartChains(Mutex::new(Parts {
            chains,
            fresh,
            takers,
        }))
    }

    /// The chains as worker `index` of `peers` runs them: its own parts taken out of the
    /// process's copy, placeholders elsewhere. Each part is taken once: a second call for
    /// the same worker gets placeholders; a call after `takers` calls gets no chain.
    pub fn take(&self, index: usize, peers: usize) -> Vec<Booster> {
        let mut parts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let taken = Self::take_parts(&mut parts, index, peers);
        parts.takers = parts.takers.saturating_sub(1);
        if parts.takers == 0 {
            parts.chains = Vec::new();
        }
        taken
    }

    fn take_parts(parts: &mut Parts, index: usize, peers: usize) -> Vec<Booster> {
        let Parts { chains, fresh, .. } = parts;
        let models = chains.len();
        if models > 1 {
            return chains
                .iter_mut()
                .enumerate()
                .map(|(m, chain)| {
                    // Every worker sees every chain's position (the merge starts after
                    // the furthest).
                    let placeholder = Booster {
                        position: chain.position,
                        ..fresh.clone()
                    };
                    if m % peers == index {
                        std::mem::replace(chain, placeholder)
                    } else {
                        placeholder
                    }
                })
                .collect();
        }
        let Some(chain) = chains.first_mut() else {
            return Vec::new();
        };
        let n = chain.stages.len();
        let mine = block_range(n, peers, index);
        let stages = chain
            .stages
            .iter_mut()
            .zip(&fresh.stages)
            .enumerate()
            .map(|(i, (stage, fresh))| {
                if mine.contains(&i) {
                    std::mem::replace(stage, fresh.clone())
                } else {
                    fresh.clone()
                }
            })
            .collect();
        vec![Booster {
            stages,
            terminal: chain.terminal.clone(),
            score_dim: chain.score_dim,
            position: chain.position,
        }]
    }
}

/// What each of a file engine's `workers` starts from (the `build` of `Engine::run`):
/// the start model `start` (one model), decoded and checked here once, each worker taking
/// its part of it, `fresh` (a build of `config`) the placeholders; without a start model,
/// a fresh build of `config` on every worker.
pub fn worker_chains(
    start: Option<&SavedModel>,
    fresh: Booster,
    workers: usize,
    schema: Schema,
    config: BoosterConfig,
) -> Result<
    impl Fn(usize, usize) -> Result<Booster, WorkerChainError> + Send + Sync + 'static,
    ModelError,
> {
    let start = match start {
        Some(saved) => Some(StartChains::new(
            vec![saved.chain(saved.name())?],
            fresh,
            workers,
        )),
        None => None,
    };
    Ok(move |index: usize, peers: usize| match &start {
        Some(chains) => chains
            .take(index, peers)
            .pop()
            .ok_or(WorkerChainError::HandedOut { worker: index }),
        None => Ok(build(&schema, &config)?),
    })
}

/// Why a worker got no chain from [`worker_chains`].
#[derive(Debug, thiserror::Error)]
pub enum WorkerChainError {
    /// The worker asked twice.
    #[error("worker {worker}: the start model was handed out already")]
    HandedOut {
        /// The worker's index.
        worker: usize,
    },
    /// The fresh model could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
}

#[cfg(test)]
mod tests {
    use super::StartChains;
    use flowboost_operators::boosters::{Algorithm, Booster, BoosterConfig, build};
    use flowboost_operators::data::{Schema, Task};
    use flowboost_operators::dataflow::block_range;
    use flowboost_operators::learners::WeakKind;

    fn booster(seed: u64) -> Booster {
        let schema = Schema::numeric(3, 2, Task::Binary);
        let mut config = BoosterConfig::new(Algorithm::AdaBoostOl, WeakKind::Vfdt, seed);
        config.learners = 7;
        build(&schema, &config).unwrap()
    }

    fn bytes(chain: &Booster) -> Vec<Vec<u8>> {
        chain
            .stages
            .iter()
            .map(|s| postcard::to_allocvec(s).unwrap())
            .collect()
    }

    /// With one model, each worker gets its block's stages from the process's copy, and
    /// placeholders (the fresh build's) elsewhere; every stage is taken by one worker.
    #[test]
    fn each_worker_takes_its_block_of_stages() {
        let (real, fresh) = (booster(7), booster(1));
        let (want, placeholder) = (bytes(&real), bytes(&fresh));
        assert_ne!(want, placeholder);
        let peers = 3;
        let start = StartChains::new(vec![real], fresh, peers);
        for worker in 0..peers {
            let got = start.take(worker, peers);
            assert_eq!(got.len(), 1);
            let got = bytes(&got[0]);
            let mine = block_range(7, peers, worker);
            for i in 0..7 {
                let expect = if mine.contains(&i) {
                    &want[i]
                } else {
                    &placeholder[i]
                };
                assert_eq!(&got[i], expect, "worker {worker}, stage {i}");
            }
        }
    }

    /// With one model per key, each worker gets the chains of its keys (key m on worker
    /// m % peers), placeholders for the others, and every chain's position.
    #[test]
    fn each_worker_takes_its_keys_chains() {
        let real: Vec<Booster> = (0..5)
            .map(|m| {
                let mut chain = booster(10 + m);
                chain.position.seq = 100 + m;
                chain
            })
            .collect();
        let want: Vec<_> = real.iter().map(bytes).collect();
        let placeholder = bytes(&booster(1));
        let peers = 2;
        let start = StartChains::new(real, booster(1), peers);
        for worker in 0..peers {
            let got = start.take(worker, peers);
            assert_eq!(got.len(), 5);
            for (m, chain) in got.iter().enumerate() {
                let expect = if m % peers == worker {
                    &want[m]
                } else {
                    &placeholder
                };
                assert_eq!(&bytes(chain), expect, "worker {worker}, key {m}");
                assert_eq!(chain.position.seq, 100 + m as u64, "every worker sees it");
            }
        }
    }
}
