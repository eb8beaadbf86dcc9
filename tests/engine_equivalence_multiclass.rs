//! OnlineMBBM and AdaBoost.OLM give bit-identical predictions on the sequential runner and
//! on the timely dataflow with 1, 2 and 3 workers (small batches, so that records span
//! many timestamps and stage blocks).

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

/// A prediction as exact bit patterns: seq, id, class, scores, expert.
type Bits = (u64, u64, u32, Vec<u64>, u32);

fn bits(p: &[Prediction]) -> Vec<Bits> {
    p.iter()
        .map(|p| {
            (
                p.seq,
                p.id,
                p.class,
                p.scores.iter().map(|s| s.to_bits()).collect(),
                p.expert,
            )
        })
        .collect()
}

fn check(task: Task, config: BoosterConfig, examples: u64) {
    let mut gen_config = match task {
        Task::Binary => GeneratorConfig::binary(13),
        _ => GeneratorConfig::multiclass(13),
    };
    gen_config.examples = examples;
    let schema = Generator::new(gen_config.clone()).unwrap().schema().clone();
    let mut runner = build(&schema, &config).unwrap().into_sequential();
    let sequential = runner
        .run(
            Generator::new(gen_config.clone()).unwrap().map(Ok),
            Collect::default(),
        )
        .unwrap();
    assert_eq!(sequential.len() as u64, examples);
    // The run learned something (not a constant prediction).
    let classes: std::collections::BTreeSet<u32> = sequential.iter().map(|p| p.class).collect();
    assert!(classes.len() > 1, "{}: one class only", config.algorithm);
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

fn config(algorithm: Algorithm, weak: WeakKind, learners: usize, gamma: f64) -> BoosterConfig {
    let mut c = BoosterConfig::new(algorithm, weak, 7);
    c.learners = learners;
    c.gamma = gamma;
    c.tree_params = TreeParams::Random;
    c
}

#[test]
fn online_mbbm_is_identical_on_both_engines() {
    check(
        Task::Multiclass,
        config(Algorithm::OnlineMbbm, WeakKind::Vfdt, 7, 0.1),
        500,
    );
    check(
        Task::Multiclass,
        config(Algorithm::OnlineMbbm, WeakKind::Linear, 5, 0.3),
        300,
    );
    check(
        Task::Binary,
        config(Algorithm::OnlineMbbm, WeakKind::Vfdt, 6, 0.05),
        400,
    );
}

#[test]
fn adaboost_olm_is_identical_on_both_engines() {
    check(
        Task::Multiclass,
        config(Algorithm::AdaBoostOlm, WeakKind::Vfdt, 7, 0.1),
        500,
    );
    check(
        Task::Multiclass,
        config(Algorithm::AdaBoostOlm, WeakKind::Linear, 5, 0.1),
        300,
    );
    check(
        Task::Binary,
        config(Algorithm::AdaBoostOlm, WeakKind::Vfdt, 6, 0.1),
        400,
    );
}
