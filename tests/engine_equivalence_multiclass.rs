//! OnlineMBBM and AdaBoost.OLM give bit-identical predictions on the sequential runner and
//! on the timely dataflow with 1, 2 and 3 workers (small batches, so that records span
//! many timestamps and stage blocks).

mod common;

use common::engines::sequential_equals_dataflow;
use flowboost::connectors::generators::GeneratorConfig;
use flowboost::operators::boosters::{Algorithm, BoosterConfig, TreeParams};
use flowboost::operators::data::Task;
use flowboost::operators::learners::WeakKind;

fn check(task: Task, config: BoosterConfig, examples: u64) {
    let mut gen_config = match task {
        Task::Binary => GeneratorConfig::binary(13),
        _ => GeneratorConfig::multiclass(13),
    };
    gen_config.examples = examples;
    let sequential = sequential_equals_dataflow(&gen_config, &config);
    // The run learned something (not a constant prediction).
    let classes: std::collections::BTreeSet<u32> = sequential.iter().map(|p| p.class).collect();
    assert!(classes.len() > 1, "{}: one class only", config.algorithm);
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
