//! Tests of the online linear learner (`LinearLearner`).

use flowboost_operators::data::{Attribute, Features, Schema, Task};
use flowboost_operators::learners::{LinearConfig, LinearLearner, WeakLearner};
use flowboost_operators::rng::{Rng, seeded};
use rand::RngExt;

fn binary_schema(dim: usize) -> Schema {
    Schema::numeric(dim, 2, Task::Binary)
}

fn predict(l: &LinearLearner, x: &Features) -> Vec<f64> {
    let mut out = vec![0.0; l.num_labels()];
    l.predict(x, &mut out);
    out
}

fn dense(v: &[f64]) -> Features {
    Features::Dense(v.to_vec())
}

fn logit(p: &[f64]) -> f64 {
    (p[1] / p[0]).ln()
}

fn json(l: &LinearLearner) -> String {
    serde_json::to_string(l).unwrap()
}

/// Solves `δ + e^{z0}(e^δ - 1) = a` by bisection (independently of the learner's Newton).
fn margin_by_bisection(z0: f64, a: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, a);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid + z0.exp() * mid.exp_m1() < a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

fn assert_distribution(p: &[f64]) {
    assert!(p.iter().all(|v| v.is_finite() && *v >= 0.0), "{p:?}");
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{p:?}");
}

/// The first update by hand, default configuration, one numeric feature, x = 2, label 1.
///
/// Scales: s_0 = 2, s_bias = 1, so x̃ = (1, 1), |x̃|² = 2, N = 2, μ = 1/√2. Score 0, p = 1/2,
/// g = -1/2. AdaGrad: G = h/4 for both inputs, rate = 2/√h. ppu = μ (2/√h + 2/√h) = 2√2/√h.
/// a = T ppu = (h/2) 2√2/√h = √(2h). Margin step δ solves δ + e^δ - 1 = a; each weight
/// moves by δ/2 (u μ rate x̃ with u = δ/ppu). The plain gradient step would move the score
/// by -T g ppu = a/2.
#[test]
fn first_update_by_hand() {
    for &h in &[1.0, 1e6] {
        let mut l = LinearLearner::new(&binary_schema(1), LinearConfig::default(), 0);
        assert_eq!(predict(&l, &dense(&[2.0])), vec![0.5, 0.5]);
        l.learn(&dense(&[2.0]), 1, h);
        let a = (2.0f64 * h).sqrt();
        let delta = margin_by_bisection(0.0, a);
        // Same x: score w̃_0 + w̃_bias = δ.
        let s = logit(&predict(&l, &dense(&[2.0])));
        assert!(
            (s - delta).abs() < 1e-9 * (1.0 + delta),
            "h {h}: {s} vs {delta}"
        );
        // Bias only: δ/2. x = 1 (x̃ = 1/2): 3δ/4. x = 4 (scale grows, x̃ = 1): δ.
        let s0 = logit(&predict(&l, &dense(&[0.0])));
        assert!((s0 - delta / 2.0).abs() < 1e-9 * (1.0 + delta));
        let s1 = logit(&predict(&l, &dense(&[1.0])));
        assert!((s1 - 0.75 * delta).abs() < 1e-9 * (1.0 + delta));
        let s4 = logit(&predict(&l, &dense(&[4.0])));
        assert!((s4 - delta).abs() < 1e-9 * (1.0 + delta));

        // The plain gradient step of size h.
        let plain_config = LinearConfig {
            invariant: false,
            ..LinearConfig::default()
        };
        let mut plain = LinearLearner::new(&binary_schema(1), plain_config, 0);
        plain.learn(&dense(&[2.0]), 1, h);
        let sp = logit(&predict(&plain, &dense(&[2.0])));
        assert!((sp - a / 2.0).abs() < 1e-9 * a, "{sp} vs {}", a / 2.0);
        if h > 1.0 {
            // Large h: the invariant update grows the margin like ln(a), not like a.
            assert!(delta < a.ln() + 1.0 && sp > 50.0 * delta, "{delta} {sp}");
        }
    }
}

