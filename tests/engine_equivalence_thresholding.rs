//! The online multi-label classifiers with a learned threshold (FALT, SALT, kernel FALT
//! with and without a budget, PA-I-BR and PA-II-BR linear and kernel) and Ada.OLMR with
//! the learned label-set threshold give bit-identical predictions (label sets and scores)
//! on the sequential runner and the timely dataflow with 1, 2 and 3 workers; so do the
//! learners with online min-max scaling and the Hedge grids (`--grid`).

mod common;

use common::engines::sequential_equals_dataflow;
use flowboost::connectors::generators::GeneratorConfig;
use flowboost::operators::boosters::{Algorithm, BoosterConfig, TreeParams};
use flowboost::operators::engine::LabelSetKind;
use flowboost::operators::learners::WeakKind;
use flowboost::operators::thresholding::{FeatureScaling, ThresholdGrid};

fn check(config: BoosterConfig, examples: u64) {
    let mut gen_config = GeneratorConfig::multilabel(11);
    gen_config.examples = examples;
    let sequential = sequential_equals_dataflow(&gen_config, &config);
    // Not degenerate: label sets of different sizes are predicted.
    let sizes: std::collections::BTreeSet<usize> =
        sequential.iter().map(|p| p.labels.len()).collect();
    assert!(sizes.len() > 1, "{}: set sizes {sizes:?}", config.algorithm);
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

#[test]
fn scaled_learners_and_hedge_grids_are_identical_on_both_engines() {
    for (algorithm, kernel_width, grid) in [
        (Algorithm::Falt, None, false),
        (Algorithm::Pa1Br, Some(1.0), false),
        (Algorithm::Falt, None, true),
        (Algorithm::Salt, None, true),
        (Algorithm::FaltKernel, Some(1.0), true),
    ] {
        let mut c = config(algorithm);
        c.threshold.kernel_width = kernel_width;
        c.threshold.scaling = FeatureScaling::MinMax;
        if grid {
            c.threshold.grid = Some(ThresholdGrid::default_for(&c.threshold, false, false));
        }
        check(c, 300);
    }
}
