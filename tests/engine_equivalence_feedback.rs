//! Feedback after predictions through the library API: the top-k boosters (top-k oracle)
//! and every kind of booster with delayed labels give bit-identical predictions and the
//! same feedback join counts on the sequential runner (with the in-memory join) and the
//! timely dataflow with 1, 2 and 3 workers (with the differential join); with no delay,
//! delayed-label learning equals immediate learning; the counts account for every
//! event; and taking records through the stages stage by stage, in runs of any length,
//! equals taking them one at a time through every stage.

mod common;

use common::engines::bits;
use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::operators::boosters::{Algorithm, BoosterConfig, TreeParams, build};
use flowboost::operators::data::Example;
use flowboost::operators::dataflow::{DataflowOptions, run_dataflow};
use flowboost::operators::engine::feedback::{JoinConfig, JoinCounts};
use flowboost::operators::engine::{
    EpochRule, FeedbackSetup, ItemStream, Oracle, OracleKind, OracleState, Prediction,
    PredictionSink, Sequencer, SinkError, SnapshotPolicy, SourceState,
};
use flowboost::operators::learners::WeakKind;
use flowboost::operators::topk::{Randomization, TopKConfig};
use std::sync::Arc;

#[derive(Default)]
struct Collect(Vec<Prediction>, Option<JoinCounts>);

impl PredictionSink for Collect {
    type Output = (Vec<Prediction>, Option<JoinCounts>);
    fn accept(&mut self, p: Prediction, _ex: Arc<Example>) -> Result<(), SinkError> {
        self.0.push(p);
        Ok(())
    }
    fn join_counts(&mut self, c: JoinCounts) {
        self.1 = Some(c);
    }
    fn finish(self) -> Self::Output {
        (self.0, self.1)
    }
}

fn stream(multilabel: bool, examples: u64) -> GeneratorConfig {
    let mut g = if multilabel {
        GeneratorConfig::multilabel(11)
    } else {
        GeneratorConfig::multiclass(5)
    };
    g.examples = examples;
    g
}

/// Feedback in an evaluation: the oracle, its delay, the join's time-to-live.
#[derive(Clone, Copy, Debug)]
struct Fb {
    oracle: OracleKind,
    delay: u64,
    ttl: Option<u64>,
}

fn fb(oracle: OracleKind, delay: u64) -> Fb {
    Fb {
        oracle,
        delay,
        ttl: None,
    }
}

/// The stamped stream of `g` with `fb`'s oracle (epochs of 7 inputs, one ending after every
/// feedback record).
fn items(
    g: &GeneratorConfig,
    fb: Option<Fb>,
) -> ItemStream<impl Iterator<Item = Result<Example, String>> + use<>> {
    items_in_epochs(g, fb, 7, fb.is_some())
}

/// The stamped stream of `g` with `fb`'s oracle, in epochs of `size` inputs (one ending
/// after every feedback record when `feedback_closes`).
fn items_in_epochs(
    g: &GeneratorConfig,
    fb: Option<Fb>,
    size: usize,
    feedback_closes: bool,
) -> ItemStream<impl Iterator<Item = Result<Example, String>> + use<>> {
    let rule = EpochRule {
        size,
        feedback_closes,
    };
    let oracle = fb.map(|f| Oracle::new(f.oracle, f.delay, OracleState::default()));
    ItemStream::new(
        Generator::new(g.clone()).unwrap().map(Ok),
        oracle,
        Sequencer::new(rule, SourceState::default()),
        SnapshotPolicy::default(),
    )
}

fn setup(config: &BoosterConfig, labels: usize, fb: Option<Fb>) -> Option<FeedbackSetup> {
    fb.map(|f| FeedbackSetup {
        join: JoinConfig::new(f.ttl, 1),
        topk: config.topk,
        labels,
        restored: None,
    })
}

fn sequential(
    config: &BoosterConfig,
    g: &GeneratorConfig,
    fb: Option<Fb>,
) -> (Vec<Prediction>, Option<JoinCounts>) {
    let schema = Generator::new(g.clone()).unwrap().schema().clone();
    let mut runner = build(&schema, config).unwrap().into_sequential();
    runner
        .run_items(
            items(g, fb),
            Collect::default(),
            setup(config, schema.num_labels(), fb),
        )
        .unwrap()
}