fn constant_rate() -> LinearConfig {
    LinearConfig {
        adaptive: false,
        power_t: 0.0,
        ..LinearConfig::default()
    }
}

fn multiclass_schema(dim: usize, k: usize) -> Schema {
    Schema::numeric(dim, k, Task::Multiclass)
}

/// With rates that do not change during learning, applying weight h once or h/n n times
/// gives the same model: the invariant update is the exact flow of the gradient ODE.
#[test]
fn importance_weight_invariance_with_constant_rates() {
    let x = dense(&[0.5, -1.5, 2.0]);
    let probe = dense(&[1.0, 0.3, -0.7]);
    for (schema, label) in [(binary_schema(3), 1u32), (multiclass_schema(3, 4), 2u32)] {
        for &h in &[0.3, 5.0, 300.0] {
            let mut once = LinearLearner::new(&schema, constant_rate(), 0);
            once.learn(&x, label, h);
            for &n in &[2usize, 10, 100] {
                let mut split = LinearLearner::new(&schema, constant_rate(), 0);
                for _ in 0..n {
                    split.learn(&x, label, h / n as f64);
                }
                for probe in [&x, &probe] {
                    let (a, b) = (predict(&once, probe), predict(&split, probe));
                    for (p, q) in a.iter().zip(&b) {
                        assert!((p - q).abs() < 1e-6, "h {h} n {n}: {a:?} vs {b:?}");
                    }
                }
            }
            // Not the plain gradient step: with a large h, it would overshoot.
            let mut plain = LinearLearner::new(
                &schema,
                LinearConfig {
                    invariant: false,
                    ..constant_rate()
                },
                0,
            );
            plain.learn(&x, label, h);
            let (pi, pp) = (predict(&once, &x), predict(&plain, &x));
            let uniform = 1.0 / schema.num_labels() as f64;
            assert!(
                pi[label as usize] > uniform && pi[label as usize] < 1.0,
                "{pi:?}"
            );
            if h > 100.0 {
                let gap = |p: &[f64]| {
                    let others = p
                        .iter()
                        .enumerate()
                        .filter(|(c, _)| *c != label as usize)
                        .map(|(_, v)| *v)
                        .fold(0.0f64, f64::max);
                    (p[label as usize] / others.max(1e-300)).ln()
                };
                assert!(gap(&pp) > 10.0 * gap(&pi), "{pi:?} vs {pp:?}");
            }
        }
    }
}

/// With the default (adaptive) configuration the AdaGrad sums grow by `h g²` at the
/// starting point of each update (as in VW), so n updates of weight h/n end with larger
/// rates than one of weight h: splitting is not exactly invariant there. What still holds:
/// neither overshoots, and the single update is the more conservative one.
#[test]
fn importance_weight_splitting_with_adaptive_rates_is_safe() {
    let x = dense(&[0.5, -1.5, 2.0]);
    for (schema, label) in [(binary_schema(3), 0u32), (multiclass_schema(3, 3), 1u32)] {
        let uniform = 1.0 / schema.num_labels() as f64;
        for &h in &[1.0, 20.0, 1000.0] {
            let mut once = LinearLearner::new(&schema, LinearConfig::default(), 0);
            once.learn(&x, label, h);
            let pa = predict(&once, &x)[label as usize];
            for n in [10, 100] {
                let mut split = LinearLearner::new(&schema, LinearConfig::default(), 0);
                for _ in 0..n {
                    split.learn(&x, label, h / n as f64);
                }
                let pb = predict(&split, &x)[label as usize];
                assert!(pa > uniform && pa < 1.0 && pb > uniform && pb < 1.0);
                assert!(pa <= pb, "h {h} n {n}: {pa} vs {pb}");
            }
        }
    }
}

