//! The Hoeffding tree through its public API: split criteria and estimators against
//! hand and brute-force computations, learning numeric and nominal concepts, missing
//! values, feature subsets, importance weights, determinism and checkpoints.

use flowboost_operators::data::{Attribute, Features, Schema, Task};
use flowboost_operators::learners::hoeffding_tree::gaussian::{
    GaussianEstimator, erf, erfc, normal_cdf,
};
use flowboost_operators::learners::hoeffding_tree::split::{
    entropy, hoeffding_bound, information_gain,
};
use flowboost_operators::learners::{
    HoeffdingTree, HoeffdingTreeConfig, LeafPrediction, WeakLearner,
};
use flowboost_operators::rng::{Rng, seeded};
use rand::RngExt;

const ALL_MODES: [LeafPrediction; 3] = [
    LeafPrediction::MajorityClass,
    LeafPrediction::NaiveBayes,
    LeafPrediction::NaiveBayesAdaptive,
];

fn config(mode: LeafPrediction) -> HoeffdingTreeConfig {
    HoeffdingTreeConfig {
        leaf_prediction: mode,
        ..HoeffdingTreeConfig::default()
    }
}

fn predict(tree: &HoeffdingTree, x: &Features) -> Vec<f64> {
    let mut out = vec![f64::NAN; tree.num_labels()];
    tree.predict(x, &mut out);
    out
}

fn argmax(p: &[f64]) -> u32 {
    let mut best = 0;
    for (i, &v) in p.iter().enumerate() {
        if v > p[best] {
            best = i;
        }
    }
    best as u32
}

fn assert_distribution(p: &[f64]) {
    assert!(p.iter().all(|v| v.is_finite() && *v >= 0.0), "{p:?}");
    let sum: f64 = p.iter().sum();
    assert!((sum - 1.0).abs() < 1e-9, "sums to {sum}: {p:?}");
}