fn check(config: BoosterConfig, g: GeneratorConfig, fb: Fb) -> JoinCounts {
    let (seq, counters) = sequential(&config, &g, Some(fb));
    let counters = counters.expect("counters");
    assert_eq!(seq.len() as u64, g.examples);
    for workers in [1, 2, 3] {
        let options = DataflowOptions {
            workers,
            max_epochs_in_flight: 3,
            source_batch: 5,
        };
        let schema = Generator::new(g.clone()).unwrap().schema().clone();
        let labels = schema.num_labels();
        let (s, c, gc) = (schema, config.clone(), g.clone());
        let (df, df_counters) = run_dataflow(
            &options,
            move |_, _| build(&s, &c),
            move || Ok(items(&gc, Some(fb))),
            Collect::default,
            setup(&config, labels, Some(fb)),
        )
        .unwrap();
        assert_eq!(
            bits(&seq),
            bits(&df),
            "{} with {workers} workers",
            config.algorithm
        );
        assert_eq!(Some(counters), df_counters, "{workers} workers");
    }
    counters
}

fn topk_config(algorithm: Algorithm, randomization: Randomization) -> BoosterConfig {
    let mut c = BoosterConfig::new(algorithm, WeakKind::Vfdt, 3);
    c.learners = 6;
    c.tree_params = TreeParams::Random;
    c.topk = TopKConfig {
        k: 3,
        rho: 0.2,
        randomization,
        ..TopKConfig::default()
    };
    c
}

#[test]
fn topk_boosters_agree_across_engines_with_and_without_delay() {
    for algorithm in [Algorithm::TopkBbm, Algorithm::TopkAdaptive] {
        for randomization in [Randomization::Uniform, Randomization::SingleSwap] {
            let config = topk_config(algorithm, randomization);
            for delay in [0, 5, 40] {
                let c = check(
                    config.clone(),
                    stream(true, 300),
                    fb(OracleKind::TopK, delay),
                );
                assert_eq!((c.admitted, c.joined), (300, 300), "{c:?}");
            }
        }
    }
}

#[test]
fn topk_predictions_show_k_labels_and_explore_sometimes() {
    let config = topk_config(Algorithm::TopkAdaptive, Randomization::Uniform);
    let g = stream(true, 400);
    let (p, _) = sequential(&config, &g, Some(fb(OracleKind::TopK, 0)));
    assert!(p.iter().all(|p| p.shown.len() == 3 && p.top.len() == 3));
    let explored = p.iter().filter(|p| p.shown != p.top).count();
    // rho = 0.2: about 80 of 400 (a random permutation rarely equals the top 3).
    assert!((40..130).contains(&explored), "{explored}");
    // The booster's own top-3 is its ranking of its scores.
    for p in &p {
        let best = p.scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(p.scores[p.top[0] as usize], best);
    }
}

#[test]
fn delayed_labels_agree_across_engines_for_every_kind_of_booster() {
    let cases = [
        (Algorithm::AdaOlmr, true),
        (Algorithm::OnlineBmr, true),
        (Algorithm::AdaBoostOlm, false),
        (Algorithm::OnlineMbbm, false),
        (Algorithm::Oza, false),
    ];
    for (algorithm, multilabel) in cases {
        let mut config = BoosterConfig::new(algorithm, WeakKind::Vfdt, 7);
        config.learners = 5;
        config.tree_params = TreeParams::Random;
        for delay in [0, 25] {
            let c = check(
                config.clone(),
                stream(multilabel, 250),
                fb(OracleKind::Labels, delay),
            );
            assert_eq!(c.joined, 250, "{algorithm}: {c:?}");
        }
    }
}