/// A softmax learner with two classes follows the same path as the logistic learner with
/// twice the learning rate (the margin P1 - P0 obeys the logistic ODE with ppu doubled).
#[test]
fn two_class_softmax_matches_logistic() {
    let mut rng = seeded(3, 0);
    let w: Vec<f64> = (0..5).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut logistic = LinearLearner::new(
        &binary_schema(5),
        LinearConfig {
            learning_rate: 1.0,
            ..LinearConfig::default()
        },
        0,
    );
    let mut softmax = LinearLearner::new(&multiclass_schema(5, 2), LinearConfig::default(), 0);
    assert!(logistic.is_logistic() && !softmax.is_logistic());
    for _ in 0..2000 {
        let v: Vec<f64> = (0..5).map(|_| rng.random_range(-3.0..3.0)).collect();
        let x = dense(&v);
        let y = u32::from(v.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() > 0.2);
        let h = rng.random_range(0.1..3.0);
        let (a, b) = (predict(&logistic, &x), predict(&softmax, &x));
        assert!((a[1] - b[1]).abs() < 1e-4, "{a:?} vs {b:?}");
        logistic.learn(&x, y, h);
        softmax.learn(&x, y, h);
    }
}

fn accuracy_on_stream(
    learner: &mut LinearLearner,
    stream: impl Iterator<Item = (Features, u32)>,
    skip: usize,
) -> f64 {
    let (mut correct, mut total) = (0usize, 0usize);
    let mut out = vec![0.0; learner.num_labels()];
    for (i, (x, y)) in stream.enumerate() {
        learner.predict(&x, &mut out);
        let guess = (0..out.len())
            .max_by(|&a, &b| out[a].total_cmp(&out[b]))
            .unwrap();
        if i >= skip {
            correct += usize::from(guess == y as usize);
            total += 1;
        }
        learner.learn(&x, y, 1.0);
    }
    correct as f64 / total as f64
}

#[test]
fn learns_a_linearly_separable_binary_stream() {
    let dim = 10;
    let mut rng = seeded(11, 0);
    let w: Vec<f64> = (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect();
    // Features of very different scales (normalization must cope).
    let scales: Vec<f64> = (0..dim).map(|j| 10f64.powi(j as i32 - 5)).collect();
    let stream = (0..20_000).map(|_| {
        let u: Vec<f64> = (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect();
        let y = u32::from(u.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() > 0.1);
        let x: Vec<f64> = u.iter().zip(&scales).map(|(a, s)| a * s).collect();
        (Features::Dense(x), y)
    });
    let mut l = LinearLearner::new(&binary_schema(dim), LinearConfig::default(), 0);
    let acc = accuracy_on_stream(&mut l, stream, 0);
    assert!(acc > 0.95, "progressive accuracy {acc}");
}

#[test]
fn learns_a_multiclass_stream_with_nominal_features() {
    let colors: Vec<String> = ["red", "green", "blue", "black"].map(String::from).to_vec();
    let sizes: Vec<String> = ["s", "m", "l"].map(String::from).to_vec();
    let schema = Schema {
        attributes: vec![
            Attribute::nominal("color", colors),
            Attribute::numeric("a"),
            Attribute::nominal("size", sizes),
            Attribute::numeric("b"),
        ],
        labels: (0..4).map(|c| format!("c{c}")).collect(),
        task: Task::Multiclass,
    };
    let mut rng: Rng = seeded(5, 1);
    // Class scores: a table per nominal value plus a linear term in the numerics.
    let color_w: Vec<Vec<f64>> = (0..4)
        .map(|_| (0..4).map(|_| rng.random_range(-2.0..2.0)).collect())
        .collect();
    let size_w: Vec<Vec<f64>> = (0..3)
        .map(|_| (0..4).map(|_| rng.random_range(-2.0..2.0)).collect())
        .collect();
    let num_w: Vec<[f64; 2]> = (0..4)
        .map(|_| [rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0)])
        .collect();
    let stream = (0..20_000).map(move |_| {
        let color = rng.random_range(0..4usize);
        let size = rng.random_range(0..3usize);
        let (a, b) = (rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        let y = (0..4)
            .max_by(|&c, &d| {
                let s = |c: usize| {
                    color_w[color][c] + size_w[size][c] + num_w[c][0] * a + num_w[c][1] * b
                };
                s(c).total_cmp(&s(d))
            })
            .unwrap() as u32;
        let x = Features::Dense(vec![color as f64, a, size as f64, b]);
        (x, y)
    });
    let mut l = LinearLearner::new(&schema, LinearConfig::default(), 0);
    assert_eq!(l.num_inputs(), 4 + 1 + 3 + 1 + 1);
    let acc = accuracy_on_stream(&mut l, stream, 10_000);
    assert!(acc > 0.9, "accuracy on the second half {acc}");
}

fn random_stream(seed: u64, n: usize, dim: usize, k: u32) -> Vec<(Features, u32, f64)> {
    let mut rng = seeded(seed, 0);
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..dim).map(|_| rng.random_range(-2.0..2.0)).collect();
            let y = if x[0] + 0.5 * x[1] > 0.0 {
                rng.random_range(0..k)
            } else {
                0
            };
            (Features::Dense(x), y, rng.random_range(0.0..4.0))
        })
        .collect()
}

