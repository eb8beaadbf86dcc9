//! The multi-label ranking boosters (OnlineBMR with both potentials, Ada.OLMR) give
//! bit-identical predictions on the sequential runner and the timely dataflow with 1, 2
//! and 3 workers (small batches, so that records span many timestamps).

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::operators::boosters::{Algorithm, BoosterConfig, Potential, TreeParams, build};
use flowboost::operators::data::Example;
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

/// A prediction as exact bit patterns: seq, id, class, labels, scores, expert.
type Bits = (u64, u64, u32, Vec<u32>, Vec<u64>, u32);

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

fn check(config: BoosterConfig, examples: u64) {
    let mut gen_config = GeneratorConfig::multilabel(11);
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
    // The run is not degenerate: scores vary and sets are predicted.
    assert!(
        sequential
            .iter()
            .any(|p| p.scores.iter().any(|s| *s != p.scores[0]))
    );
    assert!(sequential.iter().all(|p| !p.labels.is_empty()));
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
            "{} ({:?}) with {workers} workers differs from the sequential runner",
            config.algorithm,
            config.potential
        );
    }
}

fn config(algorithm: Algorithm, weak: WeakKind, learners: usize) -> BoosterConfig {
    let mut c = BoosterConfig::new(algorithm, weak, 5);
    c.learners = learners;
    c.tree_params = TreeParams::Random;
    c.feature_subset = Some(10);
    c
}

#[test]
fn online_bmr_is_identical_on_both_engines() {
    for potential in [Potential::Rank, Potential::Hinge] {
        let mut c = config(Algorithm::OnlineBmr, WeakKind::Vfdt, 5);
        c.potential = potential;
        c.gamma = 0.05;
        check(c, 400);
    }
    let mut c = config(Algorithm::OnlineBmr, WeakKind::Linear, 4);
    c.potential = Potential::Hinge;
    check(c, 250);
}

#[test]
fn ada_olmr_is_identical_on_both_engines() {
    check(config(Algorithm::AdaOlmr, WeakKind::Vfdt, 5), 400);
    check(config(Algorithm::AdaOlmr, WeakKind::Linear, 4), 250);
}
