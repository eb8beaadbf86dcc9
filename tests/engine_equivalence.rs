//! The sequential runner and the timely dataflow (1, 2 and 3 workers, small batches so that
//! records span many timestamps) give bit-identical predictions for every booster.

mod common;

use common::engines::sequential_equals_dataflow;
use flowboost::connectors::generators::GeneratorConfig;
use flowboost::operators::boosters::{Algorithm, BoosterConfig, OzaVotes, TreeParams};
use flowboost::operators::data::Task;
use flowboost::operators::learners::WeakKind;

fn stream(task: Task, examples: u64, seed: u64) -> GeneratorConfig {
    let mut g = match task {
        Task::Binary => GeneratorConfig::binary(seed),
        Task::Multiclass => GeneratorConfig::multiclass(seed),
        Task::Multilabel => GeneratorConfig::multilabel(seed),
    };
    g.examples = examples;
    g
}

fn check(task: Task, config: BoosterConfig, examples: u64) {
    sequential_equals_dataflow(&stream(task, examples, 11), &config);
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
    // MOA's vote rule: soft votes, closed at the first stage of weight 0.
    for task in [Task::Binary, Task::Multiclass] {
        let mut moa = config(Algorithm::Oza, WeakKind::Vfdt, 6);
        moa.oza_votes = OzaVotes::Moa;
        check(task, moa, 500);
    }
}

/// With a memory budget small enough that the trees deactivate leaves (and reactivate
/// some), both engines still agree bit for bit, for every worker count; the budget
/// changes the predictions (it acted).
#[test]
fn a_tree_memory_budget_is_identical_on_both_engines() {
    let free = config(Algorithm::AdaBoostOl, WeakKind::Vfdt, 5);
    let mut budget = free.clone();
    budget.max_model_bytes = Some(100_000);
    let g = stream(Task::Binary, 4000, 11);
    let with = sequential_equals_dataflow(&g, &budget);
    let without = common::engines::sequential_equals_dataflow(&g, &free);
    assert_ne!(
        common::engines::bits(&with),
        common::engines::bits(&without),
        "the budget must change the trees"
    );
    let mut multiclass = config(Algorithm::Oza, WeakKind::Vfdt, 3);
    multiclass.max_model_bytes = Some(60_000);
    check(Task::Multiclass, multiclass, 3000);
}