/// `dim` uniform features in [-1, 1]; the class is given by thresholds on feature
/// `concept`: class 0 for `x <= -0.2`, 1 up to 0.3, 2 above (or 0 / 1 at 0.3 for two
/// classes).
fn threshold_example(rng: &mut Rng, dim: usize, concept: usize, k: usize) -> (Vec<f64>, u32) {
    let x: Vec<f64> = (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect();
    let v = x[concept];
    let label = if k == 2 {
        u32::from(v > 0.3)
    } else if v <= -0.2 {
        0
    } else if v <= 0.3 {
        1
    } else {
        2
    };
    (x, label)
}

fn accuracy(tree: &HoeffdingTree, test: &[(Vec<f64>, u32)]) -> f64 {
    let hits = test
        .iter()
        .filter(|(x, y)| argmax(&predict(tree, &Features::Dense(x.clone()))) == *y)
        .count();
    hits as f64 / test.len() as f64
}

// ---------------------------------------------------------------- split criteria

#[test]
fn entropy_and_information_gain_match_hand_computation() {
    // H(1/4, 1/4, 1/2) = 1.5 bits; weights need not be normalized.
    assert!((entropy(&[1.0, 1.0, 2.0]) - 1.5).abs() < 1e-12);
    assert_eq!(entropy(&[0.0, 0.0]), 0.0);
    // pre = (4, 4): 1 bit. Branches (3, 1) and (1, 3): H = -(3/4 log2 3/4 + 1/4 log2 1/4)
    // = 2 - (3/4) log2 3 = 0.811278124459133 each. Gain = 1 - 0.811278... = 0.188721875540867.
    let h_branch = 2.0 - 0.75 * 3f64.log2();
    assert!((h_branch - 0.811_278_124_459_133).abs() < 1e-12);
    let g = information_gain(&[4.0, 4.0], &[&[3.0, 1.0], &[1.0, 3.0]]);
    assert!((g - 0.188_721_875_540_867).abs() < 1e-12, "{g}");
    // Unequal branches: pre (2, 1, 1) = 1.5 bits; branches (2, 0, 0) [weight 2, H 0] and
    // (0, 1, 1) [weight 2, H 1]: gain = 1.5 - (2/4) 1 = 1.
    let g = information_gain(&[2.0, 1.0, 1.0], &[&[2.0, 0.0, 0.0], &[0.0, 1.0, 1.0]]);
    assert!((g - 1.0).abs() < 1e-12, "{g}");
    // A split that changes nothing gains nothing.
    let g = information_gain(&[2.0, 6.0], &[&[1.0, 3.0], &[1.0, 3.0]]);
    assert!(g.abs() < 1e-12, "{g}");
}

#[test]
fn hoeffding_bound_matches_formula() {
    // R = log2(3), delta = 1e-7, n = 200: sqrt(R^2 ln(1e7) / 400).
    let r = 3f64.log2();
    let expected = (r * r * 16.118_095_650_958_32 / 400.0).sqrt();
    assert!((hoeffding_bound(r, 1e-7, 200.0) - expected).abs() < 1e-12);
    // Shrinks as 1/sqrt(n).
    let a = hoeffding_bound(1.0, 0.05, 100.0);
    let b = hoeffding_bound(1.0, 0.05, 400.0);
    assert!((a / b - 2.0).abs() < 1e-12);
    assert!(hoeffding_bound(1.0, 0.05, 0.0).is_infinite());
}

// ---------------------------------------------------------------- estimators

#[test]
fn erf_and_normal_cdf_match_reference_values() {
    // Reference values: CPython's math.erf / math.erfc (correctly rounded libm).
    let cases: [(f64, f64, f64); 12] = [
        (0.0, 0.0, 1.0),
        (0.001, 0.001_128_378_790_969_236_5, 0.998_871_621_209_030_7),
        (0.3, 0.328_626_759_459_127_4, 0.671_373_240_540_872_6),
        (1.0, 0.842_700_792_949_714_9, 0.157_299_207_050_285_13),
        (2.0, 0.995_322_265_018_952_7, 0.004_677_734_981_047_265),
        (2.4999, 0.999_592_830_099_666_6, 0.000_407_169_900_333_451_4),
        (2.5, 0.999_593_047_982_555, 0.000_406_952_017_444_958_9),
        (3.0, 0.999_977_909_503_001_4, 2.209_049_699_858_543_8e-5),
        (4.5, 0.999_999_999_803_383_9, 1.966_160_441_542_887_3e-10),
        (6.0, 1.0, 2.151_973_671_249_891_6e-17),
        (10.0, 1.0, 2.088_487_583_762_545e-45),
        (26.0, 1.0, 5.663_192_408_856_143e-296),
    ];
    for (x, e, c) in cases {
        assert!((erf(x) - e).abs() <= 1e-15, "erf({x}) = {} vs {e}", erf(x));
        assert!((erf(-x) + e).abs() <= 1e-15, "erf(-{x})");
        let rel = ((erfc(x) - c) / c).abs();
        assert!(rel <= 1e-12, "erfc({x}) = {} vs {c} (rel {rel})", erfc(x));
        assert!((erfc(-x) - (2.0 - c)).abs() <= 1e-15, "erfc(-{x})");
    }
    // Phi(z) = erfc(-z / sqrt 2) / 2, tails included.
    let phi: [(f64, f64); 6] = [
        (-8.0, 6.220_960_574_271_819e-16),
        (-5.0, 2.866_515_718_791_946e-7),
        (-2.0, 0.022_750_131_948_179_22),
        (-0.5, 0.308_537_538_725_986_9),
        (0.0, 0.5),
        (3.0, 0.998_650_101_968_369_9),
    ];
    for (z, p) in phi {
        let (abs, rel) = ((normal_cdf(z) - p).abs(), ((normal_cdf(z) - p) / p).abs());
        assert!(abs < 1e-15 && rel < 1e-8, "Phi({z}) = {}", normal_cdf(z));
        let q = normal_cdf(-z);
        assert!((q - (1.0 - p)).abs() < 1e-15, "Phi(-{z}) = {q}");
    }
    // Against erfc on a fine grid, far tails included.
    for i in -4000..=4000 {
        let z = i as f64 / 100.0;
        let reference = 0.5 * erfc(-z * std::f64::consts::FRAC_1_SQRT_2);
        let got = normal_cdf(z);
        assert!((got - reference).abs() < 1e-15, "Phi({z})");
        assert!(
            reference == 0.0 || ((got - reference) / reference).abs() < 1e-8,
            "Phi({z})"
        );
    }
    assert!(erf(f64::NAN).is_nan());
    assert_eq!(erfc(f64::INFINITY), 0.0);
    assert_eq!(erfc(f64::NEG_INFINITY), 2.0);
}

#[test]
fn weighted_gaussian_matches_two_pass_computation() {
    let mut rng = seeded(11, 0);
    let data: Vec<(f64, f64)> = (0..1000)
        .map(|_| {
            (
                rng.random_range(-3.0..5.0) * 10.0 + 1e4,
                rng.random_range(0.01..3.0),
            )
        })
        .collect();
    let mut g = GaussianEstimator::new();
    for &(x, w) in &data {
        g.update(x, w);
    }
    let w: f64 = data.iter().map(|d| d.1).sum();
    let mean = data.iter().map(|d| d.0 * d.1).sum::<f64>() / w;
    let var = data.iter().map(|d| d.1 * (d.0 - mean).powi(2)).sum::<f64>() / w;
    assert!((g.weight() - w).abs() < 1e-9);
    assert!((g.mean() - mean).abs() < 1e-9, "{} vs {mean}", g.mean());
    assert!(
        ((g.variance() - var) / var).abs() < 1e-9,
        "{} vs {var}",
        g.variance()
    );
    let min = data.iter().map(|d| d.0).fold(f64::INFINITY, f64::min);
    let max = data.iter().map(|d| d.0).fold(f64::NEG_INFINITY, f64::max);
    assert_eq!((g.min(), g.max()), (min, max));
    // Missing values and non-positive weights change nothing.
    let before = g;
    g.update(f64::NAN, 1.0);
    g.update(1.0, 0.0);
    g.update(1.0, -1.0);
    g.update(f64::INFINITY, 1.0);
    assert_eq!(g, before);
}

#[test]
fn gaussian_split_weights_follow_the_cdf() {
    let mut g = GaussianEstimator::new();
    for i in 0..=100 {
        g.update(i as f64 / 100.0, 2.0);
    }
    let (m, s) = (g.mean(), g.std_dev());
    let t = 0.3;
    let expected = g.weight() * normal_cdf((t - m) / s);
    assert!((g.weight_at_or_below(t) - expected).abs() < 1e-12);
    assert_eq!(g.weight_at_or_below(-0.1), 0.0);
    assert_eq!(g.weight_at_or_below(1.0), g.weight());
}

#[test]
fn weight_two_equals_two_unit_updates() {
    // The estimator.
    let mut a = GaussianEstimator::new();
    let mut b = GaussianEstimator::new();
    let mut rng = seeded(3, 0);
    for _ in 0..200 {
        let x = rng.random_range(-2.0..2.0);
        a.update(x, 2.0);
        b.update(x, 1.0);
        b.update(x, 1.0);
    }
    assert!((a.weight() - b.weight()).abs() < 1e-9);
    assert!((a.mean() - b.mean()).abs() < 1e-12);
    assert!((a.variance() - b.variance()).abs() < 1e-12);

    // Whole trees, with splits (grace periods are in weight, so both attempt at the same
    // points of the stream). Adaptive naive Bayes is left out on purpose: there the
    // second copy is scored after learning the first, so its counters differ by design.
    for mode in [LeafPrediction::MajorityClass, LeafPrediction::NaiveBayes] {
        let schema = Schema::numeric(4, 3, Task::Multiclass);
        let cfg = HoeffdingTreeConfig {
            grace_period: 100.0,
            ..config(mode)
        };
        let mut weighted = HoeffdingTree::new(&schema, cfg.clone(), 1);
        let mut copies = HoeffdingTree::new(&schema, cfg, 1);
        let mut rng = seeded(5, 0);
        for _ in 0..3000 {
            let (x, y) = threshold_example(&mut rng, 4, 1, 3);
            let x = Features::Dense(x);
            weighted.learn(&x, y, 2.0);
            copies.learn(&x, y, 1.0);
            copies.learn(&x, y, 1.0);
        }
        assert!(weighted.num_leaves() > 1);
        assert_eq!(weighted.num_leaves(), copies.num_leaves());
        assert_eq!(weighted.depth(), copies.depth());
        for _ in 0..500 {
            let (x, _) = threshold_example(&mut rng, 4, 1, 3);
            let x = Features::Dense(x);
            let (p, q) = (predict(&weighted, &x), predict(&copies, &x));
            for (a, b) in p.iter().zip(&q) {
                assert!((a - b).abs() < 1e-9, "{mode:?}: {p:?} vs {q:?}");
            }
        }
    }
}

// ---------------------------------------------------------------- learning

#[test]
fn learns_an_axis_aligned_numeric_concept() {
    for k in [2, 3] {
        for mode in ALL_MODES {
            let schema = Schema::numeric(5, k, Task::Multiclass);
            let mut tree = HoeffdingTree::new(&schema, config(mode), 42);
            let mut rng = seeded(1, k as u64);
            for _ in 0..5000 {
                let (x, y) = threshold_example(&mut rng, 5, 0, k);
                tree.learn(&Features::Dense(x), y, 1.0);
            }
            let test: Vec<_> = (0..2000)
                .map(|_| threshold_example(&mut rng, 5, 0, k))
                .collect();
            let acc = accuracy(&tree, &test);
            assert!(tree.num_leaves() > 1, "k={k} {mode:?}: never split");
            assert!(tree.num_nodes() > tree.num_leaves());
            assert!(tree.depth() >= 1);
            assert!(acc > 0.95, "k={k} {mode:?}: accuracy {acc}");
        }
    }
}

#[test]
fn splits_with_a_single_attribute() {
    // The second best is the null split: with one attribute the tree must still split.
    let schema = Schema::numeric(1, 2, Task::Binary);
    let mut tree = HoeffdingTree::new(&schema, config(LeafPrediction::MajorityClass), 0);
    let mut rng = seeded(2, 0);
    for _ in 0..2000 {
        let (x, y) = threshold_example(&mut rng, 1, 0, 2);
        tree.learn(&Features::Dense(x), y, 1.0);
    }
    assert!(tree.num_leaves() > 1);
    let test: Vec<_> = (0..1000)
        .map(|_| threshold_example(&mut rng, 1, 0, 2))
        .collect();
    assert!(accuracy(&tree, &test) > 0.95);
}

#[test]
fn naive_bayes_leaves_use_the_attribute_statistics() {
    // One leaf only (no split within the stream): majority class knows nothing beyond the
    // prior, naive Bayes separates the two class-conditional Gaussians.
    let schema = Schema::numeric(2, 2, Task::Binary);
    let gaussian_example = |rng: &mut Rng| {
        let y: u32 = rng.random_range(0..2);
        let centre = if y == 1 { 1.0 } else { -1.0 };
        let x0 = centre + rng.random_range(-0.8..0.8);
        (vec![x0, rng.random_range(-1.0..1.0)], y)
    };
    let mut rng = seeded(9, 0);
    let mut accs = vec![];
    for mode in ALL_MODES {
        let cfg = HoeffdingTreeConfig {
            grace_period: 1e9,
            ..config(mode)
        };
        let mut tree = HoeffdingTree::new(&schema, cfg, 0);
        for _ in 0..500 {
            let (x, y) = gaussian_example(&mut rng);
            tree.learn(&Features::Dense(x), y, 1.0);
        }
        assert_eq!(tree.num_leaves(), 1);
        let test: Vec<_> = (0..1000).map(|_| gaussian_example(&mut rng)).collect();
        accs.push(accuracy(&tree, &test));
    }
    assert!(accs[0] < 0.65, "majority class: {}", accs[0]);
    assert!(accs[1] > 0.95, "naive Bayes: {}", accs[1]);
    assert!(accs[2] > 0.95, "adaptive: {}", accs[2]);
}

#[test]
fn hoeffding_bound_gates_splits_against_the_null_split() {
    // One weakly informative attribute: P(y = 1) = 0.65 above 0.5, 0.35 below (gain at
    // most 1 - H(0.65) = 0.066 bits). With the tie threshold off, the best split must beat
    // the null split (merit 0) by eps = sqrt(ln(1e7) / (2 n)): 0.2 at n = 200, below 0.066
    // only after n = 3700. So no split early, a split eventually.
    let schema = Schema::numeric(1, 2, Task::Binary);
    let cfg = HoeffdingTreeConfig {
        tie_threshold: 0.0,
        ..config(LeafPrediction::MajorityClass)
    };
    let mut tree = HoeffdingTree::new(&schema, cfg, 0);
    let mut rng = seeded(12, 0);
    for i in 1..=30_000 {
        let x: f64 = rng.random_range(0.0..1.0);
        let p = if x > 0.5 { 0.65 } else { 0.35 };
        let y = u32::from(rng.random_range(0.0..1.0) < p);
        tree.learn(&Features::Dense(vec![x]), y, 1.0);
        if i <= 2000 {
            assert_eq!(tree.num_leaves(), 1, "split after only {i} examples");
        }
    }
    assert!(tree.num_leaves() > 1);
}

#[test]
fn tie_threshold_breaks_ties_between_equal_attributes() {
    // Two copies of one perfect attribute: equal merits, so only eps < tau lets the tree
    // split: with R = log2 k, at n > R^2 ln(1e7) / (2 0.05^2) = 3224 R^2, i.e. at the
    // first attempt (every 200) after 3224 (k = 2) or 8098 (k = 3).
    for (k, first_split) in [(2, 3400), (3, 8200)] {
        let schema = Schema::numeric(2, k, Task::Multiclass);
        for tau in [0.05, 0.0] {
            let cfg = HoeffdingTreeConfig {
                tie_threshold: tau,
                ..config(LeafPrediction::MajorityClass)
            };
            let mut tree = HoeffdingTree::new(&schema, cfg, 0);
            let mut rng = seeded(13, 0);
            for i in 1..=10_000 {
                let x: f64 = rng.random_range(0.0..1.0);
                let y = ((x * k as f64) as u32).min(k as u32 - 1);
                tree.learn(&Features::Dense(vec![x, x]), y, 1.0);
                if i < first_split || tau == 0.0 {
                    assert_eq!(tree.num_leaves(), 1, "k {k} tau {tau}: split at {i}");
                } else {
                    assert!(tree.num_leaves() > 1, "k {k} tau {tau}: no split at {i}");
                }
            }
        }
    }
}

#[test]
fn missing_values_discount_an_attributes_merit() {
    // a decides the class exactly but is missing 70% of the time; b is right 90% of the
    // time and always present. Weighted by the known fraction, b must win the root split:
    // then, with a missing, the prediction follows b.
    let schema = Schema::numeric(2, 2, Task::Binary);
    let cfg = HoeffdingTreeConfig {
        max_depth: Some(1),
        ..config(LeafPrediction::MajorityClass)
    };
    let mut tree = HoeffdingTree::new(&schema, cfg, 0);
    let mut rng = seeded(14, 0);
    for _ in 0..5000 {
        let a: f64 = rng.random_range(0.0..1.0);
        let y = u32::from(a > 0.5);
        let noisy = if rng.random_range(0.0..1.0) < 0.1 {
            1 - y
        } else {
            y
        };
        let b = (noisy as f64 + rng.random_range(0.0..1.0)) / 2.0;
        let a = if rng.random_range(0.0..1.0) < 0.7 {
            f64::NAN
        } else {
            a
        };
        tree.learn(&Features::Dense(vec![a, b]), y, 1.0);
    }
    assert_eq!(tree.num_leaves(), 2);
    let low = predict(&tree, &Features::Dense(vec![f64::NAN, 0.1]));
    let high = predict(&tree, &Features::Dense(vec![f64::NAN, 0.9]));
    assert!(low[0] > 0.8 && high[1] > 0.8, "{low:?} {high:?}");
}

fn nominal_schema() -> Schema {
    let values = |n: usize| (0..n).map(|v| format!("v{v}")).collect::<Vec<_>>();
    Schema {
        attributes: vec![
            Attribute::nominal("a", values(4)),
            Attribute::nominal("b", values(4)),
            Attribute::numeric("noise"),
            Attribute::nominal("c", values(3)),
        ],
        labels: vec!["x".into(), "y".into(), "z".into()],
        task: Task::Multiclass,
    }
}

/// Class 2 when b = 3; else a mod 2.
fn nominal_example(rng: &mut Rng) -> (Vec<f64>, u32) {
    let a: u32 = rng.random_range(0..4);
    let b: u32 = rng.random_range(0..4);
    let c: u32 = rng.random_range(0..3);
    let y = if b == 3 { 2 } else { a % 2 };
    (
        vec![a as f64, b as f64, rng.random_range(-1.0..1.0), c as f64],
        y,
    )
}

#[test]
fn learns_a_nominal_concept() {
    for mode in ALL_MODES {
        let mut tree = HoeffdingTree::new(&nominal_schema(), config(mode), 3);
        let mut rng = seeded(4, 0);
        // b (0.81 bits) and a (0.75 bits) nearly tie: the first split needs some 8000
        // examples (Hoeffding bound below the tie threshold).
        for _ in 0..20000 {
            let (x, y) = nominal_example(&mut rng);
            tree.learn(&Features::Dense(x), y, 1.0);
        }
        let test: Vec<_> = (0..2000).map(|_| nominal_example(&mut rng)).collect();
        let acc = accuracy(&tree, &test);
        assert!(
            tree.num_leaves() >= 4,
            "{mode:?}: {} leaves",
            tree.num_leaves()
        );
        assert!(acc > 0.95, "{mode:?}: accuracy {acc}");
    }
}

#[test]
fn unseen_nominal_branch_predicts_the_parent_distribution() {
    // Value 3 of `a` never occurs: after the split on `a`, its leaf has no weight and
    // predicts the class distribution of the leaf that was split.
    let schema = Schema {
        attributes: vec![Attribute::nominal(
            "a",
            (0..4).map(|v| v.to_string()).collect(),
        )],
        labels: vec!["0".into(), "1".into()],
        task: Task::Binary,
    };
    let cfg = HoeffdingTreeConfig {
        grace_period: 300.0,
        ..config(LeafPrediction::MajorityClass)
    };
    let mut tree = HoeffdingTree::new(&schema, cfg, 0);
    // a = 0 (1/4 of the weight) -> class 0; a = 1 (1/2) or 2 (1/4) -> class 1.
    for i in 0..300 {
        let a = [0.0, 1.0, 1.0, 2.0][i % 4];
        tree.learn(&Features::Dense(vec![a]), u32::from(a > 0.0), 1.0);
    }
    assert_eq!(tree.num_leaves(), 4);
    let p = predict(&tree, &Features::Dense(vec![3.0]));
    assert!(
        (p[0] - 0.25).abs() < 1e-12 && (p[1] - 0.75).abs() < 1e-12,
        "{p:?}"
    );
    assert_eq!(predict(&tree, &Features::Dense(vec![0.0])), vec![1.0, 0.0]);
    // Missing and out-of-range values follow the heaviest branch (a = 1).
    for v in [f64::NAN, 7.0, -1.0, 0.5] {
        assert_eq!(
            predict(&tree, &Features::Dense(vec![v])),
            vec![0.0, 1.0],
            "{v}"
        );
    }
}

// ---------------------------------------------------------------- missing values

#[test]
fn missing_values_neither_panic_nor_poison() {
    for mode in ALL_MODES {
        let schema = Schema::numeric(5, 3, Task::Multiclass);
        let mut tree = HoeffdingTree::new(&schema, config(mode), 8);
        let mut rng = seeded(6, 0);
        for _ in 0..6000 {
            let (mut x, y) = threshold_example(&mut rng, 5, 0, 3);
            for v in x.iter_mut() {
                if rng.random_range(0.0..1.0) < 0.2 {
                    *v = f64::NAN;
                }
            }
            tree.learn(&Features::Dense(x), y, 1.0);
        }
        assert!(tree.num_leaves() > 1, "{mode:?}");
        // Complete test points are still classified well.
        let test: Vec<_> = (0..2000)
            .map(|_| threshold_example(&mut rng, 5, 0, 3))
            .collect();
        let acc = accuracy(&tree, &test);
        assert!(acc > 0.9, "{mode:?}: accuracy {acc}");
        // Points with missing values get proper distributions.
        for _ in 0..200 {
            let (mut x, _) = threshold_example(&mut rng, 5, 0, 3);
            x[0] = f64::NAN;
            assert_distribution(&predict(&tree, &Features::Dense(x)));
        }
        assert_distribution(&predict(&tree, &Features::Dense(vec![f64::NAN; 5])));
    }
}

// ---------------------------------------------------------------- feature subsets

#[test]
fn feature_subset_is_respected() {
    let dim = 50;
    let schema = Schema::numeric(dim, 2, Task::Binary);
    let cfg = HoeffdingTreeConfig {
        feature_subset: Some(5),
        ..config(LeafPrediction::NaiveBayesAdaptive)
    };
    let tree = HoeffdingTree::new(&schema, cfg.clone(), 17);
    let f = tree.features().to_vec();
    assert_eq!(f.len(), 5);
    assert!(f.windows(2).all(|w| w[0] < w[1]), "{f:?}");
    assert!(f.iter().all(|&j| j < dim));
    // Same seed, same subset; other seeds draw other subsets.
    assert_eq!(
        HoeffdingTree::new(&schema, cfg.clone(), 17).features(),
        &f[..]
    );
    let distinct = (0..20u64)
        .map(|s| {
            HoeffdingTree::new(&schema, cfg.clone(), s)
                .features()
                .to_vec()
        })
        .collect::<std::collections::BTreeSet<_>>();
    assert!(distinct.len() > 10);
    // m >= dim: every attribute.
    let all = HoeffdingTree::new(
        &schema,
        HoeffdingTreeConfig {
            feature_subset: Some(dim + 3),
            ..cfg.clone()
        },
        0,
    );
    assert_eq!(all.features(), &(0..dim).collect::<Vec<_>>()[..]);

    // A concept on an excluded feature is not learned; one on an included feature is.
    let excluded = (0..dim).find(|j| !f.contains(j)).unwrap();
    let included = f[2];
    for (concept, learnable) in [(excluded, false), (included, true)] {
        let mut tree = HoeffdingTree::new(&schema, cfg.clone(), 17);
        let mut rng = seeded(21, concept as u64);
        for _ in 0..4000 {
            let (x, y) = threshold_example(&mut rng, dim, concept, 2);
            tree.learn(&Features::Dense(x), y, 1.0);
        }
        let test: Vec<_> = (0..2000)
            .map(|_| threshold_example(&mut rng, dim, concept, 2))
            .collect();
        let acc = accuracy(&tree, &test);
        if learnable {
            assert!(acc > 0.95, "included feature {concept}: {acc}");
        } else {
            // The majority class (x <= 0.3: 65%) is all it can find.
            assert!(acc < 0.7, "excluded feature {concept}: {acc}");
        }
    }
}

#[test]
fn sparse_and_dense_inputs_agree() {
    let dim = 300;
    let schema = Schema::numeric(dim, 3, Task::Multiclass);
    let cfg = HoeffdingTreeConfig {
        feature_subset: Some(20),
        grace_period: 50.0,
        ..HoeffdingTreeConfig::default()
    };
    let mut dense = HoeffdingTree::new(&schema, cfg.clone(), 5);
    let mut sparse = HoeffdingTree::new(&schema, cfg, 5);
    let concept = dense.features()[7];
    let mut rng = seeded(30, 0);
    let example = |rng: &mut Rng| {
        // About 10% of the values non-zero, plus the concept feature.
        let mut x = vec![0.0; dim];
        for (j, v) in x.iter_mut().enumerate() {
            if j == concept || rng.random_range(0.0..1.0) < 0.1 {
                *v = rng.random_range(-1.0..1.0);
            }
        }
        let y = if x[concept] <= -0.2 {
            0
        } else if x[concept] <= 0.3 {
            1
        } else {
            2
        };
        let (indices, values): (Vec<u32>, Vec<f64>) = x
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(j, &v)| (j as u32, v))
            .unzip();
        let s = Features::Sparse {
            indices,
            values,
            dim: dim as u32,
        };
        (Features::Dense(x), s, y)
    };
    for _ in 0..3000 {
        let (d, s, y) = example(&mut rng);
        dense.learn(&d, y, 1.0);
        sparse.learn(&s, y, 1.0);
    }
    assert!(dense.num_leaves() > 1);
    let mut hits = 0;
    for _ in 0..1000 {
        let (d, s, y) = example(&mut rng);
        let (p, q) = (predict(&dense, &d), predict(&sparse, &s));
        assert_eq!(p, q);
        hits += usize::from(argmax(&p) == y);
    }
    assert!(hits > 950, "{hits}");
}

