//! The sequential runner and the timely dataflow (1, 2 and 3 workers, small batches so that
//! records span many timestamps) give bit-identical predictions for every booster.

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::operators::boosters::{Algorithm, BoosterConfig, TreeParams, build};
use flowboost::operators::data::{Example, Task};
use flowboost::operators::dataflow::{DataflowOptions, run_dataflow};
use flowboost::operators::engine::{Prediction, PredictionSink};
use flowboost::operators::learners::WeakKind;
use std::sync::Arc;

#[derive(Default)]
struct Collect(Vec<Prediction>);

impl PredictionSink for Collect {
    type Output = Vec<Prediction>;
    fn accept(&mut self, p: Prediction, _ex: Arc<Example>) -> Result<(), String> {
        self.0.push(p);
        Ok(())
    }
    fn finish(self) -> Vec<Prediction> {
        self.0
    }
}

fn stream(task: Task, examples: u64, seed: u64) -> GeneratorConfig {
    let mut g = match task {
        Task::Binary => GeneratorConfig::binary(seed),
        Task::Multiclass => GeneratorConfig::multiclass(seed),
        Task::Multilabel => GeneratorConfig::multilabel(seed),
    };
    g.examples = examples;
    g
}

/// A prediction as exact bit patterns: seq, id, class, labels, scores, expert.
type Bits = (u64, u64, u32, Vec<u32>, Vec<u64>, u32);

/// Bit patterns, so that the comparison is exact (and NaN-safe).
fn bits(p: &[Prediction]) -> Vec<Bits> {
    p.iter()
        .map(|p| {
            (
                p.seq,
                p.id,
                p.class,
                p.labels.clone(),
                p.scores.iter().map(|s| s.to_bits()).collect(),
                p.expert,
            )
        })
        .collect()
}

fn check(task: Task, config: BoosterConfig, examples: u64) {
    let gen_config = stream(task, examples, 11);
    let schema = Generator::new(gen_config.clone()).unwrap().schema().clone();
    let mut runner = build(&schema, &config).unwrap().into_sequential();
    let sequential = runner
        .run(
            Generator::new(gen_config.clone()).unwrap().map(Ok),
            Collect::default(),
        )
        .unwrap();
    assert_eq!(sequential.len() as u64, examples);
    for workers in [1, 2, 3] {
        let options = DataflowOptions {
            workers,
            batch: 7,
            max_batches_in_flight: 3,
        };
        let (s, c, g) = (schema.clone(), config.clone(), gen_config.clone());
        let dataflow = run_dataflow(
            &options,
            move || {
                let b = build(&s, &c)?;
                Ok((b.stages, b.terminal, b.score_dim))
            },
            move || Ok(Generator::new(g.clone())?.map(Ok)),
            Collect::default,
        )
        .unwrap();
        assert_eq!(
            bits(&sequential),
            bits(&dataflow),
            "{} with {workers} workers differs from the sequential runner",
            config.algorithm
        );
    }
}

fn config(algorithm: Algorithm, weak: WeakKind, learners: usize) -> BoosterConfig {
    let mut c = BoosterConfig::new(algorithm, weak, 5);
    c.learners = learners;
    c.tree_params = TreeParams::Random;
    c
}

#[test]
fn binary_boosters_are_identical_on_both_engines() {
    for algorithm in [
        Algorithm::OnlineBbm,
        Algorithm::OnlineBbmS,
        Algorithm::AdaBoostOl,
        Algorithm::AdaBoostOlS,
        Algorithm::Oza,
    ] {
        check(Task::Binary, config(algorithm, WeakKind::Vfdt, 5), 600);
        check(Task::Binary, config(algorithm, WeakKind::Linear, 4), 300);
    }
}

#[test]
fn single_and_oza_are_identical_on_both_engines_for_every_task() {
    check(
        Task::Binary,
        config(Algorithm::Single, WeakKind::Vfdt, 1),
        400,
    );
    check(
        Task::Multiclass,
        config(Algorithm::Single, WeakKind::Linear, 1),
        400,
    );
    check(
        Task::Multilabel,
        config(Algorithm::Single, WeakKind::Vfdt, 1),
        300,
    );
    check(
        Task::Multiclass,
        config(Algorithm::Oza, WeakKind::Vfdt, 4),
        500,
    );
}
