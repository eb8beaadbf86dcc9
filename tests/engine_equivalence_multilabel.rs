//! The multi-label ranking boosters (OnlineBMR with both potentials, Ada.OLMR) give
//! bit-identical predictions on the sequential runner and the timely dataflow with 1, 2
//! and 3 workers (small batches, so that records span many timestamps).

mod common;

use common::engines::sequential_equals_dataflow;
use flowboost::connectors::generators::GeneratorConfig;
use flowboost::operators::boosters::{Algorithm, BoosterConfig, Potential, TreeParams};
use flowboost::operators::learners::WeakKind;

fn check(config: BoosterConfig, examples: u64) {
    let mut gen_config = GeneratorConfig::multilabel(11);
    gen_config.examples = examples;
    let sequential = sequential_equals_dataflow(&gen_config, &config);
    // The run is not degenerate: scores vary and sets are predicted.
    assert!(
        sequential
            .iter()
            .any(|p| p.scores.iter().any(|s| *s != p.scores[0]))
    );
    assert!(sequential.iter().all(|p| !p.labels.is_empty()));
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