// ---------------------------------------------------------------- determinism, checkpoints

fn trained(seed: u64, cfg: HoeffdingTreeConfig) -> HoeffdingTree {
    let schema = Schema::numeric(30, 3, Task::Multiclass);
    let mut tree = HoeffdingTree::new(&schema, cfg, seed);
    let mut rng = seeded(77, 0);
    for i in 0..3000 {
        let concept = tree.features()[0];
        let (x, y) = threshold_example(&mut rng, 30, concept, 3);
        tree.learn(&Features::Dense(x), y, 0.5 + (i % 3) as f64);
    }
    tree
}

fn probes(n: usize) -> Vec<Features> {
    let mut rng = seeded(78, 0);
    (0..n)
        .map(|_| Features::Dense((0..30).map(|_| rng.random_range(-1.0..1.0)).collect()))
        .collect()
}

#[test]
fn same_seed_gives_identical_predictions() {
    let mut rng = seeded(0, 0);
    let cfg = HoeffdingTreeConfig {
        feature_subset: Some(10),
        ..HoeffdingTreeConfig::randomized(&mut rng)
    };
    let a = trained(123, cfg.clone());
    let b = trained(123, cfg);
    assert!(a.num_leaves() > 1);
    assert_eq!(a.features(), b.features());
    assert_eq!(a.num_nodes(), b.num_nodes());
    for x in probes(500) {
        let (p, q) = (predict(&a, &x), predict(&b, &x));
        assert_eq!(
            p.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            q.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn serde_round_trip_gives_identical_predictions() {
    for mode in ALL_MODES {
        let cfg = HoeffdingTreeConfig {
            grace_period: 30.0,
            feature_subset: Some(12),
            ..config(mode)
        };
        let mut tree = trained(9, cfg);
        assert!(tree.num_leaves() > 1);
        let json = serde_json::to_string(&tree).unwrap();
        let mut back: HoeffdingTree = serde_json::from_str(&json).unwrap();
        assert_eq!(back.features(), tree.features());
        assert_eq!(back.num_leaves(), tree.num_leaves());
        assert_eq!(back.config(), tree.config());
        let xs = probes(300);
        for x in &xs {
            assert_eq!(predict(&tree, x), predict(&back, x), "{mode:?}");
        }
        // Both keep learning identically after the restore.
        let mut rng = seeded(79, 0);
        for _ in 0..1000 {
            let (x, y) = threshold_example(&mut rng, 30, 3, 3);
            let x = Features::Dense(x);
            tree.learn(&x, y, 1.0);
            back.learn(&x, y, 1.0);
        }
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&tree).unwrap()
        );
        for x in &xs {
            assert_eq!(predict(&tree, x), predict(&back, x), "{mode:?}");
        }
    }
}

#[test]
fn randomized_parameters_stay_in_range() {
    let mut rng = seeded(1, 1);
    let (mut low, mut high) = (0, 0);
    let mut graces = std::collections::BTreeSet::new();
    for _ in 0..2000 {
        let c = HoeffdingTreeConfig::randomized(&mut rng);
        for v in [c.split_confidence, c.tie_threshold] {
            assert!((0.01..=0.9).contains(&v), "{v}");
            low += usize::from(v < 0.03);
            high += usize::from(v > 0.5);
        }
        assert!((5.0..=20.0).contains(&c.grace_period));
        assert_eq!(c.grace_period.fract(), 0.0);
        graces.insert(c.grace_period as u32);
        assert_eq!(c.leaf_prediction, LeafPrediction::NaiveBayesAdaptive);
    }
    // Log-uniform: P(v < 0.03) = ln 3 / ln 90 = 0.244, P(v > 0.5) = ln 1.8 / ln 90 = 0.131.
    assert!((800..1150).contains(&low), "{low}");
    assert!((400..650).contains(&high), "{high}");
    assert_eq!(graces.len(), 16);
}

#[test]
fn defaults_are_moa_defaults() {
    let c = HoeffdingTreeConfig::default();
    assert_eq!(c.grace_period, 200.0);
    assert_eq!(c.split_confidence, 1e-7);
    assert_eq!(c.tie_threshold, 0.05);
    assert_eq!(c.leaf_prediction, LeafPrediction::NaiveBayesAdaptive);
    assert_eq!(c.split_points, 10);
    assert_eq!(c.feature_subset, None);
}

// ---------------------------------------------------------------- no-ops and output

#[test]
fn zero_weight_and_unknown_labels_change_nothing() {
    for mode in ALL_MODES {
        let cfg = HoeffdingTreeConfig {
            grace_period: 1.0,
            ..config(mode)
        };
        let mut tree = trained(2, cfg);
        let before = serde_json::to_string(&tree).unwrap();
        let x = Features::Dense(vec![0.5; 30]);
        tree.learn(&x, 1, 0.0);
        tree.learn(&x, 3, 1.0);
        tree.learn(&x, u32::MAX, 1.0);
        tree.learn(&x, 1, -1.0);
        tree.learn(&x, 1, f64::NAN);
        tree.learn(&x, 1, f64::INFINITY);
        assert_eq!(serde_json::to_string(&tree).unwrap(), before, "{mode:?}");
        // A positive weight does change it (the check above can fail).
        tree.learn(&x, 1, 1.0);
        assert_ne!(serde_json::to_string(&tree).unwrap(), before, "{mode:?}");
    }
}

#[test]
fn predictions_are_always_finite_distributions() {
    let schema = Schema::numeric(30, 4, Task::Multiclass);
    for mode in ALL_MODES {
        let cfg = HoeffdingTreeConfig {
            grace_period: 10.0,
            tie_threshold: 0.5,
            ..config(mode)
        };
        let mut tree = HoeffdingTree::new(&schema, cfg, 4);
        // Knows nothing: uniform.
        assert_eq!(
            predict(&tree, &Features::Dense(vec![0.0; 30])),
            vec![0.25; 4]
        );
        let mut rng = seeded(50, 0);
        let extreme = [
            0.0,
            1e300,
            -1e300,
            1e-300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let sample = |rng: &mut Rng| -> Vec<f64> {
            (0..30)
                .map(|_| {
                    if rng.random_range(0.0..1.0) < 0.05 {
                        extreme[rng.random_range(0..extreme.len())]
                    } else {
                        rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-3..4))
                    }
                })
                .collect()
        };
        for i in 0..3000 {
            let x = Features::Dense(sample(&mut rng));
            assert_distribution(&predict(&tree, &x));
            // Labels from the sign pattern, with a skewed weight distribution.
            let y = (argmax(&[1.0, rng.random_range(0.0..2.0), 0.5, 0.7]) + (i % 2)) % 4;
            let w = 10f64.powi(rng.random_range(-4..3));
            tree.learn(&x, y, w);
        }
        assert!(tree.num_leaves() > 1, "{mode:?}");
        for _ in 0..500 {
            assert_distribution(&predict(&tree, &Features::Dense(sample(&mut rng))));
        }
        // Short and empty feature vectors read as zeros.
        assert_distribution(&predict(&tree, &Features::Dense(vec![])));
        assert_distribution(&predict(
            &tree,
            &Features::Sparse {
                indices: vec![],
                values: vec![],
                dim: 30,
            },
        ));
    }
}

