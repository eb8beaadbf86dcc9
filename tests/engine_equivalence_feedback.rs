//! Feedback after predictions through the library API: the top-k boosters (top-k oracle)
//! and every kind of booster with delayed labels give bit-identical predictions and the
//! same feedback counters on the sequential runner and the timely dataflow with 1, 2 and 3
//! workers; with no delay, delayed-label learning equals immediate learning; and the
//! counters account for every event.

use flowboost::connectors::generators::{Generator, GeneratorConfig};
use flowboost::operators::boosters::{Algorithm, BoosterConfig, TreeParams, build};
use flowboost::operators::data::Example;
use flowboost::operators::dataflow::{DataflowOptions, run_dataflow_with_feedback};
use flowboost::operators::engine::{
    FeedbackCounters, FeedbackLoop, FeedbackOptions, Oracle, Prediction, PredictionSink,
};
use flowboost::operators::learners::WeakKind;
use flowboost::operators::topk::{Randomization, TopKConfig};
use std::sync::Arc;

#[derive(Default)]
struct Collect(Vec<Prediction>, Option<FeedbackCounters>);

impl PredictionSink for Collect {
    type Output = (Vec<Prediction>, Option<FeedbackCounters>);
    fn accept(&mut self, p: Prediction, _ex: Arc<Example>) -> Result<(), String> {
        self.0.push(p);
        Ok(())
    }
    fn feedback_counters(&mut self, c: FeedbackCounters) {
        self.1 = Some(c);
    }
    fn finish(self) -> Self::Output {
        (self.0, self.1)
    }
}

/// A prediction as exact bit patterns.
type Bits = (u64, u64, u32, Vec<u32>, Vec<u64>, u32, Vec<u32>, Vec<u32>);

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
                p.top.clone(),
                p.shown.clone(),
            )
        })
        .collect()
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

fn sequential(
    config: &BoosterConfig,
    g: &GeneratorConfig,
    fb: Option<(FeedbackOptions, Oracle)>,
) -> (Vec<Prediction>, Option<FeedbackCounters>) {
    let schema = Generator::new(g.clone()).unwrap().schema().clone();
    let mut runner = build(&schema, config).unwrap().into_sequential();
    let source = Generator::new(g.clone()).unwrap().map(Ok);
    match fb {
        Some((o, oracle)) => {
            let mut fl = FeedbackLoop::new(o, oracle, schema.num_labels());
            runner
                .run_with_feedback(source, Collect::default(), &mut fl)
                .unwrap()
        }
        None => runner.run(source, Collect::default()).unwrap(),
    }
}

fn check(
    config: BoosterConfig,
    g: GeneratorConfig,
    fb: (FeedbackOptions, Oracle),
) -> FeedbackCounters {
    let (seq, counters) = sequential(&config, &g, Some(fb));
    let counters = counters.expect("counters");
    assert_eq!(seq.len() as u64, g.examples);
    for workers in [1, 2, 3] {
        let options = DataflowOptions {
            workers,
            batch: 7,
            max_batches_in_flight: 3,
            ..DataflowOptions::default()
        };
        let schema = Generator::new(g.clone()).unwrap().schema().clone();
        let labels = schema.num_labels();
        let (s, c, gc) = (schema, config.clone(), g.clone());
        let (df, df_counters) = run_dataflow_with_feedback(
            &options,
            move || build(&s, &c),
            move || Ok(Generator::new(gc.clone())?.map(Ok)),
            Collect::default,
            move || Some(FeedbackLoop::new(fb.0, fb.1, labels)),
        )
        .unwrap();
        assert_eq!(
            bits(&seq),
            bits(&df),
            "{} with {workers} workers",
            config.algorithm
        );
        assert_eq!(Some(counters), df_counters);
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
                let options = FeedbackOptions {
                    delay,
                    ..FeedbackOptions::default()
                };
                let c = check(
                    config.clone(),
                    stream(true, 300),
                    (options, Oracle::TopK(config.topk)),
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
    let options = FeedbackOptions::default();
    let (p, _) = sequential(&config, &g, Some((options, Oracle::TopK(config.topk))));
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
            let options = FeedbackOptions {
                delay,
                ..FeedbackOptions::default()
            };
            let c = check(
                config.clone(),
                stream(multilabel, 250),
                (options, Oracle::Labels),
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
    let zero = FeedbackOptions::default();
    let (delayed0, _) = sequential(&config, &g, Some((zero, Oracle::Labels)));
    // (Learning passes take sequence numbers too: compare everything else.)
    let unsequenced = |p: &[Prediction]| {
        bits(p)
            .into_iter()
            .map(|mut b| {
                b.0 = 0;
                b
            })
            .collect::<Vec<_>>()
    };
    assert!(unsequenced(&immediate) == unsequenced(&delayed0));
    let later = FeedbackOptions { delay: 30, ..zero };
    let (delayed, _) = sequential(&config, &g, Some((later, Oracle::Labels)));
    assert!(unsequenced(&immediate) != unsequenced(&delayed));
    // The first 31 predictions are made before any learning: equal to an untrained model's.
    let (untrained, _) = sequential(
        &config,
        &stream(true, 31),
        Some((
            FeedbackOptions {
                delay: 1000,
                ..zero
            },
            Oracle::Labels,
        )),
    );
    assert!(unsequenced(&delayed[..31]) == unsequenced(&untrained));
}

#[test]
fn bounded_cache_counts_every_event() {
    let mut config = BoosterConfig::new(Algorithm::AdaOlmr, WeakKind::Vfdt, 2);
    config.learners = 3;
    for (capacity, ttl) in [(10, u64::MAX / 2), (1000, 8)] {
        let options = FeedbackOptions {
            delay: 20,
            capacity,
            ttl,
        };
        let c = check(config.clone(), stream(true, 200), (options, Oracle::Labels));
        // Each event is joined or dropped (evicted, expired); each drop is late feedback.
        assert_eq!(c.admitted, 200);
        assert_eq!(c.joined + c.evicted + c.expired, 200, "{c:?}");
        assert_eq!(c.late, c.evicted + c.expired, "{c:?}");
        assert!(c.evicted + c.expired > 0, "{c:?}");
        assert_eq!(c.unmatched, 0);
    }
}