#[test]
fn no_delay_equals_immediate_labels_and_a_delay_changes_the_run() {
    let mut config = BoosterConfig::new(Algorithm::AdaOlmr, WeakKind::Vfdt, 2);
    config.learners = 5;
    config.tree_params = TreeParams::Random;
    let g = stream(true, 300);
    let (immediate, none) = sequential(&config, &g, None);
    assert!(none.is_none());
    let (delayed0, _) = sequential(&config, &g, Some(fb(OracleKind::Labels, 0)));
    // (Learning passes take sequence numbers too: compare everything else.)
    let unsequenced = |p: &[Prediction]| {
        bits(p)
            .into_iter()
            .map(|mut b| {
                b.seq = 0;
                b
            })
            .collect::<Vec<_>>()
    };
    assert!(unsequenced(&immediate) == unsequenced(&delayed0));
    let (delayed, _) = sequential(&config, &g, Some(fb(OracleKind::Labels, 30)));
    assert!(unsequenced(&immediate) != unsequenced(&delayed));
    // The first 31 predictions are made before any learning: equal to an untrained model's.
    let (untrained, _) = sequential(
        &config,
        &stream(true, 31),
        Some(fb(OracleKind::Labels, 1000)),
    );
    assert!(unsequenced(&delayed[..31]) == unsequenced(&untrained));
}

/// The sequential runner takes the records of an epoch through the stages stage by stage,
/// up to a wavefront at a time: with every kind of booster, with and without delayed
/// feedback, in long epochs (64 inputs; feedback does not end them), a wavefront of 1
/// (every record through every stage in turn), of 5 (runs cut inside epochs) and the
/// default give bit-identical predictions, join counts and final stages.
#[test]
fn stage_by_stage_equals_record_by_record() {
    let cases = [
        (Algorithm::AdaOlmr, true, OracleKind::Labels),
        (Algorithm::OnlineBmr, true, OracleKind::Labels),
        (Algorithm::TopkAdaptive, true, OracleKind::TopK),
        (Algorithm::AdaBoostOlm, false, OracleKind::Labels),
        (Algorithm::OnlineMbbm, false, OracleKind::Labels),
        (Algorithm::Oza, false, OracleKind::Labels),
    ];
    for (algorithm, multilabel, oracle) in cases {
        let mut config = if algorithm == Algorithm::TopkAdaptive {
            topk_config(algorithm, Randomization::Uniform)
        } else {
            BoosterConfig::new(algorithm, WeakKind::Vfdt, 7)
        };
        config.learners = 5;
        config.tree_params = TreeParams::Random;
        let g = stream(multilabel, 400);
        let schema = Generator::new(g.clone()).unwrap().schema().clone();
        for fb in [None, Some(fb(oracle, 30))] {
            let run = |wavefront: usize| {
                let mut runner = build(&schema, &config)
                    .unwrap()
                    .into_sequential()
                    .with_wavefront(wavefront);
                let (p, counts) = runner
                    .run_items(
                        items_in_epochs(&g, fb, 64, false),
                        Collect::default(),
                        setup(&config, schema.num_labels(), fb),
                    )
                    .unwrap();
                let stages = runner.snapshot(None, None).unwrap().stages;
                (bits(&p), counts, stages)
            };
            let one = run(1);
            assert_eq!(one.0.len(), 400, "{algorithm}");
            for wavefront in [5, usize::MAX] {
                let other = run(wavefront);
                assert!(
                    other.0 == one.0,
                    "{algorithm} {fb:?}: wavefront {wavefront}: other predictions"
                );
                assert_eq!(other.1, one.1, "{algorithm} {fb:?}: wavefront {wavefront}");
                assert!(
                    other.2 == one.2,
                    "{algorithm} {fb:?}: wavefront {wavefront}: other final stages"
                );
            }
        }
    }
}

#[test]
fn expiry_counts_every_event() {
    let mut config = BoosterConfig::new(Algorithm::AdaOlmr, WeakKind::Vfdt, 2);
    config.learners = 3;
    // Feedback 20 events later, but an event waits at most 8 epochs (each feedback ends an
    // epoch: about 8 events): most feedback comes too late.
    let c = check(
        config.clone(),
        stream(true, 200),
        Fb {
            oracle: OracleKind::Labels,
            delay: 20,
            ttl: Some(8),
        },
    );
    assert_eq!((c.admitted, c.feedback), (200, 200));
    assert_eq!(c.waiting + c.held, 0, "{c:?}");
    // Every event is joined or expired; every feedback record joined, or late/unmatched.
    assert_eq!(c.joined + c.expired(), 200, "{c:?}");
    assert_eq!(c.joined + c.unmatched(), 200, "{c:?}");
    assert!(c.expired() > 0 && c.late > 0, "{c:?}");
}