#[test]
fn size_limits_are_respected() {
    let schema = Schema::numeric(5, 3, Task::Multiclass);
    for (max_depth, max_leaves) in [(Some(1), None), (Some(2), None), (None, Some(3))] {
        let cfg = HoeffdingTreeConfig {
            grace_period: 20.0,
            tie_threshold: 0.9,
            max_depth,
            max_leaves,
            ..HoeffdingTreeConfig::default()
        };
        let mut tree = HoeffdingTree::new(&schema, cfg, 0);
        let mut rng = seeded(60, 0);
        for _ in 0..5000 {
            let (x, y) = threshold_example(&mut rng, 5, 0, 3);
            tree.learn(&Features::Dense(x), y, 1.0);
        }
        assert!(tree.num_leaves() > 1);
        if let Some(d) = max_depth {
            assert_eq!(tree.depth(), d);
        }
        if let Some(m) = max_leaves {
            assert!(tree.num_leaves() <= m && tree.num_leaves() >= m - 1);
        }
    }
}
// ---------------------------------------------------------------- bit-for-bit reference

/// FNV-1a over 64-bit words.
struct Fnv(u64);

impl Fnv {
    fn add(&mut self, word: u64) {
        for byte in word.to_le_bytes() {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Mixed attributes: five numeric (a class-dependent one, noise, a mostly-zero binary
/// one, a constant, one missing 10% of the time) and three nominal (one class-dependent,
/// noise, one with out-of-range and missing values); three classes.
fn mixed_schema() -> Schema {
    let values = |n: usize| (0..n).map(|v| format!("v{v}")).collect::<Vec<_>>();
    Schema {
        attributes: vec![
            Attribute::numeric("signal"),
            Attribute::numeric("noise"),
            Attribute::numeric("rare"),
            Attribute::numeric("constant"),
            Attribute::numeric("gappy"),
            Attribute::nominal("a", values(4)),
            Attribute::nominal("b", values(3)),
            Attribute::nominal("c", values(6)),
        ],
        labels: vec!["x".into(), "y".into(), "z".into()],
        task: Task::Multiclass,
    }
}

fn mixed_example(rng: &mut Rng) -> (Features, u32) {
    let y: u32 = rng.random_range(0..3);
    let a = if rng.random_range(0.0..1.0) < 0.7 {
        f64::from(y)
    } else {
        f64::from(rng.random_range(0..4u32))
    };
    let c = match rng.random_range(0..10u32) {
        0 => f64::NAN,
        1 => 7.0,
        v => f64::from(v % 6),
    };
    let gappy = if rng.random_range(0.0..1.0) < 0.1 {
        f64::NAN
    } else {
        f64::from(y) * 0.5 + rng.random_range(-1.0..1.0)
    };
    let x = vec![
        f64::from(y) + rng.random_range(-1.5..1.5),
        rng.random_range(-1.0..1.0),
        f64::from(u8::from(
            rng.random_range(0.0..1.0) < 0.05 + 0.05 * f64::from(y),
        )),
        0.5,
        gappy,
        a,
        f64::from(rng.random_range(0..3u32)),
        c,
    ];
    let y = if rng.random_range(0.0..1.0) < 0.1 {
        rng.random_range(0..3)
    } else {
        y
    };
    (Features::Dense(x), y)
}

/// Sparse binary features (about 10 of 80 set), two classes.
fn sparse_example(rng: &mut Rng) -> (Features, u32) {
    let dim = 80;
    let mut indices: Vec<u32> = (0..10).map(|_| rng.random_range(0..dim)).collect();
    indices.sort_unstable();
    indices.dedup();
    let has = |j: u32| indices.binary_search(&j).is_ok();
    let mut y = u32::from(has(3) || (has(10) && has(20)) || has(41));
    if rng.random_range(0.0..1.0) < 0.1 {
        y = 1 - y;
    }
    let values = vec![1.0; indices.len()];
    (
        Features::Sparse {
            indices,
            values,
            dim,
        },
        y,
    )
}

/// The tree after a serde round trip: the same state without any memo (memos are not
/// serialized), so its next prediction or update is computed from scratch.
fn without_memos(tree: &HoeffdingTree) -> HoeffdingTree {
    serde_json::from_str(&serde_json::to_string(tree).unwrap()).unwrap()
}

/// Streams `n` examples through `tree` in the patterns boosters use (predict then learn
/// the same example, with importance weights) and others (learn without predicting,
/// predict another example first, learn twice, a zero weight), hashing every prediction.
/// With `fresh`, the tree loses its memos before every prediction and update.
fn hash_stream(
    tree: &mut HoeffdingTree,
    n: usize,
    seed: u64,
    example: fn(&mut Rng) -> (Features, u32),
    hash: &mut Fnv,
    fresh: bool,
) {
    let mut rng = seeded(seed, 0);
    let weights = [1.0, 0.37, 2.5, 0.05, 1.0, 0.8];
    let (mut other, _) = example(&mut rng);
    let forget = |tree: &mut HoeffdingTree| {
        if fresh {
            *tree = without_memos(tree);
        }
    };
    let add = |tree: &mut HoeffdingTree, x: &Features, hash: &mut Fnv| {
        forget(tree);
        // The cheap top label, when told, is the strict argmax of the full prediction.
        let top = tree.predict_top(x);
        let p = predict(tree, x);
        if let Some(t) = top {
            assert!(
                p.iter().enumerate().all(|(c, &v)| c == t || v < p[t]),
                "{p:?} {t}"
            );
        }
        for v in p {
            hash.add(v.to_bits());
        }
    };
    let learn = |tree: &mut HoeffdingTree, x: &Features, y: u32, w: f64| {
        forget(tree);
        tree.learn(x, y, w);
    };
    for i in 0..n {
        let (x, y) = example(&mut rng);
        let w = weights[i % weights.len()];
        if i % 11 == 0 {
            learn(tree, &x, y, w);
            continue;
        }
        if i % 13 == 0 {
            add(tree, &x, hash);
            add(tree, &other, hash);
            learn(tree, &x, y, w);
            other = x;
            continue;
        }
        add(tree, &x, hash);
        if i % 19 == 0 {
            learn(tree, &x, y, 0.0);
        }
        learn(tree, &x, y, w);
        if i % 17 == 0 {
            let other_label = (y + 1) % tree.num_labels() as u32;
            learn(tree, &x, other_label, w);
        }
    }
    hash.add(tree.num_nodes() as u64);
    hash.add(tree.depth() as u64);
}

/// Hashes every prediction of [`hash_stream`] over numeric, nominal, missing and sparse
/// inputs, in every leaf mode.
fn reference_streams(fresh: bool) -> u64 {
    let mut hash = Fnv(0xcbf2_9ce4_8422_2325);
    let mut rng = seeded(2024, 0);
    let random = HoeffdingTreeConfig::randomized(&mut rng);
    for mode in ALL_MODES {
        let configs = [
            config(mode),
            HoeffdingTreeConfig {
                grace_period: 25.0,
                ..config(mode)
            },
            HoeffdingTreeConfig {
                leaf_prediction: mode,
                feature_subset: Some(5),
                ..random.clone()
            },
        ];
        for (c, cfg) in configs.into_iter().enumerate() {
            let mut tree = HoeffdingTree::new(&mixed_schema(), cfg.clone(), c as u64);
            hash_stream(
                &mut tree,
                4000,
                10 + c as u64,
                mixed_example,
                &mut hash,
                fresh,
            );
            let sparse = Schema::numeric(80, 2, Task::Binary);
            let mut tree = HoeffdingTree::new(&sparse, cfg, c as u64);
            hash_stream(
                &mut tree,
                4000,
                20 + c as u64,
                sparse_example,
                &mut hash,
                fresh,
            );
        }
    }
    hash.0
}

/// Every prediction, on numeric, nominal, missing and sparse inputs, in every leaf mode,
/// is bit for bit what the tree computes from scratch (without the memoized logarithms
/// and naive Bayes scores), and what it was when the hash below was recorded.
#[test]
fn predictions_match_the_reference_bit_for_bit() {
    let memoized = reference_streams(false);
    let from_scratch = reference_streams(true);
    println!("reference hash {memoized:#018x}");
    assert_eq!(
        memoized, from_scratch,
        "memoized and from-scratch predictions differ"
    );
    assert_eq!(memoized, REFERENCE_HASH, "{memoized:#018x}");
}

const REFERENCE_HASH: u64 = 0x8421_8e3d_3241_6550;

// ---------------------------------------------------------------- memoization

fn json(tree: &HoeffdingTree) -> String {
    serde_json::to_string(tree).unwrap()
}

/// A generator of labeled examples.
type ExampleFn = fn(&mut Rng) -> (Features, u32);

/// Trees to exercise the memoized paths: adaptive (and plain) naive Bayes leaves on the
/// mixed and the sparse stream, with splits.
fn memo_cases() -> Vec<(HoeffdingTree, ExampleFn)> {
    let mut cases: Vec<(HoeffdingTree, ExampleFn)> = vec![];
    for mode in [
        LeafPrediction::NaiveBayesAdaptive,
        LeafPrediction::NaiveBayes,
    ] {
        let cfg = HoeffdingTreeConfig {
            grace_period: 25.0,
            ..config(mode)
        };
        cases.push((
            HoeffdingTree::new(&mixed_schema(), cfg.clone(), 1),
            mixed_example,
        ));
        let sparse = Schema::numeric(80, 2, Task::Binary);
        cases.push((HoeffdingTree::new(&sparse, cfg, 2), sparse_example));
    }
    cases
}

#[test]
fn trees_are_send() {
    fn send<T: Send>() {}
    send::<HoeffdingTree>();
}

#[test]
fn predicting_never_changes_what_is_learned() {
    // `a` predicts in every way (the example it then learns, another one, the top label)
    // before learning; `b` only learns. The memo of the last prediction must never make
    // them differ: not when the prediction was about another example, not after a split.
    for (tree, example) in memo_cases() {
        let (mut a, mut b) = (tree.clone(), tree);
        let mut rng = seeded(40, 0);
        let (mut other, _) = example(&mut rng);
        for i in 0..3000 {
            let (x, y) = example(&mut rng);
            let w = [1.0, 0.3, 2.0][i % 3];
            match i % 5 {
                0 => {}
                1 => _ = predict(&a, &other),
                2 => _ = a.predict_top(&x),
                3 => {
                    predict(&a, &x);
                    predict(&a, &other);
                }
                _ => _ = predict(&a, &x),
            }
            a.learn(&x, y, w);
            b.learn(&x, y, w);
            if i % 500 == 0 {
                assert_eq!(json(&a), json(&b), "step {i}");
            }
            other = x;
        }
        assert!(a.num_leaves() > 1);
        assert_eq!(json(&a), json(&b));
    }
}

#[test]
fn predict_top_is_the_strict_argmax_of_predict() {
    for (mut tree, example) in memo_cases() {
        let mut rng = seeded(41, 0);
        let (mut known, mut unknown) = (0, 0);
        for _ in 0..3000 {
            let (x, y) = example(&mut rng);
            let p = predict(&tree, &x);
            match tree.predict_top(&x) {
                Some(l) => {
                    known += 1;
                    for (c, &q) in p.iter().enumerate() {
                        assert!(c == l || p[l] > q, "top {l} of {p:?}");
                    }
                }
                None => unknown += 1,
            }
            tree.learn(&x, y, 1.0);
        }
        assert!(known > 1000, "{known} known, {unknown} not");
    }
}

#[test]
fn memo_survives_neither_serde_nor_clone_wrongly() {
    // A prediction's memo is not state: a restored or cloned tree that did not predict
    // learns exactly as the one that did.
    for (mut tree, example) in memo_cases() {
        let mut rng = seeded(42, 0);
        for _ in 0..1500 {
            let (x, y) = example(&mut rng);
            tree.learn(&x, y, 1.0);
        }
        for _ in 0..60 {
            let (x, y) = example(&mut rng);
            predict(&tree, &x);
            let mut restored: HoeffdingTree = serde_json::from_str(&json(&tree)).unwrap();
            let mut cloned = tree.clone();
            // The clone keeps the memo (and the state it belongs to) ...
            cloned.learn(&x, y, 1.0);
            // ... the restored tree has none, and the original has one of `x`.
            restored.learn(&x, y, 1.0);
            tree.learn(&x, y, 1.0);
            assert_eq!(json(&restored), json(&tree));
            assert_eq!(json(&cloned), json(&tree));
        }
    }
}

// ---------------------------------------------------------------- checkpoints mid-stream

/// Sparse real values (about 8 of 20 set, some stored zeros, a rare missing value) on a
/// 4-class concept: the leaves keep zero and missing weights.
fn sparse_real_example(rng: &mut Rng) -> (Features, u32) {
    let dim = 20u32;
    let mut indices: Vec<u32> = (0..10).map(|_| rng.random_range(0..dim)).collect();
    indices.sort_unstable();
    indices.dedup();
    let values: Vec<f64> = indices
        .iter()
        .map(|_| match rng.random_range(0..40u32) {
            0 => 0.0,
            1 => f64::NAN,
            _ => rng.random_range(-2.0..3.0),
        })
        .collect();
    let get = |j: u32| {
        indices
            .binary_search(&j)
            .map_or(0.0, |p| values[p])
            .max(-10.0)
    };
    let score = get(2) + 0.2 * (get(7) - get(13));
    let y = if score.is_nan() {
        3
    } else if score > 1.0 {
        0
    } else if score > 0.0 {
        1
    } else {
        2
    };
    (
        Features::Sparse {
            indices,
            values,
            dim,
        },
        y,
    )
}

/// A tree saved and restored in the middle of a stream (between a prediction and the
/// learning it prepares, the memos hot; through JSON and through postcard, the model
/// files' encoding) goes on exactly as the one never saved: the same predictions bit for
/// bit, the same top labels, the same state. Dense data with nominal
/// and missing values, sparse binary data, sparse real data with zeros and missing
/// values; every leaf mode, with splits.
#[test]
fn a_tree_restored_mid_stream_continues_bit_for_bit() {
    let streams: [(Schema, ExampleFn); 3] = [
        (mixed_schema(), mixed_example),
        (Schema::numeric(80, 2, Task::Binary), sparse_example),
        (
            Schema::numeric(60, 4, Task::Multiclass),
            sparse_real_example,
        ),
    ];
    for (schema, example) in streams {
        for mode in ALL_MODES {
            let cfg = HoeffdingTreeConfig {
                grace_period: 30.0,
                ..config(mode)
            };
            let mut tree = HoeffdingTree::new(&schema, cfg, 4);
            let mut rng = seeded(90, 0);
            for i in 0..1500 {
                let (x, y) = example(&mut rng);
                predict(&tree, &x);
                tree.learn(&x, y, [1.0, 0.5, 2.0][i % 3]);
            }
            // Saved right after predicting an example it is about to learn.
            let (x, y) = example(&mut rng);
            predict(&tree, &x);
            let mut restored: HoeffdingTree = serde_json::from_str(&json(&tree)).unwrap();
            // Also through postcard, as model files store it (not self-describing: the
            // fields are read back in the order they were written).
            let bytes = postcard::to_allocvec(&tree).unwrap();
            let mut decoded: HoeffdingTree = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(postcard::to_allocvec(&decoded).unwrap(), bytes, "{mode:?}");
            tree.learn(&x, y, 1.0);
            restored.learn(&x, y, 1.0);
            decoded.learn(&x, y, 1.0);
            for i in 0..2000 {
                let (x, y) = example(&mut rng);
                let (p, q) = (predict(&tree, &x), predict(&restored, &x));
                assert_eq!(
                    p.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    q.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "{mode:?}, example {i}"
                );
                assert_eq!(
                    p.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    predict(&decoded, &x)
                        .iter()
                        .map(|v| v.to_bits())
                        .collect::<Vec<_>>(),
                    "{mode:?}, example {i} (postcard)"
                );
                assert_eq!(tree.predict_top(&x), restored.predict_top(&x));
                assert_eq!(tree.predict_top(&x), decoded.predict_top(&x));
                let w = [1.0, 0.25, 3.0][i % 3];
                tree.learn(&x, y, w);
                restored.learn(&x, y, w);
                decoded.learn(&x, y, w);
                if i % 7 == 0 {
                    // A second label for the same example (multi-label feeding).
                    let other = (y + 1) % tree.num_labels() as u32;
                    tree.learn(&x, other, w);
                    restored.learn(&x, other, w);
                    decoded.learn(&x, other, w);
                }
            }
            assert!(tree.num_leaves() > 1, "{mode:?}");
            assert_eq!(json(&tree), json(&restored), "{mode:?}");
            assert_eq!(json(&tree), json(&decoded), "{mode:?}");
            assert_eq!(
                postcard::to_allocvec(&tree).unwrap(),
                postcard::to_allocvec(&decoded).unwrap(),
                "{mode:?}"
            );
        }
    }
}