#[test]
fn deterministic_and_serde_round_trip() {
    for schema in [binary_schema(4), multiclass_schema(4, 3)] {
        let stream = random_stream(9, 600, 4, 3.min(schema.num_labels() as u32));
        let mut a = LinearLearner::new(&schema, LinearConfig::default(), 1);
        let mut b = LinearLearner::new(&schema, LinearConfig::default(), 1);
        for (x, y, h) in &stream[..300] {
            a.learn(x, *y, *h);
            b.learn(x, *y, *h);
        }
        assert_eq!(json(&a), json(&b));
        let mut restored: LinearLearner = serde_json::from_str(&json(&a)).unwrap();
        assert_eq!(json(&restored), json(&a));
        for (x, y, h) in &stream[300..] {
            let (p, q) = (predict(&a, x), predict(&restored, x));
            assert_eq!(
                p.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                q.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            a.learn(x, *y, *h);
            restored.learn(x, *y, *h);
        }
        assert_eq!(json(&a), json(&restored));
        let config: LinearConfig =
            serde_json::from_str(&serde_json::to_string(a.config()).unwrap()).unwrap();
        assert_eq!(&config, a.config());
    }
    // Missing fields of a configuration take VW's defaults.
    let partial: LinearConfig = serde_json::from_str(r#"{"learning_rate": 0.25}"#).unwrap();
    assert_eq!(
        partial,
        LinearConfig {
            learning_rate: 0.25,
            ..LinearConfig::default()
        }
    );
}

#[test]
fn nan_features_are_ignored() {
    let stream = random_stream(4, 400, 3, 2);
    let mut with_nan = LinearLearner::new(&binary_schema(3), LinearConfig::default(), 0);
    let mut with_zero = LinearLearner::new(&binary_schema(3), LinearConfig::default(), 0);
    for (i, (x, y, h)) in stream.iter().enumerate() {
        let Features::Dense(v) = x else {
            unreachable!()
        };
        let (mut a, mut b) = (v.clone(), v.clone());
        a[i % 3] = f64::NAN;
        b[i % 3] = 0.0;
        let (a, b) = (dense(&a), dense(&b));
        assert_eq!(predict(&with_nan, &a), predict(&with_zero, &b));
        with_nan.learn(&a, *y, *h);
        with_zero.learn(&b, *y, *h);
    }
    assert_eq!(json(&with_nan), json(&with_zero));
}

#[test]
fn sparse_and_dense_inputs_agree() {
    let schema = Schema {
        attributes: vec![
            Attribute::numeric("a"),
            Attribute::nominal("b", vec!["x".into(), "y".into(), "z".into()]),
            Attribute::numeric("c"),
        ],
        labels: vec!["0".into(), "1".into(), "2".into()],
        task: Task::Multiclass,
    };
    let mut rng = seeded(8, 0);
    let mut d = LinearLearner::new(&schema, LinearConfig::default(), 0);
    let mut s = LinearLearner::new(&schema, LinearConfig::default(), 0);
    for _ in 0..500 {
        let v = [
            if rng.random_range(0..2) == 0 {
                0.0
            } else {
                rng.random_range(-3.0..3.0)
            },
            rng.random_range(0..3) as f64,
            if rng.random_range(0..2) == 0 {
                0.0
            } else {
                rng.random_range(-3.0..3.0)
            },
        ];
        let (indices, values): (Vec<u32>, Vec<f64>) = v
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .map(|(j, x)| (j as u32, *x))
            .unzip();
        let sparse = Features::Sparse {
            indices,
            values,
            dim: 3,
        };
        let y = rng.random_range(0..3u32);
        assert_eq!(predict(&d, &dense(&v)), predict(&s, &sparse));
        d.learn(&dense(&v), y, 1.0);
        s.learn(&sparse, y, 1.0);
    }
    assert_eq!(json(&d), json(&s));
}

#[test]
fn zero_weight_and_invalid_inputs_are_no_ops() {
    for schema in [binary_schema(3), multiclass_schema(3, 3)] {
        let stream = random_stream(2, 50, 3, 2);
        let mut l = LinearLearner::new(&schema, LinearConfig::default(), 0);
        for (x, y, h) in &stream {
            l.learn(x, *y, *h);
        }
        let before = json(&l);
        let x = &stream[0].0;
        for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            l.learn(x, 1, w);
        }
        // Labels out of range: ignored, no panic.
        l.learn(x, 3, 1.0);
        l.learn(x, u32::MAX, 1.0);
        assert_eq!(json(&l), before);
        let total = l.total_weight();
        l.learn(x, 1, 0.5);
        assert_eq!(l.total_weight(), total + 0.5);
    }
}

#[test]
fn predictions_are_distributions_even_at_extremes() {
    let configs = [
        LinearConfig::default(),
        LinearConfig {
            learning_rate: 1e-300,
            ..LinearConfig::default()
        },
        LinearConfig {
            learning_rate: 1e6,
            ..LinearConfig::default()
        },
        LinearConfig {
            normalized: false,
            ..LinearConfig::default()
        },
        LinearConfig {
            adaptive: false,
            normalized: false,
            invariant: false,
            ..LinearConfig::default()
        },
        LinearConfig {
            l2: 1e3,
            ..LinearConfig::default()
        },
        LinearConfig {
            power_t: 0.8,
            adaptive: true,
            ..LinearConfig::default()
        },
    ];
    let extremes = [1e300, -1e300, f64::MAX, 1e-300, -5e-324, 3.0, f64::INFINITY];
    for config in configs {
        for schema in [binary_schema(3), multiclass_schema(3, 4)] {
            let mut l = LinearLearner::new(&schema, config.clone(), 0);
            let mut rng = seeded(6, 0);
            for i in 0..300 {
                let v: Vec<f64> = (0..3)
                    .map(|_| extremes[rng.random_range(0..extremes.len())])
                    .collect();
                let x = dense(&v);
                assert_distribution(&predict(&l, &x));
                let h = [1.0, 1e-300, 1e300, 1e6][i % 4];
                l.learn(&x, rng.random_range(0..schema.num_labels() as u32), h);
                assert_distribution(&predict(&l, &x));
                assert_distribution(&predict(&l, &dense(&[1.0, -2.0, 0.5])));
            }
        }
    }
}

#[test]
fn l2_shrinks_towards_uniform() {
    let stream = random_stream(12, 500, 3, 2);
    let mut plain = LinearLearner::new(&binary_schema(3), LinearConfig::default(), 0);
    let mut shrunk = LinearLearner::new(
        &binary_schema(3),
        LinearConfig {
            l2: 0.05,
            ..LinearConfig::default()
        },
        0,
    );
    for (x, y, h) in &stream {
        plain.learn(x, *y, *h);
        shrunk.learn(x, *y, *h);
    }
    let x = dense(&[2.0, 1.0, 0.0]);
    let (a, b) = (logit(&predict(&plain, &x)), logit(&predict(&shrunk, &x)));
    assert!(b.abs() < a.abs(), "{a} vs {b}");
}
