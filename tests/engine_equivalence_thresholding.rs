//! The online multi-label classifiers with a learned threshold (FALT, SALT, kernel FALT
//! with and without a budget, PA-I-BR and PA-II-BR linear and kernel) and Ada.OLMR with
//! the learned label-set threshold give bit-identical predictions (label sets and scores)
//! on the sequential runner and the timely dataflow with 1, 2 and 3 workers.

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::operators::boosters::{Algorithm, BoosterConfig, TreeParams, build};
use flowboost::operators::data::Example;
use flowboost::operators::dataflow::{DataflowOptions, run_dataflow};
use flowboost::operators::engine::{LabelSetKind, Prediction, PredictionSink};
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

type Bits = (u64, u64, Vec<u32>, Vec<u64>, u32);

fn bits(p: &[Prediction]) -> Vec<Bits> {
    p.iter()
        .map(|p| {
            (
                p.seq,
                p.id,
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
    // Not degenerate: label sets of different sizes are predicted.
    let sizes: std::collections::BTreeSet<usize> =
        sequential.iter().map(|p| p.labels.len()).collect();
    assert!(sizes.len() > 1, "{}: set sizes {sizes:?}", config.algorithm);
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
            config.threshold
        );
    }
}

fn config(algorithm: Algorithm) -> BoosterConfig {
    let mut c = BoosterConfig::new(algorithm, WeakKind::Linear, 5);
    c.threshold.repetitions = 3;
    c.threshold.eta = 0.5;
    c
}

#[test]
fn linear_thresholding_learners_are_identical_on_both_engines() {
    for algorithm in [
        Algorithm::Falt,
        Algorithm::Salt,
        Algorithm::Pa1Br,
        Algorithm::Pa2Br,
    ] {
        check(config(algorithm), 400);
    }
}

#[test]
fn kernel_thresholding_learners_are_identical_on_both_engines() {
    for (algorithm, budget) in [
        (Algorithm::FaltKernel, None),
        (Algorithm::FaltKernel, Some(50)),
        (Algorithm::Pa1Br, None),
        (Algorithm::Pa2Br, Some(40)),
    ] {
        let mut c = config(algorithm);
        c.threshold.kernel_width = Some(4.0);
        c.threshold.budget = budget;
        check(c, 300);
    }
}

#[test]
fn ada_olmr_with_a_learned_threshold_is_identical_on_both_engines() {
    for weak in [WeakKind::Vfdt, WeakKind::Linear] {
        let mut c = BoosterConfig::new(Algorithm::AdaOlmr, weak, 5);
        c.learners = 4;
        c.tree_params = TreeParams::Random;
        c.feature_subset = Some(10);
        c.label_set = Some(LabelSetKind::Learned);
        check(c, 400);
    }
}
